//! The conversions a server applies to HBase's messages after the frame
//! decoder: a `MutationProto` with its KeyValue cell block (Put, Delete,
//! Increment, Append), table and family schemas (CreateTable,
//! ModifyColumn), region specifiers, time ranges, and table, region and
//! server names. The first byte picks the message; the rest is its bytes
//! (for a mutation, message and cell block cut at the separator). What
//! converts must convert back to itself.
#![no_main]

use bytes::Bytes;
use ferrobase_fuzz::storefile::split;
use ferrobase_hbase_wire::cellblock::CellBlockReader;
use ferrobase_hbase_wire::convert::mutation::mutation_from_pb;
use ferrobase_hbase_wire::convert::schema::{
    family_from_pb, family_to_pb, table_from_pb, table_to_pb,
};
use ferrobase_hbase_wire::convert::{region_ref, time_range_from_pb};
use ferrobase_hbase_wire::names::{RegionName, ServerName, TableName};
use ferrobase_hbase_wire::pb;
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    match kind % 8 {
        0 => {
            let parts = split(rest);
            let Ok(m) = pb::MutationProto::decode(parts[0]) else {
                return;
            };
            let block = Bytes::copy_from_slice(parts.get(1).copied().unwrap_or_default());
            let mut reader = CellBlockReader::new(&block);
            if let Ok(w) = mutation_from_pb(&m, Some(&mut reader)) {
                let _ = (w.mutation.validate(1 << 20), w.mutation.validate_row());
                let _ = w.mutation.mutations().count();
            }
        }
        1 => {
            let Ok(t) = pb::TableSchema::decode(rest) else {
                return;
            };
            let Ok(schema) = table_from_pb(&t) else {
                return;
            };
            let wire = table_to_pb(&schema.descriptor)
                .unwrap_or_else(|e| panic!("a table from the wire does not go back: {e}"));
            let again = table_from_pb(&wire)
                .unwrap_or_else(|e| panic!("a table's own schema does not convert: {e}"));
            assert_eq!(again.descriptor, schema.descriptor);
        }
        2 => {
            let Ok(f) = pb::ColumnFamilySchema::decode(rest) else {
                return;
            };
            let Ok(schema) = family_from_pb(&f) else {
                return;
            };
            let again = family_from_pb(&family_to_pb(&schema.descriptor))
                .unwrap_or_else(|e| panic!("a family's own schema does not convert: {e}"));
            assert_eq!(again.descriptor, schema.descriptor);
        }
        3 => {
            if let Ok(s) = pb::RegionSpecifier::decode(rest) {
                let _ = region_ref(&s);
            }
        }
        4 => {
            if let Ok(t) = pb::TimeRange::decode(rest) {
                let _ = time_range_from_pb(Some(&t));
            }
        }
        5 => {
            let Ok(r) = RegionName::parse(rest) else {
                return;
            };
            let _ = (r.region_info(b"z"), r.specifier());
            let _ = TableName::from_pb(&r.table.to_pb())
                .unwrap_or_else(|e| panic!("a parsed table name does not convert back: {e}"));
        }
        6 => {
            // A region named by its parts must parse back to them.
            let [a, b, c, d, e, f, g, h, r1, r2, tail @ ..] = rest else {
                return;
            };
            let id = u64::from_le_bytes([*a, *b, *c, *d, *e, *f, *g, *h]);
            let replica = u16::from_le_bytes([*r1, *r2]);
            let (table, start) = match tail.iter().position(|&x| x == 0) {
                Some(i) => (&tail[..i], &tail[i + 1..]),
                None => (tail, &[][..]),
            };
            let Ok(table) = std::str::from_utf8(table)
                .map_err(drop)
                .and_then(|t| TableName::parse(t).map_err(drop))
            else {
                return;
            };
            let named = RegionName::with_replica(&table, start, id, replica);
            let parsed = RegionName::parse(&named.name)
                .unwrap_or_else(|e| panic!("a region name we made does not parse: {e}"));
            assert_eq!(parsed, named);
        }
        _ => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            if let Ok(s) = ServerName::parse(text) {
                assert_eq!(ServerName::from_pb(&s.to_pb()).ok(), Some(s));
            }
            if let Ok(t) = TableName::parse(text) {
                assert_eq!(TableName::from_pb(&t.to_pb()).ok(), Some(t.clone()));
                assert_eq!(TableName::parse(&t.name_as_string()).ok(), Some(t));
            }
        }
    }
});
