//! Starting a process's info port (web UI, /metrics, /jmx; see
//! `ferrobase_server::info_server`) and the banner line naming it.
//!
//! A port that cannot be bound is reported on stderr and the process goes
//! on serving data: the info port is for watching, not for the data path.

use ferrobase_server::info_server::{InfoParts, InfoServer};
use std::io::Write;
use std::net::SocketAddr;

/// Starts the info server, or says on stderr why it did not.
pub async fn start(bind: SocketAddr, parts: InfoParts) -> Option<InfoServer> {
    match InfoServer::start(bind, parts).await {
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
            "  info port (web UI, /metrics, /jmx): http://{}/\n",
            i.addr()
        )
    })
    .unwrap_or_default()
}
