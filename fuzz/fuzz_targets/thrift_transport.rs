//! The Thrift transports (buffered and framed, detected from the first
//! bytes) reading a connection's whole stream: the first byte says
//! whether only framed transport is accepted and how the stream arrives
//! (chunk size), the rest is what the client sent. Replies are written
//! back to exercise the send path.
#![no_main]

use ferrobase_thrift::protocol::Limits;
use ferrobase_thrift::transport::{Incoming, Transport};
use libfuzzer_sys::fuzz_target;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A client connection: hands out the input `chunk` bytes at a time, and
/// swallows replies.
struct Stream {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
}

impl AsyncRead for Stream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self
            .chunk
            .min(buf.remaining())
            .min(self.data.len() - self.pos);
        let start = self.pos;
        buf.put_slice(&self.data[start..start + n]);
        self.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(Ok(b.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let chunk = match flags >> 1 {
        0 => usize::MAX,
        n => usize::from(n),
    };
    let stream = Stream {
        data: rest.to_vec(),
        pos: 0,
        chunk,
    };
    let limits = Limits {
        max_message: 1 << 16,
        max_depth: 16,
    };
    let mut t = Transport::new(stream, limits, flags & 1 == 1);
    runtime().block_on(async {
        // Every message consumes bytes, so this ends; the bound keeps an
        // execution short.
        for _ in 0..64 {
            match t.next().await {
                Ok(Incoming::Message(m)) => {
                    let _ = t.send(&m).await;
                }
                Ok(Incoming::Bad { resync: true, .. }) => {}
                Ok(Incoming::Bad { resync: false, .. } | Incoming::Closed) | Err(_) => break,
            }
        }
        let _ = t.wire();
    });
});
