//! Namespace commands: create_namespace, alter_namespace,
//! describe_namespace, list_namespace, list_namespace_tables and
//! drop_namespace (HBase's `namespace` group).
//!
//! Each is one or two Admin calls; the master keeps the namespaces and
//! refuses what HBase refuses (an existing or unknown namespace, dropping
//! one that has tables). This module checks arguments, applies
//! `alter_namespace`'s set/unset to the current configuration, and lays
//! out the output as HBase 2's shell does.

use super::{Reply, arity, name_pattern};
use crate::session::Shell;
use crate::value::{Dict, Value};
use crate::{ShellError, arg_err};
use std::collections::BTreeMap;

/// The namespace name, the first argument.
fn namespace_name(command: &str, args: &[Value]) -> Result<String, ShellError> {
    match args.first() {
        None => arg_err(format!("{command} needs a namespace name")),
        Some(v @ (Value::Str(_) | Value::Word(_))) => v.text("namespace name"),
        Some(v) => arg_err(format!(
            "namespace name must be a string, not {}",
            v.describe()
        )),
    }
}

/// The dicts after the name; HBase's shell accepts nothing else there.
fn dicts<'a>(command: &str, args: &'a [Value]) -> Result<Vec<Dict<'a>>, ShellError> {
    args.iter()
        .skip(1)
        .map(|a| match a {
            Value::Dict(pairs) => Ok(Dict::new(pairs)),
            v => arg_err(format!(
                "{command} takes a dict after the namespace name, not {}",
                v.describe()
            )),
        })
        .collect()
}

/// HBase's `NamespaceDescriptor.toString`: `{NAME => 'ns', K => 'V'}`,
/// keys sorted.
fn descriptor_text(name: &str, config: &BTreeMap<String, String>) -> String {
    let mut s = format!("{{NAME => '{name}'");
    for (k, v) in config {
        s.push_str(&format!(", {k} => '{v}'"));
    }
    s.push('}');
    s
}

/// `create_namespace 'ns' [, {'KEY' => 'VALUE', ...}]`.
pub async fn create_namespace(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("create_namespace", args, 1..=usize::MAX)?;
    let name = namespace_name("create_namespace", args)?;
    let mut config = BTreeMap::new();
    for d in dicts("create_namespace", args)? {
        for (k, v) in d.entries()? {
            config.insert(k.clone(), v.text(&k)?);
        }
    }
    shell.admin.create_namespace(&name, &config).await?;
    Ok(Reply::timed())
}

/// `alter_namespace 'ns', {METHOD => 'set', 'K' => 'V'}` or
/// `{METHOD => 'unset', NAME => 'K'}`: changes the configuration read
/// from the master and writes the whole of it back, as HBase's shell does.
pub async fn alter_namespace(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("alter_namespace", args, 2..=usize::MAX)?;
    let name = namespace_name("alter_namespace", args)?;
    let changes = dicts("alter_namespace", args)?;
    // Checked before the master is asked, so that a typo changes nothing.
    for d in &changes {
        match d.get("METHOD").map(|m| m.text("METHOD")).transpose()? {
            Some(m) if m == "set" => {}
            Some(m) if m == "unset" => {
                d.check_keys(
                    "alter_namespace with METHOD => 'unset'",
                    &["METHOD", "NAME"],
                )?;
                if d.get("NAME").is_none() {
                    return arg_err(
                        "alter_namespace with METHOD => 'unset' needs NAME => 'KEY' (the key to remove)",
                    );
                }
            }
            Some(m) => {
                return arg_err(format!(
                    "unknown METHOD '{m}' for alter_namespace; valid methods: set, unset"
                ));
            }
            None => return arg_err("alter_namespace needs METHOD => 'set' or METHOD => 'unset'"),
        }
    }
    let mut config = shell.admin.describe_namespace(&name).await?.config;
    for d in &changes {
        let unset = d.get("METHOD").map(|m| m.key()) == Some(Some("unset".to_string()));
        if unset {
            if let Some(key) = d.get("NAME") {
                config.remove(&key.text("NAME")?);
            }
            continue;
        }
        for (k, v) in d.entries()? {
            if k != "METHOD" {
                config.insert(k.clone(), v.text(&k)?);
            }
        }
    }
    shell.admin.modify_namespace(&name, &config).await?;
    Ok(Reply::timed())
}

/// `describe_namespace 'ns'`: `DESCRIPTION` and the descriptor.
pub async fn describe_namespace(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("describe_namespace", args, 1..=1)?;
    let name = namespace_name("describe_namespace", args)?;
    let d = shell.admin.describe_namespace(&name).await?;
    out.push_str("DESCRIPTION\n");
    shell.fmt.line(&descriptor_text(&d.name, &d.config), out);
    Ok(Reply::timed())
}

/// `list_namespace ['regex']`: `NAMESPACE`, the names whose whole name
/// matches, `N row(s)`.
pub async fn list_namespace(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("list_namespace", args, 0..=1)?;
    let re = name_pattern(args, "namespace")?;
    let names: Vec<String> = shell
        .admin
        .list_namespaces()
        .await?
        .into_iter()
        .map(|d| d.name)
        .filter(|n| re.is_match(n))
        .collect();
    out.push_str("NAMESPACE\n");
    for n in &names {
        shell.fmt.line(n, out);
    }
    crate::format::rows(names.len() as u64, out);
    Ok(Reply::timed())
}

/// `list_namespace_tables 'ns'`: `TABLE`, the tables' names without the
/// namespace, `N row(s)`; returns the names.
pub async fn list_namespace_tables(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("list_namespace_tables", args, 1..=1)?;
    let name = namespace_name("list_namespace_tables", args)?;
    let names: Vec<String> = shell
        .admin
        .list_namespace_tables(&name)
        .await?
        .into_iter()
        .map(|t| match t.split_once(':') {
            Some((_, qualifier)) => qualifier.to_string(),
            None => t,
        })
        .collect();
    out.push_str("TABLE\n");
    for n in &names {
        shell.fmt.line(n, out);
    }
    crate::format::rows(names.len() as u64, out);
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    Ok(Reply::value(format!("[{}]", quoted.join(", "))))
}

/// `drop_namespace 'ns'` (it must have no tables).
pub async fn drop_namespace(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("drop_namespace", args, 1..=1)?;
    let name = namespace_name("drop_namespace", args)?;
    shell.admin.delete_namespace(&name).await?;
    Ok(Reply::timed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_text_is_hbase_to_string() {
        let mut config = BTreeMap::new();
        assert_eq!(descriptor_text("ns1", &config), "{NAME => 'ns1'}");
        config.insert("b".to_string(), "2".to_string());
        config.insert("PROPERTY_NAME".to_string(), "owner".to_string());
        assert_eq!(
            descriptor_text("ns1", &config),
            "{NAME => 'ns1', PROPERTY_NAME => 'owner', b => '2'}"
        );
    }
}
