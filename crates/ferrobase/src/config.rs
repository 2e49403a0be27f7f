//! Settings from the TOML file and `--set` overrides.

use anyhow::Context;
use ferrobase_types::Settings;
use std::path::Path;

/// Defaults, then the file, then the overrides.
pub fn load(file: Option<&Path>, overrides: &[String]) -> anyhow::Result<Settings> {
    let mut s = Settings::default();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading settings file {}", path.display()))?;
        s.apply_toml(&text)
            .with_context(|| format!("in settings file {}", path.display()))?;
    }
    for o in overrides {
        s.apply_override(o)
            .with_context(|| format!("in --set {o}"))?;
    }
    Ok(s)
}

/// Prints every setting (a closed pipe ends it with that error, which the
/// caller treats as the reader having had enough).
pub fn print(s: &Settings, markdown: bool) -> std::io::Result<()> {
    use std::io::Write;
    let values = s.values();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if markdown {
        writeln!(out, "| setting | default | meaning |")?;
        writeln!(out, "|---|---|---|")?;
    }
    for (def, (_, value)) in Settings::DEFINITIONS.iter().zip(values) {
        if markdown {
            writeln!(
                out,
                "| `{}` | `{}` | {} |",
                def.name,
                def.default.replace('_', ""),
                def.doc
            )?;
        } else {
            writeln!(out, "{} = {}    # {}", def.name, value, def.doc)?;
        }
    }
    out.flush()
}
