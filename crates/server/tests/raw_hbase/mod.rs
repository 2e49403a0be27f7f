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

    /// Connects to `service` with a token over SASL DIGEST-MD5 (no user
    /// in the header, as HBase's client sends it); `Err` holds the
    /// server's SASL refusal (class, message).
    pub async fn connect_with_token(
        addr: std::net::SocketAddr,
        service: &str,
        identifier: &[u8],
        password: &[u8],
    ) -> Result<RawConn, (String, String)> {
        use ferrobase_hbase_wire::sasl::{self, ServerReply, digest_md5::DigestMd5Client};
        let mut s = TcpStream::connect(addr).await.unwrap();
        let mut out = BytesMut::new();
        frame::encode_preamble(&mut out, AuthMethod::Digest);
        sasl::encode_client_token(&mut out, b"").unwrap();
        s.write_all(&out).await.unwrap();
        let mut buf = BytesMut::new();
        let mut client = DigestMd5Client::new(
            &sasl::base64_encode(identifier),
            sasl::base64_encode(password).as_bytes(),
            "dGVzdCBjbm9uY2U=",
            "null/default",
        );
        let mut responded = false;
        loop {
            let reply = loop {
                if let Some(r) = sasl::decode_server_reply(&mut buf).unwrap() {
                    break r;
                }
                assert!(s.read_buf(&mut buf).await.unwrap() > 0, "closed mid-SASL");
            };
            match reply {
                ServerReply::Error { class, message } => return Err((class, message)),
                ServerReply::SwitchToSimple => panic!("the server switched to SIMPLE"),
                ServerReply::Token(t) if !responded => {
                    let mut out = BytesMut::new();
                    sasl::encode_client_token(&mut out, &client.respond(&t).unwrap()).unwrap();
                    s.write_all(&out).await.unwrap();
                    responded = true;
                }
                ServerReply::Token(t) => {
                    client.verify(&t).unwrap();
                    break;
                }
            }
        }
        let header = pb::ConnectionHeader {
            service_name: Some(service.into()),
            cell_block_codec_class: Some(CellCodec::KeyValue.class_name().into()),
            ..Default::default()
        };
        let mut out = BytesMut::new();
        frame::encode_connection_header(&mut out, &header).unwrap();
        s.write_all(&out).await.unwrap();
        Ok(RawConn {
            s,
            buf,
            next_id: 1,
            early: HashMap::new(),
        })
    }

    /// Writes `bytes` and reads until the server closes: everything it
    /// answered.
    pub async fn exchange_until_closed(addr: std::net::SocketAddr, bytes: &[u8]) -> BytesMut {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(bytes).await.unwrap();
        let mut buf = BytesMut::new();
        while s.read_buf(&mut buf).await.unwrap_or(0) > 0 {}
        buf
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
