//! A raw HBase RPC connection for tests that need to see the frames: the
//! preamble, a `ConnectionHeader` (one service, KeyValue cell blocks, an
//! optional effective user) and calls matched to answers by call id, which
//! may arrive in any order.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use bytes::BytesMut;
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::frame::{self, AuthMethod, DEFAULT_MAX_FRAME, ResponseFrame};
use ferrobase_hbase_wire::pb;
use std::collections::HashMap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub struct RawConn {
    s: TcpStream,
    buf: BytesMut,
    next_id: u32,
    /// Answers that arrived before the one waited for.
    early: HashMap<u32, ResponseFrame>,
}

impl RawConn {
    /// Connects to `service`, claiming `user` when given (simple auth).
    pub async fn connect(addr: std::net::SocketAddr, service: &str, user: Option<&str>) -> RawConn {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let mut out = BytesMut::new();
        frame::encode_preamble(&mut out, AuthMethod::Simple);
        let header = pb::ConnectionHeader {
            user_info: user.map(|u| pb::UserInformation {
                effective_user: u.into(),
                real_user: None,
            }),
            service_name: Some(service.into()),
            cell_block_codec_class: Some(CellCodec::KeyValue.class_name().into()),
            ..Default::default()
        };
        frame::encode_connection_header(&mut out, &header).unwrap();
        s.write_all(&out).await.unwrap();
        RawConn {
            s,
            buf: BytesMut::new(),
            next_id: 1,
            early: HashMap::new(),
        }
    }

    /// One call without a cell block.
    pub async fn call<M: prost::Message>(&mut self, method: &str, req: &M) -> ResponseFrame {
        self.call_with(method, req, None).await
    }

    /// One call, with `cells` as its cell block.
    pub async fn call_with<M: prost::Message>(
        &mut self,
        method: &str,
        req: &M,
        cells: Option<&[u8]>,
    ) -> ResponseFrame {
        let id = self.next_id;
        self.next_id += 1;
        let mut out = BytesMut::new();
        frame::encode_request(&mut out, id, method, req, cells).unwrap();
        self.s.write_all(&out).await.unwrap();
        loop {
            if let Some(r) = self.early.remove(&id) {
                return r;
            }
            match frame::decode_response(&mut self.buf, DEFAULT_MAX_FRAME).unwrap() {
                Some(r) if r.call_id() == id => return r,
                Some(r) => {
                    self.early.insert(r.call_id(), r);
                }
                None => assert!(self.s.read_buf(&mut self.buf).await.unwrap() > 0),
            }
        }
    }
}
