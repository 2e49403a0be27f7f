//! An accepted connection, TLS or plain, as one stream type the servers
//! serve (gRPC through tonic's `serve_with_incoming`, HBase RPC, Thrift,
//! HTTP). [`ServerStream::peek_head`] lets a server look at the first
//! bytes of the (decrypted) stream to pick a protocol: a plain socket is
//! peeked, a TLS stream's bytes are read and kept, then handed back first
//! by the next reads. This module never interprets those bytes.

use crate::identity::PeerIdentity;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

/// What a server knows of a connection: its address and, over TLS with a
/// client certificate, who the certificate says the caller is. gRPC
/// handlers find it in a request's extensions.
#[derive(Debug, Clone, Default)]
pub struct ConnectionInfo {
    pub remote_addr: Option<SocketAddr>,
    /// True over TLS.
    pub tls: bool,
    /// The verified client certificate's identity (mutual TLS).
    pub peer: Option<PeerIdentity>,
}

/// An accepted connection.
pub struct ServerStream {
    kind: Kind,
    info: ConnectionInfo,
    /// Bytes read from a TLS stream by [`ServerStream::peek_head`], not yet
    /// handed to a reader.
    head: Vec<u8>,
    head_at: usize,
}

enum Kind {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// The two halves of a stream, for servers that read and write from
/// different tasks: a plain socket splits without a lock.
pub enum Halves {
    Plain(
        tokio::net::tcp::OwnedReadHalf,
        tokio::net::tcp::OwnedWriteHalf,
    ),
    Tls(
        tokio::io::ReadHalf<ServerStream>,
        tokio::io::WriteHalf<ServerStream>,
    ),
}

impl ServerStream {
    /// A plaintext connection.
    pub fn plain(stream: TcpStream) -> ServerStream {
        let remote_addr = stream.peer_addr().ok();
        ServerStream {
            kind: Kind::Plain(stream),
            info: ConnectionInfo {
                remote_addr,
                tls: false,
                peer: None,
            },
            head: Vec::new(),
            head_at: 0,
        }
    }

    /// A TLS connection whose handshake finished.
    pub fn tls(stream: TlsStream<TcpStream>) -> ServerStream {
        let remote_addr = stream.get_ref().0.peer_addr().ok();
        let peer = PeerIdentity::from_chain(stream.get_ref().1.peer_certificates());
        ServerStream {
            kind: Kind::Tls(Box::new(stream)),
            info: ConnectionInfo {
                remote_addr,
                tls: true,
                peer,
            },
            head: Vec::new(),
            head_at: 0,
        }
    }

    /// The connection's address and identity.
    pub fn info(&self) -> &ConnectionInfo {
        &self.info
    }

    /// True over TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self.kind, Kind::Tls(_))
    }

    /// Up to `want` first bytes of the stream, without consuming them:
    /// fewer only when the peer closed first or sent nothing for
    /// `patience`.
    pub async fn peek_head(&mut self, want: usize, patience: Duration) -> io::Result<Vec<u8>> {
        let deadline = tokio::time::Instant::now() + patience;
        match &mut self.kind {
            Kind::Plain(s) => {
                let mut buf = vec![0u8; want];
                loop {
                    let n = match tokio::time::timeout_at(deadline, s.peek(&mut buf)).await {
                        Ok(r) => r?,
                        Err(_) => return Ok(Vec::new()),
                    };
                    if n == 0 || n >= want {
                        buf.truncate(n);
                        return Ok(buf);
                    }
                    // A prefix: wait for the rest (peek does not wait).
                    if tokio::time::Instant::now() >= deadline {
                        buf.truncate(n);
                        return Ok(buf);
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            Kind::Tls(s) => {
                while self.head.len() - self.head_at < want {
                    let mut chunk = [0u8; 64];
                    let room = (want + self.head_at - self.head.len()).min(chunk.len());
                    let read = tokio::time::timeout_at(deadline, s.read(&mut chunk[..room])).await;
                    match read {
                        Ok(Ok(0)) | Err(_) => break,
                        Ok(Ok(n)) => self.head.extend_from_slice(chunk.get(..n).unwrap_or(&[])),
                        Ok(Err(e)) => return Err(e),
                    }
                }
                Ok(self.head.get(self.head_at..).unwrap_or(&[]).to_vec())
            }
        }
    }

    /// Splits into halves (a TLS stream shares a lock between them).
    pub fn into_halves(self) -> Halves {
        match self.kind {
            Kind::Plain(s) => {
                let (r, w) = s.into_split();
                Halves::Plain(r, w)
            }
            Kind::Tls(_) => {
                let (r, w) = tokio::io::split(self);
                Halves::Tls(r, w)
            }
        }
    }
}

impl AsyncRead for ServerStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.head_at < this.head.len() {
            let rest = this.head.get(this.head_at..).unwrap_or(&[]);
            let n = rest.len().min(buf.remaining());
            buf.put_slice(rest.get(..n).unwrap_or(&[]));
            this.head_at += n;
            if this.head_at == this.head.len() {
                this.head = Vec::new();
                this.head_at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        match &mut this.kind {
            Kind::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Kind::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ServerStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().kind {
            Kind::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Kind::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().kind {
            Kind::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Kind::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.kind {
            Kind::Plain(s) => s.is_write_vectored(),
            Kind::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().kind {
            Kind::Plain(s) => Pin::new(s).poll_flush(cx),
            Kind::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().kind {
            Kind::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Kind::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

impl tonic::transport::server::Connected for ServerStream {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        self.info.clone()
    }
}
