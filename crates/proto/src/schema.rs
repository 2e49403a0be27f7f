//! Table schemas on the wire: [`TableDescriptor`] ⇄ [`pb::TableSchema`].
//!
//! Family attributes travel as HBase's `NAME => value` text and are parsed
//! with [`FamilyDescriptor::set`], so the wire accepts exactly what the
//! shell accepts. This module never validates anything itself.

use crate::pb;
use ferrobase_types::{DescriptorError, Durability, FamilyDescriptor, TableDescriptor};

/// A family's attributes as sent on the wire.
pub fn family_to_pb(f: &FamilyDescriptor) -> pb::FamilySchema {
    pb::FamilySchema {
        name: f.name.clone(),
        attributes: f
            .attributes()
            .into_iter()
            .filter(|(k, _)| *k != "NAME")
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        values: f.values.clone().into_iter().collect(),
    }
}

/// Applies a wire family's attributes on top of `base`.
pub fn apply_family(
    base: &mut FamilyDescriptor,
    f: &pb::FamilySchema,
) -> Result<(), DescriptorError> {
    for (k, v) in &f.attributes {
        // describe prints TTL as "N SECONDS (D DAYS)"; accept it back.
        let v = v.split(" (").next().unwrap_or(v);
        base.set(k, v)?;
    }
    for (k, v) in &f.values {
        base.values.insert(k.clone(), v.clone());
    }
    // After all of them: the map's order is not the client's.
    base.check()
}

/// A family from the wire, starting from HBase's defaults.
pub fn family_from_pb(f: &pb::FamilySchema) -> Result<FamilyDescriptor, DescriptorError> {
    let mut d = FamilyDescriptor::new(&f.name)?;
    apply_family(&mut d, f)?;
    Ok(d)
}

/// A table schema as sent on the wire.
pub fn table_to_pb(t: &TableDescriptor) -> pb::TableSchema {
    pb::TableSchema {
        name: t.name.clone(),
        families: t.families.iter().map(family_to_pb).collect(),
        durability: t.durability.name().to_string(),
        values: t.values.clone().into_iter().collect(),
    }
}

/// A table descriptor from the wire.
pub fn table_from_pb(t: &pb::TableSchema) -> Result<TableDescriptor, DescriptorError> {
    let families = t
        .families
        .iter()
        .map(family_from_pb)
        .collect::<Result<Vec<_>, _>>()?;
    let mut d = TableDescriptor::new(&t.name, families)?;
    d.values = t.values.clone().into_iter().collect();
    if !t.durability.is_empty() {
        d.durability =
            t.durability
                .parse::<Durability>()
                .map_err(|_| DescriptorError::InvalidValue {
                    attribute: "DURABILITY",
                    value: t.durability.clone(),
                    expected: format!("valid values: {}", Durability::NAMES.join(", ")),
                })?;
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attribute_round_trips() {
        let mut f = FamilyDescriptor::new("cf").unwrap();
        for (k, v) in [
            ("VERSIONS", "3"),
            ("MIN_VERSIONS", "1"),
            ("TTL", "86400"),
            ("BLOCKSIZE", "8192"),
            ("BLOCKCACHE", "false"),
            ("BLOOMFILTER", "ROWCOL"),
            ("COMPRESSION", "LZ4"),
            ("DATA_BLOCK_ENCODING", "FAST_DIFF"),
            ("IN_MEMORY", "true"),
            ("KEEP_DELETED_CELLS", "TRUE"),
        ] {
            f.set(k, v).unwrap();
        }
        let mut t = TableDescriptor::new("t", vec![f]).unwrap();
        t.durability = Durability::AsyncWal;
        assert_eq!(table_from_pb(&table_to_pb(&t)).unwrap(), t);
    }

    /// The wire's attribute map has no order: MIN_VERSIONS may be applied
    /// before the VERSIONS that allows it (found by the `grpc_requests`
    /// fuzz target). Each map gets its own hash seed, so repeat.
    #[test]
    fn min_versions_above_the_default_round_trips() {
        let mut f = FamilyDescriptor::new("f").unwrap();
        f.set("VERSIONS", "7").unwrap();
        f.set("MIN_VERSIONS", "5").unwrap();
        let t = TableDescriptor::new("t", vec![f]).unwrap();
        for _ in 0..64 {
            assert_eq!(table_from_pb(&table_to_pb(&t)).unwrap(), t);
        }
    }
}
