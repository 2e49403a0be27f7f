//! Mutual TLS 1.3's blind spot, closed on the client side: a TLS 1.3
//! server checks the client's certificate after the client considers the
//! handshake done, so a refused certificate (expired, wrong CA) would
//! surface only later, as a reset or a cancelled call. A ferrobase server
//! that accepts a client sends it session tickets right away; one that
//! refuses sends an alert. [`TicketWatch`] (the client's session store)
//! counts tickets, and [`confirm`] waits, briefly, for a ticket or an
//! alert before the connection is handed over (TLS 1.3 only, to servers
//! that never speak first; about one round trip per new connection).

use rustls::NamedGroup;
use rustls::client::Tls13ClientSessionValue;
use rustls::client::{ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue};
use rustls::pki_types::ServerName;
use std::io;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_rustls::client::TlsStream;

/// The client's session store, counting the TLS 1.3 tickets received.
#[derive(Debug)]
pub struct TicketWatch {
    inner: ClientSessionMemoryCache,
    tickets: watch::Sender<u64>,
}

impl TicketWatch {
    pub fn new() -> TicketWatch {
        TicketWatch {
            inner: ClientSessionMemoryCache::new(256),
            tickets: watch::Sender::new(0),
        }
    }

    /// A receiver that sees the next ticket.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.tickets.subscribe()
    }
}

impl Default for TicketWatch {
    fn default() -> Self {
        TicketWatch::new()
    }
}

impl ClientSessionStore for TicketWatch {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(server_name, group);
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(server_name)
    }

    fn set_tls12_session(&self, server_name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.inner.set_tls12_session(server_name, value);
    }

    fn tls12_session(&self, server_name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(server_name)
    }

    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.inner.remove_tls12_session(server_name);
    }

    fn insert_tls13_ticket(
        &self,
        server_name: ServerName<'static>,
        value: Tls13ClientSessionValue,
    ) {
        self.inner.insert_tls13_ticket(server_name, value);
        self.tickets.send_modify(|n| *n += 1);
    }

    fn take_tls13_ticket(
        &self,
        server_name: &ServerName<'static>,
    ) -> Option<Tls13ClientSessionValue> {
        self.inner.take_tls13_ticket(server_name)
    }
}

/// Waits up to `patience` for the server's verdict on this client's
/// certificate: `Ok` on a ticket (or silence), the server's alert as an
/// error. `tickets` must have been subscribed before the handshake ended.
pub async fn confirm(
    stream: &mut TlsStream<TcpStream>,
    mut tickets: watch::Receiver<u64>,
    patience: Duration,
) -> io::Result<()> {
    let mut byte = [0u8; 1];
    let verdict = async {
        tokio::select! {
            _ = tickets.changed() => Ok(()),
            r = stream.read(&mut byte) => match r {
                Ok(0) => Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                Ok(_) => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the server sent data before the client spoke",
                )),
                Err(e) => Err(e),
            },
        }
    };
    tokio::time::timeout(patience, verdict)
        .await
        .unwrap_or(Ok(()))
}
