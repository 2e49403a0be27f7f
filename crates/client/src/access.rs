//! Permissions through the master (HBase's `Admin.grant`, `revoke`,
//! `getUserPermissions`): a [`Permission`] names a user, a scope (global,
//! `@namespace`, or a table with an optional family and qualifier) and
//! HBase's action letters `RWXCA`. With `hbase.security.authorization`
//! on, granting needs ADMIN at the scope. This module only sends calls;
//! the master checks them.

use crate::admin::Admin;
use crate::error::Result;
use ferrobase_proto::pb;

/// One user's actions at one scope, as `user_permission` lists them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Permission {
    pub user: String,
    /// The namespace (of the table, for a table permission); empty: global.
    pub namespace: String,
    /// Empty: a global or namespace permission.
    pub table: String,
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    /// HBase's letters, in its order (`RWXCA`).
    pub actions: String,
}

impl Permission {
    /// `actions` (letters of `RWXCA`) for `user` at the scope the HBase
    /// shell names: `None` is global, `"@ns"` a namespace, otherwise a
    /// table (with an optional family and qualifier).
    pub fn new(
        user: &str,
        actions: &str,
        target: Option<&str>,
        family: Option<&[u8]>,
        qualifier: Option<&[u8]>,
    ) -> Permission {
        let mut p = Permission {
            user: user.to_string(),
            actions: actions.to_string(),
            ..Default::default()
        };
        match target.filter(|t| !t.is_empty()) {
            None => {}
            Some(t) => match t.strip_prefix('@') {
                Some(ns) => p.namespace = ns.to_string(),
                None => {
                    p.table = t.to_string();
                    p.family = family.unwrap_or_default().to_vec();
                    p.qualifier = qualifier.unwrap_or_default().to_vec();
                }
            },
        }
        p
    }

    fn to_pb(&self) -> pb::Permission {
        pb::Permission {
            user: self.user.clone(),
            namespace: self.namespace.clone(),
            table: self.table.clone(),
            family: self.family.clone().into(),
            qualifier: self.qualifier.clone().into(),
            actions: self.actions.clone(),
        }
    }

    fn from_pb(p: pb::Permission) -> Permission {
        Permission {
            user: p.user,
            namespace: p.namespace,
            table: p.table,
            family: p.family.to_vec(),
            qualifier: p.qualifier.to_vec(),
            actions: p.actions,
        }
    }
}

/// Who the server says the caller is.
pub type WhoAmI = pb::WhoAmIResponse;

impl Admin {
    /// Grants the permission (replacing what the user had at exactly that
    /// scope, as HBase's `grant`).
    pub async fn grant(&self, permission: &Permission) -> Result<()> {
        let req = pb::GrantRequest {
            permission: Some(permission.to_pb()),
            merge: false,
        };
        self.inner.active_master().await?.grant(req).await?;
        Ok(())
    }

    /// Revokes the permission's actions (all of them when its actions are
    /// empty) at exactly its scope.
    pub async fn revoke(&self, permission: &Permission) -> Result<()> {
        let req = pb::RevokeRequest {
            permission: Some(permission.to_pb()),
        };
        self.inner.active_master().await?.revoke(req).await?;
        Ok(())
    }

    /// The permissions at a scope: `None` global, `"@ns"` a namespace,
    /// otherwise a table (its family and qualifier grants included).
    pub async fn user_permissions(&self, scope: Option<&str>) -> Result<Vec<Permission>> {
        let req = pb::UserPermissionsRequest {
            scope: scope.unwrap_or_default().to_string(),
            ..Default::default()
        };
        let resp = self
            .inner
            .active_master()
            .await?
            .get_user_permissions(req)
            .await?
            .into_inner();
        Ok(resp
            .permissions
            .into_iter()
            .map(Permission::from_pb)
            .collect())
    }

    /// The user the server takes this connection for, and how it knows.
    pub async fn who_am_i(&self) -> Result<WhoAmI> {
        Ok(self
            .inner
            .active_master()
            .await?
            .who_am_i(pb::Empty {})
            .await?
            .into_inner())
    }
}
