//! Unit tests of the parent module.

use super::*;

#[test]
fn table_names_default_their_namespace() {
    let t = TableName::parse("t1").unwrap();
    assert_eq!((t.namespace(), t.qualifier()), ("default", "t1"));
    assert_eq!(t.to_string(), "t1");
    let t = TableName::parse("ns1:t1").unwrap();
    assert_eq!(t.to_string(), "ns1:t1");
    assert_eq!(TableName::from_pb(&t.to_pb()).unwrap(), t);
    assert_eq!(TableName::parse("default:t1").unwrap().to_string(), "t1");
    assert!(TableName::meta().is_meta());
    assert_eq!(TableName::meta().to_string(), "hbase:meta");
    let empty_ns = pb::TableName {
        namespace: Bytes::new(),
        qualifier: Bytes::from_static(b"t"),
    };
    assert_eq!(
        TableName::from_pb(&empty_ns).unwrap().namespace(),
        "default"
    );
    for bad in [
        "", "ns:", ":t", "a b", "ns-1:t", ".t", "-t", "a:b:c", "t\u{e9}",
    ] {
        assert!(TableName::parse(bad).is_err(), "{bad:?}");
    }
    let e = TableName::parse("my ns:t").unwrap_err().to_string();
    assert!(e.contains("'my ns:t'") && e.contains("namespace"), "{e}");
}

#[test]
fn meta_region_name_and_its_jenkins_hash() {
    // HBase's hbase:meta region is the one old-format name in use; its
    // encoded name is HBase's well-known 1588230740.
    assert_eq!(old_format_encoded_name(META_REGION_NAME), META_ENCODED_NAME);
    let m = RegionName::parse(META_REGION_NAME).unwrap();
    assert_eq!(m, RegionName::meta());
    assert!(m.table.is_meta());
    assert_eq!(m.region_id, 1);
    assert!(m.start_key.is_empty());
}

#[test]
fn region_names_hash_table_startkey_id() {
    let t = TableName::parse("ns:t1").unwrap();
    let r = RegionName::new(&t, b"row,5", 1_700_000_000_000);
    let prefix = b"ns:t1,row,5,1700000000000";
    let md5 = md5::hex(prefix);
    assert_eq!(r.encoded, md5);
    let mut expected = prefix.to_vec();
    expected.push(b'.');
    expected.extend_from_slice(md5.as_bytes());
    expected.push(b'.');
    assert_eq!(&r.name[..], &expected[..]);
    // The start key holds a comma: the id is after the last one.
    let back = RegionName::parse(&r.name).unwrap();
    assert_eq!(back, r);
    // Default-namespace tables are named without "default:".
    let d = RegionName::new(&TableName::parse("t").unwrap(), b"", 7);
    assert!(d.name.starts_with(b"t,,7."));
    // A replica.
    let rep = RegionName::with_replica(&t, b"a", 9, 1);
    assert!(rep.name.starts_with(b"ns:t1,a,9_0001."));
    assert_eq!(RegionName::parse(&rep.name).unwrap().replica_id, 1);
    // The client's meta search key: no encoded suffix.
    let key = format!("t,row,{NINES}");
    let k = RegionName::parse(key.as_bytes()).unwrap();
    assert_eq!(
        (&k.start_key[..], k.region_id),
        (&b"row"[..], 99_999_999_999_999)
    );
}

#[test]
fn bad_region_names_say_why() {
    for (name, why) in [
        (&b"nocomma"[..], "no ','"),
        (b"t,key", "before the region id"),
        (b"t,key,12x", "decimal"),
        (b"t,,", "decimal"),
        (b"bad name,,1", "table name"),
        (b"t,,1_zz", "replica"),
    ] {
        let e = RegionName::parse(name).unwrap_err().to_string();
        assert!(e.contains(why), "{name:?}: {e}");
    }
}

#[test]
fn region_info_and_pb_magic() {
    let r = RegionName::new(&TableName::parse("t").unwrap(), b"a", 3);
    let info = r.region_info(b"b");
    let value = with_pb_magic(&info);
    assert!(value.starts_with(b"PBUF"));
    let back = <pb::RegionInfo as prost::Message>::decode(strip_pb_magic(&value).unwrap()).unwrap();
    assert_eq!(back, info);
    assert_eq!(strip_pb_magic(b"nope"), None);
    assert_eq!(r.specifier().value, r.name);
}

#[test]
fn server_names() {
    let s = ServerName::parse("RS1.Example.com,16020,1700000000123").unwrap();
    assert_eq!(s.host, "rs1.example.com");
    assert_eq!(s.to_string(), "rs1.example.com,16020,1700000000123");
    assert_eq!(s.host_and_port(), "rs1.example.com:16020");
    assert_eq!(ServerName::from_pb(&s.to_pb()).unwrap(), s);
    for bad in ["h,1", "h,70000,1", ",1,1", "h,1,x", "h,1,2,3"] {
        assert!(ServerName::parse(bad).is_err(), "{bad}");
    }
}
