//! YCSB's `CoreWorkload`, configured from properties: record and
//! operation counts, fields, operation mix, key choice and key names.
//! Unknown values are errors listing the valid ones; properties this
//! implementation does not know are ignored, as YCSB ignores them.

use super::properties::Properties;
use ferrobase_workloads::{KeyGenerator, fnv, text};
use rand::Rng;

/// One YCSB operation kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl Op {
    /// YCSB's measurement name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// The workload. See the module docs.
#[derive(Clone, Debug)]
pub struct Workload {
    pub table: String,
    pub family: String,
    pub record_count: u64,
    pub operation_count: u64,
    pub insert_start: u64,
    pub field_count: usize,
    pub field_length: usize,
    pub read_all_fields: bool,
    pub write_all_fields: bool,
    /// (op, cumulative proportion).
    pub mix: Vec<(Op, f64)>,
    pub request_distribution: String,
    pub zipfian_constant: f64,
    pub hotspot: (f64, f64),
    pub ordered_inserts: bool,
    pub zero_padding: usize,
    pub min_scan_length: u64,
    pub max_scan_length: u64,
    pub scan_length_distribution: String,
    pub insert_proportion: f64,
    pub thread_count: Option<usize>,
}

fn get<T: std::str::FromStr>(p: &Properties, key: &str, default: T) -> Result<T, String> {
    match p.get(key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("property {key}: '{v}' is not a valid number")),
    }
}

fn get_bool(p: &Properties, key: &str, default: bool) -> Result<bool, String> {
    match p.get(key).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(default),
        Some(v) if v == "true" => Ok(true),
        Some(v) if v == "false" => Ok(false),
        Some(v) => Err(format!("property {key}: '{v}' is not true or false")),
    }
}

impl Workload {
    /// The workload of `props` (YCSB's defaults for what is missing).
    pub fn from_properties(p: &Properties) -> Result<Workload, String> {
        let record_count: u64 = get(p, "recordcount", 0)?;
        let operation_count: u64 = get(p, "operationcount", 0)?;
        let insert_start: u64 = get(p, "insertstart", 0)?;
        let field_count: usize = get(p, "fieldcount", 10)?;
        let field_length: usize = get(p, "fieldlength", 100)?;
        if let Some(d) = p
            .get("fieldlengthdistribution")
            .filter(|d| *d != "constant")
        {
            return Err(format!(
                "property fieldlengthdistribution: '{d}' is not supported; valid: constant"
            ));
        }
        let mut mix = Vec::new();
        let mut total = 0.0;
        let mut insert_proportion = 0.0;
        for (key, op, default) in [
            ("readproportion", Op::Read, 0.95),
            ("updateproportion", Op::Update, 0.05),
            ("insertproportion", Op::Insert, 0.0),
            ("scanproportion", Op::Scan, 0.0),
            ("readmodifywriteproportion", Op::ReadModifyWrite, 0.0),
        ] {
            let v: f64 = get(p, key, default)?;
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("property {key}: {v} is not between 0 and 1"));
            }
            if op == Op::Insert {
                insert_proportion = v;
            }
            if v > 0.0 {
                total += v;
                mix.push((op, total));
            }
        }
        let request_distribution = p
            .get("requestdistribution")
            .cloned()
            .unwrap_or_else(|| "uniform".into())
            .to_ascii_lowercase();
        let valid = ["uniform", "zipfian", "latest", "hotspot"];
        if !valid.contains(&request_distribution.as_str()) {
            return Err(format!(
                "property requestdistribution: '{request_distribution}' is not valid; valid: {}",
                valid.join(", ")
            ));
        }
        let scan_length_distribution = p
            .get("scanlengthdistribution")
            .cloned()
            .unwrap_or_else(|| "uniform".into())
            .to_ascii_lowercase();
        if !["uniform", "zipfian"].contains(&scan_length_distribution.as_str()) {
            return Err(format!(
                "property scanlengthdistribution: '{scan_length_distribution}' is not valid; valid: uniform, zipfian"
            ));
        }
        let insert_order = p.get("insertorder").map(|s| s.to_ascii_lowercase());
        let ordered_inserts = match insert_order.as_deref() {
            None | Some("hashed") => false,
            Some("ordered") => true,
            Some(o) => {
                return Err(format!(
                    "property insertorder: '{o}' is not valid; valid: hashed, ordered"
                ));
            }
        };
        let w = Workload {
            table: p
                .get("table")
                .cloned()
                .unwrap_or_else(|| "usertable".into()),
            family: p.get("columnfamily").cloned().unwrap_or_else(|| "f".into()),
            record_count,
            operation_count,
            insert_start,
            field_count,
            field_length,
            read_all_fields: get_bool(p, "readallfields", true)?,
            write_all_fields: get_bool(p, "writeallfields", false)?,
            mix,
            request_distribution,
            zipfian_constant: get(p, "zipfianconstant", 0.99)?,
            hotspot: (
                get(p, "hotspotdatafraction", 0.2)?,
                get(p, "hotspotopnfraction", 0.8)?,
            ),
            ordered_inserts,
            zero_padding: get(p, "zeropadding", 1)?,
            min_scan_length: get(p, "minscanlength", 1)?,
            max_scan_length: get(p, "maxscanlength", 1000)?,
            scan_length_distribution,
            insert_proportion,
            thread_count: p
                .get("threadcount")
                .map(|v| v.parse())
                .transpose()
                .map_err(|_| "property threadcount: not a valid number".to_string())?,
        };
        if w.field_count == 0 {
            return Err("property fieldcount must be at least 1".into());
        }
        if w.max_scan_length < w.min_scan_length.max(1) {
            return Err("property maxscanlength must be ≥ minscanlength ≥ 1".into());
        }
        Ok(w)
    }

    /// YCSB's key name of item `keynum` (`buildKeyName`).
    pub fn key(&self, keynum: u64) -> Vec<u8> {
        let n = if self.ordered_inserts {
            keynum
        } else {
            fnv(keynum) & 0x7FFF_FFFF_FFFF_FFFF
        };
        let digits = n.to_string();
        let mut out = b"user".to_vec();
        out.extend(std::iter::repeat_n(
            b'0',
            self.zero_padding.saturating_sub(digits.len()),
        ));
        out.extend_from_slice(digits.as_bytes());
        out
    }

    /// Field name `j`.
    pub fn field(&self, j: usize) -> Vec<u8> {
        format!("field{j}").into_bytes()
    }

    /// The value of field `j` of record `keynum` (the `ycsb` shape of
    /// docs/workloads.md).
    pub fn value(&self, keynum: u64, j: usize) -> Vec<u8> {
        text(
            fnv(keynum
                .wrapping_mul(self.field_count as u64)
                .wrapping_add(j as u64)),
            self.field_length,
        )
    }

    /// A fresh value for an update.
    pub fn update_value(&self, rng: &mut impl Rng) -> Vec<u8> {
        text(rng.random(), self.field_length)
    }

    /// The next operation for a uniform draw `u` in `[0, 1)`.
    pub fn choose(&self, u: f64) -> Op {
        let total = self.mix.last().map(|(_, t)| *t).unwrap_or(1.0);
        let x = u * total;
        self.mix
            .iter()
            .find(|(_, t)| x < *t)
            .or(self.mix.last())
            .map(|(op, _)| *op)
            .unwrap_or(Op::Read)
    }

    /// The key chooser of the run phase (YCSB: zipfian → scrambled Zipfian
    /// over the records plus the expected inserts; latest; uniform;
    /// hotspot).
    pub fn key_chooser(&self, seed: u64) -> Result<KeyGenerator, String> {
        let n = self.record_count.max(1);
        match self.request_distribution.as_str() {
            "zipfian" => {
                let expected_new =
                    (self.operation_count as f64 * self.insert_proportion * 2.0) as u64;
                KeyGenerator::parse(
                    &format!("scrambled:{}", self.zipfian_constant),
                    n + expected_new,
                    seed,
                )
            }
            "hotspot" => KeyGenerator::parse(
                &format!("hotspot:{}:{}", self.hotspot.0, self.hotspot.1),
                n,
                seed,
            ),
            other => KeyGenerator::parse(other, n, seed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::properties::load_workload;

    #[test]
    fn workload_a_mix_and_keys() -> Result<(), String> {
        let w = Workload::from_properties(&load_workload("a")?)?;
        assert_eq!(w.record_count, 1000);
        assert_eq!(w.choose(0.1), Op::Read);
        assert_eq!(w.choose(0.7), Op::Update);
        assert_eq!(w.key(0), b"user2938590176187398597".to_vec());
        assert_eq!(
            Some(&w.value(3, 2)[..]),
            ferrobase_workloads::Shape::parse("ycsb", None)?
                .row(3)
                .cell(2)
                .map(|c| c.1)
        );
        let mut p = load_workload("e")?;
        p.insert("insertorder".into(), "ordered".into());
        p.insert("zeropadding".into(), "5".into());
        let e = Workload::from_properties(&p)?;
        assert_eq!(e.key(42), b"user00042".to_vec());
        assert_eq!(e.choose(0.5), Op::Scan);
        assert_eq!(e.choose(0.01), Op::Insert);
        p.insert("requestdistribution".into(), "pareto".into());
        let err = Workload::from_properties(&p).err().unwrap_or_default();
        assert!(err.contains("uniform, zipfian, latest, hotspot"), "{err}");
        Ok(())
    }
}
