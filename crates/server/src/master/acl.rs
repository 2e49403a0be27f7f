//! The master's side of permissions: grant, revoke and list them in the
//! meta (HBase's `hbase:acl`), the owner's grant when a table is created,
//! and the copies on region servers. Every change is persisted first, then
//! published to this process's checker and pushed to each region server;
//! the reconcile pass pushes again to any server whose copy is older (a
//! new or restarted one). This module does not check who may grant: the
//! services do, before calling it.

use super::*;
use crate::acl::{AccessChecker, AclState, Actions, Scope, UserPermission};

impl Master {
    /// Uses `checker` for this master's permissions, loading the meta's
    /// into it (at start).
    pub fn set_access_checker(&self, checker: Arc<AccessChecker>) {
        checker.set_state(self.meta.snapshot().acl);
        *self.access.write() = checker;
    }

    /// The checker the services ask.
    pub fn access_checker(&self) -> Arc<AccessChecker> {
        self.access.read().clone()
    }

    /// Grants `actions` to `user` at `scope` (replacing what the user had
    /// at exactly that scope, or adding to it with `merge`).
    pub fn grant(&self, user: &str, scope: &Scope, actions: Actions, merge: bool) -> Result<()> {
        if user.trim().is_empty() {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                "grant needs a user name",
            ));
        }
        if actions.is_empty() {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                "Invalid permission: no actions associated with user",
            ));
        }
        let _ddl = self.ddl.lock();
        self.meta.update(|m| {
            check_scope(m, scope)?;
            m.acl.grant(user, scope, actions, merge);
            Ok(())
        })?;
        self.publish_acl();
        Ok(())
    }

    /// Revokes `actions` (all, when empty) from `user` at exactly `scope`.
    pub fn revoke(&self, user: &str, scope: &Scope, actions: Actions) -> Result<()> {
        let _ddl = self.ddl.lock();
        self.meta.update(|m| {
            check_scope(m, scope)?;
            m.acl.revoke(user, scope, actions);
            Ok(())
        })?;
        self.publish_acl();
        Ok(())
    }

    /// Permissions at `scope` exactly (for a table: its table, family and
    /// qualifier grants; `family` narrows them), of `user` when given.
    pub fn user_permissions(
        &self,
        scope: &Scope,
        family: Option<&[u8]>,
        user: Option<&str>,
    ) -> Vec<UserPermission> {
        self.meta
            .snapshot()
            .acl
            .permissions
            .into_iter()
            .filter(|p| user.is_none_or(|u| p.user == u))
            .filter(|p| match (scope, &p.scope) {
                (Scope::Global, Scope::Global) => true,
                (Scope::Namespace { namespace: a }, Scope::Namespace { namespace: b }) => a == b,
                (
                    Scope::Table { table: a, .. },
                    Scope::Table {
                        table: b,
                        family: f,
                        ..
                    },
                ) => a == b && family.is_none_or(|want| f.as_deref() == Some(want)),
                _ => false,
            })
            .collect()
    }

    /// The table an admin target names: a table name, or a region id as
    /// decimal text (the table holding it); the target itself otherwise.
    pub fn table_of_target(&self, target: &str) -> String {
        if self.meta.table(target).is_some() {
            return target.to_string();
        }
        if let Ok(id) = target.parse::<u64>() {
            for (name, t) in self.meta.snapshot().tables {
                if t.regions.iter().any(|r| r.id == id) {
                    return name;
                }
            }
        }
        target.to_string()
    }

    /// The owner's grant of a new table (HBase gives its creator every
    /// action on it), when authorization is on.
    pub(crate) fn grant_owner(&self, m: &mut crate::meta::MetaState, table: &str, owner: &str) {
        if self.access_checker().enabled() && !owner.is_empty() {
            m.acl.grant(
                owner,
                &Scope::table(table, None, None),
                Actions::all(),
                false,
            );
        }
    }

    /// Publishes the meta's permissions to this process and pushes them
    /// to every live region server (one that misses them gets them at the
    /// next reconcile).
    pub(crate) fn publish_acl(&self) {
        let state = self.meta.snapshot().acl;
        self.access_checker().set_state(state.clone());
        for s in self.coordination.live_servers() {
            if let Err(e) = s.set_acl(&state) {
                tracing::warn!(server = %s.address(), error = %e, "could not push permissions; the next reconcile retries");
            }
        }
    }

    /// Pushes the permissions to a server whose copy is at `version`
    /// (`None`: it has none) when that is not the meta's.
    pub(crate) fn sync_acl(
        &self,
        server: &dyn crate::coordination::RegionServerAdmin,
        version: Option<u64>,
    ) {
        let state: AclState = self.meta.snapshot().acl;
        if version == Some(state.version) {
            return;
        }
        if let Err(e) = server.set_acl(&state) {
            tracing::debug!(server = %server.address(), error = %e, "could not push permissions");
        }
    }
}

/// A grant's scope must name a table (and family) or namespace that exists.
fn check_scope(m: &crate::meta::MetaState, scope: &Scope) -> Result<()> {
    match scope {
        Scope::Global => Ok(()),
        Scope::Namespace { namespace } => {
            if BUILTIN_NAMESPACES.contains(&namespace.as_str())
                || m.namespaces.contains_key(namespace)
            {
                Ok(())
            } else {
                Err(ServerError::new(
                    ErrorCode::NamespaceNotFound,
                    format!("Can't find a namespace: {namespace}"),
                ))
            }
        }
        Scope::Table { table, family, .. } => {
            let t = m
                .tables
                .get(table)
                .ok_or_else(|| ServerError::no_table(table))?;
            match family {
                Some(f)
                    if !t
                        .descriptor
                        .families
                        .iter()
                        .any(|d| d.name.as_bytes() == &f[..]) =>
                {
                    Err(ServerError::new(
                        ErrorCode::FamilyNotFound,
                        format!("Can't find a family: {}", String::from_utf8_lossy(f)),
                    ))
                }
                _ => Ok(()),
            }
        }
    }
}
