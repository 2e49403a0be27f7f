//! Starting a process's info port (web UI, /metrics, /jmx; see
//! `ferrobase_server::info_server`) and the banner line naming it.
//!
//! A port that cannot be bound is reported on stderr and the process goes
//! on serving data: the info port is for watching, not for the data path.

use ferrobase_server::info_server::{InfoParts, InfoServer};
use std::io::Write;
use std::net::SocketAddr;

/// Starts the info server (HTTPS when `hbase.ssl.enabled`), or says on
/// stderr why it did not.
pub async fn start(
    bind: SocketAddr,
    parts: InfoParts,
    settings: &ferrobase_types::Settings,
) -> Option<InfoServer> {
    let tls = match ferrobase_server::tls::info(settings) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "warning: info port not started: {e}");
            return None;
        }
    };
    match InfoServer::start(bind, parts, tls).await {
        Ok(s) => Some(s),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "warning: info port not started: {e}");
            None
        }
    }
}

/// `  info port (web UI, /metrics, /jmx): http://ADDR/` (empty without one).
pub fn banner_line(info: Option<&InfoServer>) -> String {
    info.map(|i| {
        format!(
            "  info port (web UI, /metrics, /jmx): {}://{}/\n",
            i.scheme(),
            i.addr()
        )
    })
    .unwrap_or_default()
}
