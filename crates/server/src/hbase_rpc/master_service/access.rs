//! MasterService's permission calls (HBase 2's `Admin.grant`, `revoke`,
//! `getUserPermissions`, `hasUserPermissions`, `getSecurityCapabilities`,
//! which the Java `AccessControlClient` and the HBase shell use), in
//! HBase's `AccessControlProtos` messages. Who may call them is HBase's
//! rule: ADMIN at the scope granted, revoked or listed; anyone for their
//! own permissions.

use super::*;
use crate::acl::{Actions, Scope, UserPermission as Granted};
use crate::service::master::require_admin_at;

/// A permission message's scope and actions.
fn from_pb(p: &pb::Permission) -> Outcome<(Scope, Actions)> {
    use pb::permission::Type;
    let actions = |codes: &[i32]| -> Outcome<Actions> {
        codes
            .iter()
            .map(|&c| {
                crate::acl::Action::from_code(c)
                    .ok_or_else(|| do_not_retry(format!("unknown permission action {c}")))
            })
            .collect()
    };
    match p.r#type() {
        Type::Global => {
            let g = p.global_permission.clone().unwrap_or_default();
            Ok((Scope::Global, actions(&g.action)?))
        }
        Type::Namespace => {
            let n = p.namespace_permission.clone().unwrap_or_default();
            let ns = n.namespace_name.unwrap_or_default();
            Ok((
                Scope::Namespace {
                    namespace: String::from_utf8_lossy(&ns).into_owned(),
                },
                actions(&n.action)?,
            ))
        }
        Type::Table => {
            let t = p.table_permission.clone().unwrap_or_default();
            let table = t
                .table_name
                .as_ref()
                .ok_or_else(|| do_not_retry("a table permission without a table"))?;
            let name = table_name(table)?;
            Ok((
                Scope::table(&name, t.family.as_deref(), t.qualifier.as_deref()),
                actions(&t.action)?,
            ))
        }
    }
}

/// A granted permission as HBase's message.
fn to_pb(p: &Granted) -> Outcome<pb::UserPermission> {
    use pb::permission::Type;
    let codes: Vec<i32> = p.actions.iter().map(crate::acl::Action::code).collect();
    let permission = match &p.scope {
        Scope::Global => pb::Permission {
            r#type: Type::Global as i32,
            global_permission: Some(pb::GlobalPermission { action: codes }),
            ..Default::default()
        },
        Scope::Namespace { namespace } => pb::Permission {
            r#type: Type::Namespace as i32,
            namespace_permission: Some(pb::NamespacePermission {
                namespace_name: Some(namespace.clone().into_bytes().into()),
                action: codes,
            }),
            ..Default::default()
        },
        Scope::Table {
            table,
            family,
            qualifier,
        } => pb::Permission {
            r#type: Type::Table as i32,
            table_permission: Some(pb::TablePermission {
                table_name: Some(
                    TableName::parse(table)
                        .map_err(|e| do_not_retry(e.to_string()))?
                        .to_pb(),
                ),
                family: family.clone().map(Into::into),
                qualifier: qualifier.clone().map(Into::into),
                action: codes,
            }),
            ..Default::default()
        },
    };
    Ok(pb::UserPermission {
        user: p.user.clone().into_bytes().into(),
        permission,
    })
}

fn user_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl MasterService<'_> {
    /// `Grant`: ADMIN at the scope granted.
    pub fn grant(&self, req: &pb::GrantRequest) -> Outcome<pb::GrantResponse> {
        let up = &req.user_permission;
        let (scope, actions) = from_pb(&up.permission)?;
        require_admin_at(self.access, "grant", &scope).map_err(exception)?;
        let merge = req.merge_existing_permissions.unwrap_or(false);
        self.master
            .grant(&user_of(&up.user), &scope, actions, merge)
            .map_err(exception)?;
        Ok(pb::GrantResponse {})
    }

    /// `Revoke`: ADMIN at the scope revoked; the actions given (all when
    /// none) are removed.
    pub fn revoke(&self, req: &pb::RevokeRequest) -> Outcome<pb::RevokeResponse> {
        let up = &req.user_permission;
        let (scope, actions) = from_pb(&up.permission)?;
        require_admin_at(self.access, "revoke", &scope).map_err(exception)?;
        self.master
            .revoke(&user_of(&up.user), &scope, actions)
            .map_err(exception)?;
        Ok(pb::RevokeResponse {})
    }

    /// `GetUserPermissions`: the permissions at a scope (a table's include
    /// its family and qualifier grants), of one user when named.
    pub fn user_permissions(
        &self,
        req: &pb::GetUserPermissionsRequest,
    ) -> Outcome<pb::GetUserPermissionsResponse> {
        use pb::permission::Type;
        let scope = match req.r#type() {
            Type::Table => {
                let t = req
                    .table_name
                    .as_ref()
                    .ok_or_else(|| do_not_retry("table permissions without a table"))?;
                Scope::table(&table_name(t)?, None, None)
            }
            Type::Namespace => Scope::Namespace {
                namespace: user_of(req.namespace_name.as_deref().unwrap_or_default()),
            },
            Type::Global => Scope::Global,
        };
        let user = req.user_name.as_deref().map(user_of);
        if user.as_deref() != Some(self.access.user()) {
            require_admin_at(self.access, "getUserPermissions", &scope).map_err(exception)?;
        }
        let family = req.column_family.as_deref().filter(|f| !f.is_empty());
        let qualifier = req.column_qualifier.as_deref().filter(|q| !q.is_empty());
        let user_permission = self
            .master
            .user_permissions(&scope, family, user.as_deref())
            .iter()
            .filter(|p| match (&p.scope, qualifier) {
                (Scope::Table { qualifier: q, .. }, Some(want)) => q.as_deref() == Some(want),
                _ => true,
            })
            .map(to_pb)
            .collect::<Outcome<Vec<_>>>()?;
        Ok(pb::GetUserPermissionsResponse { user_permission })
    }

    /// `HasUserPermissions`: for each permission asked, whether the user
    /// (the caller when none is named) holds it. Asking about another user
    /// needs global ADMIN.
    pub fn has_user_permissions(
        &self,
        req: &pb::HasUserPermissionsRequest,
    ) -> Outcome<pb::HasUserPermissionsResponse> {
        let user = req
            .user_name
            .as_deref()
            .map(user_of)
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| self.access.user().to_string());
        if user != self.access.user() {
            self.require_global("hasUserPermissions", ADMIN)?;
        }
        let mut has_user_permission = Vec::with_capacity(req.permission.len());
        for p in &req.permission {
            let (scope, actions) = from_pb(p)?;
            has_user_permission.push(
                actions
                    .iter()
                    .all(|a| self.access.user_has(&user, &scope, a)),
            );
        }
        Ok(pb::HasUserPermissionsResponse {
            has_user_permission,
        })
    }

    /// `getSecurityCapabilities`: AUTHORIZATION when it is on (the shell
    /// refuses `grant` without it, as HBase's does).
    pub fn security_capabilities(&self) -> Outcome<pb::SecurityCapabilitiesResponse> {
        use pb::security_capabilities_response::Capability;
        let mut capabilities = vec![Capability::SimpleAuthentication as i32];
        if self.access.checker().enabled() {
            capabilities.push(Capability::Authorization as i32);
        }
        Ok(pb::SecurityCapabilitiesResponse { capabilities })
    }
}
