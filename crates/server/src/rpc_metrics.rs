//! The process's metrics recorder and the per-call instruments of the
//! region server's RPCs (gRPC, HBase's native RPC; the Thrift gateway
//! records its own through the same recorder).
//!
//! One Prometheus recorder per process, installed on first use; the
//! instruments of every (protocol, operation) pair are registered once and
//! kept, so a call costs a few atomic increments and one histogram sample,
//! never a lookup or a lock. Gauges read from the engine at scrape time live
//! in [`info_server`](crate::info_server); this module never reads the
//! engine. Metric names: docs/metrics.md.

use crate::slow_log::SlowLog;
use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, OnceLock};
use std::time::{Duration, Instant};

/// Requests by protocol and operation (counter).
pub const REQUESTS: &str = "hbase_regionserver_rpc_requests_total";
/// Requests that ended in an error, by protocol and operation (counter).
pub const ERRORS: &str = "hbase_regionserver_rpc_errors_total";
/// Time from the call's arrival to its answer, by protocol and operation
/// (summary: p50, p75, p95, p99, p999 over the last minute or so).
pub const LATENCY: &str = "hbase_regionserver_rpc_latency_seconds";
/// Request bytes received (counter).
pub const RECEIVED_BYTES: &str = "hbase_regionserver_rpc_received_bytes_total";
/// Response bytes sent (counter).
pub const SENT_BYTES: &str = "hbase_regionserver_rpc_sent_bytes_total";

/// Quantiles every summary reports (HBase's 50th … 99.9th percentiles).
pub const QUANTILES: [f64; 5] = [0.5, 0.75, 0.95, 0.99, 0.999];

/// A gauge labelled by table or region that is not set again for this long
/// disappears from the output, so a dropped table or a moved region stops
/// being reported: scrape-time gauges are all set anew at every scrape.
const STALE_GAUGE: Duration = Duration::from_secs(2);

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's Prometheus recorder, installed as the global `metrics`
/// recorder on first use. When another recorder was installed first (a
/// program embedding the server), the handle renders only what is set
/// through it directly, and a warning says so.
pub fn prometheus() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .idle_timeout(metrics_util::MetricKindMask::GAUGE, Some(STALE_GAUGE));
        let builder = match builder.set_quantiles(&QUANTILES) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(error = %e, "metrics: default quantiles kept");
                PrometheusBuilder::new()
            }
        };
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("metrics: another recorder is installed; /metrics shows only gauges");
        }
        describe();
        handle
    })
}

fn describe() {
    metrics::describe_counter!(REQUESTS, "RPC calls answered, by protocol and operation");
    metrics::describe_counter!(ERRORS, "RPC calls answered with an error");
    metrics::describe_histogram!(
        LATENCY,
        metrics::Unit::Seconds,
        "RPC call time from arrival to answer"
    );
    metrics::describe_counter!(RECEIVED_BYTES, "RPC request bytes received");
    metrics::describe_counter!(SENT_BYTES, "RPC response bytes sent");
    metrics::describe_histogram!(
        ferrobase_storage::wal::SYNC_SECONDS,
        metrics::Unit::Seconds,
        "WAL sync (fdatasync or S3 put) time"
    );
    metrics::describe_histogram!(
        ferrobase_storage::engine::FLUSH_SECONDS,
        metrics::Unit::Seconds,
        "Memstore flush time"
    );
    metrics::describe_histogram!(
        ferrobase_storage::engine::COMPACTION_SECONDS,
        metrics::Unit::Seconds,
        "Compaction time (one store)"
    );
}

/// The protocol a call came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// ferrobase's gRPC `RegionServer` service.
    Grpc,
    /// HBase's native RPC (the Java client).
    Hbase,
}

impl Protocol {
    const ALL: [Protocol; 2] = [Protocol::Grpc, Protocol::Hbase];

    /// The `protocol` label.
    pub fn label(self) -> &'static str {
        match self {
            Protocol::Grpc => "grpc",
            Protocol::Hbase => "hbase",
        }
    }
}

/// A data operation, HBase's names in snake case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Get,
    Put,
    Delete,
    /// A put or delete whose kind is not known (a gRPC `Mutate` carries a
    /// cell block that may hold both).
    Mutate,
    Multi,
    /// One scan call: an open or a next.
    Scan,
    Increment,
    Append,
    CheckAndMutate,
}

impl Op {
    const ALL: [Op; 9] = [
        Op::Get,
        Op::Put,
        Op::Delete,
        Op::Mutate,
        Op::Multi,
        Op::Scan,
        Op::Increment,
        Op::Append,
        Op::CheckAndMutate,
    ];

    /// The `op` label.
    pub fn label(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Put => "put",
            Op::Delete => "delete",
            Op::Mutate => "mutate",
            Op::Multi => "multi",
            Op::Scan => "scan",
            Op::Increment => "increment",
            Op::Append => "append",
            Op::CheckAndMutate => "check_and_mutate",
        }
    }

    /// Every operation, in label order of the docs.
    pub fn all() -> &'static [Op] {
        &Op::ALL
    }

    fn index(self) -> usize {
        Op::ALL.iter().position(|o| *o == self).unwrap_or(0)
    }
}

struct Instruments {
    requests: Counter,
    errors: Counter,
    latency: Histogram,
    received: Counter,
    sent: Counter,
}

/// Registered once, after the recorder: handles taken before it would
/// record into nothing.
static INSTRUMENTS: LazyLock<Vec<Instruments>> = LazyLock::new(|| {
    prometheus();
    // The engine's histograms, listed (empty) before their first sample
    // so that dashboards find every series from the start.
    for name in [
        ferrobase_storage::wal::SYNC_SECONDS,
        ferrobase_storage::engine::FLUSH_SECONDS,
        ferrobase_storage::engine::COMPACTION_SECONDS,
    ] {
        let _ = metrics::histogram!(name);
    }
    let mut all = Vec::with_capacity(Protocol::ALL.len() * Op::ALL.len());
    for p in Protocol::ALL {
        for op in Op::ALL {
            let labels = [("protocol", p.label()), ("op", op.label())];
            all.push(Instruments {
                requests: metrics::counter!(REQUESTS, &labels),
                errors: metrics::counter!(ERRORS, &labels),
                latency: metrics::histogram!(LATENCY, &labels),
                received: metrics::counter!(RECEIVED_BYTES, "protocol" => p.label()),
                sent: metrics::counter!(SENT_BYTES, "protocol" => p.label()),
            });
        }
    }
    all
});

fn instruments(protocol: Protocol, op: Op) -> Option<&'static Instruments> {
    let p = Protocol::ALL.iter().position(|x| *x == protocol)?;
    INSTRUMENTS.get(p * Op::ALL.len() + op.index())
}

/// Registers every instrument now, so `/metrics` lists each operation at
/// zero before its first call.
pub fn register() {
    LazyLock::force(&INSTRUMENTS);
}

/// Request ids, unique in the process, for log lines and spans.
static NEXT_REQUEST_ID: AtomicU64 = AtomicU64::new(1);

/// One call being timed: [`CallTimer::finish`] records it.
pub struct CallTimer {
    protocol: Protocol,
    op: Op,
    request_id: u64,
    started: Instant,
}

/// How a call ended, for the counters and the slow-request log.
pub struct CallOutcome<'a> {
    /// False when the call was answered with an error.
    pub ok: bool,
    /// Request bytes (the encoded message and cell block).
    pub request_bytes: u64,
    /// Response bytes (the encoded message and cell block).
    pub response_bytes: u64,
    /// What the call was about, for the slow log (`region=… rows=…`);
    /// only built when the call is slow or large.
    pub param: &'a dyn Fn() -> String,
    /// The client's address, when known.
    pub client: Option<std::net::SocketAddr>,
}

impl CallTimer {
    /// Starts timing a call now.
    pub fn start(protocol: Protocol, op: Op) -> CallTimer {
        CallTimer {
            protocol,
            op,
            request_id: NEXT_REQUEST_ID.fetch_add(1, Ordering::Relaxed),
            started: Instant::now(),
        }
    }

    /// The call's id in this process.
    pub fn request_id(&self) -> u64 {
        self.request_id
    }

    /// A `debug` span (`rpc`, with the request id, protocol and operation)
    /// for what the call logs; disabled spans cost a cached check.
    pub fn span(&self) -> tracing::Span {
        tracing::debug_span!(
            "rpc",
            request_id = self.request_id,
            protocol = self.protocol.label(),
            op = self.op.label()
        )
    }

    /// Changes the operation once the request says what it is (an HBase
    /// `Mutate` is a put, delete, increment, append or checkAndMutate).
    pub fn set_op(&mut self, op: Op) {
        self.op = op;
    }

    /// Records the call, and logs it when it passed the slow log's limits.
    pub fn finish(self, outcome: &CallOutcome<'_>, slow: &SlowLog) {
        let elapsed = self.started.elapsed();
        if let Some(i) = instruments(self.protocol, self.op) {
            i.requests.increment(1);
            if !outcome.ok {
                i.errors.increment(1);
            }
            i.latency.record(elapsed);
            i.received.increment(outcome.request_bytes);
            i.sent.increment(outcome.response_bytes);
        }
        slow.check(crate::slow_log::Call {
            request_id: self.request_id,
            protocol: self.protocol.label(),
            method: self.op.label(),
            elapsed,
            response_bytes: outcome.response_bytes,
            param: outcome.param,
            client: outcome.client,
        });
    }
}
