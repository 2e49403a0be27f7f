//! Cluster ids: what the registry, the ZooKeeper endpoint and tokens give
//! clients as the cluster's identity. Always a UUID string, as HBase's
//! `hbase.id` is; never random, so every process of a cluster derives the
//! same one without asking another.

/// The cluster id of the distributed cluster on the storage root `url`
/// (every process derives the same one; tokens name it as their service).
///
/// HBase's cluster ids are UUIDs (the `hbase.id` file) and its tools parse
/// them as such (`CopyTable`, `Import` and replication tag mutations with
/// `UUID.fromString` of the id), so this is one too: the name-based (MD5,
/// version 3) UUID of the root's URL.
pub fn cluster_id_for_root(url: &str) -> String {
    name_uuid(url.as_bytes())
}

/// The cluster id of a standalone server: one server is one cluster.
/// `name_uuid(b"ferrobase-standalone")` (a unit test checks it).
pub const STANDALONE_CLUSTER_ID: &str = "e139708a-4f79-32fa-a488-a01a140c9c2f";

/// The version 3 UUID of `name` (RFC 4122 without a namespace: MD5 of the
/// name with the version and variant bits set), as
/// `xxxxxxxx-xxxx-3xxx-yxxx-xxxxxxxxxxxx`.
pub(crate) fn name_uuid(name: &[u8]) -> String {
    let mut d = ferrobase_hbase_wire::md5::digest(name);
    d[6] = (d[6] & 0x0f) | 0x30;
    d[8] = (d[8] & 0x3f) | 0x80;
    let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
    let part = |r: std::ops::Range<usize>| hex.get(r).unwrap_or_default();
    format!(
        "{}-{}-{}-{}-{}",
        part(0..8),
        part(8..12),
        part(12..16),
        part(16..20),
        part(20..32)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_uuid(s: &str) -> bool {
        let parts: Vec<&str> = s.split('-').collect();
        parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
            && parts.iter().all(|p| {
                p.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            })
    }

    #[test]
    fn ids_are_version_3_uuids() {
        assert_eq!(STANDALONE_CLUSTER_ID, name_uuid(b"ferrobase-standalone"));
        for id in [
            STANDALONE_CLUSTER_ID.to_string(),
            cluster_id_for_root("file:///data/ferrobase"),
            cluster_id_for_root("s3://bucket/prefix"),
        ] {
            assert!(is_uuid(&id), "{id}");
            assert_eq!(id.as_bytes()[14], b'3', "version nibble of {id}");
            assert!(b"89ab".contains(&id.as_bytes()[19]), "variant of {id}");
        }
        assert_ne!(
            cluster_id_for_root("file:///a"),
            cluster_id_for_root("file:///b")
        );
        assert_eq!(
            cluster_id_for_root("file:///a"),
            cluster_id_for_root("file:///a")
        );
    }
}
