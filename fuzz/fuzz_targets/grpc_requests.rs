//! The gRPC services' requests: the first byte picks a request message, the
//! rest is decoded as it (prost, as tonic does) and goes through the
//! conversions the handlers make before touching a region or the meta:
//! table and family schemas (`schema::table_from_pb`, `apply_family`),
//! read specs and filters (`read_path::read_columns`, `parse_filter`), and
//! the mutation blocks inside writes (`cellblock::decode_mutations`). A
//! schema that converts must convert back to itself.
#![no_main]

use bytes::Bytes;
use ferrobase_proto::{cellblock, pb, schema};
use ferrobase_server::read_path;
use ferrobase_types::FamilyDescriptor;
use libfuzzer_sys::fuzz_target;
use prost::Message;

fn read_spec(spec: Option<&pb::ReadSpec>) {
    let _ = read_path::read_columns(spec);
    let _ = read_path::parse_filter(spec);
}

fn mutations(block: &[u8]) {
    let _ = cellblock::decode_mutations(Bytes::copy_from_slice(block));
}

fn table(s: &pb::TableSchema) {
    let Ok(t) = schema::table_from_pb(s) else {
        return;
    };
    let back = schema::table_from_pb(&schema::table_to_pb(&t))
        .unwrap_or_else(|e| panic!("a converted schema does not convert back: {e}"));
    assert_eq!(back, t, "the schema changed in a round trip");
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, body)) = data.split_first() else {
        return;
    };
    match kind % 8 {
        0 => {
            if let Ok(r) = pb::CreateTableRequest::decode(body)
                && let Some(s) = &r.schema
            {
                table(s);
            }
        }
        1 => {
            if let Ok(r) = pb::AlterTableRequest::decode(body) {
                for f in &r.modify {
                    if let Ok(mut base) = FamilyDescriptor::new(&f.name) {
                        let _ = schema::apply_family(&mut base, f);
                    }
                }
            }
        }
        2 => {
            if let Ok(r) = pb::GetRequest::decode(body) {
                read_spec(r.spec.as_ref());
            }
        }
        3 => {
            if let Ok(r) = pb::ScanRequest::decode(body) {
                read_spec(r.spec.as_ref());
            }
        }
        4 => {
            if let Ok(r) = pb::MutateRequest::decode(body) {
                mutations(&r.mutations);
            }
        }
        5 => {
            if let Ok(r) = pb::MultiRequest::decode(body) {
                for a in &r.actions {
                    mutations(&a.mutations);
                }
            }
        }
        6 => {
            if let Ok(r) = pb::ReadModifyWriteRequest::decode(body) {
                mutations(&r.mutation);
            }
        }
        _ => {
            if let Ok(r) = pb::CheckAndMutateRequest::decode(body) {
                mutations(&r.mutation);
            }
        }
    }
});
