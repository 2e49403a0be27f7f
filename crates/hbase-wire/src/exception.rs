//! HBase exceptions as the Java client knows them: the exact class names,
//! whether the client may retry, and the wire forms a server sends.
//!
//! This module owns the mapping from an [`ExceptionClass`] to its Java
//! class name and `do_not_retry` flag, and builds the two wire forms: an
//! `ExceptionResponse` in a response header (a failed call) and a
//! `NameBytesPair` in a `ResultOrException` / `RegionActionResult` (one
//! failed action of a Multi). The Java client re-creates the exception by
//! class name with the message as its only argument, so the message is
//! part of the protocol for some classes (see
//! [`HBaseException::region_moved`]). It never decides which exception a
//! failure is: the server does.

use crate::names::ServerName;
use crate::pb;
use bytes::Bytes;
use std::fmt;

macro_rules! classes {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, retry: $retry:literal ),+ $(,)?) => {
        /// An HBase exception class the server sends.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ExceptionClass {
            $( $(#[$doc])* $variant ),+
        }

        impl ExceptionClass {
            /// Every class, in declaration order.
            pub const ALL: &'static [ExceptionClass] = &[$(ExceptionClass::$variant),+];

            /// The fully qualified Java class name.
            pub fn class_name(self) -> &'static str {
                match self { $(ExceptionClass::$variant => $name),+ }
            }

            /// True when the client must not retry (the Java class extends
            /// `DoNotRetryIOException`).
            pub fn do_not_retry(self) -> bool {
                match self { $(ExceptionClass::$variant => !$retry),+ }
            }

            /// The class with this fully qualified name, if it is one of ours.
            pub fn from_class_name(name: &str) -> Option<ExceptionClass> {
                match name { $($name => Some(ExceptionClass::$variant),)+ _ => None }
            }
        }
    };
}

classes! {
    /// The region is not (or no longer) open on this server; the client
    /// looks it up again.
    NotServingRegion => "org.apache.hadoop.hbase.NotServingRegionException", retry: true,
    /// The region moved to the server named in the message.
    RegionMoved => "org.apache.hadoop.hbase.exceptions.RegionMovedException", retry: true,
    /// The region refuses writes for now (memstore full, closing).
    RegionTooBusy => "org.apache.hadoop.hbase.RegionTooBusyException", retry: true,
    /// The server's call queue is full.
    CallQueueTooBig => "org.apache.hadoop.hbase.CallQueueTooBigException", retry: true,
    /// The server is starting.
    ServerNotRunningYet => "org.apache.hadoop.hbase.ipc.ServerNotRunningYetException", retry: true,
    /// The master is busy (e.g. initializing); try later.
    PleaseHold => "org.apache.hadoop.hbase.PleaseHoldException", retry: true,
    /// A Multi's results grew too large; the client retries the rest.
    MultiActionResultTooLarge => "org.apache.hadoop.hbase.MultiActionResultTooLarge", retry: true,
    /// A plain I/O failure the client may retry.
    Io => "java.io.IOException", retry: true,
    TableNotFound => "org.apache.hadoop.hbase.TableNotFoundException", retry: false,
    TableExists => "org.apache.hadoop.hbase.TableExistsException", retry: false,
    TableNotEnabled => "org.apache.hadoop.hbase.TableNotEnabledException", retry: false,
    TableNotDisabled => "org.apache.hadoop.hbase.TableNotDisabledException", retry: false,
    NamespaceNotFound => "org.apache.hadoop.hbase.NamespaceNotFoundException", retry: false,
    NamespaceExist => "org.apache.hadoop.hbase.NamespaceExistException", retry: false,
    NoSuchColumnFamily => "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException", retry: false,
    SnapshotDoesNotExist => "org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException", retry: false,
    SnapshotExists => "org.apache.hadoop.hbase.snapshot.SnapshotExistsException", retry: false,
    /// A clone or restore of a snapshot whose TTL has passed.
    SnapshotTtlExpired => "org.apache.hadoop.hbase.snapshot.SnapshotTTLExpiredException", retry: false,
    /// A family operation that the table's state forbids (e.g. deleting
    /// its last family).
    InvalidFamilyOperation => "org.apache.hadoop.hbase.InvalidFamilyOperationException", retry: false,
    /// The catch-all "do not retry" (also what HBase sends for a method it
    /// does not have, an `UnsupportedOperationException` wrapped).
    DoNotRetryIo => "org.apache.hadoop.hbase.DoNotRetryIOException", retry: false,
    UnknownScanner => "org.apache.hadoop.hbase.UnknownScannerException", retry: false,
    OutOfOrderScannerNext => "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException", retry: false,
    /// The scanner's lease expired.
    Lease => "org.apache.hadoop.hbase.regionserver.LeaseException", retry: false,
    /// A region name the server does not know at all.
    UnknownRegion => "org.apache.hadoop.hbase.UnknownRegionException", retry: false,
    /// A mutation that breaks a rule (empty row, oversize cell, bad timestamp).
    FailedSanityCheck => "org.apache.hadoop.hbase.exceptions.FailedSanityCheckException", retry: false,
    /// A service or coprocessor endpoint the server does not have.
    UnknownProtocol => "org.apache.hadoop.hbase.exceptions.UnknownProtocolException", retry: false,
    /// A request larger than the server accepts.
    RequestTooBig => "org.apache.hadoop.hbase.exceptions.RequestTooBigException", retry: false,
    AccessDenied => "org.apache.hadoop.hbase.security.AccessDeniedException", retry: false,
    /// The connection cannot go on; the client fails every call on it.
    FatalConnection => "org.apache.hadoop.hbase.ipc.FatalConnectionException", retry: false,
    WrongVersion => "org.apache.hadoop.hbase.ipc.WrongVersionException", retry: false,
    BadAuth => "org.apache.hadoop.hbase.ipc.BadAuthException", retry: false,
    UnsupportedCellCodec => "org.apache.hadoop.hbase.ipc.UnsupportedCellCodecException", retry: false,
    UnsupportedCompressionCodec => "org.apache.hadoop.hbase.ipc.UnsupportedCompressionCodecException", retry: false,
    /// The connection header names a service this server does not run.
    UnknownService => "org.apache.hadoop.hbase.ipc.UnknownServiceException", retry: false,
    /// A request that breaks a rule of the cluster's state (e.g. deleting
    /// a namespace that still holds tables). Server-side only: the Java
    /// client sees it as a DoNotRetryIOException naming this class.
    Constraint => "org.apache.hadoop.hbase.constraint.ConstraintException", retry: false,
}

impl ExceptionClass {
    /// True when the server was overloaded (HBase sets `server_overloaded`
    /// for these, and the client backs off longer).
    pub fn server_overloaded(self) -> bool {
        matches!(self, ExceptionClass::CallQueueTooBig)
    }
}

impl fmt::Display for ExceptionClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class_name())
    }
}

/// An exception a server sends: a class and its message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{class}: {message}")]
pub struct HBaseException {
    pub class: ExceptionClass,
    /// The Java exception's message (the client's `getMessage()`).
    pub message: String,
    /// `host`, `port` of the server a region moved to (RegionMoved only).
    pub location: Option<(String, u16)>,
}

impl HBaseException {
    /// An exception of `class` with `message`.
    pub fn new(class: ExceptionClass, message: impl Into<String>) -> HBaseException {
        HBaseException {
            class,
            message: message.into(),
            location: None,
        }
    }

    /// `DoNotRetryIOException` for a method the service lacks, worded as
    /// HBase words the `UnsupportedOperationException` it wraps.
    pub fn unsupported_method(service: &str, method: &str) -> HBaseException {
        HBaseException::new(
            ExceptionClass::DoNotRetryIo,
            format!(
                "java.lang.UnsupportedOperationException: {service}.{method} is not supported by ferrobase"
            ),
        )
    }

    /// `RegionMovedException` naming the new server. The Java client
    /// parses host, port, start code and sequence number back out of this
    /// exact message, so it is built here and nowhere else.
    pub fn region_moved(to: &ServerName, location_seq_num: u64) -> HBaseException {
        HBaseException {
            class: ExceptionClass::RegionMoved,
            message: format!(
                "Region moved to: hostname={} port={} startCode={}. As of locationSeqNum={}.",
                to.host, to.port, to.start_code, location_seq_num
            ),
            location: Some((to.host.clone(), to.port)),
        }
    }

    /// The text HBase puts where a Java stack trace goes: the client uses it
    /// as the re-created exception's message. `Class: message`, as
    /// `Throwable.toString()` starts.
    pub fn stack_trace(&self) -> String {
        format!("{}: {}", self.class, self.message)
    }

    /// The response header's exception field.
    pub fn to_response(&self) -> pb::ExceptionResponse {
        pb::ExceptionResponse {
            exception_class_name: Some(self.class.class_name().to_string()),
            stack_trace: Some(self.stack_trace()),
            hostname: self.location.as_ref().map(|(h, _)| h.clone()),
            port: self.location.as_ref().map(|(_, p)| i32::from(*p)),
            do_not_retry: Some(self.class.do_not_retry()),
            server_overloaded: self.class.server_overloaded().then_some(true),
        }
    }

    /// The `NameBytesPair` of a failed action in a Multi response: the
    /// class name and the stringified exception.
    pub fn to_name_bytes_pair(&self) -> pb::NameBytesPair {
        pb::NameBytesPair {
            name: self.class.class_name().to_string(),
            value: Some(Bytes::from(self.stack_trace())),
        }
    }
}

/// An exception as a client receives it (any class, ours or not).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{class_name}: {message}")]
pub struct RemoteException {
    pub class_name: String,
    pub message: String,
    pub do_not_retry: bool,
}

impl RemoteException {
    /// The class, if it is one this crate names.
    pub fn class(&self) -> Option<ExceptionClass> {
        ExceptionClass::from_class_name(&self.class_name)
    }
}

impl From<&pb::ExceptionResponse> for RemoteException {
    fn from(e: &pb::ExceptionResponse) -> RemoteException {
        RemoteException {
            class_name: e.exception_class_name.clone().unwrap_or_default(),
            message: e.stack_trace.clone().unwrap_or_default(),
            do_not_retry: e.do_not_retry.unwrap_or(false),
        }
    }
}

impl From<&pb::NameBytesPair> for RemoteException {
    fn from(e: &pb::NameBytesPair) -> RemoteException {
        let class = ExceptionClass::from_class_name(&e.name);
        RemoteException {
            class_name: e.name.clone(),
            message: String::from_utf8_lossy(e.value.as_deref().unwrap_or_default()).into_owned(),
            do_not_retry: class.is_some_and(ExceptionClass::do_not_retry),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_and_retry_flags_are_hbases() {
        use ExceptionClass as C;
        for (class, name, do_not_retry) in [
            (
                C::NotServingRegion,
                "org.apache.hadoop.hbase.NotServingRegionException",
                false,
            ),
            (
                C::RegionMoved,
                "org.apache.hadoop.hbase.exceptions.RegionMovedException",
                false,
            ),
            (
                C::RegionTooBusy,
                "org.apache.hadoop.hbase.RegionTooBusyException",
                false,
            ),
            (
                C::CallQueueTooBig,
                "org.apache.hadoop.hbase.CallQueueTooBigException",
                false,
            ),
            (
                C::TableNotFound,
                "org.apache.hadoop.hbase.TableNotFoundException",
                true,
            ),
            (
                C::TableExists,
                "org.apache.hadoop.hbase.TableExistsException",
                true,
            ),
            (
                C::NamespaceNotFound,
                "org.apache.hadoop.hbase.NamespaceNotFoundException",
                true,
            ),
            (
                C::NamespaceExist,
                "org.apache.hadoop.hbase.NamespaceExistException",
                true,
            ),
            (
                C::NoSuchColumnFamily,
                "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException",
                true,
            ),
            (
                C::DoNotRetryIo,
                "org.apache.hadoop.hbase.DoNotRetryIOException",
                true,
            ),
            (
                C::UnknownScanner,
                "org.apache.hadoop.hbase.UnknownScannerException",
                true,
            ),
            (
                C::OutOfOrderScannerNext,
                "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException",
                true,
            ),
            (
                C::FatalConnection,
                "org.apache.hadoop.hbase.ipc.FatalConnectionException",
                true,
            ),
            (
                C::TableNotEnabled,
                "org.apache.hadoop.hbase.TableNotEnabledException",
                true,
            ),
            (
                C::TableNotDisabled,
                "org.apache.hadoop.hbase.TableNotDisabledException",
                true,
            ),
            (
                C::FailedSanityCheck,
                "org.apache.hadoop.hbase.exceptions.FailedSanityCheckException",
                true,
            ),
            (
                C::UnknownProtocol,
                "org.apache.hadoop.hbase.exceptions.UnknownProtocolException",
                true,
            ),
        ] {
            assert_eq!(class.class_name(), name);
            assert_eq!(class.do_not_retry(), do_not_retry, "{name}");
            assert_eq!(ExceptionClass::from_class_name(name), Some(class));
        }
        for c in ExceptionClass::ALL {
            assert_eq!(ExceptionClass::from_class_name(c.class_name()), Some(*c));
        }
        assert_eq!(ExceptionClass::from_class_name("java.lang.Error"), None);
    }

    #[test]
    fn region_moved_message_is_what_the_java_client_parses() {
        let to = ServerName::new("rs2", 16020, 1_700_000_000_123);
        let e = HBaseException::region_moved(&to, 42);
        // RegionMovedException(String) reads hostname up to ' ', port up to
        // ' ', startCode up to '.', locationSeqNum up to '.'.
        assert_eq!(
            e.message,
            "Region moved to: hostname=rs2 port=16020 startCode=1700000000123. As of locationSeqNum=42."
        );
        let r = e.to_response();
        assert_eq!(r.hostname.as_deref(), Some("rs2"));
        assert_eq!(r.port, Some(16020));
        assert_eq!(r.do_not_retry, Some(false));
    }

    #[test]
    fn wire_forms() {
        let e = HBaseException::new(ExceptionClass::TableNotFound, "ns:t");
        let r = e.to_response();
        assert_eq!(
            r.exception_class_name.as_deref(),
            Some("org.apache.hadoop.hbase.TableNotFoundException")
        );
        assert_eq!(
            r.stack_trace.as_deref(),
            Some("org.apache.hadoop.hbase.TableNotFoundException: ns:t")
        );
        assert_eq!(r.do_not_retry, Some(true));
        assert_eq!(r.server_overloaded, None);
        let remote = RemoteException::from(&r);
        assert_eq!(remote.class(), Some(ExceptionClass::TableNotFound));
        assert!(remote.do_not_retry);
        let pair = e.to_name_bytes_pair();
        assert_eq!(pair.name, "org.apache.hadoop.hbase.TableNotFoundException");
        let remote = RemoteException::from(&pair);
        assert_eq!(remote.message, e.stack_trace());
        assert!(
            HBaseException::new(ExceptionClass::CallQueueTooBig, "full")
                .to_response()
                .server_overloaded
                .unwrap()
        );
        let u = HBaseException::unsupported_method("MasterService", "IsSnapshotDone");
        assert_eq!(u.class, ExceptionClass::DoNotRetryIo);
        assert!(
            u.message.contains("UnsupportedOperationException")
                && u.message.contains("IsSnapshotDone")
        );
    }
}
