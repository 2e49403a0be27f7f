//! The info port: one HTTP server per process (HBase's
//! `hbase.master.info.port` 16010, `hbase.regionserver.info.port` 16030,
//! `hbase.thrift.info.port` 9095) serving `/metrics` (Prometheus text),
//! `/jmx` (HBase's JSON beans) and the web UI: `/master-status`,
//! `/table.jsp?name=T`, `/rs-status` and the JSON its chart polls.
//!
//! Standalone serves the master's and the region server's pages on one
//! port. Pages are rendered on the server (they work with JavaScript off);
//! every table name, row key and message is escaped (the `pages` module). A bad
//! request gets 400 or 404 with a message, never a panic. This module reads
//! what the master, region server and engine already count; it never
//! changes the cluster and never sits on a data request's path.

mod https;
mod jmx;
mod pages;
pub mod scrape;

use crate::error::{Result, ServerError};
use crate::master::Master;
use crate::region_server::RegionServer;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use ferrobase_proto::ErrorCode;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How often the chart's points (and the master's request rates) are
/// sampled.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// The master's per-server request rates are sampled every this many
/// [`SAMPLE_INTERVAL`]s (first at the first tick).
pub const MASTER_SAMPLE_EVERY: u64 = 3;

/// Points the region server's chart keeps (two minutes at one a second).
pub const CHART_POINTS: usize = 120;

/// What one info port shows: a master, a region server, both
/// (standalone), or neither (the Thrift gateway: `/metrics` and `/jmx`).
#[derive(Clone, Default)]
pub struct InfoParts {
    pub master: Option<Arc<Master>>,
    pub region_server: Option<Arc<RegionServer>>,
    /// The process's role as the pages name it (`standalone`, `master`,
    /// `regionserver`, `thrift`).
    pub role: &'static str,
}

/// One point of the region server's chart.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ChartPoint {
    /// Ms since the Unix epoch.
    pub t: u64,
    /// Read and write requests per second over the last interval.
    pub requests_per_sec: f64,
    /// The server's memstore bytes.
    pub memstore_bytes: u64,
}

/// Per region server: its last totals and request rate (the master page).
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerRate {
    pub requests: u64,
    pub per_sec: f64,
}

pub(crate) struct Shared {
    pub parts: InfoParts,
    pub started: SystemTime,
    pub chart: Mutex<VecDeque<ChartPoint>>,
    pub rates: Mutex<HashMap<String, ServerRate>>,
    /// This process's region server's request totals (scrapes and chart).
    pub totals: Mutex<scrape::RequestTotals>,
}

/// A running info server.
pub struct InfoServer {
    addr: SocketAddr,
    https: bool,
    shutdown: Option<oneshot::Sender<()>>,
    serve: JoinHandle<()>,
    sampler: JoinHandle<()>,
}

impl InfoServer {
    /// Serves the info pages of `parts` on `bind` (port 0: any free port),
    /// over HTTPS when `tls` is set (`hbase.ssl.enabled`).
    pub async fn start(
        bind: SocketAddr,
        parts: InfoParts,
        tls: Option<Arc<ferrobase_tls::ServerTls>>,
    ) -> Result<InfoServer> {
        crate::rpc_metrics::register();
        let listener = tokio::net::TcpListener::bind(bind).await.map_err(|e| {
            ServerError::new(
                ErrorCode::Io,
                format!("cannot listen on {bind} (info port): {e}"),
            )
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError::new(ErrorCode::Io, e.to_string()))?;
        let shared = Arc::new(Shared {
            parts,
            started: SystemTime::now(),
            chart: Mutex::new(VecDeque::with_capacity(CHART_POINTS)),
            rates: Mutex::new(HashMap::new()),
            totals: Mutex::new(scrape::RequestTotals::default()),
        });
        let sampler = tokio::spawn(sample(Arc::downgrade(&shared)));
        let app = router(shared);
        let (tx, rx) = oneshot::channel::<()>();
        let https = tls.is_some();
        let stopped = async {
            let _ = rx.await;
        };
        let serve = match tls {
            None => tokio::spawn(async move {
                let r = axum::serve(listener, app)
                    .with_graceful_shutdown(stopped)
                    .await;
                if let Err(e) = r {
                    tracing::warn!(error = %e, "info server stopped");
                }
            }),
            Some(tls) => {
                let listener = https::HttpsListener::new(listener, addr, tls);
                tokio::spawn(async move {
                    let r = axum::serve(listener, app)
                        .with_graceful_shutdown(stopped)
                        .await;
                    if let Err(e) = r {
                        tracing::warn!(error = %e, "info server stopped");
                    }
                })
            }
        };
        Ok(InfoServer {
            addr,
            https,
            shutdown: Some(tx),
            serve,
            sampler,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https` when it serves HTTPS (`hbase.ssl.enabled`), else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// Stops serving (open page loads get a moment to finish).
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.sampler.abort();
        if tokio::time::timeout(Duration::from_secs(2), &mut self.serve)
            .await
            .is_err()
        {
            self.serve.abort();
        }
    }
}

/// The port an info server of a process listens on, from its setting
/// (`-1`: none) and an `--info-port` flag that overrides it.
pub fn port_from(setting: i64, flag: Option<i64>) -> Result<Option<u16>> {
    optional_port(setting, flag, |port| format!("info port {port}"))
}

/// A port setting that `-1` turns off, overridden by a flag when given;
/// `named` says which port a bad value was meant for.
pub(crate) fn optional_port(
    setting: i64,
    flag: Option<i64>,
    named: impl Fn(i64) -> String,
) -> Result<Option<u16>> {
    let port = flag.unwrap_or(setting);
    if port < 0 {
        return Ok(None);
    }
    u16::try_from(port).map(Some).map_err(|_| {
        ServerError::new(
            ErrorCode::InvalidRequest,
            format!("{} is not a TCP port (-1 disables it)", named(port)),
        )
    })
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(root))
        .route("/metrics", get(metrics))
        .route("/jmx", get(jmx::handler))
        .route("/master-status", get(pages::master_status))
        .route("/table.jsp", get(pages::table))
        .route("/rs-status", get(pages::rs_status))
        .route("/rs-status.json", get(chart_json))
        .route("/static/rs-chart.js", get(chart_js))
        .fallback(not_found)
        .with_state(shared)
}

async fn root(State(s): State<Arc<Shared>>) -> Redirect {
    if s.parts.master.is_some() {
        Redirect::to("/master-status")
    } else if s.parts.region_server.is_some() {
        Redirect::to("/rs-status")
    } else {
        Redirect::to("/metrics")
    }
}

async fn not_found(uri: axum::http::Uri) -> Response {
    text_error(
        StatusCode::NOT_FOUND,
        format!(
            "no page at {}: try /master-status, /rs-status, /table.jsp?name=T, /metrics or /jmx",
            uri.path()
        ),
    )
}

/// A plain-text error answer. `nosniff`: the message may repeat what the
/// request said (`<script>` as a table name), and a browser must show it
/// as text, never run it.
pub(crate) fn text_error(status: StatusCode, message: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        message + "\n",
    )
        .into_response()
}

/// Refreshes the scrape-time figures and renders the recorder: what
/// `/metrics` answers and `/jmx` reads.
pub(crate) async fn render(s: &Arc<Shared>) -> std::result::Result<String, Response> {
    let s = s.clone();
    tokio::task::spawn_blocking(move || {
        if let Some(rs) = &s.parts.region_server {
            scrape::region_server(rs, &s.totals);
        }
        if let Some(m) = &s.parts.master {
            scrape::master(m, m.coordination.live_servers().len());
        }
        let started = s
            .started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        scrape::process(started);
        crate::rpc_metrics::prometheus().render()
    })
    .await
    .map_err(|e| {
        text_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("rendering metrics failed: {e}"),
        )
    })
}

async fn metrics(State(s): State<Arc<Shared>>) -> Response {
    match render(&s).await {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(e) => e,
    }
}

/// Query of `/rs-status.json`: points newer than `since` (ms) only.
#[derive(serde::Deserialize)]
struct ChartQuery {
    since: Option<u64>,
}

async fn chart_json(
    State(s): State<Arc<Shared>>,
    q: std::result::Result<Query<ChartQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = q else {
        return text_error(
            StatusCode::BAD_REQUEST,
            "bad query: /rs-status.json takes only since=MILLISECONDS".into(),
        );
    };
    if s.parts.region_server.is_none() {
        return text_error(
            StatusCode::NOT_FOUND,
            "this process serves no regions".into(),
        );
    }
    let since = q.since.unwrap_or(0);
    let points: Vec<ChartPoint> = s
        .chart
        .lock()
        .iter()
        .filter(|p| p.t > since)
        .copied()
        .collect();
    axum::Json(serde_json::json!({ "points": points })).into_response()
}

async fn chart_js() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("rs-chart.js"),
    )
        .into_response()
}

/// Every [`SAMPLE_INTERVAL`]: the region server's chart point, the
/// master's per-server request rates, and the recorder's upkeep (it drains
/// histogram samples into the summaries).
async fn sample(shared: std::sync::Weak<Shared>) {
    let mut tick = tokio::time::interval(SAMPLE_INTERVAL);
    let mut last_local: Option<(Instant, u64)> = None;
    let mut last_servers: HashMap<String, (Instant, u64)> = HashMap::new();
    let mut ticks: u64 = 0;
    loop {
        tick.tick().await;
        ticks += 1;
        let Some(s) = shared.upgrade() else { return };
        let work = s.clone();
        let (local, servers) = match tokio::task::spawn_blocking(move || {
            crate::rpc_metrics::prometheus().run_upkeep();
            let local = work.parts.region_server.as_ref().map(|rs| {
                let load = rs.load();
                let (reads, writes) = work.totals.lock().update(&load.regions);
                (reads + writes, load.global_memstore_bytes)
            });
            // A distributed master asks every region server over the
            // network: less often than the local chart.
            let master_due = (ticks - 1).is_multiple_of(MASTER_SAMPLE_EVERY);
            let servers = work.parts.master.as_ref().filter(|_| master_due).map(|m| {
                m.cluster_status()
                    .servers
                    .into_iter()
                    .map(|l| {
                        let total: u64 = l
                            .regions
                            .iter()
                            .map(|r| r.read_requests + r.write_requests)
                            .sum();
                        (l.server, total)
                    })
                    .collect::<Vec<_>>()
            });
            (local, servers)
        })
        .await
        {
            Ok(v) => v,
            Err(_) => continue,
        };
        let now = Instant::now();
        let t = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        if let Some((requests, memstore)) = local {
            let per_sec = rate(last_local, now, requests);
            last_local = Some((now, requests));
            let mut chart = s.chart.lock();
            if chart.len() == CHART_POINTS {
                chart.pop_front();
            }
            chart.push_back(ChartPoint {
                t,
                requests_per_sec: per_sec,
                memstore_bytes: memstore,
            });
        }
        if let Some(servers) = servers {
            let mut rates = HashMap::new();
            for (server, total) in servers {
                let per_sec = rate(last_servers.get(&server).copied(), now, total);
                last_servers.insert(server.clone(), (now, total));
                rates.insert(
                    server,
                    ServerRate {
                        requests: total,
                        per_sec,
                    },
                );
            }
            last_servers.retain(|k, _| rates.contains_key(k));
            *s.rates.lock() = rates;
        }
    }
}

fn rate(last: Option<(Instant, u64)>, now: Instant, total: u64) -> f64 {
    match last {
        Some((then, before)) => {
            let secs = now.duration_since(then).as_secs_f64();
            if secs > 0.0 {
                total.saturating_sub(before) as f64 / secs
            } else {
                0.0
            }
        }
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_port_flag_overrides_and_minus_one_disables() {
        assert!(matches!(port_from(16010, None), Ok(Some(16010))));
        assert!(matches!(port_from(16010, Some(0)), Ok(Some(0))));
        assert!(matches!(port_from(-1, None), Ok(None)));
        assert!(matches!(port_from(16010, Some(-1)), Ok(None)));
        assert!(port_from(70000, None).is_err());
    }
}
