//! YCSB property files (`key=value` lines, `#`/`!` comments, Java's `:`
//! separator) and YCSB's built-in core workloads A–F with YCSB's own
//! values (`workloads/workloada` … `workloadf` of the YCSB distribution).

use std::collections::BTreeMap;

/// Properties, by name; later values override earlier ones.
pub type Properties = BTreeMap<String, String>;

/// Parses a property file's text. Lines without a separator are an error
/// naming the line.
pub fn parse(text: &str) -> Result<Properties, String> {
    let mut out = Properties::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let cut = line
            .find(['=', ':'])
            .ok_or_else(|| format!("line {}: '{line}' is not key=value", n + 1))?;
        let key = line[..cut].trim();
        let value = line[cut + 1..].trim();
        if key.is_empty() {
            return Err(format!("line {}: '{line}' has an empty key", n + 1));
        }
        out.insert(key.to_string(), value.to_string());
    }
    Ok(out)
}

/// Applies `key=value` overrides (`-p`).
pub fn apply_overrides(props: &mut Properties, overrides: &[String]) -> Result<(), String> {
    for o in overrides {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| format!("-p '{o}' is not key=value"))?;
        props.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(())
}

const COMMON: &str = "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\n";

/// The text of built-in workload `a`..`f`, as YCSB ships it (comments
/// dropped).
pub fn builtin(name: &str) -> Option<String> {
    let body = match name.to_ascii_lowercase().as_str() {
        "a" => {
            "readproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"
        }
        "b" => {
            "readproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"
        }
        "c" => {
            "readproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"
        }
        "d" => {
            "readproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\nrequestdistribution=latest\n"
        }
        "e" => {
            "readproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\nscanlengthdistribution=uniform\n"
        }
        "f" => {
            "readproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n"
        }
        _ => return None,
    };
    Some(format!("{COMMON}{body}"))
}

/// The properties of `--workload`: a built-in letter or a file path.
pub fn load_workload(spec: &str) -> Result<Properties, String> {
    if let Some(text) = builtin(spec) {
        return parse(&text);
    }
    let path = std::path::Path::new(spec);
    if !path.exists() {
        return Err(format!(
            "--workload '{spec}' is neither a built-in workload (a, b, c, d, e, f) nor an existing file"
        ));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading workload file {spec}: {e}"))?;
    parse(&text).map_err(|e| format!("{spec}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_separators_and_overrides() -> Result<(), String> {
        let mut p = parse(
            "# a comment\n! another\n\nrecordcount = 1000\noperationcount:50\nrequestdistribution=zipfian\n  fieldlength=10  \n",
        )?;
        assert_eq!(p.get("recordcount").map(String::as_str), Some("1000"));
        assert_eq!(p.get("operationcount").map(String::as_str), Some("50"));
        assert_eq!(p.get("fieldlength").map(String::as_str), Some("10"));
        assert_eq!(p.len(), 4);
        apply_overrides(&mut p, &["recordcount=7".into(), "x=a=b".into()])?;
        assert_eq!(p.get("recordcount").map(String::as_str), Some("7"));
        assert_eq!(p.get("x").map(String::as_str), Some("a=b"));
        assert!(apply_overrides(&mut p, &["novalue".into()]).is_err());
        let e = parse("ok=1\nbroken line\n").err().unwrap_or_default();
        assert!(e.contains("line 2"), "{e}");
        Ok(())
    }

    #[test]
    fn builtins_are_ycsbs() -> Result<(), String> {
        let a = load_workload("a")?;
        assert_eq!(a["readproportion"], "0.5");
        assert_eq!(a["updateproportion"], "0.5");
        assert_eq!(a["requestdistribution"], "zipfian");
        assert_eq!(load_workload("D")?["requestdistribution"], "latest");
        let e = load_workload("e")?;
        assert_eq!(e["scanproportion"], "0.95");
        assert_eq!(e["maxscanlength"], "100");
        assert_eq!(load_workload("f")?["readmodifywriteproportion"], "0.5");
        assert!(load_workload("g").is_err_and(|e| e.contains("a, b, c, d, e, f")));
        Ok(())
    }
}
