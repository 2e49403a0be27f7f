//! HBase's native RPC on the server's port, beside gRPC: each accepted
//! connection's first bytes decide. HBase clients open with `HBas` (or the
//! 2.6 registry's `Regist`, or `Securi`); gRPC clients with the HTTP/2
//! preface `PRI `. HBase connections are served here; every other
//! connection is handed on, untouched, to the gRPC server through the
//! stream [`split_incoming`] returns. One port serves both, as one port
//! serves HBase's services, so a client's `hbase.client.bootstrap.servers`
//! names the same `host:port` as ferrobase's own clients.
//!
//! What is answered: the connection registry (`Regist` and
//! `ClientMetaService`: cluster id, active master, masters, bootstrap
//! nodes, meta location) and, where this server is the master,
//! `MasterService.IsMasterRunning`, `GetTableNames` and
//! `ListTableNamesByNamespace`, `CreateTable` (with `getProcedureResult`
//! answering its procedure finished), and the one read of `hbase:meta` that
//! `Admin.tableExists` makes (a Get of `table:state`). Every other service and method is answered with
//! HBase's `DoNotRetryIOException` wrapping an
//! `UnsupportedOperationException` that names it, so a Java client fails
//! at once with a message saying what is missing instead of retrying.
//!
//! This module owns sockets and dispatch only; the bytes are
//! `ferrobase-hbase-wire`'s. It never lets one connection's bad bytes reach
//! another: a decode error is answered with HBase's
//! `FatalConnectionException` and that connection alone is closed.

use crate::master::Master;
use bytes::BytesMut;
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::convert::mutation::{cell_to_pb, result_to_pb};
use ferrobase_hbase_wire::convert::schema::table_from_pb;
use ferrobase_hbase_wire::frame::{self, NO_CALL_ID, ServerDecoder, ServerEvent};
use ferrobase_hbase_wire::names::{RegionName, ServerName};
use ferrobase_hbase_wire::names::{TableName, with_pb_magic};
use ferrobase_hbase_wire::{ExceptionClass, HBaseException, RequestFrame, pb};
use ferrobase_proto::ErrorCode;
use ferrobase_types::Cell;
use prost::Message;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// How long a new connection may take to send the bytes that tell its
/// protocol before it is handed to gRPC (which applies its own timeouts).
const SNIFF_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes needed to tell HBase from HTTP/2 (`HBas`/`Regi`/`Secu` vs `PRI `).
const SNIFF_BYTES: usize = 4;

/// Who this server is to HBase clients.
#[derive(Clone)]
pub struct HBaseRpc {
    /// The cluster id the registry answers.
    pub cluster_id: String,
    /// This server (also the master in standalone mode).
    pub server: ServerName,
    /// The master, where this server is it (standalone): answers
    /// `MasterService`.
    pub master: Option<Arc<Master>>,
    /// Procedure ids handed out for DDL (each finished when answered).
    pub procedures: Arc<AtomicU64>,
}

impl HBaseRpc {
    /// Answers one event; false when the connection is to be closed after
    /// what `out` holds is written.
    fn event(&self, event: ServerEvent, conn: &mut Connection, out: &mut BytesMut) -> bool {
        match event {
            ServerEvent::RegistryPreamble => {
                let resp = pb::GetConnectionRegistryResponse {
                    cluster_id: self.cluster_id.clone(),
                };
                let _ = frame::encode_response(out, NO_CALL_ID, &resp, None);
                false
            }
            ServerEvent::SecurityPreamble => {
                let e = HBaseException::new(
                    ExceptionClass::FatalConnection,
                    "security is not enabled on this ferrobase server (SIMPLE authentication only)",
                );
                let _ = frame::encode_exception(out, NO_CALL_ID, &e.to_response());
                true
            }
            ServerEvent::ConnectionHeader(h) => {
                match CellCodec::from_connection_header(&h) {
                    Ok(codec) => conn.codec = codec,
                    Err(e) => {
                        let _ = frame::encode_exception(out, NO_CALL_ID, &e.to_response());
                        return false;
                    }
                }
                conn.service = h.service_name.unwrap_or_default();
                true
            }
            ServerEvent::Call(call) => {
                self.call(conn, &call, out);
                true
            }
            // Events a newer wire crate may add: nothing to answer.
            _ => true,
        }
    }

    fn call(&self, conn: &Connection, call: &RequestFrame, out: &mut BytesMut) {
        let id = call.call_id();
        let service = conn.service.as_str();
        let done = match (service, call.method()) {
            ("ClientMetaService", "GetClusterId") => respond(
                out,
                id,
                &pb::GetClusterIdResponse {
                    cluster_id: Some(self.cluster_id.clone()),
                },
            ),
            ("ClientMetaService", "GetActiveMaster") => respond(
                out,
                id,
                &pb::GetActiveMasterResponse {
                    server_name: Some(self.server.to_pb()),
                },
            ),
            ("ClientMetaService", "GetMasters") => respond(
                out,
                id,
                &pb::GetMastersResponse {
                    master_servers: vec![pb::GetMastersResponseEntry {
                        server_name: self.server.to_pb(),
                        is_active: true,
                    }],
                },
            ),
            ("ClientMetaService", "GetBootstrapNodes") => respond(
                out,
                id,
                &pb::GetBootstrapNodesResponse {
                    server_name: vec![self.server.to_pb()],
                },
            ),
            ("ClientMetaService", "GetMetaRegionLocations") => respond(
                out,
                id,
                &pb::GetMetaRegionLocationsResponse {
                    meta_locations: vec![pb::RegionLocation {
                        region_info: RegionName::meta().region_info(b""),
                        server_name: Some(self.server.to_pb()),
                        seq_num: -1,
                    }],
                },
            ),
            ("MasterService", "IsMasterRunning") => respond(
                out,
                id,
                &pb::IsMasterRunningResponse {
                    is_master_running: self.master.is_some(),
                },
            ),
            ("MasterService", "ListTableNamesByNamespace") if self.master.is_some() => {
                let names = param::<pb::ListTableNamesByNamespaceRequest>(call).and_then(|req| {
                    self.table_names(&pb::GetTableNamesRequest {
                        regex: None,
                        include_sys_tables: Some(true),
                        namespace: Some(req.namespace_name),
                    })
                });
                answer(
                    out,
                    id,
                    names.map(|r| pb::ListTableNamesByNamespaceResponse {
                        table_name: r.table_names,
                    }),
                )
            }
            ("MasterService", "CreateTable") if self.master.is_some() => {
                let created = self
                    .create_table(call)
                    .map(|proc_id| pb::CreateTableResponse {
                        proc_id: Some(proc_id),
                    });
                answer(out, id, created)
            }
            // HBase's method name starts lower case.
            ("MasterService", "getProcedureResult" | "GetProcedureResult") => {
                answer(out, id, self.procedure_result(call))
            }
            ("MasterService", "GetTableNames") if self.master.is_some() => {
                let names =
                    param::<pb::GetTableNamesRequest>(call).and_then(|req| self.table_names(&req));
                answer(out, id, names)
            }
            ("ClientService", "Get") => match param::<pb::GetRequest>(call) {
                Ok(req) if self.is_meta_table_state_get(&req) => {
                    match self.meta_table_state(&req, conn.codec) {
                        Ok((resp, block)) => {
                            frame::encode_response(out, id, &resp, Some(&block)).is_ok()
                        }
                        Err(e) => fail(out, id, &e),
                    }
                }
                Ok(_) => fail(out, id, &HBaseException::unsupported_method(service, "Get")),
                Err(e) => fail(out, id, &e),
            },
            (service, method) => fail(
                out,
                id,
                &HBaseException::unsupported_method(service, method),
            ),
        };
        if !done {
            let e = HBaseException::new(
                ExceptionClass::DoNotRetryIo,
                format!("could not encode the answer to {service}.{}", call.method()),
            );
            let _ = frame::encode_exception(out, id, &e.to_response());
        }
    }

    /// `Admin.listTableNames` (`listTableNamesByNamespace`): user tables,
    /// with `hbase:meta` when system tables are asked for, optionally of
    /// one namespace.
    fn table_names(
        &self,
        req: &pb::GetTableNamesRequest,
    ) -> Result<pb::GetTableNamesResponse, HBaseException> {
        if req.regex.as_deref().is_some_and(|r| !r.is_empty()) {
            return Err(HBaseException::new(
                ExceptionClass::DoNotRetryIo,
                "listTableNames with a pattern is not supported by ferrobase yet",
            ));
        }
        let master = self.master.as_ref().ok_or_else(|| {
            HBaseException::new(
                ExceptionClass::DoNotRetryIo,
                "this server is not the master",
            )
        })?;
        let mut names = Vec::new();
        let meta = TableName::meta();
        let include_sys = req.include_sys_tables.unwrap_or(false);
        if include_sys
            && req
                .namespace
                .as_deref()
                .is_none_or(|ns| ns == meta.namespace())
        {
            names.push(meta.to_pb());
        }
        for name in master.list_tables() {
            let Ok(t) = TableName::parse(&name) else {
                continue;
            };
            if t.is_system() && !include_sys {
                continue;
            }
            if req
                .namespace
                .as_deref()
                .is_some_and(|ns| ns != t.namespace())
            {
                continue;
            }
            names.push(t.to_pb());
        }
        Ok(pb::GetTableNamesResponse { table_names: names })
    }

    /// `Admin.createTable`: DDL runs to completion before the answer, so
    /// the procedure id it returns is already finished.
    fn create_table(&self, call: &RequestFrame) -> Result<u64, HBaseException> {
        let req = param::<pb::CreateTableRequest>(call)?;
        let master = self.master.as_ref().ok_or_else(|| {
            HBaseException::new(
                ExceptionClass::DoNotRetryIo,
                "this server is not the master",
            )
        })?;
        let schema = table_from_pb(&req.table_schema)
            .map_err(|e| HBaseException::new(ExceptionClass::DoNotRetryIo, e.to_string()))?;
        let create = ferrobase_proto::pb::CreateTableRequest {
            schema: Some(ferrobase_proto::schema::table_to_pb(&schema.descriptor)),
            splits: req.split_keys,
            ..Default::default()
        };
        // Creating a table writes and opens regions: off the async worker.
        let run = || master.create_table(create);
        let done = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(run)
            }
            _ => run(),
        };
        done.map_err(|e| {
            let class = match e.code {
                ErrorCode::TableExists => ExceptionClass::TableExists,
                ErrorCode::TableNotFound => ExceptionClass::TableNotFound,
                _ => ExceptionClass::DoNotRetryIo,
            };
            HBaseException::new(class, e.message)
        })?;
        Ok(self.procedures.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Every procedure this server handed out is finished; others are
    /// unknown.
    fn procedure_result(
        &self,
        call: &RequestFrame,
    ) -> Result<pb::GetProcedureResultResponse, HBaseException> {
        use pb::get_procedure_result_response::State;
        let req = param::<pb::GetProcedureResultRequest>(call)?;
        let handed_out = 1..=self.procedures.load(Ordering::Relaxed);
        let state = if handed_out.contains(&req.proc_id) {
            State::Finished
        } else {
            State::NotFound
        };
        Ok(pb::GetProcedureResultResponse {
            state: state as i32,
            ..Default::default()
        })
    }

    /// A Get on `hbase:meta` for `table:state` only: what
    /// `Admin.tableExists` sends. Other meta reads are not served yet.
    fn is_meta_table_state_get(&self, req: &pb::GetRequest) -> bool {
        let meta = RegionName::meta().specifier();
        let on_meta = req.region.value == meta.value || &req.region.value[..] == b"1588230740";
        on_meta
            && self.master.is_some()
            && req.get.column.len() == 1
            && req.get.column.iter().all(|c| {
                &c.family[..] == b"table"
                    && (c.qualifier.is_empty() || c.qualifier.iter().all(|q| &q[..] == b"state"))
            })
    }

    /// The `table:state` cell of a table's meta row (`PBUF` + `TableState`),
    /// or no cell when the table does not exist.
    fn meta_table_state(
        &self,
        req: &pb::GetRequest,
        codec: Option<CellCodec>,
    ) -> Result<(pb::GetResponse, BytesMut), HBaseException> {
        let master = self.master.as_ref().ok_or_else(|| {
            HBaseException::new(
                ExceptionClass::DoNotRetryIo,
                "this server is not the master",
            )
        })?;
        let row = req.get.row.clone();
        let name = String::from_utf8_lossy(&row).into_owned();
        let mut cells = Vec::new();
        if let Ok(enabled) = master.is_enabled(&name) {
            let state = if enabled {
                pb::table_state::State::Enabled
            } else {
                pb::table_state::State::Disabled
            };
            let value = with_pb_magic(&pb::TableState {
                state: state as i32,
            });
            cells.push(Cell::put(row, "table", "state", 0, value));
        }
        let mut block = BytesMut::new();
        let result = match codec {
            Some(codec) => result_to_pb(&cells, codec, &mut block)
                .map_err(|e| HBaseException::new(ExceptionClass::DoNotRetryIo, e.to_string()))?,
            None => pb::Result {
                cell: cells.iter().map(cell_to_pb).collect(),
                ..Default::default()
            },
        };
        Ok((
            pb::GetResponse {
                result: Some(result),
            },
            block,
        ))
    }

    /// Serves one HBase connection until the client closes it or sends
    /// bytes that cannot be trusted.
    async fn serve(self: Arc<Self>, mut stream: TcpStream) {
        let mut decoder = ServerDecoder::default();
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let mut out = BytesMut::new();
        let mut conn = Connection::default();
        loop {
            match stream.read_buf(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let mut open = true;
            while open {
                match decoder.decode(&mut buf) {
                    Ok(None) => break,
                    Ok(Some(event)) => open = self.event(event, &mut conn, &mut out),
                    Err(e) => {
                        tracing::debug!("HBase RPC connection closed: {e}");
                        let _ = frame::encode_exception(
                            &mut out,
                            NO_CALL_ID,
                            &e.exception().to_response(),
                        );
                        open = false;
                    }
                }
            }
            if !out.is_empty() {
                if stream.write_all(&out).await.is_err() {
                    return;
                }
                out.clear();
            }
            if !open {
                let _ = stream.shutdown().await;
                return;
            }
        }
    }
}

/// What one connection said about itself in its header.
#[derive(Default)]
struct Connection {
    /// The one service the connection calls (`ClientService`, ...).
    service: String,
    /// How cells travel; `None`: inside the messages.
    codec: Option<CellCodec>,
}

fn respond<M: Message>(out: &mut BytesMut, call_id: u32, message: &M) -> bool {
    frame::encode_response(out, call_id, message, None).is_ok()
}

/// Answers a call with its result or its exception.
fn answer<M: Message>(out: &mut BytesMut, call_id: u32, result: Result<M, HBaseException>) -> bool {
    match result {
        Ok(m) => respond(out, call_id, &m),
        Err(e) => fail(out, call_id, &e),
    }
}

fn fail(out: &mut BytesMut, call_id: u32, e: &HBaseException) -> bool {
    frame::encode_exception(out, call_id, &e.to_response()).is_ok()
}

/// A call's parameter; a malformed one is HBase's DoNotRetryIOException.
fn param<M: Message + Default>(call: &RequestFrame) -> Result<M, HBaseException> {
    call.decode_param().map_err(|e| e.exception())
}

/// True when the connection speaks HBase RPC; false for anything else
/// (HTTP/2), for a connection closed before it said, or one silent for
/// [`SNIFF_TIMEOUT`].
async fn speaks_hbase(stream: &TcpStream) -> bool {
    let sniff = async {
        let mut head = [0u8; SNIFF_BYTES];
        loop {
            let n = match stream.peek(&mut head).await {
                Ok(n) => n,
                Err(_) => return false,
            };
            let Some(seen) = head.get(..n) else {
                return false;
            };
            if n == 0 || !frame::looks_like_hbase(seen) {
                return false;
            }
            if n >= SNIFF_BYTES {
                return true;
            }
            // A prefix of an HBase preamble: wait for the rest.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::time::timeout(SNIFF_TIMEOUT, sniff)
        .await
        .unwrap_or(false)
}

/// Accepts connections on `listener` (Nagle off), serves the HBase ones
/// and yields the others for `tonic`'s `serve_with_incoming*`. Accepting
/// stops when the returned stream is dropped (the gRPC server stopped), so
/// the port is free again for a restart.
pub fn split_incoming(
    listener: TcpListener,
    rpc: Arc<HBaseRpc>,
) -> ReceiverStream<io::Result<TcpStream>> {
    let (tx, rx) = mpsc::channel::<io::Result<TcpStream>>(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                _ = tx.closed() => return,
                a = listener.accept() => a,
            };
            let stream = match accepted {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of file descriptors and the like: wait, go on.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let tx = tx.clone();
            let rpc = rpc.clone();
            tokio::spawn(async move {
                if speaks_hbase(&stream).await {
                    rpc.serve(stream).await;
                } else {
                    let _ = tx.send(Ok(stream)).await;
                }
            });
        }
    });
    ReceiverStream::new(rx)
}
