//! Thrift over HTTP (HBase's `hbase.regionserver.thrift.http` mode, what
//! Hue's HBase browser and `THttpClient` speak): each POST carries one
//! Thrift message (binary or compact, told apart by its first byte) and
//! its response carries the reply. The gateway's port serves it beside the
//! socket transports: a connection whose first bytes are an HTTP method is
//! handed to hyper, which owns the HTTP parsing.
//!
//! ```text
//! POST /  Content-Type: application/x-thrift   body: one message
//! 200     Content-Type: application/x-thrift   body: its reply (empty for oneway)
//! 400 / 405 / 413, text/plain                  what was wrong
//! ```
//!
//! This module owns the HTTP side only; a call is answered by the same
//! `Gateway::handle` as on a socket.

use crate::hbase_types::ApplicationError;
use crate::protocol::{Limits, Protocol};
use crate::service::{Gateway, application_error};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// HTTP methods a request line can start with (4 bytes each).
const METHODS: [&[u8; 4]; 6] = [b"POST", b"GET ", b"HEAD", b"PUT ", b"OPTI", b"DELE"];

/// True when a connection's first four bytes start an HTTP request. No
/// Thrift connection starts so: unframed messages begin 0x80 (binary) or
/// 0x82 (compact), and as a frame length these bytes would pass 1 GiB.
pub fn is_http(first: &[u8]) -> bool {
    METHODS.iter().any(|m| first == &m[..])
}

/// Serves HTTP requests on `stream` until the client closes it.
pub async fn serve<S>(stream: S, peer: SocketAddr, gateway: Arc<Gateway>, limits: Limits)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let gateway = gateway.clone();
        async move { Ok::<_, Infallible>(answer(req, &gateway, limits).await) }
    });
    // A client may shut its side once it has sent its request: still
    // answer it (half-closed connections).
    if let Err(e) = hyper::server::conn::http1::Builder::new()
        .half_close(true)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
        .await
    {
        tracing::debug!(%peer, "Thrift HTTP connection ended: {e}");
    }
}

fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn thrift(body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-thrift"),
    );
    r
}

async fn answer(
    req: Request<Incoming>,
    gateway: &Gateway,
    limits: Limits,
) -> Response<Full<Bytes>> {
    if req.method() != Method::POST {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            format!(
                "this is HBase's Thrift gateway: POST one Thrift message, not {}\n",
                req.method()
            ),
        );
    }
    let body = match Limited::new(req.into_body(), limits.max_message)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body could not be read whole within {} bytes \
                     (hbase.regionserver.thrift.framed.max_frame_size_in_mb): {e}\n",
                    limits.max_message
                ),
            );
        }
    };
    let protocol = match body.first() {
        Some(0x80) => Protocol::Binary,
        Some(0x82) => Protocol::Compact,
        Some(b) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!(
                    "the body is not a Thrift binary or compact message (first byte {b:#04x})\n"
                ),
            );
        }
        None => {
            return plain(
                StatusCode::BAD_REQUEST,
                "empty body: no Thrift message\n".into(),
            );
        }
    };
    match protocol.decode(&body, &limits) {
        Ok((message, _)) => match gateway.handle(&message).await {
            Some(reply) => thrift(protocol.encode(&reply)),
            None => thrift(Vec::new()),
        },
        Err(failure) => match failure.header {
            // The client reads a reply: tell it, as on a socket.
            Some(header) => thrift(protocol.encode(&application_error(
                &header,
                ApplicationError::ProtocolError,
                &failure.error.to_string(),
            ))),
            None => plain(
                StatusCode::BAD_REQUEST,
                format!("bad Thrift message: {}\n", failure.error),
            ),
        },
    }
}

/// A stream whose first bytes were already read (to tell HTTP from
/// Thrift): they are read again first.
pub struct Rewind<S> {
    prefix: Vec<u8>,
    at: usize,
    inner: S,
}

impl<S> Rewind<S> {
    pub fn new(prefix: Vec<u8>, inner: S) -> Rewind<S> {
        Rewind {
            prefix,
            at: 0,
            inner,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if let Some(rest) = this.prefix.get(this.at..).filter(|r| !r.is_empty()) {
            let n = rest.len().min(buf.remaining());
            buf.put_slice(rest.get(..n).unwrap_or_default());
            this.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn http_is_told_from_thrift_by_four_bytes() {
        assert!(is_http(b"POST") && is_http(b"GET "));
        for thrift in [
            &b"\x80\x01\x00\x01"[..],
            b"\x82\x21\x00\x0b",
            b"\x00\x00\x00\x20",
            b"POS",
        ] {
            assert!(!is_http(thrift), "{thrift:?}");
        }
    }

    #[tokio::test]
    async fn rewind_reads_its_prefix_then_the_stream() {
        let (mut a, b) = tokio::io::duplex(64);
        tokio::io::AsyncWriteExt::write_all(&mut a, b"defg")
            .await
            .unwrap();
        drop(a);
        let mut r = Rewind::new(b"abc".to_vec(), b);
        let mut all = Vec::new();
        r.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"abcdefg");
    }
}
