//! The `Hbase` service: one call message in, one reply message out.
//!
//! This module owns dispatch by method name, argument decoding, and the
//! shape of replies: the result struct (field 0 the return value, fields
//! 1.. the exceptions the method declares) or a `TApplicationException`
//! (unknown method, arguments that do not match the IDL). The methods
//! themselves live in `ddl`, `reads`, `writes` and `scanners`, mapped onto
//! `ferrobase_client`. It never touches sockets or bytes.

mod ddl;
mod reads;
mod scanners;
mod writes;

pub use scanners::Scanners;

use crate::error::ServiceError;
use crate::hbase_types::{
    ApplicationError, BatchMutation, ColumnDescriptor, Mutation, TAppend, TIncrement, TScan,
    application_exception, io_error, message_exception,
};
use crate::protocol::{Header, Message, MessageType, Struct, Value};
use bytes::Bytes;
use ferrobase_client::Connection;
use std::time::Duration;

/// What every method returns: a value (`None` for `void`) or an exception.
pub type Outcome = Result<Option<Value>, ServiceError>;

/// The gateway's state shared by every connection: the ferrobase
/// connection and the open scanners.
pub struct Gateway {
    conn: Connection,
    scanners: Scanners,
}

impl Gateway {
    /// A gateway over `conn`; scanners idle longer than `scanner_idle` are
    /// closed by [`Gateway::reap_idle_scanners`].
    pub fn new(conn: Connection, scanner_idle: Duration) -> Gateway {
        Gateway {
            conn,
            scanners: Scanners::new(scanner_idle),
        }
    }

    /// Closes scanners past their idle time; returns how many.
    pub fn reap_idle_scanners(&self) -> usize {
        self.scanners.reap_idle()
    }

    /// Open scanners right now.
    pub fn open_scanners(&self) -> usize {
        self.scanners.count()
    }

    /// Handles one message; `None` when no reply is due (a oneway call).
    pub async fn handle(&self, message: &Message) -> Option<Message> {
        let header = &message.header;
        match header.kind {
            MessageType::Call => {}
            MessageType::Oneway => {
                // Hbase.thrift has no oneway methods; nothing to answer.
                tracing::warn!(method = %header.name, "oneway call ignored");
                return None;
            }
            other => {
                return Some(application_error(
                    header,
                    ApplicationError::InvalidMessageType,
                    &format!("expected a CALL message, got {other:?}"),
                ));
            }
        }
        let Some(exceptions) = declared_exceptions(&header.name) else {
            return Some(application_error(
                header,
                ApplicationError::UnknownMethod,
                &format!("Invalid method name: '{}'", header.name),
            ));
        };
        let started = std::time::Instant::now();
        let outcome = self.dispatch(&header.name, &Args(&message.body)).await;
        record(&header.name, outcome.is_ok(), started.elapsed());
        Some(reply(header, exceptions, outcome))
    }

    async fn dispatch(&self, method: &str, a: &Args<'_>) -> Outcome {
        let c = &self.conn;
        match method {
            // DDL and administration.
            "enableTable" => ddl::enable(c, &a.table(1)?).await,
            "disableTable" => ddl::disable(c, &a.table(1)?).await,
            "isTableEnabled" => ddl::is_enabled(c, &a.table(1)?).await,
            "compact" => ddl::compact(c, &a.table(1)?, false).await,
            "majorCompact" => ddl::compact(c, &a.table(1)?, true).await,
            "getTableNames" => ddl::table_names(c).await,
            "getTableNamesWithIsTableEnabled" => ddl::table_names_enabled(c).await,
            "getColumnDescriptors" => ddl::column_descriptors(c, &a.table(1)?).await,
            "getTableRegions" => ddl::regions(c, &a.table(1)?).await,
            "createTable" => {
                let families: Vec<ColumnDescriptor> = a
                    .structs(2)
                    .into_iter()
                    .map(ColumnDescriptor::from_struct)
                    .collect();
                ddl::create(c, &a.table(1)?, &families).await
            }
            "deleteTable" => ddl::delete(c, &a.table(1)?).await,
            "getRegionInfo" => ddl::region_info_of(c, &a.bytes(1, "row")?).await,

            // Reads.
            "get" => reads::cells(c, &a.table(1)?, a.row(2)?, a.bytes(3, "column")?, 1, None).await,
            "getVer" => {
                let n = a.i32(4, "numVersions")?;
                reads::cells(c, &a.table(1)?, a.row(2)?, a.bytes(3, "column")?, n, None).await
            }
            "getVerTs" => {
                let (ts, n) = (a.i64(4, "timestamp")?, a.i32(5, "numVersions")?);
                reads::cells(
                    c,
                    &a.table(1)?,
                    a.row(2)?,
                    a.bytes(3, "column")?,
                    n,
                    Some(ts),
                )
                .await
            }
            "getRow" => reads::rows(c, &a.table(1)?, vec![a.row(2)?], None, None).await,
            "getRowWithColumns" => {
                reads::rows(c, &a.table(1)?, vec![a.row(2)?], a.texts(3), None).await
            }
            "getRowTs" => {
                let ts = a.i64(3, "timestamp")?;
                reads::rows(c, &a.table(1)?, vec![a.row(2)?], None, Some(ts)).await
            }
            "getRowWithColumnsTs" => {
                let ts = a.i64(4, "timestamp")?;
                reads::rows(c, &a.table(1)?, vec![a.row(2)?], a.texts(3), Some(ts)).await
            }
            "getRows" => reads::rows(c, &a.table(1)?, a.list(2, "rows")?, None, None).await,
            "getRowsWithColumns" => {
                reads::rows(c, &a.table(1)?, a.list(2, "rows")?, a.texts(3), None).await
            }
            "getRowsTs" => {
                let ts = a.i64(3, "timestamp")?;
                reads::rows(c, &a.table(1)?, a.list(2, "rows")?, None, Some(ts)).await
            }
            "getRowsWithColumnsTs" => {
                let ts = a.i64(4, "timestamp")?;
                reads::rows(c, &a.table(1)?, a.list(2, "rows")?, a.texts(3), Some(ts)).await
            }
            "getRowOrBefore" => {
                reads::row_or_before(c, &a.table(1)?, a.row(2)?, a.bytes(3, "family")?).await
            }

            // Writes.
            "mutateRow" => {
                let ms = Mutation::list(a.0, 3);
                writes::mutate_row(c, &a.table(1)?, a.row(2)?, &ms, None).await
            }
            "mutateRowTs" => {
                let (ms, ts) = (Mutation::list(a.0, 3), a.i64(4, "timestamp")?);
                writes::mutate_row(c, &a.table(1)?, a.row(2)?, &ms, Some(ts)).await
            }
            "mutateRows" => {
                let batches = a.batches(2);
                writes::mutate_rows(c, &a.table(1)?, &batches, None).await
            }
            "mutateRowsTs" => {
                let (batches, ts) = (a.batches(2), a.i64(3, "timestamp")?);
                writes::mutate_rows(c, &a.table(1)?, &batches, Some(ts)).await
            }
            "atomicIncrement" => {
                let (col, by) = (a.bytes(3, "column")?, a.i64(4, "value")?);
                writes::atomic_increment(c, &a.table(1)?, a.row(2)?, col, by).await
            }
            "deleteAll" => {
                let col = a.bytes(3, "column")?;
                writes::delete_all(c, &a.table(1)?, a.row(2)?, Some(col), None).await
            }
            "deleteAllTs" => {
                let (col, ts) = (a.bytes(3, "column")?, a.i64(4, "timestamp")?);
                writes::delete_all(c, &a.table(1)?, a.row(2)?, Some(col), Some(ts)).await
            }
            "deleteAllRow" => writes::delete_all(c, &a.table(1)?, a.row(2)?, None, None).await,
            "deleteAllRowTs" => {
                let ts = a.i64(3, "timestamp")?;
                writes::delete_all(c, &a.table(1)?, a.row(2)?, None, Some(ts)).await
            }
            "increment" => {
                let inc = TIncrement::from_struct(a.strukt(1, "increment")?);
                writes::increments(c, &[inc]).await
            }
            "incrementRows" => {
                let incs: Vec<TIncrement> = a
                    .structs(1)
                    .into_iter()
                    .map(TIncrement::from_struct)
                    .collect();
                writes::increments(c, &incs).await
            }
            "append" => writes::append(c, &TAppend::from_struct(a.strukt(1, "append")?)).await,
            "checkAndPut" => {
                let put = Mutation::from_struct(a.strukt(6, "mput")?);
                let (col, expected) = (a.bytes(3, "column")?, a.0.binary(5).cloned());
                writes::check_and_put(c, &a.table(1)?, a.row(2)?, col, expected, &put).await
            }

            // Scanners.
            "scannerOpenWithScan" => {
                let scan = TScan::from_struct(a.strukt(2, "scan")?).into();
                self.scanners.open_with_scan(c, &a.table(1)?, &scan).await
            }
            "scannerOpen"
            | "scannerOpenWithStop"
            | "scannerOpenWithPrefix"
            | "scannerOpenTs"
            | "scannerOpenWithStopTs" => {
                let scan = scanners::thrift_scan_of(method, a)?;
                self.scanners.open_with_scan(c, &a.table(1)?, &scan).await
            }
            "scannerGet" => self.scanners.get_list(a.i32(1, "id")?, 1).await,
            "scannerGetList" => {
                self.scanners
                    .get_list(a.i32(1, "id")?, a.i32(2, "nbRows")?)
                    .await
            }
            "scannerClose" => self.scanners.close(a.i32(1, "id")?),
            other => Err(ServiceError::Protocol(format!(
                "method '{other}' is declared but not dispatched"
            ))),
        }
    }
}

/// Counts and times one call in the process's `metrics` recorder (the
/// binary serves it on the gateway's info port; docs/metrics.md). `method`
/// is one of Hbase.thrift's, so the label set stays bounded.
fn record(method: &str, ok: bool, elapsed: Duration) {
    let method = method.to_string();
    metrics::counter!("hbase_thrift_requests_total", "method" => method.clone()).increment(1);
    if !ok {
        metrics::counter!("hbase_thrift_errors_total", "method" => method.clone()).increment(1);
    }
    metrics::histogram!("hbase_thrift_latency_seconds", "method" => method).record(elapsed);
}

/// Which exceptions a method declares besides `1: IOError`:
/// (`2: IllegalArgument`, `3: AlreadyExists`); `None` for unknown methods.
fn declared_exceptions(method: &str) -> Option<(bool, bool)> {
    Some(match method {
        "createTable" => (true, true),
        "mutateRow" | "mutateRowTs" | "mutateRows" | "mutateRowsTs" | "atomicIncrement"
        | "scannerGet" | "scannerGetList" | "scannerClose" | "checkAndPut" => (true, false),
        "enableTable"
        | "disableTable"
        | "isTableEnabled"
        | "compact"
        | "majorCompact"
        | "getTableNames"
        | "getTableNamesWithIsTableEnabled"
        | "getColumnDescriptors"
        | "getTableRegions"
        | "deleteTable"
        | "get"
        | "getVer"
        | "getVerTs"
        | "getRow"
        | "getRowWithColumns"
        | "getRowTs"
        | "getRowWithColumnsTs"
        | "getRows"
        | "getRowsWithColumns"
        | "getRowsTs"
        | "getRowsWithColumnsTs"
        | "deleteAll"
        | "deleteAllTs"
        | "deleteAllRow"
        | "deleteAllRowTs"
        | "increment"
        | "incrementRows"
        | "scannerOpenWithScan"
        | "scannerOpen"
        | "scannerOpenWithStop"
        | "scannerOpenWithPrefix"
        | "scannerOpenTs"
        | "scannerOpenWithStopTs"
        | "getRowOrBefore"
        | "getRegionInfo"
        | "append" => (false, false),
        _ => return None,
    })
}

fn reply(header: &Header, (ia, exists): (bool, bool), outcome: Outcome) -> Message {
    let body = match outcome {
        Ok(value) => Struct::new().with_opt(0, value),
        Err(ServiceError::Protocol(msg)) => {
            tracing::warn!(method = %header.name, "bad arguments: {msg}");
            return application_error(
                header,
                ApplicationError::ProtocolError,
                &format!("{}: {msg}", header.name),
            );
        }
        Err(ServiceError::IllegalArgument(msg)) if ia => {
            Struct::new().with(2, message_exception(&msg))
        }
        Err(ServiceError::AlreadyExists(msg)) if exists => {
            Struct::new().with(3, message_exception(&msg))
        }
        Err(ServiceError::Io { message, can_retry }) => {
            Struct::new().with(1, io_error(&message, can_retry))
        }
        // Not declared by this method: the IDL only allows IOError.
        Err(ServiceError::IllegalArgument(msg) | ServiceError::AlreadyExists(msg)) => {
            Struct::new().with(1, io_error(&msg, false))
        }
    };
    Message {
        header: Header {
            name: header.name.clone(),
            kind: MessageType::Reply,
            seqid: header.seqid,
        },
        body,
    }
}

/// A `TApplicationException` reply to `header`.
pub fn application_error(header: &Header, kind: ApplicationError, message: &str) -> Message {
    Message {
        header: Header {
            name: header.name.clone(),
            kind: MessageType::Exception,
            seqid: header.seqid,
        },
        body: application_exception(kind, message),
    }
}

/// A call's arguments, read by field id; a required argument that is
/// missing or mistyped is a protocol error naming it.
pub(crate) struct Args<'a>(pub(crate) &'a Struct);

impl Args<'_> {
    fn missing(id: i16, name: &str, ty: &str) -> ServiceError {
        ServiceError::Protocol(format!(
            "argument {id} ({name}) is missing or not of type {ty}"
        ))
    }

    pub(crate) fn bytes(&self, id: i16, name: &str) -> Result<Bytes, ServiceError> {
        self.0
            .binary(id)
            .cloned()
            .ok_or_else(|| Args::missing(id, name, "binary"))
    }

    /// A row key (non-empty, as HBase requires).
    pub(crate) fn row(&self, id: i16) -> Result<Bytes, ServiceError> {
        let row = self.bytes(id, "row")?;
        if row.is_empty() {
            return Err(ServiceError::IllegalArgument("row key is empty".into()));
        }
        Ok(row)
    }

    /// A table name (UTF-8, as ferrobase table names are).
    pub(crate) fn table(&self, id: i16) -> Result<String, ServiceError> {
        let b = self.bytes(id, "tableName")?;
        String::from_utf8(b.to_vec()).map_err(|_| {
            ServiceError::IllegalArgument(format!(
                "table name {:?} is not UTF-8",
                String::from_utf8_lossy(&b)
            ))
        })
    }

    pub(crate) fn i32(&self, id: i16, name: &str) -> Result<i32, ServiceError> {
        self.0.i32(id).ok_or_else(|| Args::missing(id, name, "i32"))
    }

    pub(crate) fn i64(&self, id: i16, name: &str) -> Result<i64, ServiceError> {
        self.0.i64(id).ok_or_else(|| Args::missing(id, name, "i64"))
    }

    /// An optional `list<Text>` (absent: `None`, as a null Java list).
    pub(crate) fn texts(&self, id: i16) -> Option<Vec<Bytes>> {
        self.0.binaries(id)
    }

    pub(crate) fn list(&self, id: i16, name: &str) -> Result<Vec<Bytes>, ServiceError> {
        self.texts(id)
            .ok_or_else(|| Args::missing(id, name, "list<binary>"))
    }

    pub(crate) fn strukt(&self, id: i16, name: &str) -> Result<&Struct, ServiceError> {
        self.0
            .strukt(id)
            .ok_or_else(|| Args::missing(id, name, "struct"))
    }

    fn structs(&self, id: i16) -> Vec<&Struct> {
        self.0.structs(id).unwrap_or_default()
    }

    fn batches(&self, id: i16) -> Vec<BatchMutation> {
        self.structs(id)
            .into_iter()
            .map(BatchMutation::from_struct)
            .collect()
    }
}
