//! Pre-split points for `create` (HBase's `RegionSplitter` algorithms).
//!
//! This module only computes keys; it never creates regions.

use crate::error::{Result, ServerError};
use ferrobase_proto::ErrorCode;

/// Split keys for `num_regions` regions with `algo` (`HexStringSplit`:
/// 8-hex-digit row keys; `UniformSplit`: raw bytes).
pub fn split_keys(algo: &str, num_regions: u32) -> Result<Vec<Vec<u8>>> {
    if num_regions < 2 {
        return Err(ServerError::new(
            ErrorCode::InvalidRequest,
            format!("NUMREGIONS must be at least 2, got {num_regions}"),
        ));
    }
    let n = u64::from(num_regions);
    match algo {
        "HexStringSplit" => Ok((1..n)
            .map(|i| format!("{:08x}", (u64::from(u32::MAX) + 1) * i / n).into_bytes())
            .collect()),
        "UniformSplit" | "" => Ok((1..n)
            .map(|i| {
                let v = ((u128::from(u64::MAX) + 1) * u128::from(i) / u128::from(n)) as u64;
                let mut k = v.to_be_bytes().to_vec();
                while k.len() > 1 && k.last() == Some(&0) {
                    k.pop();
                }
                k
            })
            .collect()),
        other => Err(ServerError::new(
            ErrorCode::InvalidRequest,
            format!("unknown SPLITALGO '{other}'; valid: HexStringSplit, UniformSplit"),
        )),
    }
}

/// Checks explicit SPLITS: non-empty, strictly increasing after sorting.
pub fn check_splits(mut splits: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
    splits.sort();
    splits.dedup();
    if splits.iter().any(|s| s.is_empty()) {
        return Err(ServerError::new(
            ErrorCode::InvalidRequest,
            "a split key is empty",
        ));
    }
    Ok(splits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_string_split_matches_hbase() -> Result<()> {
        let k = split_keys("HexStringSplit", 4)?;
        assert_eq!(
            k,
            vec![
                b"40000000".to_vec(),
                b"80000000".to_vec(),
                b"c0000000".to_vec()
            ]
        );
        let u = split_keys("UniformSplit", 2)?;
        assert_eq!(u, vec![vec![0x80]]);
        assert!(split_keys("Nope", 3).is_err());
        Ok(())
    }
}
