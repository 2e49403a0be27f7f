//! Feeds arbitrary bytes to the KeyValue cell-block decoders.
#![no_main]

use bytes::Bytes;
use ferrobase_hbase_wire::cellblock::{self, CellBlockReader};
use ferrobase_types::Durability;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let count = usize::from(data.first().copied().unwrap_or(0));
    let block = Bytes::copy_from_slice(data.get(1..).unwrap_or_default());
    for cell in CellBlockReader::new(&block) {
        if cell.is_err() {
            break;
        }
    }
    let _ = cellblock::decode_cells(&block);
    let _ = CellBlockReader::new(&block).read_mutation(count, Durability::UseDefault);
    let _ = CellBlockReader::new(&block).read_cells(count);
});
