//! Permissions in ferrobase's gRPC messages (`pb::Permission`,
//! `pb::AclState`): what the Rust client sends to grant and revoke, and
//! what the master pushes to region servers. HBase's own messages are
//! `hbase_rpc`'s.

use super::model::{AclState, Actions, Scope, UserPermission};
use crate::error::{Result, ServerError};
use ferrobase_proto::{ErrorCode, pb};

/// A permission as sent.
pub fn to_pb(p: &UserPermission) -> pb::Permission {
    let mut out = pb::Permission {
        user: p.user.clone(),
        actions: p.actions.letters(),
        ..Default::default()
    };
    match &p.scope {
        Scope::Global => {}
        Scope::Namespace { namespace } => out.namespace = namespace.clone(),
        Scope::Table {
            table,
            family,
            qualifier,
        } => {
            out.namespace = crate::master::namespace_of(table).to_string();
            out.table = table.clone();
            out.family = family.clone().unwrap_or_default().into();
            out.qualifier = qualifier.clone().unwrap_or_default().into();
        }
    }
    out
}

/// A permission as received; actions that are not HBase's letters are
/// refused.
pub fn from_pb(p: &pb::Permission) -> Result<UserPermission> {
    let actions =
        Actions::parse(&p.actions).map_err(|e| ServerError::new(ErrorCode::InvalidRequest, e))?;
    Ok(UserPermission {
        user: p.user.clone(),
        scope: scope_of(p),
        actions,
    })
}

/// The scope a message names.
pub fn scope_of(p: &pb::Permission) -> Scope {
    if !p.table.is_empty() {
        Scope::table(&p.table, Some(&p.family), Some(&p.qualifier))
    } else if !p.namespace.is_empty() {
        Scope::Namespace {
            namespace: p.namespace.clone(),
        }
    } else {
        Scope::Global
    }
}

/// The whole list as the master pushes it.
pub fn state_to_pb(s: &AclState) -> pb::AclState {
    pb::AclState {
        version: s.version,
        permissions: s.permissions.iter().map(to_pb).collect(),
    }
}

/// The whole list as a region server receives it.
pub fn state_from_pb(s: &pb::AclState) -> Result<AclState> {
    Ok(AclState {
        version: s.version,
        permissions: s.permissions.iter().map(from_pb).collect::<Result<_>>()?,
    })
}
