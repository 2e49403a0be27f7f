//! `ferrobase storefile meta|cells FILE`: the `hbase hfile` of ferrobase.

use anyhow::Context;
use ferrobase_storage::iter::CellIterator;
use ferrobase_storage::storefile::StoreFileReader;
use ferrobase_types::binary::to_string_binary;
use ferrobase_types::key::KeyRef;
use std::io::Write;
use std::path::Path;

/// Prints the file info, one `key=value` a line, then the trailer's format
/// version (HBase's `hfile -m` prints its trailer's version too).
pub fn meta(file: &Path) -> anyhow::Result<()> {
    let reader = StoreFileReader::open(file, None)
        .with_context(|| format!("opening store file {}", file.display()))?;
    let mut out = std::io::stdout().lock();
    for (k, v) in reader.info().describe() {
        writeln!(out, "{k}={v}")?;
    }
    writeln!(out, "formatVersion={}", reader.format_version())?;
    Ok(())
}

/// Prints every cell.
pub fn cells(file: &Path, values: bool) -> anyhow::Result<()> {
    let reader = StoreFileReader::open(file, None)
        .with_context(|| format!("opening store file {}", file.display()))?;
    let mut it = reader.scanner(false);
    it.seek_to_first()?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    while it.valid() {
        match KeyRef::parse(it.key()) {
            Some(k) => {
                let t = k
                    .cell_type()
                    .map(|t| t.name().to_string())
                    .unwrap_or_else(|| format!("Type{}", k.type_code));
                write!(
                    out,
                    "{}/{}:{}/{}/{}/vlen={}/seqid={}",
                    to_string_binary(k.row),
                    to_string_binary(k.family),
                    to_string_binary(k.qualifier),
                    k.timestamp,
                    t,
                    it.value().len(),
                    it.seq()
                )?;
                if values {
                    write!(out, " value={}", to_string_binary(it.value()))?;
                }
                writeln!(out)?;
            }
            None => anyhow::bail!(
                "unparseable key {} in {}",
                to_string_binary(it.key()),
                file.display()
            ),
        }
        it.next()?;
    }
    out.flush()?;
    Ok(())
}
