//! HBase's native RPC on the server's port, beside gRPC: each accepted
//! connection's first bytes decide. HBase clients open with `HBas` (or the
//! 2.6 registry's `Regist`, or `Securi`); gRPC clients with the HTTP/2
//! preface `PRI `. HBase connections are served here; every other
//! connection is handed on, untouched, to the gRPC server through the
//! stream [`split_incoming`] returns. One port serves both, as one port
//! serves HBase's services, so a client's `hbase.client.bootstrap.servers`
//! names the same `host:port` as ferrobase's own clients. With TLS on
//! (`hbase.server.netty.tls.enabled`) the handshake comes first
//! (`ferrobase_tls::ServerTls::accept` tells a ClientHello from plaintext)
//! and the sniffing looks at the decrypted bytes.
//!
//! Services: the connection registry (`Regist` and `ClientMetaService`),
//! `MasterService` where this server is the master (`master_service`),
//! and `ClientService` (`client_service`, with `hbase:meta` rendered by
//! `meta_table`). A method that is not served is answered with HBase's
//! `DoNotRetryIOException` wrapping an `UnsupportedOperationException`
//! that names it, so a Java client fails at once saying what is missing
//! instead of retrying.
//!
//! One connection carries many calls at once (the Java client multiplexes
//! every thread's calls over one socket per server), so calls are answered
//! as they finish, not in order: short local reads and meta are answered
//! on the connection's task, writes, long scans and DDL on the handler pool
//! or a blocking thread, and one writer task sends the answers.
//!
//! This module owns sockets and dispatch only; the bytes are
//! `ferrobase-hbase-wire`'s. It never lets one connection's bad bytes reach
//! another: a decode error is answered with HBase's
//! `FatalConnectionException` and that connection alone is closed.

mod admin_service;
mod client_service;
mod exceptions;
mod master_service;
mod meta_table;
mod scan;

pub use client_service::{DEFAULT_MAX_RESULT_SIZE, SCANNER_TTL_MS};

use crate::acl::{Access, Action};
use crate::master::Master;
use crate::region_server::RegionServer;
use crate::rpc_metrics::{CallOutcome, CallTimer, Op, Protocol};
use admin_service::CompactionRequests;
use bytes::BytesMut;
use client_service::Answer;
use exceptions::{Target, do_not_retry, exception, target};
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::frame::{self, NO_CALL_ID, ServerDecoder, ServerEvent};
use ferrobase_hbase_wire::names::{RegionName, ServerName};
use ferrobase_hbase_wire::{ExceptionClass, HBaseException, RequestFrame, pb};
use ferrobase_tls::stream::Halves;
use ferrobase_tls::{Accepted, ServerStream, ServerTls};
use master_service::MasterService;
use meta_table::{MetaRow, MetaScanner, Renderer};
use prost::Message;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tracing::Instrument as _;

/// How long a new connection may take to send the bytes that tell its
/// protocol before it is handed to gRPC (which applies its own timeouts).
const SNIFF_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes needed to tell HBase from HTTP/2 (`HBas`/`Regi`/`Secu` vs `PRI `).
const SNIFF_BYTES: usize = 4;

/// Scan opens asking for at most this many rows run on the connection's
/// task on a local root, like the gRPC path's short scans (an HBase Get is
/// one row and always does).
const SHORT_SCAN_ROWS: u32 = 1_000;

/// Meta scanner ids: a range no region scanner uses.
const META_SCANNER_IDS: u64 = 1 << 62;

/// Forward meta scans left unfinished are dropped after this long.
const META_SCANNER_TTL: Duration = Duration::from_secs(60);

/// Who this server is to HBase clients.
pub struct HBaseRpc {
    /// The cluster id the registry answers.
    pub cluster_id: String,
    /// This server (also the master in standalone mode).
    pub server: ServerName,
    /// The master, where this server is it (standalone): answers
    /// `MasterService` and renders `hbase:meta`.
    pub master: Option<Arc<Master>>,
    /// The region server, where this server is one: answers
    /// `ClientService` for its regions.
    pub region_server: Option<Arc<RegionServer>>,
    /// Procedure ids handed out for DDL (each finished when answered).
    pub procedures: Arc<AtomicU64>,
    /// Ids for scans answered whole (no scanner kept).
    pub closed_scanners: AtomicU64,
    /// Forward meta scans that did not fit one answer.
    pub meta_scanners: parking_lot::Mutex<HashMap<u64, MetaScanner>>,
    /// Compactions `AdminService` started and not finished.
    compactions: Arc<CompactionRequests>,
    /// Increments and Appends applied, by nonce (retries apply once).
    nonces: Arc<crate::nonces::ServerNonces>,
}

impl HBaseRpc {
    /// This server's HBase RPC: a master and/or a region server.
    pub fn new(
        cluster_id: impl Into<String>,
        server: ServerName,
        master: Option<Arc<Master>>,
        region_server: Option<Arc<RegionServer>>,
    ) -> HBaseRpc {
        HBaseRpc {
            cluster_id: cluster_id.into(),
            server,
            master,
            procedures: Arc::default(),
            closed_scanners: AtomicU64::new(1),
            meta_scanners: parking_lot::Mutex::default(),
            compactions: Arc::default(),
            nonces: region_server
                .as_ref()
                .map(|rs| rs.nonces().clone())
                .unwrap_or_default(),
            region_server,
        }
    }
}

/// An answer still being worked on: its encoded response frame.
type Pending = Pin<Box<dyn Future<Output = BytesMut> + Send>>;

/// What one connection said about itself in its header.
#[derive(Clone, Default)]
struct Connection {
    /// The one service the connection calls (`ClientService`, ...).
    service: Arc<str>,
    /// How cells travel; `None`: inside the messages.
    codec: Option<CellCodec>,
    /// The verified client certificate's identity (mutual TLS).
    peer: Option<ferrobase_tls::PeerIdentity>,
    /// Who calls ([`crate::acl::identity`]): the certificate's user, else
    /// the header's effective user.
    user: Arc<str>,
}

/// Writes an answer: the message and its cell block, or the exception.
fn write_answer<M: Message>(
    out: &mut BytesMut,
    id: u32,
    result: Result<Answer<M>, HBaseException>,
) {
    let ok = match result {
        Ok(a) => frame::encode_response(out, id, &a.message, Some(&a.cells)).is_ok(),
        Err(e) => fail(out, id, &e),
    };
    if !ok {
        let e = do_not_retry(format!("call {id}: the answer could not be encoded"));
        let _ = frame::encode_exception(out, id, &e.to_response());
    }
}

fn plain<M>(result: Result<M, HBaseException>) -> Result<Answer<M>, HBaseException> {
    result.map(|message| Answer {
        message,
        cells: BytesMut::new(),
    })
}

fn fail(out: &mut BytesMut, call_id: u32, e: &HBaseException) -> bool {
    frame::encode_exception(out, call_id, &e.to_response()).is_ok()
}

/// A call's parameter; a malformed one is HBase's DoNotRetryIOException.
fn param<M: Message + Default>(call: &RequestFrame) -> Result<M, HBaseException> {
    call.decode_param().map_err(|e| e.exception())
}

/// [`param`], with a malformed one already answered: `None` then.
fn decoded<M: Message + Default>(call: &RequestFrame, id: u32, out: &mut BytesMut) -> Option<M> {
    param(call).map_err(|e| fail(out, id, &e)).ok()
}

fn not_master() -> HBaseException {
    HBaseException::new(
        ExceptionClass::DoNotRetryIo,
        "this server is not the master",
    )
}

fn not_region_server() -> HBaseException {
    HBaseException::new(
        ExceptionClass::DoNotRetryIo,
        "this server is not a region server",
    )
}

impl HBaseRpc {
    /// The caller of `conn` in front of this server's permissions.
    fn access(&self, conn: &Connection) -> Access {
        let checker = match (&self.region_server, &self.master) {
            (Some(rs), _) => rs.access_checker().clone(),
            (None, Some(m)) => m.access_checker(),
            (None, None) => crate::acl::AccessChecker::disabled(),
        };
        checker.access(conn.user.clone())
    }

    /// Answers one event; false when the connection is to be closed after
    /// what `out` holds is written.
    fn event(
        self: &Arc<Self>,
        event: ServerEvent,
        conn: &mut Connection,
        out: &mut BytesMut,
        later: &mut Vec<Pending>,
    ) -> bool {
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
                conn.service = Arc::from(h.service_name.unwrap_or_default());
                conn.user = crate::acl::identity::hbase_user(
                    conn.peer.as_ref(),
                    h.user_info.as_ref().map(|u| u.effective_user.as_str()),
                );
                true
            }
            ServerEvent::Call(call) => {
                if let Some(p) = self.call(conn, call, out) {
                    later.push(p);
                }
                true
            }
            // Events a newer wire crate may add: nothing to answer.
            _ => true,
        }
    }

    /// Answers `call` into `out`, or returns the work that will.
    fn call(
        self: &Arc<Self>,
        conn: &Connection,
        call: RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let id = call.call_id();
        match &*conn.service {
            "ClientMetaService" => {
                self.client_meta(id, call.method(), out);
                None
            }
            "MasterService" => self.master_call(conn, id, &call, out),
            "ClientService" => self.timed_client_call(conn, id, call, out),
            "AdminService" => self.admin_call(conn, id, &call, out),
            service => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method(service, call.method()),
                );
                None
            }
        }
    }

    fn client_meta(&self, id: u32, method: &str, out: &mut BytesMut) {
        if self.master.is_none() && method != "GetClusterId" {
            // A region server of a distributed cluster does not know which
            // master is active or where meta is: the masters answer.
            fail(
                out,
                id,
                &do_not_retry(format!(
                    "{method}: this region server does not answer the connection registry; \
                     list the masters in hbase.client.bootstrap.servers"
                )),
            );
            return;
        }
        match method {
            "GetClusterId" => write_answer(
                out,
                id,
                plain(Ok(pb::GetClusterIdResponse {
                    cluster_id: Some(self.cluster_id.clone()),
                })),
            ),
            "GetActiveMaster" => write_answer(
                out,
                id,
                plain(Ok(pb::GetActiveMasterResponse {
                    server_name: Some(self.server.to_pb()),
                })),
            ),
            "GetMasters" => write_answer(
                out,
                id,
                plain(Ok(pb::GetMastersResponse {
                    master_servers: vec![pb::GetMastersResponseEntry {
                        server_name: self.server.to_pb(),
                        is_active: true,
                    }],
                })),
            ),
            "GetBootstrapNodes" => write_answer(
                out,
                id,
                plain(Ok(pb::GetBootstrapNodesResponse {
                    server_name: vec![self.server.to_pb()],
                })),
            ),
            "GetMetaRegionLocations" => write_answer(
                out,
                id,
                plain(Ok(pb::GetMetaRegionLocationsResponse {
                    meta_locations: vec![pb::RegionLocation {
                        region_info: RegionName::meta().region_info(b""),
                        server_name: Some(self.server.to_pb()),
                        seq_num: -1,
                    }],
                })),
            ),
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("ClientMetaService", method),
                );
            }
        }
    }

    /// Runs master work on a blocking thread (DDL writes meta and opens or
    /// closes regions).
    fn on_master<R, M>(
        self: &Arc<Self>,
        id: u32,
        access: Access,
        req: R,
        work: fn(&MasterService<'_>, &R) -> Result<M, HBaseException>,
    ) -> Option<Pending>
    where
        R: Send + 'static,
        M: Message + Send + 'static,
    {
        let rpc = self.clone();
        Some(Box::pin(async move {
            let done = tokio::task::spawn_blocking(move || {
                let master = rpc.master.as_ref().ok_or_else(not_master)?;
                let service = MasterService {
                    master,
                    procedures: &rpc.procedures,
                    access: &access,
                };
                work(&service, &req)
            })
            .await
            .unwrap_or_else(|e| Err(do_not_retry(format!("master call failed: {e}"))));
            let mut out = BytesMut::new();
            write_answer(&mut out, id, plain(done));
            out
        }))
    }

    /// Answers quick master reads at once.
    fn master_now<R, M>(
        &self,
        id: u32,
        access: &Access,
        req: R,
        out: &mut BytesMut,
        work: fn(&MasterService<'_>, &R) -> Result<M, HBaseException>,
    ) where
        M: Message,
    {
        let done = match self.master.as_ref() {
            Some(master) => work(
                &MasterService {
                    master,
                    procedures: &self.procedures,
                    access,
                },
                &req,
            ),
            None => Err(not_master()),
        };
        write_answer(out, id, plain(done));
    }

    fn master_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: &RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let access = self.access(conn);
        macro_rules! now {
            ($req:ty, $m:ident) => {
                now!($req, |s, r| s.$m(r))
            };
            ($req:ty, |$s:pat_param, $r:pat_param| $body:expr) => {{
                match param::<$req>(call) {
                    Ok(req) => self.master_now(
                        id,
                        &access,
                        req,
                        out,
                        |$s: &MasterService<'_>, $r: &$req| $body,
                    ),
                    Err(e) => {
                        fail(out, id, &e);
                    }
                }
                None
            }};
        }
        macro_rules! later {
            ($req:ty, $m:ident) => {{
                match param::<$req>(call) {
                    Ok(req) => {
                        self.on_master(id, access, req, |s: &MasterService<'_>, r: &$req| s.$m(r))
                    }
                    Err(e) => {
                        fail(out, id, &e);
                        None
                    }
                }
            }};
        }
        match call.method() {
            "IsMasterRunning" => {
                write_answer(
                    out,
                    id,
                    plain(Ok(pb::IsMasterRunningResponse {
                        is_master_running: self.master.is_some(),
                    })),
                );
                None
            }
            // HBase's method name starts lower case.
            "getProcedureResult" | "GetProcedureResult" => {
                now!(pb::GetProcedureResultRequest, procedure_result)
            }
            "GetTableNames" => now!(pb::GetTableNamesRequest, table_names),
            "ListTableNamesByNamespace" => now!(pb::ListTableNamesByNamespaceRequest, |s, r| {
                s.table_names(&pb::GetTableNamesRequest {
                    regex: None,
                    include_sys_tables: Some(true),
                    namespace: Some(r.namespace_name.clone()),
                })
                .map(|t| pb::ListTableNamesByNamespaceResponse {
                    table_name: t.table_names,
                })
            }),
            "GetTableDescriptors" => now!(pb::GetTableDescriptorsRequest, table_descriptors),
            "ListTableDescriptorsByNamespace" => now!(
                pb::ListTableDescriptorsByNamespaceRequest,
                tables_of_namespace
            ),
            "GetTableState" => now!(pb::GetTableStateRequest, table_state),
            "GetSchemaAlterStatus" => {
                now!(pb::GetSchemaAlterStatusRequest, schema_alter_status)
            }
            "GetNamespaceDescriptor" => {
                now!(pb::GetNamespaceDescriptorRequest, namespace_descriptor)
            }
            "ListNamespaceDescriptors" => now!(pb::ListNamespaceDescriptorsRequest, |s, _r| s
                .namespace_descriptors()),
            "ListNamespaces" => now!(pb::ListNamespacesRequest, |s, _r| s.namespace_names()),
            "IsBalancerEnabled" => now!(pb::IsBalancerEnabledRequest, |_s, _r| Ok(
                pb::IsBalancerEnabledResponse { enabled: false }
            )),
            "IsInMaintenanceMode" => now!(pb::IsInMaintenanceModeRequest, |_s, _r| Ok(
                pb::IsInMaintenanceModeResponse {
                    in_maintenance_mode: false
                }
            )),
            // Off the async workers: in a distributed cluster the master
            // asks every region server for its load.
            "GetClusterStatus" => {
                let rpc = self.clone();
                Some(Box::pin(async move {
                    let done = tokio::task::spawn_blocking(move || {
                        let master = rpc.master.as_ref().ok_or_else(not_master)?;
                        MasterService {
                            master,
                            procedures: &rpc.procedures,
                            access: &access,
                        }
                        .cluster_status(&rpc.server, &rpc.cluster_id)
                    })
                    .await
                    .unwrap_or_else(|e| Err(do_not_retry(format!("master call failed: {e}"))));
                    let mut out = BytesMut::new();
                    write_answer(&mut out, id, plain(done));
                    out
                }))
            }
            // ferrobase's balancer runs on its own schedule; HBase's switch
            // is reported off and a manual run moves nothing.
            "Balance" => now!(pb::BalanceRequest, |s, _r| {
                s.require_global("balance", &[Action::Admin])?;
                Ok(pb::BalanceResponse {
                    balancer_ran: false,
                    moves_calculated: Some(0),
                    moves_executed: Some(0),
                })
            }),
            "SetBalancerRunning" => now!(pb::SetBalancerRunningRequest, |s, _r| {
                s.require_global("balanceSwitch", &[Action::Admin])?;
                Ok(pb::SetBalancerRunningResponse {
                    prev_balance_value: Some(false),
                })
            }),
            // Permissions (HBase 2's Admin.grant/revoke/getUserPermissions).
            "Grant" => later!(pb::GrantRequest, grant),
            "Revoke" => later!(pb::RevokeRequest, revoke),
            "GetUserPermissions" => now!(pb::GetUserPermissionsRequest, user_permissions),
            "HasUserPermissions" => now!(pb::HasUserPermissionsRequest, has_user_permissions),
            "getSecurityCapabilities" | "GetSecurityCapabilities" => {
                now!(pb::SecurityCapabilitiesRequest, |s, _r| s
                    .security_capabilities())
            }
            "IsSplitOrMergeEnabled" => now!(pb::IsSplitOrMergeEnabledRequest, |_s, _r| {
                // Splits and merges both run (by reference).
                Ok(pb::IsSplitOrMergeEnabledResponse { enabled: true })
            }),
            "ExecProcedure" => later!(pb::ExecProcedureRequest, exec_procedure),
            "IsProcedureDone" => now!(pb::IsProcedureDoneRequest, is_procedure_done),
            "FlushTable" => later!(pb::FlushTableRequest, flush_table),
            "SplitRegion" => later!(pb::SplitTableRegionRequest, split_region),
            "MergeTableRegions" => later!(pb::MergeTableRegionsRequest, merge_regions),
            "MoveRegion" => later!(pb::MoveRegionRequest, move_region),
            "CreateTable" => later!(pb::CreateTableRequest, create_table),
            "DisableTable" => later!(pb::DisableTableRequest, disable_table),
            "EnableTable" => later!(pb::EnableTableRequest, enable_table),
            "DeleteTable" => later!(pb::DeleteTableRequest, delete_table),
            "truncateTable" | "TruncateTable" => {
                later!(pb::TruncateTableRequest, truncate_table)
            }
            "AddColumn" => later!(pb::AddColumnRequest, add_column),
            "ModifyColumn" => later!(pb::ModifyColumnRequest, modify_column),
            "DeleteColumn" => later!(pb::DeleteColumnRequest, delete_column),
            "ModifyTable" => later!(pb::ModifyTableRequest, modify_table),
            "CreateNamespace" => later!(pb::CreateNamespaceRequest, create_namespace),
            "ModifyNamespace" => later!(pb::ModifyNamespaceRequest, modify_namespace),
            "DeleteNamespace" => later!(pb::DeleteNamespaceRequest, delete_namespace),
            "Snapshot" => later!(pb::SnapshotRequest, snapshot),
            "IsSnapshotDone" => later!(pb::IsSnapshotDoneRequest, is_snapshot_done),
            "GetCompletedSnapshots" => {
                later!(pb::GetCompletedSnapshotsRequest, completed_snapshots)
            }
            "DeleteSnapshot" => later!(pb::DeleteSnapshotRequest, delete_snapshot),
            "RestoreSnapshot" => later!(pb::RestoreSnapshotRequest, restore_snapshot),
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("MasterService", method),
                );
                None
            }
        }
    }

    fn renderer(&self) -> Result<Renderer<'_>, HBaseException> {
        Ok(Renderer {
            master: self.master.as_deref().ok_or_else(|| {
                HBaseException::new(
                    ExceptionClass::NotServingRegion,
                    "hbase:meta is served by the master",
                )
            })?,
            local: &self.server,
        })
    }

    /// Runs region work on a handler thread, admitted by the pool.
    fn on_handler<M, F>(&self, id: u32, work: F) -> Option<Pending>
    where
        M: Message + Send + 'static,
        F: FnOnce(&RegionServer) -> Result<Answer<M>, HBaseException> + Send + 'static,
    {
        let rs = self.region_server.clone();
        Some(Box::pin(async move {
            let result = match rs {
                Some(rs) => {
                    let handler = rs.clone();
                    rs.pool()
                        .run(move || Ok(work(&handler)))
                        .await
                        .map_err(exception)
                        .and_then(|r| r)
                }
                None => Err(not_region_server()),
            };
            let mut out = BytesMut::new();
            write_answer(&mut out, id, result);
            out
        }))
    }

    /// Runs short local region work here, still admitted by the pool.
    fn here<M: Message>(
        &self,
        id: u32,
        out: &mut BytesMut,
        work: impl FnOnce(&RegionServer) -> Result<Answer<M>, HBaseException>,
    ) {
        let result = match &self.region_server {
            Some(rs) => rs
                .pool()
                .run_here(|| Ok(work(rs)))
                .map_err(exception)
                .and_then(|r| r),
            None => Err(not_region_server()),
        };
        write_answer(out, id, result);
    }

    fn reads_are_local(&self) -> bool {
        self.region_server
            .as_ref()
            .is_some_and(|rs| rs.engine().reads_are_local())
    }

    /// [`client_call`](Self::client_call), timed and counted
    /// ([`rpc_metrics`](crate::rpc_metrics)); the response size is the
    /// answer frame's.
    fn timed_client_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let op = match call.method() {
            "Get" => Some(Op::Get),
            "Mutate" => Some(Op::Mutate),
            "Scan" => Some(Op::Scan),
            "Multi" => Some(Op::Multi),
            _ => None,
        };
        let (Some(op), Some(rs)) = (op, self.region_server.clone()) else {
            return self.client_call(conn, id, call, out, &mut None);
        };
        let request_bytes = (call.param.as_ref().map_or(0, |p| p.len())
            + call.cell_block.as_ref().map_or(0, |c| c.len())) as u64;
        let mut timer = Some(CallTimer::start(Protocol::Hbase, op));
        let span = timer
            .as_ref()
            .map(CallTimer::span)
            .unwrap_or_else(tracing::Span::none);
        let before = out.len();
        let pending = span.in_scope(|| self.client_call(conn, id, call, out, &mut timer));
        let timer = timer?;
        let finish = move |timer: CallTimer, response_bytes: usize| {
            timer.finish(
                &CallOutcome {
                    // An exception travels as an answer frame too; errors
                    // are counted by the gRPC service only.
                    ok: true,
                    request_bytes,
                    response_bytes: response_bytes as u64,
                    param: &|| format!("call_id={id}"),
                    client: None,
                },
                rs.slow_log(),
            );
        };
        match pending {
            None => {
                finish(timer, out.len().saturating_sub(before));
                None
            }
            Some(p) => Some(Box::pin(
                async move {
                    let answer = p.await;
                    finish(timer, answer.len());
                    answer
                }
                .instrument(span),
            )),
        }
    }

    fn client_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: RequestFrame,
        out: &mut BytesMut,
        timer: &mut Option<CallTimer>,
    ) -> Option<Pending> {
        let codec = conn.codec;
        let rs = self.region_server.as_deref();
        let access = self.access(conn);
        match call.method() {
            "Get" => {
                let req = decoded::<pb::GetRequest>(&call, id, out)?;
                match target(rs, &req.region) {
                    Ok(Target::Meta) => {
                        let got = self.renderer().and_then(|r| r.get(&req.get));
                        let mut block = BytesMut::new();
                        let answer = got.and_then(|cells| {
                            client_service::encode_result(&cells, codec, &mut block)
                        });
                        write_answer(
                            out,
                            id,
                            answer.map(|result| Answer {
                                message: pb::GetResponse {
                                    result: Some(result),
                                },
                                cells: block,
                            }),
                        );
                        None
                    }
                    Ok(Target::Region(region)) if self.reads_are_local() => {
                        self.here(id, out, |rs| {
                            client_service::get(rs, region, &req.get, codec, &access)
                        });
                        None
                    }
                    Ok(Target::Region(region)) => self.on_handler(id, move |rs| {
                        client_service::get(rs, region, &req.get, codec, &access)
                    }),
                    Err(e) => {
                        fail(out, id, &e);
                        None
                    }
                }
            }
            "Mutate" => {
                let req = decoded::<pb::MutateRequest>(&call, id, out)?;
                if let Some(t) = timer.as_mut() {
                    t.set_op(mutate_op(&req));
                }
                match target(rs, &req.region) {
                    Ok(Target::Meta) => {
                        fail(
                            out,
                            id,
                            &do_not_retry("hbase:meta cannot be written by clients"),
                        );
                        None
                    }
                    Ok(Target::Region(region)) => {
                        let block = call.cell_block.clone();
                        let nonces = self.nonces.clone();
                        self.on_handler(id, move |rs| {
                            let io = client_service::Io {
                                cell_block: block.as_ref(),
                                codec,
                                nonces: &nonces,
                                access: &access,
                            };
                            client_service::mutate(rs, region, &req, &io)
                        })
                    }
                    Err(e) => {
                        fail(out, id, &e);
                        None
                    }
                }
            }
            "Scan" => self.scan_call(codec, access, id, &call, out),
            "Multi" => {
                let req = decoded::<pb::MultiRequest>(&call, id, out)?;
                let regions: Vec<Result<u64, HBaseException>> = req
                    .region_action
                    .iter()
                    .map(|ra| match target(rs, &ra.region) {
                        Ok(Target::Region(r)) => Ok(r),
                        Ok(Target::Meta) => Err(do_not_retry(
                            "hbase:meta cannot be read or written in a Multi",
                        )),
                        Err(e) => Err(e),
                    })
                    .collect();
                let block = call.cell_block.clone();
                let nonces = self.nonces.clone();
                self.on_handler(id, move |rs| {
                    let io = client_service::Io {
                        cell_block: block.as_ref(),
                        codec,
                        nonces: &nonces,
                        access: &access,
                    };
                    client_service::multi(rs, &regions, &req, &io)
                })
            }
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("ClientService", method),
                );
                None
            }
        }
    }

    fn admin_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: &RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let Some(rs) = self.region_server.clone() else {
            fail(out, id, &not_region_server());
            return None;
        };
        let access = self.access(conn);
        // HBase's preFlush/preCompact: ADMIN or CREATE on the region's table.
        let require_table = |t: Target, what: &str, out: &mut BytesMut| -> bool {
            let Target::Region(region) = t else {
                return true;
            };
            let checked = rs.region(region).and_then(|r| {
                access.require_table(what, &r.table().name, &[Action::Admin, Action::Create])
            });
            match checked {
                Ok(()) => true,
                Err(e) => {
                    fail(out, id, &exception(e));
                    false
                }
            }
        };
        // A call naming a region: its parameter, and the region resolved.
        macro_rules! region_call {
            ($req:ty) => {{
                let req = decoded::<$req>(call, id, out)?;
                match target(Some(&rs), &req.region) {
                    Ok(t) => (req, t),
                    Err(e) => {
                        fail(out, id, &e);
                        return None;
                    }
                }
            }};
        }
        match call.method() {
            "GetRegionInfo" => {
                let (req, t) = region_call!(pb::GetRegionInfoRequest);
                let done = admin_service::region_info(&rs, t, &req, &self.compactions);
                write_answer(out, id, plain(done));
                None
            }
            "GetOnlineRegion" => {
                decoded::<pb::GetOnlineRegionRequest>(call, id, out)?;
                write_answer(out, id, plain(admin_service::online_regions(&rs)));
                None
            }
            "GetRegionLoad" => {
                let req = decoded::<pb::GetRegionLoadRequest>(call, id, out)?;
                write_answer(out, id, plain(admin_service::region_load(&rs, &req)));
                None
            }
            "GetStoreFile" => {
                let (req, t) = region_call!(pb::GetStoreFileRequest);
                write_answer(out, id, plain(admin_service::store_files(&rs, t, &req)));
                None
            }
            "GetServerInfo" => {
                decoded::<pb::GetServerInfoRequest>(call, id, out)?;
                let info = pb::GetServerInfoResponse {
                    server_info: pb::ServerInfo {
                        server_name: self.server.to_pb(),
                        webui_port: None,
                    },
                };
                write_answer(out, id, plain(Ok(info)));
                None
            }
            "FlushRegion" => {
                let (req, t) = region_call!(pb::FlushRegionRequest);
                if !require_table(t, "flush", out) {
                    return None;
                }
                self.on_handler(id, move |rs| {
                    plain(admin_service::flush_region(rs, t, &req))
                })
            }
            "CompactRegion" => {
                let (req, t) = region_call!(pb::CompactRegionRequest);
                if !require_table(t, "compact", out) {
                    return None;
                }
                let done = admin_service::compact_region(&rs, t, &req, &self.compactions);
                write_answer(out, id, plain(done));
                None
            }
            "CompactionSwitch" => {
                let req = decoded::<pb::CompactionSwitchRequest>(call, id, out)?;
                if let Err(e) = access.require_global("compactionSwitch", &[Action::Admin]) {
                    fail(out, id, &exception(e));
                    return None;
                }
                write_answer(out, id, plain(admin_service::compaction_switch(&rs, &req)));
                None
            }
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("AdminService", method),
                );
                None
            }
        }
    }

    fn scan_call(
        self: &Arc<Self>,
        codec: Option<CellCodec>,
        access: Access,
        id: u32,
        call: &RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let req = decoded::<pb::ScanRequest>(call, id, out)?;
        if let Some(sid) = req
            .scanner_id
            .filter(|s| s & META_SCANNER_IDS != 0 && s & (1 << 63) == 0)
        {
            write_answer(out, id, self.meta_scan_next(sid, &req, codec));
            return None;
        }
        let region = match (&req.region, req.scanner_id) {
            (Some(spec), None) => match target(self.region_server.as_deref(), spec) {
                Ok(Target::Meta) => {
                    write_answer(out, id, self.meta_scan_open(&req, codec));
                    return None;
                }
                Ok(Target::Region(r)) => Some(r),
                Err(e) => {
                    fail(out, id, &e);
                    return None;
                }
            },
            _ => None,
        };
        // A plain open of a few rows reads like a get; closing a scanner
        // reads nothing. Both are answered here rather than on a handler.
        let closing = req.scanner_id.is_some() && req.close_scanner == Some(true);
        let short_open = region.is_some()
            && req.number_of_rows.is_some_and(|n| n <= SHORT_SCAN_ROWS)
            && req
                .scan
                .as_ref()
                .is_some_and(|s| s.filter.is_none() && s.reversed != Some(true));
        let short = closing || short_open;
        if short && self.reads_are_local() {
            let closed = &self.closed_scanners;
            self.here(id, out, |rs| {
                client_service::scan(rs, region, &req, codec, closed, &access)
            });
            return None;
        }
        let rpc = self.clone();
        self.on_handler(id, move |rs| {
            client_service::scan(rs, region, &req, codec, &rpc.closed_scanners, &access)
        })
    }

    /// Opens a scan of `hbase:meta`: a reversed one (the client locating a
    /// row's region) answers what fits and keeps nothing, as the client
    /// never closes it; a forward one keeps the rest for its next calls.
    fn meta_scan_open(
        &self,
        req: &pb::ScanRequest,
        codec: Option<CellCodec>,
    ) -> Result<Answer<pb::ScanResponse>, HBaseException> {
        let scan = req
            .scan
            .as_ref()
            .ok_or_else(|| do_not_retry("a scan open without a Scan"))?;
        let rows = self.renderer()?.scan(scan)?;
        let want =
            req.number_of_rows
                .or(scan.caching)
                .filter(|&n| n > 0)
                .unwrap_or(u32::MAX)
                .min(req.limit_of_rows.filter(|&l| l > 0).unwrap_or(u32::MAX)) as usize;
        let mut rows: std::collections::VecDeque<MetaRow> = rows.into();
        let batch: Vec<MetaRow> = rows.drain(..want.min(rows.len())).collect();
        let keep = !rows.is_empty()
            && scan.reversed != Some(true)
            && req
                .limit_of_rows
                .is_none_or(|l| l == 0 || batch.len() < l as usize);
        let scanner_id = META_SCANNER_IDS | self.closed_scanners.fetch_add(1, Ordering::Relaxed);
        if keep {
            let mut open = self.meta_scanners.lock();
            open.retain(|_, s| s.opened.elapsed() < META_SCANNER_TTL);
            open.insert(
                scanner_id,
                MetaScanner {
                    rows,
                    opened: Instant::now(),
                },
            );
        }
        meta_answer(scanner_id, &batch, keep, codec)
    }

    fn meta_scan_next(
        &self,
        scanner_id: u64,
        req: &pb::ScanRequest,
        codec: Option<CellCodec>,
    ) -> Result<Answer<pb::ScanResponse>, HBaseException> {
        let mut open = self.meta_scanners.lock();
        if req.close_scanner == Some(true) {
            open.remove(&scanner_id);
            return meta_answer(scanner_id, &[], false, codec);
        }
        let Some(s) = open.get_mut(&scanner_id) else {
            return Err(HBaseException::new(
                ExceptionClass::UnknownScanner,
                format!("meta scanner {scanner_id} is unknown: it ended or expired"),
            ));
        };
        let want = req.number_of_rows.filter(|&n| n > 0).unwrap_or(100) as usize;
        let batch: Vec<MetaRow> = s.rows.drain(..want.min(s.rows.len())).collect();
        let more = !s.rows.is_empty();
        if !more {
            open.remove(&scanner_id);
        }
        meta_answer(scanner_id, &batch, more, codec)
    }

    /// Serves one HBase connection until the client closes it or sends
    /// bytes that cannot be trusted.
    async fn serve(self: Arc<Self>, stream: ServerStream) {
        let peer = stream.info().peer.clone();
        match stream.into_halves() {
            Halves::Plain(r, w) => self.serve_halves(r, w, peer).await,
            Halves::Tls(r, w) => self.serve_halves(r, w, peer).await,
        }
    }

    async fn serve_halves<R, W>(
        self: Arc<Self>,
        mut reader: R,
        mut writer: W,
        peer: Option<ferrobase_tls::PeerIdentity>,
    ) where
        R: tokio::io::AsyncRead + Unpin,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<BytesMut>();
        let write_task = tokio::spawn(async move {
            while let Some(mut buf) = rx.recv().await {
                // Send what else is ready in the same write.
                while let Ok(more) = rx.try_recv() {
                    buf.extend_from_slice(&more);
                }
                if writer.write_all(&buf).await.is_err() {
                    return;
                }
            }
            let _ = writer.shutdown().await;
        });
        let mut decoder = ServerDecoder::default();
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let mut conn = Connection {
            user: crate::acl::identity::hbase_user(peer.as_ref(), None),
            peer,
            ..Connection::default()
        };
        let mut later = Vec::new();
        let mut open = true;
        while open {
            match reader.read_buf(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let mut out = BytesMut::new();
            loop {
                match decoder.decode(&mut buf) {
                    Ok(None) => break,
                    Ok(Some(event)) => {
                        open = self.event(event, &mut conn, &mut out, &mut later);
                        if !open {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::debug!("HBase RPC connection closed: {e}");
                        let _ = frame::encode_exception(
                            &mut out,
                            NO_CALL_ID,
                            &e.exception().to_response(),
                        );
                        open = false;
                        break;
                    }
                }
            }
            if !out.is_empty() && tx.send(out).is_err() {
                break;
            }
            for work in later.drain(..) {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _ = tx.send(work.await);
                });
            }
        }
        // The writer ends once every answer still being worked on is sent.
        drop(tx);
        let _ = write_task.await;
    }
}

/// The operation an HBase `Mutate` call is, for its metrics.
fn mutate_op(req: &pb::MutateRequest) -> Op {
    if req.condition.is_some() {
        return Op::CheckAndMutate;
    }
    match req.mutation.mutate_type {
        Some(0) => Op::Append,
        Some(1) => Op::Increment,
        Some(2) => Op::Put,
        Some(3) => Op::Delete,
        _ => Op::Mutate,
    }
}

/// A meta scan's answer: every row's cells in the cell block (or inline).
fn meta_answer(
    scanner_id: u64,
    rows: &[MetaRow],
    more_in_region: bool,
    codec: Option<CellCodec>,
) -> Result<Answer<pb::ScanResponse>, HBaseException> {
    let mut block = BytesMut::new();
    let mut message = pb::ScanResponse {
        scanner_id: Some(scanner_id),
        more_results: Some(true),
        more_results_in_region: Some(more_in_region),
        ttl: Some(SCANNER_TTL_MS),
        ..Default::default()
    };
    for r in rows {
        let result = client_service::encode_result(&r.cells, codec, &mut block)?;
        match codec {
            Some(_) => message
                .cells_per_result
                .push(u32::try_from(r.cells.len()).unwrap_or(u32::MAX)),
            None => message.results.push(result),
        }
        message.partial_flag_per_result.push(false);
    }
    Ok(Answer {
        message,
        cells: block,
    })
}

/// True when the connection speaks HBase RPC; false for anything else
/// (HTTP/2), for a connection closed before it said, or one silent for
/// [`SNIFF_TIMEOUT`]. Over TLS the bytes looked at are the decrypted ones.
async fn speaks_hbase(stream: &mut ServerStream) -> bool {
    match stream.peek_head(SNIFF_BYTES, SNIFF_TIMEOUT).await {
        Ok(head) => head.len() >= SNIFF_BYTES && frame::looks_like_hbase(&head),
        Err(_) => false,
    }
}

/// Accepts connections on `listener` (Nagle off), completes TLS where
/// `tls` says (and refuses plaintext where it must), serves the HBase
/// connections and yields the others for `tonic`'s `serve_with_incoming*`.
/// Accepting stops when the returned stream is dropped (the gRPC server
/// stopped), so the port is free again for a restart.
pub fn split_incoming(
    listener: TcpListener,
    rpc: Arc<HBaseRpc>,
    tls: Option<Arc<ServerTls>>,
) -> ReceiverStream<io::Result<ServerStream>> {
    let (tx, rx) = mpsc::channel::<io::Result<ServerStream>>(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                _ = tx.closed() => return,
                a = listener.accept() => a,
            };
            let (stream, peer) = match accepted {
                Ok(s) => s,
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
            let tls = tls.clone();
            tokio::spawn(async move {
                let mut stream = match tls {
                    None => ServerStream::plain(stream),
                    Some(tls) => match tls.accept(stream, peer).await {
                        Accepted::Stream(s) => s,
                        Accepted::Closed => return,
                    },
                };
                if speaks_hbase(&mut stream).await {
                    rpc.serve(stream).await;
                } else {
                    let _ = tx.send(Ok(stream)).await;
                }
            });
        }
    });
    ReceiverStream::new(rx)
}
