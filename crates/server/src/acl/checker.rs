//! The permission checks, HBase's AccessController rules: who is a
//! superuser (`hbase.superuser` and the user running the server), which
//! grants cover a request's scope, and the denial every protocol turns
//! into its own error (`ErrorCode::AccessDenied`; HBase's
//! `AccessDeniedException`).
//!
//! One [`AccessChecker`] per process holds the current [`AclState`]
//! (standalone: shared by the master and the region server; distributed:
//! the master's copy of the meta, and each region server's copy the master
//! pushes). A region server that has not yet received the permissions
//! grants nothing but to superusers. [`Access`] is one caller in front of
//! the checker; with `hbase.security.authorization` false every check
//! passes at once. This module never reads requests: the services say
//! what a call touches.

use super::groups::GroupMapping;
use super::model::{AclState, Action, Actions, Scope};
use crate::error::{Result, ServerError};
use bytes::Bytes;
use ferrobase_proto::ErrorCode;
use ferrobase_types::{Cell, RowMutation, Settings};
use parking_lot::RwLock;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Counter of denied calls.
pub const DENIED_METRIC: &str = "ferrobase_access_denied_total";

/// The permissions, by user.
#[derive(Default)]
struct Indexed {
    state: AclState,
    by_user: HashMap<String, Vec<(Scope, Actions)>>,
}

impl Indexed {
    fn of(state: AclState) -> Indexed {
        let mut by_user: HashMap<String, Vec<(Scope, Actions)>> = HashMap::new();
        for p in &state.permissions {
            by_user
                .entry(p.user.clone())
                .or_default()
                .push((p.scope.clone(), p.actions));
        }
        Indexed { state, by_user }
    }

    /// True when one of the grants to `who` (the user, or one of its
    /// `@group`s) with `action` passes `covers`.
    fn any(&self, who: &Principal, action: Action, covers: impl Fn(&Scope) -> bool) -> bool {
        who.names().any(|name| {
            self.by_user
                .get(name)
                .is_some_and(|ps| ps.iter().any(|(s, a)| a.contains(action) && covers(s)))
        })
    }

    fn namespace(&self, who: &Principal, ns: &str, action: Action) -> bool {
        self.any(who, action, |s| match s {
            Scope::Global => true,
            Scope::Namespace { namespace } => namespace == ns,
            Scope::Table { .. } => false,
        })
    }

    fn column(
        &self,
        who: &Principal,
        table: &str,
        f: Option<&[u8]>,
        q: Option<&[u8]>,
        a: Action,
    ) -> bool {
        self.any(who, a, |s| s.covers(table, f, q))
    }

    /// HBase's `authorizeUserFamily`: a grant on the family, on one of its
    /// qualifiers, or wider.
    fn family_or_qualifier(&self, who: &Principal, table: &str, family: &[u8], a: Action) -> bool {
        self.any(who, a, |s| match s {
            Scope::Table {
                table: t,
                family: Some(f),
                ..
            } => t == table && f[..] == *family,
            s => s.covers(table, None, None),
        })
    }
}

/// The process's permissions and settings.
pub struct AccessChecker {
    enabled: bool,
    superusers: HashSet<String>,
    /// `@group`s (without the `@`) of `hbase.superuser`.
    superuser_groups: HashSet<String>,
    groups: GroupMapping,
    state: RwLock<Arc<Indexed>>,
    /// False until a state was set (a region server waits for the master's).
    loaded: AtomicBool,
}

/// A caller as the checks see it: the user and its groups, each as
/// `@group` (the name grants to a group are stored under), so a grant to
/// `@ops` applies to every member of `ops`.
#[derive(Clone, Debug, Default)]
pub struct Principal {
    user: Arc<str>,
    groups: Arc<[String]>,
}

impl Principal {
    /// The user and its groups (`@` + name), the names grants are held by.
    fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(&*self.user).chain(self.groups.iter().map(String::as_str))
    }
}

impl AccessChecker {
    /// The checker `settings` ask for; an `hbase.security.authentication`
    /// that is not known is refused by name.
    pub fn from_settings(settings: &Settings) -> Result<Arc<AccessChecker>> {
        crate::auth::Authentication::mode(settings)?;
        let (mut superusers, mut superuser_groups) = (HashSet::new(), HashSet::new());
        for name in settings.superuser.split(',').map(str::trim) {
            match name.strip_prefix('@') {
                Some(group) if !group.is_empty() => superuser_groups.insert(group.to_string()),
                Some(_) => false,
                None if name.is_empty() => false,
                None => superusers.insert(name.to_string()),
            };
        }
        superusers.insert(ferrobase_types::settings::os_user());
        Ok(Arc::new(AccessChecker {
            enabled: settings.security_authorization,
            superusers,
            superuser_groups,
            groups: GroupMapping::from_settings(settings)?,
            state: RwLock::default(),
            loaded: AtomicBool::new(false),
        }))
    }

    /// A checker that lets everything through.
    pub fn disabled() -> Arc<AccessChecker> {
        Arc::new(AccessChecker {
            enabled: false,
            superusers: HashSet::new(),
            superuser_groups: HashSet::new(),
            groups: GroupMapping::none(),
            state: RwLock::default(),
            loaded: AtomicBool::new(true),
        })
    }

    /// True when `hbase.security.authorization` is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Replaces the permissions (the master's meta changed, or the master
    /// pushed them).
    pub fn set_state(&self, state: AclState) {
        *self.state.write() = Arc::new(Indexed::of(state));
        self.loaded.store(true, Ordering::Release);
    }

    /// The current permissions.
    pub fn state(&self) -> AclState {
        self.state.read().state.clone()
    }

    /// The version of the current permissions; `None` before any was set.
    pub fn version(&self) -> Option<u64> {
        self.loaded
            .load(Ordering::Acquire)
            .then(|| self.state.read().state.version)
    }

    /// True for `hbase.superuser` (a user named there, or a member of a
    /// group named there as `@group`) and the user running this process.
    pub fn is_superuser(&self, user: &str) -> bool {
        self.is_superuser_principal(&self.principal(user))
    }

    fn is_superuser_principal(&self, who: &Principal) -> bool {
        self.superusers.contains(&*who.user)
            || who.groups.iter().any(|g| {
                g.strip_prefix('@')
                    .is_some_and(|g| self.superuser_groups.contains(g))
            })
    }

    /// `user` with its groups (looked up only when permissions are
    /// enforced: nothing else needs them).
    fn principal(&self, user: &str) -> Principal {
        let groups: Arc<[String]> = if self.enabled {
            self.groups
                .groups_of(user)
                .iter()
                .map(|g| format!("@{g}"))
                .collect()
        } else {
            Arc::from(Vec::new())
        };
        Principal {
            user: Arc::from(user),
            groups,
        }
    }

    /// `user` in front of this checker.
    pub fn access(self: &Arc<Self>, user: Arc<str>) -> Access {
        let groups = self.principal(&user).groups;
        Access {
            checker: self.clone(),
            who: Principal { user, groups },
        }
    }

    fn snapshot(&self) -> Arc<Indexed> {
        self.state.read().clone()
    }
}

/// One caller's view of the checker: every check a service makes.
#[derive(Clone)]
pub struct Access {
    checker: Arc<AccessChecker>,
    who: Principal,
}

/// Cells a caller may read of one table, when that is not all of them
/// (HBase's `AccessControlFilter`): READ at the cell's family or column.
#[derive(Clone)]
pub struct CellFilter {
    index: Arc<Indexed>,
    who: Principal,
    table: String,
}

impl CellFilter {
    /// True when the caller may read `cell`.
    pub fn allows(&self, cell: &Cell) -> bool {
        self.index.column(
            &self.who,
            &self.table,
            Some(&cell.family),
            Some(&cell.qualifier),
            Action::Read,
        )
    }

    /// `rows` with the cells the caller may not read removed, and rows
    /// left empty dropped when `drop_empty`.
    pub fn filter_rows(&self, rows: &mut Vec<(Bytes, Vec<Cell>)>, drop_empty: bool) {
        for (_, cells) in rows.iter_mut() {
            cells.retain(|c| self.allows(c));
        }
        if drop_empty {
            rows.retain(|(_, cells)| !cells.is_empty());
        }
    }
}

/// The columns a read names: each family with its qualifiers (none: the
/// whole family).
pub type ReadColumns<'a> = [(&'a [u8], Vec<&'a [u8]>)];

impl Access {
    /// An access that passes every check (internal work).
    pub fn unchecked() -> Access {
        AccessChecker::disabled().access(Arc::from(""))
    }

    /// The caller's user name (empty: none was given).
    pub fn user(&self) -> &str {
        &self.who.user
    }

    /// True when checks apply to this caller (authorization on, not a
    /// superuser).
    pub fn checked(&self) -> bool {
        self.checker.enabled && !self.checker.is_superuser_principal(&self.who)
    }

    /// The checker.
    pub fn checker(&self) -> &Arc<AccessChecker> {
        &self.checker
    }

    fn deny(&self, what: &str, scope: &Scope, actions: &[Action]) -> ServerError {
        let action: Vec<&str> = actions.iter().map(|a| a.name()).collect();
        let action = action.join("|");
        let user: &str = if self.who.user.is_empty() {
            "(anonymous)"
        } else {
            &self.who.user
        };
        tracing::warn!(
            target: "ferrobase::audit",
            user,
            action,
            %scope,
            call = what,
            result = "denied",
            "access denied"
        );
        metrics::counter!(DENIED_METRIC).increment(1);
        ServerError::new(
            ErrorCode::AccessDenied,
            format!(
                "Insufficient permissions for user '{user}' ({scope}, action={action}) in {what}"
            ),
        )
    }

    fn require(
        &self,
        what: &str,
        scope: &Scope,
        actions: &[Action],
        allowed: impl Fn(&Indexed, Action) -> bool,
    ) -> Result<()> {
        if !self.checked() {
            return Ok(());
        }
        let index = self.checker.snapshot();
        if actions.iter().any(|&a| allowed(&index, a)) {
            Ok(())
        } else {
            Err(self.deny(what, scope, actions))
        }
    }

    /// One of `actions` globally.
    pub fn require_global(&self, what: &str, actions: &[Action]) -> Result<()> {
        self.require(what, &Scope::Global, actions, |ix, a| {
            ix.any(&self.who, a, |s| *s == Scope::Global)
        })
    }

    /// One of `actions` on namespace `ns` (or globally).
    pub fn require_namespace(&self, what: &str, ns: &str, actions: &[Action]) -> Result<()> {
        let scope = Scope::Namespace {
            namespace: ns.to_string(),
        };
        self.require(what, &scope, actions, |ix, a| {
            ix.namespace(&self.who, ns, a)
        })
    }

    /// One of `actions` on `table` (or its namespace, or globally).
    pub fn require_table(&self, what: &str, table: &str, actions: &[Action]) -> Result<()> {
        let scope = Scope::table(table, None, None);
        self.require(what, &scope, actions, |ix, a| {
            ix.column(&self.who, table, None, None, a)
        })
    }

    /// One of `actions` on `table`'s `family` (or wider).
    pub fn require_family(
        &self,
        what: &str,
        table: &str,
        family: &[u8],
        actions: &[Action],
    ) -> Result<()> {
        let scope = Scope::table(table, Some(family), None);
        self.require(what, &scope, actions, |ix, a| {
            ix.column(&self.who, table, Some(family), None, a)
        })
    }

    /// Every `action` on one column (a checkAndMutate's checked column
    /// needs READ and WRITE).
    pub fn require_column_all(
        &self,
        what: &str,
        table: &str,
        (family, qualifier): (&[u8], &[u8]),
        actions: &[Action],
    ) -> Result<()> {
        for &a in actions {
            let scope = Scope::table(table, Some(family), Some(qualifier));
            self.require(what, &scope, &[a], |ix, a| {
                ix.column(&self.who, table, Some(family), Some(qualifier), a)
            })?;
        }
        Ok(())
    }

    /// WRITE on every cell of `mutations` (HBase's `permissionGranted`):
    /// the table, else each family, else each cell's column. A mutation
    /// without cells needs the table.
    pub fn require_write(&self, what: &str, table: &str, mutations: &[RowMutation]) -> Result<()> {
        if !self.checked() {
            return Ok(());
        }
        let ix = self.checker.snapshot();
        let user = &self.who;
        if ix.column(user, table, None, None, Action::Write) {
            return Ok(());
        }
        for m in mutations {
            if m.families().is_empty() {
                return Err(self.deny(what, &Scope::table(table, None, None), &[Action::Write]));
            }
            for f in m.families() {
                if ix.column(user, table, Some(&f.family), None, Action::Write) {
                    continue;
                }
                for c in m.mutations().filter(|c| *c.family == f.family) {
                    if !ix.column(
                        user,
                        table,
                        Some(c.family),
                        Some(c.qualifier),
                        Action::Write,
                    ) {
                        let scope = Scope::table(table, Some(c.family), Some(c.qualifier));
                        return Err(self.deny(what, &scope, &[Action::Write]));
                    }
                }
            }
        }
        Ok(())
    }

    /// A read of `columns` of `table` (HBase's `preGetOp`/`preScannerOpen`):
    /// `Ok(None)` when everything asked for may be read, `Ok(Some(filter))`
    /// when only some of it (the filter drops the rest), an error when
    /// nothing of it. A read naming no family needs READ on the table.
    pub fn read(
        &self,
        what: &str,
        table: &str,
        columns: &ReadColumns<'_>,
    ) -> Result<Option<CellFilter>> {
        if !self.checked() {
            return Ok(None);
        }
        let ix = self.checker.snapshot();
        let user = &self.who;
        let r = Action::Read;
        if ix.column(user, table, None, None, r) {
            return Ok(None);
        }
        let all_granted = !columns.is_empty()
            && columns.iter().all(|(f, qs)| {
                ix.column(user, table, Some(f), None, r)
                    || (!qs.is_empty()
                        && qs
                            .iter()
                            .all(|q| ix.column(user, table, Some(f), Some(q), r)))
            });
        if all_granted {
            return Ok(None);
        }
        let some_granted = columns.iter().any(|(f, qs)| {
            if qs.is_empty() {
                ix.family_or_qualifier(user, table, f, r)
            } else {
                qs.iter()
                    .any(|q| ix.column(user, table, Some(f), Some(q), r))
            }
        });
        if some_granted {
            return Ok(Some(CellFilter {
                index: ix,
                who: self.who.clone(),
                table: table.to_string(),
            }));
        }
        let scope = match columns {
            [(f, _)] => Scope::table(table, Some(f), None),
            _ => Scope::table(table, None, None),
        };
        Err(self.deny(what, &scope, &[r]))
    }

    /// The caller's actions on exactly `scope` and every wider one, for
    /// HBase's `hasUserPermissions` (asked by `user`, not the caller).
    pub fn user_has(&self, user: &str, scope: &Scope, action: Action) -> bool {
        if !self.checker.enabled {
            return true;
        }
        let user = &self.checker.principal(user);
        if self.checker.is_superuser_principal(user) {
            return true;
        }
        let ix = self.checker.snapshot();
        match scope {
            Scope::Global => ix.any(user, action, |s| *s == Scope::Global),
            Scope::Namespace { namespace } => ix.namespace(user, namespace, action),
            Scope::Table {
                table,
                family,
                qualifier,
            } => ix.column(user, table, family.as_deref(), qualifier.as_deref(), action),
        }
    }

    /// True when the caller holds any grant touching `table` (HBase shows
    /// such tables in `list`).
    pub fn sees_table(&self, table: &str) -> bool {
        if !self.checked() {
            return true;
        }
        let ix = self.checker.snapshot();
        self.who.names().any(|name| {
            ix.by_user.get(name).is_some_and(|ps| {
                ps.iter().any(|(s, a)| {
                    !a.is_empty() && (s.covers(table, None, None) || s.table_name() == Some(table))
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker(grants: &[(&str, Scope, &str)]) -> Arc<AccessChecker> {
        let settings = Settings {
            security_authorization: true,
            superuser: "root,admin".into(),
            ..Settings::default()
        };
        let c = AccessChecker::from_settings(&settings).unwrap();
        let mut s = AclState::default();
        for (u, scope, a) in grants {
            s.grant(u, scope, Actions::parse(a).unwrap(), false);
        }
        c.set_state(s);
        c
    }

    fn who(c: &Arc<AccessChecker>, u: &str) -> Access {
        c.access(Arc::from(u))
    }

    #[test]
    fn group_grants_and_group_superusers_apply_to_members() {
        let settings = Settings {
            security_authorization: true,
            superuser: "root, @admins".into(),
            group_mapping: "NullGroupsMapping".into(),
            group_static_overrides: "alice=ops,dev;bob=dev;carol=admins;dave=".into(),
            ..Settings::default()
        };
        let c = AccessChecker::from_settings(&settings).unwrap();
        let mut s = AclState::default();
        s.grant(
            "@ops",
            &Scope::table("t", None, None),
            Actions::parse("RW").unwrap(),
            false,
        );
        s.grant(
            "@dev",
            &Scope::table("u", Some(b"f"), None),
            Actions::parse("R").unwrap(),
            false,
        );
        c.set_state(s);
        let (alice, bob, carol, dave) = (
            who(&c, "alice"),
            who(&c, "bob"),
            who(&c, "carol"),
            who(&c, "dave"),
        );
        // A member of @ops writes t; a member of @dev alone does not.
        let put = [RowMutation::new("r").put("f", "q", "v")];
        assert!(alice.require_write("put", "t", &put).is_ok());
        let e = bob.require_write("put", "t", &put).unwrap_err();
        assert!(e.to_string().contains("'bob'"), "{e}");
        // @dev's family grant covers alice and bob, not dave.
        for a in [&alice, &bob] {
            assert!(a.require_family("get", "u", b"f", &[Action::Read]).is_ok());
        }
        assert!(
            dave.require_family("get", "u", b"f", &[Action::Read])
                .is_err()
        );
        assert!(alice.sees_table("u") && !dave.sees_table("u"));
        // A member of @admins is a superuser; "@admins" itself is no user.
        assert!(!carol.checked());
        assert!(c.is_superuser("carol") && !c.is_superuser("@admins"));
        assert!(alice.user_has("bob", &Scope::table("u", Some(b"f"), None), Action::Read));
        assert!(!alice.user_has("dave", &Scope::table("u", Some(b"f"), None), Action::Read));
    }

    #[test]
    fn superusers_pass_and_others_need_a_grant() {
        let c = checker(&[("bob", Scope::table("t", None, None), "R")]);
        assert!(
            who(&c, "admin")
                .require_global("x", &[Action::Admin])
                .is_ok()
        );
        let e = who(&c, "bob")
            .require_global("x", &[Action::Admin])
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::AccessDenied);
        assert!(
            e.message.contains("'bob'") && e.message.contains("ADMIN"),
            "{}",
            e.message
        );
        assert!(
            who(&c, "bob")
                .require_table("x", "t", &[Action::Read])
                .is_ok()
        );
        assert!(
            who(&c, "bob")
                .require_table("x", "t", &[Action::Write])
                .is_err()
        );
        assert!(
            who(&c, "bob")
                .require_table("x", "t", &[Action::Admin, Action::Read])
                .is_ok()
        );
    }

    #[test]
    fn namespace_grants_cover_their_tables() {
        let c = checker(&[("ann", Scope::from_shell(Some("@ns"), None, None), "WC")]);
        let ann = who(&c, "ann");
        assert!(ann.require_table("x", "ns:t", &[Action::Create]).is_ok());
        assert!(ann.require_namespace("x", "ns", &[Action::Create]).is_ok());
        assert!(ann.require_table("x", "t", &[Action::Create]).is_err());
        let m = RowMutation::new(&b"r"[..]).put("f", &b"q"[..], &b"v"[..]);
        assert!(
            ann.require_write("put", "ns:t", std::slice::from_ref(&m))
                .is_ok()
        );
        assert!(ann.require_write("put", "other", &[m]).is_err());
    }

    #[test]
    fn family_reads_filter_and_qualifier_writes_check_every_cell() {
        let c = checker(&[
            ("bob", Scope::table("t", Some(b"f"), None), "R"),
            ("bob", Scope::table("t", Some(b"g"), Some(b"q")), "W"),
        ]);
        let bob = who(&c, "bob");
        // The whole family granted: no filter.
        assert!(
            bob.read("get", "t", &[(&b"f"[..], vec![])])
                .unwrap()
                .is_none()
        );
        // Two families, one granted: filtered.
        let filter = bob
            .read("get", "t", &[(&b"f"[..], vec![]), (&b"g"[..], vec![])])
            .unwrap()
            .unwrap();
        let cell = |f: &'static [u8]| Cell::put(&b"r"[..], f, &b"q"[..], 1, &b"v"[..]);
        assert!(filter.allows(&cell(b"f")));
        assert!(!filter.allows(&cell(b"g")));
        // No family named and no table grant: denied, as in HBase.
        assert!(bob.read("scan", "t", &[]).is_err());
        let ok = RowMutation::new(&b"r"[..]).put("g", &b"q"[..], &b"v"[..]);
        let bad = ok.clone().put("g", &b"other"[..], &b"v"[..]);
        assert!(bob.require_write("put", "t", &[ok]).is_ok());
        let e = bob.require_write("put", "t", &[bad]).unwrap_err();
        assert!(e.message.contains("qualifier=other"), "{}", e.message);
    }

    #[test]
    fn authorization_off_passes_everything() {
        let c = AccessChecker::from_settings(&Settings::default()).unwrap();
        let nobody = who(&c, "");
        assert!(!nobody.checked());
        assert!(nobody.require_global("x", &[Action::Admin]).is_ok());
        assert!(nobody.read("scan", "t", &[]).unwrap().is_none());
    }

    #[test]
    fn unknown_authentication_is_refused_by_name() {
        let settings = Settings {
            security_authentication: "ldap".into(),
            ..Settings::default()
        };
        let e = AccessChecker::from_settings(&settings).err().unwrap();
        assert!(e.message.contains("hbase.security.authentication=ldap"));
    }
}
