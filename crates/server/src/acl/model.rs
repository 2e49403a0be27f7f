//! Permissions as HBase's AccessController models them: a user is granted
//! a set of [`Action`]s (READ, WRITE, EXEC, CREATE, ADMIN) at one
//! [`Scope`]: global, a namespace, a table, a family of a table or one
//! qualifier of a family. A wider scope implies every narrower one (a table
//! grant covers its families; a namespace grant its tables).
//!
//! [`AclState`] is the whole list, kept in the master's meta and copied to
//! every region server; it changes only through [`AclState::grant`] and
//! [`AclState::revoke`], which follow HBase's `Admin.grant`/`revoke`. This
//! module never decides who may call what: [`super::checker`] does.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One permission bit, with HBase's letter and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Read,
    Write,
    Exec,
    Create,
    Admin,
}

impl Action {
    /// Every action, in HBase's order (its `Permission.Action` codes).
    pub const ALL: [Action; 5] = [
        Action::Read,
        Action::Write,
        Action::Exec,
        Action::Create,
        Action::Admin,
    ];

    /// HBase's letter: `R`, `W`, `X`, `C`, `A`.
    pub fn letter(self) -> char {
        match self {
            Action::Read => 'R',
            Action::Write => 'W',
            Action::Exec => 'X',
            Action::Create => 'C',
            Action::Admin => 'A',
        }
    }

    /// HBase's name: `READ`, `WRITE`, ...
    pub fn name(self) -> &'static str {
        match self {
            Action::Read => "READ",
            Action::Write => "WRITE",
            Action::Exec => "EXEC",
            Action::Create => "CREATE",
            Action::Admin => "ADMIN",
        }
    }

    /// HBase's protobuf enum value (`Permission.Action`).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The action of a protobuf enum value.
    pub fn from_code(code: i32) -> Option<Action> {
        Action::ALL.get(usize::try_from(code).ok()?).copied()
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of actions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Actions(u8);

impl Actions {
    /// No action.
    pub const NONE: Actions = Actions(0);

    /// Every action.
    pub fn all() -> Actions {
        Action::ALL.iter().copied().collect()
    }

    /// Parses HBase's letters (`"RWXCA"`, any order, case-insensitive).
    pub fn parse(text: &str) -> Result<Actions, String> {
        let mut set = Actions::NONE;
        for c in text.chars() {
            let a = Action::ALL
                .into_iter()
                .find(|a| a.letter() == c.to_ascii_uppercase())
                .ok_or_else(|| {
                    format!("invalid permission '{c}' in '{text}': use letters of RWXCA")
                })?;
            set = set.with(a);
        }
        Ok(set)
    }

    /// This set and `a`.
    pub fn with(self, a: Action) -> Actions {
        Actions(self.0 | a.bit())
    }

    /// True when `a` is in the set.
    pub fn contains(self, a: Action) -> bool {
        self.0 & a.bit() != 0
    }

    /// True when the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Both sets.
    pub fn union(self, other: Actions) -> Actions {
        Actions(self.0 | other.0)
    }

    /// This set without `other`'s actions.
    pub fn minus(self, other: Actions) -> Actions {
        Actions(self.0 & !other.0)
    }

    /// The actions, in HBase's order.
    pub fn iter(self) -> impl Iterator<Item = Action> {
        Action::ALL.into_iter().filter(move |a| self.contains(*a))
    }

    /// HBase's letters, in its order (`RWXCA`).
    pub fn letters(self) -> String {
        self.iter().map(Action::letter).collect()
    }
}

impl FromIterator<Action> for Actions {
    fn from_iter<I: IntoIterator<Item = Action>>(iter: I) -> Actions {
        iter.into_iter().fold(Actions::NONE, Actions::with)
    }
}

/// HBase's `Permission.toString`: `[Permission: actions=READ,WRITE]`.
impl fmt::Display for Actions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Action::name).collect();
        write!(f, "[Permission: actions={}]", names.join(","))
    }
}

impl Serialize for Actions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.letters())
    }
}

impl<'de> Deserialize<'de> for Actions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Actions, D::Error> {
        let text = String::deserialize(d)?;
        Actions::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Where a permission applies.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "lowercase")]
pub enum Scope {
    /// Everything.
    Global,
    /// Every table of a namespace.
    Namespace { namespace: String },
    /// A table, or one family of it, or one qualifier of that family.
    Table {
        table: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        family: Option<Vec<u8>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        qualifier: Option<Vec<u8>>,
    },
}

impl Scope {
    /// A table scope, `family` and `qualifier` narrowing it when given
    /// (a qualifier without a family is ignored, as in HBase).
    pub fn table(table: &str, family: Option<&[u8]>, qualifier: Option<&[u8]>) -> Scope {
        let family = family.filter(|f| !f.is_empty()).map(<[u8]>::to_vec);
        let qualifier = family
            .as_ref()
            .and(qualifier.filter(|q| !q.is_empty()).map(<[u8]>::to_vec));
        Scope::Table {
            table: table.to_string(),
            family,
            qualifier,
        }
    }

    /// The scope the shell names: none is global, `@ns` a namespace,
    /// otherwise a table (with an optional family and qualifier).
    pub fn from_shell(target: Option<&str>, family: Option<&[u8]>, qual: Option<&[u8]>) -> Scope {
        match target.filter(|t| !t.is_empty()) {
            None => Scope::Global,
            Some(t) => match t.strip_prefix('@') {
                Some(ns) => Scope::Namespace {
                    namespace: ns.to_string(),
                },
                None => Scope::table(t, family, qual),
            },
        }
    }

    /// True when this (granted) scope covers `table`'s column
    /// `family:qualifier`; `None` asks about the whole table or family.
    pub fn covers(&self, table: &str, family: Option<&[u8]>, qualifier: Option<&[u8]>) -> bool {
        match self {
            Scope::Global => true,
            Scope::Namespace { namespace } => crate::master::namespace_of(table) == namespace,
            Scope::Table {
                table: t,
                family: f,
                qualifier: q,
            } => {
                t == table
                    && f.as_deref().is_none_or(|f| family == Some(f))
                    && q.as_deref().is_none_or(|q| qualifier == Some(q))
            }
        }
    }

    /// The table this scope is in, if any.
    pub fn table_name(&self) -> Option<&str> {
        match self {
            Scope::Table { table, .. } => Some(table),
            _ => None,
        }
    }
}

/// Words for messages: `global`, `namespace=ns`, `table=t, family=f`.
impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Global => f.write_str("global"),
            Scope::Namespace { namespace } => write!(f, "namespace={namespace}"),
            Scope::Table {
                table,
                family,
                qualifier,
            } => {
                write!(f, "table={table}")?;
                if let Some(fam) = family {
                    write!(f, ", family={}", String::from_utf8_lossy(fam))?;
                }
                if let Some(q) = qualifier {
                    write!(f, ", qualifier={}", String::from_utf8_lossy(q))?;
                }
                Ok(())
            }
        }
    }
}

/// One user's actions at one scope (HBase's `UserPermission`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserPermission {
    pub user: String,
    #[serde(flatten)]
    pub scope: Scope,
    pub actions: Actions,
}

/// Every permission, and a version that grows with each change (region
/// servers compare it with theirs to know they are current).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AclState {
    pub version: u64,
    pub permissions: Vec<UserPermission>,
}

impl AclState {
    /// HBase's grant: the user's actions at exactly this scope become
    /// `actions` (or gain them, with `merge`).
    pub fn grant(&mut self, user: &str, scope: &Scope, actions: Actions, merge: bool) {
        match self
            .permissions
            .iter_mut()
            .find(|p| p.user == user && p.scope == *scope)
        {
            Some(p) if merge => p.actions = p.actions.union(actions),
            Some(p) => p.actions = actions,
            None => self.permissions.push(UserPermission {
                user: user.to_string(),
                scope: scope.clone(),
                actions,
            }),
        }
        self.version += 1;
    }

    /// HBase's revoke: removes `actions` (every action when empty) from
    /// the user's entry at exactly this scope; false when there was none.
    pub fn revoke(&mut self, user: &str, scope: &Scope, actions: Actions) -> bool {
        let Some(i) = self
            .permissions
            .iter()
            .position(|p| p.user == user && p.scope == *scope)
        else {
            return false;
        };
        let left = if actions.is_empty() {
            Actions::NONE
        } else {
            self.permissions[i].actions.minus(actions)
        };
        if left.is_empty() {
            self.permissions.remove(i);
        } else {
            self.permissions[i].actions = left;
        }
        self.version += 1;
        true
    }

    /// Drops every permission on `table` (it was deleted).
    pub fn remove_table(&mut self, table: &str) {
        let before = self.permissions.len();
        self.permissions
            .retain(|p| p.scope.table_name() != Some(table));
        if self.permissions.len() != before {
            self.version += 1;
        }
    }

    /// Drops every permission on namespace `ns` (it was deleted).
    pub fn remove_namespace(&mut self, ns: &str) {
        let before = self.permissions.len();
        self.permissions
            .retain(|p| !matches!(&p.scope, Scope::Namespace { namespace } if namespace == ns));
        if self.permissions.len() != before {
            self.version += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_parse_print_and_refuse_garbage() {
        let a = Actions::parse("wr").unwrap();
        assert_eq!(a.letters(), "RW");
        assert_eq!(a.to_string(), "[Permission: actions=READ,WRITE]");
        assert!(Actions::parse("RQ").is_err());
        assert_eq!(Actions::all().letters(), "RWXCA");
    }

    #[test]
    fn wider_scopes_cover_narrower_ones() {
        let t = Scope::table("ns:t", None, None);
        let f = Scope::table("ns:t", Some(b"f"), None);
        let q = Scope::table("ns:t", Some(b"f"), Some(b"q"));
        let ns = Scope::from_shell(Some("@ns"), None, None);
        assert!(ns.covers("ns:t", None, None));
        assert!(!ns.covers("t", None, None));
        assert!(t.covers("ns:t", Some(b"g"), Some(b"x")));
        assert!(f.covers("ns:t", Some(b"f"), Some(b"x")));
        assert!(!f.covers("ns:t", None, None));
        assert!(!f.covers("ns:t", Some(b"g"), None));
        assert!(q.covers("ns:t", Some(b"f"), Some(b"q")));
        assert!(!q.covers("ns:t", Some(b"f"), None));
    }

    #[test]
    fn grant_replaces_or_merges_and_revoke_subtracts() {
        let mut s = AclState::default();
        let t = Scope::table("t", None, None);
        s.grant("bob", &t, Actions::parse("R").unwrap(), false);
        s.grant("bob", &t, Actions::parse("W").unwrap(), true);
        assert_eq!(s.permissions[0].actions.letters(), "RW");
        s.grant("bob", &t, Actions::parse("C").unwrap(), false);
        assert_eq!(s.permissions[0].actions.letters(), "C");
        s.grant("bob", &t, Actions::parse("RC").unwrap(), false);
        assert!(s.revoke("bob", &t, Actions::parse("C").unwrap()));
        assert_eq!(s.permissions[0].actions.letters(), "R");
        assert!(s.revoke("bob", &t, Actions::NONE));
        assert!(s.permissions.is_empty());
        assert!(!s.revoke("bob", &t, Actions::NONE));
        let v = s.version;
        s.remove_table("t");
        assert_eq!(s.version, v, "nothing removed, nothing changed");
    }

    #[test]
    fn state_round_trips_through_json() {
        let mut s = AclState::default();
        s.grant("a", &Scope::Global, Actions::all(), false);
        s.grant(
            "b",
            &Scope::table("t", Some(b"f"), Some(b"q")),
            Actions::parse("RW").unwrap(),
            false,
        );
        let text = serde_json::to_string(&s).unwrap();
        let back: AclState = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
    }
}
