//! The server processes' TLS settings as ferrobase errors: the RPC port's
//! (`hbase.server.netty.tls.*`), the info port's (`hbase.ssl.enabled`) and
//! the client side a master uses toward region servers
//! (`hbase.client.netty.tls.*`). A bad setting stops the process at start
//! with the setting's name; the TLS itself is `ferrobase_tls`'s.

use crate::error::{Result, ServerError};
use ferrobase_proto::ErrorCode;
use ferrobase_tls::{ClientTls, ServerTls, TlsError};
use ferrobase_types::Settings;
use std::sync::Arc;

fn invalid(e: TlsError) -> ServerError {
    ServerError::new(ErrorCode::InvalidRequest, e.to_string())
}

/// The RPC port's TLS, when `hbase.server.netty.tls.enabled`.
pub fn rpc(settings: &Settings) -> Result<Option<Arc<ServerTls>>> {
    ServerTls::rpc(settings).map_err(invalid)
}

/// The info port's HTTPS, when `hbase.ssl.enabled`.
pub fn info(settings: &Settings) -> Result<Option<Arc<ServerTls>>> {
    ServerTls::info(settings).map_err(invalid)
}

/// TLS toward other servers, when `hbase.client.netty.tls.enabled`.
pub fn client(settings: &Settings) -> Result<Option<ClientTls>> {
    ClientTls::from_settings(settings).map_err(invalid)
}
