//! HBase's security commands: `grant 'user', 'RWXCA' [, 'table' | '@ns'
//! [, 'family' [, 'qualifier']]]`, `revoke 'user' [, 'table' | '@ns'
//! [, 'family' [, 'qualifier']]]` and `user_permission ['table regex' |
//! '@ns']`, printed as HBase's shell prints them. The master checks who
//! may grant; this module only sends the calls.

use super::{Reply, arity, name_pattern};
use crate::session::Shell;
use crate::value::Value;
use crate::{ShellError, arg_err};
use ferrobase_client::Permission;
use ferrobase_types::binary::to_string_binary;

/// The optional `index`th argument as text.
fn text_at(args: &[Value], index: usize, what: &str) -> Result<Option<String>, ShellError> {
    args.get(index).map(|v| v.text(what)).transpose()
}

/// A permission's target (`table` or `@ns`), family and qualifier.
type Target = (Option<String>, Option<Vec<u8>>, Option<Vec<u8>>);

/// The target, family and qualifier from `args[from..]`.
fn scope(args: &[Value], from: usize) -> Result<Target, ShellError> {
    let target = text_at(args, from, "table or @namespace")?;
    let family = args.get(from + 1).map(|v| v.bytes("family")).transpose()?;
    let qualifier = args
        .get(from + 2)
        .map(|v| v.bytes("qualifier"))
        .transpose()?;
    if target.as_deref().is_some_and(|t| t.starts_with('@')) && family.is_some() {
        return arg_err("a namespace permission takes no family or qualifier");
    }
    Ok((target, family, qualifier))
}

/// `grant 'user', 'RWXCA' [, 'table' | '@ns' [, 'family' [, 'qualifier']]]`.
pub async fn grant(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("grant", args, 2..=5)?;
    let user = args[0].text("user")?;
    let actions = args[1].text("permissions")?;
    if actions.is_empty() {
        return arg_err("Invalid permission: no actions associated with user");
    }
    let (target, family, qualifier) = scope(args, 2)?;
    let p = Permission::new(
        &user,
        &actions,
        target.as_deref(),
        family.as_deref(),
        qualifier.as_deref(),
    );
    shell.admin.grant(&p).await?;
    Ok(Reply::timed())
}

/// `revoke 'user' [, 'table' | '@ns' [, 'family' [, 'qualifier']]]`:
/// every action of the user at exactly that scope.
pub async fn revoke(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("revoke", args, 1..=4)?;
    let user = args[0].text("user")?;
    let (target, family, qualifier) = scope(args, 1)?;
    let p = Permission::new(
        &user,
        "",
        target.as_deref(),
        family.as_deref(),
        qualifier.as_deref(),
    );
    shell.admin.revoke(&p).await?;
    Ok(Reply::timed())
}

/// `user_permission ['table regex' | '@ns']`: `User` and
/// `Namespace,Table,Family,Qualifier:Permission` columns, one row per
/// permission (global ones with no argument), `N row(s)`.
pub async fn user_permission(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("user_permission", args, 0..=1)?;
    let target = text_at(args, 0, "table regex or @namespace")?;
    let mut perms: Vec<Permission> = Vec::new();
    let mut table_scoped = false;
    match target.as_deref() {
        None => perms = shell.admin.user_permissions(None).await?,
        Some(t) if t.starts_with('@') => perms = shell.admin.user_permissions(Some(t)).await?,
        Some(_) => {
            table_scoped = true;
            let re = name_pattern(args, "table")?;
            for table in shell.admin.list_tables().await? {
                if re.is_match(&table) {
                    perms.extend(shell.admin.user_permissions(Some(&table)).await?);
                }
            }
        }
    }
    shell
        .fmt
        .header("User", "Namespace,Table,Family,Qualifier:Permission", out);
    for p in &perms {
        let (table, family, qualifier) = if table_scoped {
            (
                p.table.clone(),
                to_string_binary(&p.family),
                to_string_binary(&p.qualifier),
            )
        } else {
            Default::default()
        };
        let actions = actions_text(&p.actions);
        let text = format!(
            "{},{table},{family},{qualifier}: [Permission: actions={actions}]",
            p.namespace
        );
        shell.fmt.row(&p.user, &text, out);
    }
    crate::format::rows(perms.len() as u64, out);
    Ok(Reply::timed())
}

/// HBase's action names for letters: `RW` is `READ,WRITE`.
fn actions_text(letters: &str) -> String {
    let names: Vec<&str> = [
        ('R', "READ"),
        ('W', "WRITE"),
        ('X', "EXEC"),
        ('C', "CREATE"),
        ('A', "ADMIN"),
    ]
    .iter()
    .filter(|(l, _)| letters.contains(*l))
    .map(|(_, n)| *n)
    .collect();
    names.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn actions_are_named_in_hbase_order() {
        assert_eq!(super::actions_text("WR"), "READ,WRITE");
        assert_eq!(super::actions_text("RWXCA"), "READ,WRITE,EXEC,CREATE,ADMIN");
    }
}
