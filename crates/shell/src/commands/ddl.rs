//! DDL commands: create, list, describe, exists, disable, enable,
//! is_enabled, is_disabled, alter, drop, truncate.
//!
//! Family attributes are parsed by [`FamilyDescriptor::set`], so an unknown
//! attribute or value is reported with the valid ones; this module only
//! maps the shell's argument shapes onto descriptors and admin calls.

use super::{Reply, arity, name_pattern, table_name};
use crate::session::Shell;
use crate::value::{Dict, Value};
use crate::{ShellError, arg_err};
use bytes::Bytes;
use ferrobase_client::SplitAlgorithm;
use ferrobase_types::{Durability, FamilyDescriptor, TableDescriptor};

/// Table-level keys `create` accepts in a dict without `NAME`.
const TABLE_KEYS: &[&str] = &["SPLITS", "NUMREGIONS", "SPLITALGO", "DURABILITY"];

/// Builds a family from a `{NAME => 'f', VERSIONS => 3, …}` dict.
fn family_from_dict(d: &Dict<'_>, skip: &[&str]) -> Result<FamilyDescriptor, ShellError> {
    let name = match d.get("NAME") {
        Some(v) => v.text("NAME")?,
        None => return arg_err("a column family dict needs NAME"),
    };
    let mut f = FamilyDescriptor::new(&name)?;
    apply_attributes(&mut f, d, skip)?;
    Ok(f)
}

fn apply_attributes(
    f: &mut FamilyDescriptor,
    d: &Dict<'_>,
    skip: &[&str],
) -> Result<(), ShellError> {
    for (k, v) in d.entries()? {
        if k == "NAME" || skip.contains(&k.as_str()) {
            continue;
        }
        f.set(&k, &v.text(&k)?)?;
    }
    f.check()?;
    Ok(())
}

pub async fn create(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("create", args, 2..=usize::MAX)?;
    let name = table_name("create", args)?;
    let mut families = Vec::new();
    let mut splits: Vec<Bytes> = Vec::new();
    let mut presplit: Option<(u32, SplitAlgorithm)> = None;
    let mut durability = Durability::UseDefault;
    for a in &args[1..] {
        match a {
            Value::Str(_) | Value::Word(_) => {
                families.push(FamilyDescriptor::new(&a.text("family name")?)?)
            }
            Value::Dict(p) => {
                let d = Dict::new(p);
                if d.get("NAME").is_some() {
                    families.push(family_from_dict(&d, &[])?);
                    continue;
                }
                d.check_keys(
                    "create (a dict without NAME holds table options)",
                    TABLE_KEYS,
                )?;
                if let Some(s) = d.get("SPLITS") {
                    let Value::Array(items) = s else {
                        return arg_err("SPLITS must be an array of split keys");
                    };
                    for i in items {
                        splits.push(i.bytes("a split key")?.into());
                    }
                }
                if let Some(n) = d.get("NUMREGIONS") {
                    let n = n.uint("NUMREGIONS")?;
                    let algo = match d
                        .get("SPLITALGO")
                        .map(|v| v.text("SPLITALGO"))
                        .transpose()?
                    {
                        None => {
                            return arg_err(
                                "NUMREGIONS needs SPLITALGO (HexStringSplit or UniformSplit)",
                            );
                        }
                        Some(a) => split_algorithm(&a)?,
                    };
                    let n = u32::try_from(n).map_err(|_| {
                        ShellError::Argument(format!("NUMREGIONS {n} is too large"))
                    })?;
                    presplit = Some((n, algo));
                } else if d.get("SPLITALGO").is_some() {
                    return arg_err("SPLITALGO needs NUMREGIONS");
                }
                if let Some(v) = d.get("DURABILITY") {
                    let t = v.text("DURABILITY")?;
                    durability = t.parse().map_err(|_| {
                        ShellError::Argument(format!(
                            "invalid DURABILITY '{t}'; valid values: {}",
                            Durability::NAMES.join(", ")
                        ))
                    })?;
                }
            }
            v => {
                return arg_err(format!(
                    "create takes family names and dicts, not {}",
                    v.describe()
                ));
            }
        }
    }
    let mut desc = TableDescriptor::new(&name, families)?;
    desc.durability = durability;
    match presplit {
        Some(_) if !splits.is_empty() => return arg_err("give SPLITS or NUMREGIONS, not both"),
        Some((n, algo)) => shell.admin.create_table_presplit(&desc, n, algo).await?,
        None => shell.admin.create_table(&desc, &splits).await?,
    }
    out.push_str(&format!("Created table {name}\n"));
    Ok(Reply::value(format!("Hbase::Table - {name}")))
}

fn split_algorithm(name: &str) -> Result<SplitAlgorithm, ShellError> {
    match name {
        "HexStringSplit" => Ok(SplitAlgorithm::HexStringSplit),
        "UniformSplit" => Ok(SplitAlgorithm::UniformSplit),
        other => arg_err(format!(
            "unknown SPLITALGO '{other}'; valid values: HexStringSplit, UniformSplit"
        )),
    }
}

pub async fn list(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("list", args, 0..=1)?;
    let re = name_pattern(args, "table")?;
    let mut names: Vec<String> = shell
        .admin
        .list_tables()
        .await?
        .into_iter()
        .filter(|n| re.is_match(n))
        .collect();
    names.sort();
    out.push_str("TABLE\n");
    for n in &names {
        shell.fmt.line(n, out);
    }
    crate::format::rows(names.len() as u64, out);
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    Ok(Reply::value(format!("[{}]", quoted.join(", "))))
}

pub async fn describe(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("describe", args, 1..=1)?;
    let name = table_name("describe", args)?;
    let d = shell.admin.describe(&name).await?;
    let state = if d.enabled { "ENABLED" } else { "DISABLED" };
    shell.fmt.line(&format!("Table {name} is {state}"), out);
    let attrs = match d.descriptor.durability {
        Durability::UseDefault => String::new(),
        other => format!(", {{TABLE_ATTRIBUTES => {{DURABILITY => '{other}'}}}}"),
    };
    shell.fmt.line(&format!("{name}{attrs}"), out);
    out.push_str("COLUMN FAMILIES DESCRIPTION\n");
    for f in &d.descriptor.families {
        shell.fmt.line(&f.to_string(), out);
        out.push('\n');
    }
    crate::format::rows(d.descriptor.families.len() as u64, out);
    Ok(Reply::timed())
}

pub async fn exists(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("exists", args, 1..=1)?;
    let name = table_name("exists", args)?;
    let e = shell.admin.exists(&name).await?;
    out.push_str(&format!(
        "Table {name} {} exist\n",
        if e { "does" } else { "does not" }
    ));
    Ok(Reply::value(e.to_string()))
}

pub async fn disable(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("disable", args, 1..=1)?;
    shell.admin.disable(&table_name("disable", args)?).await?;
    Ok(Reply::timed())
}

pub async fn enable(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("enable", args, 1..=1)?;
    shell.admin.enable(&table_name("enable", args)?).await?;
    Ok(Reply::timed())
}

pub async fn is_enabled(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
    enabled: bool,
) -> Result<Reply, ShellError> {
    let command = if enabled { "is_enabled" } else { "is_disabled" };
    arity(command, args, 1..=1)?;
    let e = shell.admin.is_enabled(&table_name(command, args)?).await?;
    let answer = e == enabled;
    out.push_str(&format!("{answer}\n"));
    Ok(Reply::value(answer.to_string()))
}

/// One change `alter` makes.
enum Change {
    Add(FamilyDescriptor),
    Modify(String, Vec<(String, String)>),
    Delete(String),
}

pub async fn alter(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("alter", args, 2..=usize::MAX)?;
    let name = table_name("alter", args)?;
    let current = shell.admin.describe(&name).await?;
    let existing = |f: &str| {
        current
            .descriptor
            .families
            .iter()
            .find(|d| d.name == f)
            .cloned()
    };
    let mut changes = Vec::new();
    for a in &args[1..] {
        match a {
            Value::Str(_) | Value::Word(_) => {
                let f = a.text("family name")?;
                match existing(&f) {
                    None => changes.push(Change::Add(FamilyDescriptor::new(&f)?)),
                    // As in HBase: a bare name resets the family to defaults.
                    Some(_) => changes.push(Change::Modify(f.clone(), defaults(&f)?)),
                }
            }
            Value::Dict(p) => {
                let d = Dict::new(p);
                if let Some(f) = d.get("delete") {
                    changes.push(Change::Delete(f.text("delete")?));
                    continue;
                }
                let method = d.get("METHOD").map(|m| m.text("METHOD")).transpose()?;
                match method.as_deref() {
                    Some("delete") => {
                        let f = d.get("NAME").ok_or_else(|| {
                            ShellError::Argument("METHOD => 'delete' needs NAME".into())
                        })?;
                        changes.push(Change::Delete(f.text("NAME")?));
                        continue;
                    }
                    None => {}
                    Some(m) => {
                        return arg_err(format!("unknown METHOD '{m}'; valid values: delete"));
                    }
                }
                if d.get("NAME").is_none() {
                    let keys: Vec<String> = d.entries()?.into_iter().map(|(k, _)| k).collect();
                    return arg_err(format!(
                        "alter of table attributes ({}) is not supported; give NAME => 'family' \
                         to add or change a family, or METHOD => 'delete' to remove one",
                        keys.join(", ")
                    ));
                }
                let f = family_from_dict(&d, &["METHOD"])?;
                match existing(&f.name) {
                    None => changes.push(Change::Add(f)),
                    Some(mut cur) => {
                        // Validate against the current family so errors list valid values.
                        apply_attributes(&mut cur, &d, &["METHOD"])?;
                        let mut attrs = Vec::new();
                        for (k, v) in d.entries()? {
                            if k != "NAME" && k != "METHOD" {
                                attrs.push((k.to_ascii_uppercase(), v.text(&k)?));
                            }
                        }
                        changes.push(Change::Modify(f.name, attrs));
                    }
                }
            }
            v => {
                return arg_err(format!(
                    "alter takes family names and dicts, not {}",
                    v.describe()
                ));
            }
        }
    }
    out.push_str("Updating all regions with the new schema...\n");
    for c in changes {
        match c {
            Change::Add(f) => shell.admin.add_family(&name, &f).await?,
            Change::Delete(f) => shell.admin.delete_family(&name, &f).await?,
            Change::Modify(f, attrs) => {
                let refs: Vec<(&str, &str)> = attrs
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                shell.admin.modify_family(&name, &f, &refs).await?;
            }
        }
    }
    let n = current.regions.len();
    out.push_str(&format!("{n}/{n} regions updated.\nDone.\n"));
    Ok(Reply::timed())
}

/// `alter_status 't'`: how many regions have the table's current schema.
/// A schema change is applied to every region before `alter` (and
/// `alter_async`) answers, so it is always all of them.
pub async fn alter_status(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("alter_status", args, 1..=1)?;
    let name = table_name("alter_status", args)?;
    let n = shell.admin.describe(&name).await?.regions.len();
    out.push_str(&format!("{n}/{n} regions updated.\nDone.\n"));
    Ok(Reply::timed())
}

fn defaults(family: &str) -> Result<Vec<(String, String)>, ShellError> {
    Ok(FamilyDescriptor::new(family)?
        .attributes()
        .into_iter()
        .filter(|(k, _)| *k != "NAME")
        .map(|(k, v)| (k.to_string(), v))
        .collect())
}

pub async fn drop(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("drop", args, 1..=1)?;
    shell.admin.drop_table(&table_name("drop", args)?).await?;
    Ok(Reply::timed())
}

pub async fn truncate(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("truncate", args, 1..=1)?;
    let name = table_name("truncate", args)?;
    out.push_str(&format!(
        "Truncating '{name}' table (it may take a while):\n"
    ));
    out.push_str("Disabling table...\nTruncating table...\n");
    shell.admin.truncate(&name).await?;
    Ok(Reply::timed())
}
