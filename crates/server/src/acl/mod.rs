//! Authorization, HBase's AccessController model (`hbase.security.authorization`):
//! [`model`] (actions, scopes, the permission list and grant/revoke),
//! [`checker`] (superusers, the checks, the denial error and its audit
//! line), [`groups`] (a user's groups, for `@group` grants), [`identity`] (who a connection's caller is), [`wire`] (gRPC messages). The permissions
//! live in the master's meta (`meta.json`, beside the tables) and every
//! region server holds a copy the master pushes (distributed mode) or
//! shares (standalone). The services call the checks before touching
//! data; this module touches none.

pub mod checker;
pub mod groups;
pub mod identity;
pub mod model;
pub mod wire;

pub use checker::{Access, AccessChecker, CellFilter};
pub use model::{AclState, Action, Actions, Scope, UserPermission};
