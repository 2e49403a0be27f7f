//! Process settings with HBase's names and defaults.
//!
//! One TOML file holds them, written either flat with quoted names
//! (`"hbase.hstore.blockingStoreFiles" = 16`) or as TOML's nested dotted
//! keys (`hbase.hstore.blockingStoreFiles = 16`); both mean the same.
//! Command-line `--set name=value` overrides are applied on top. This
//! module owns the list of settings ([`Settings::DEFINITIONS`], which the
//! README mirrors) and their parsing; it never reads the file itself.
//!
//! HBase sizes its memstore limit and block cache as fractions of the Java
//! heap. ferrobase has no heap, so those fractions apply to
//! `ferrobase.memory.size` (bytes; default a quarter of physical RAM).

use std::collections::BTreeMap;

/// A setting that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    #[error("unknown setting '{name}'{}", suggestion(.name))]
    Unknown { name: String },
    #[error("setting '{name}': invalid value '{value}', expected {expected}")]
    Invalid {
        name: String,
        value: String,
        expected: &'static str,
    },
    #[error("settings file is not valid TOML: {0}")]
    Toml(String),
    #[error("override '{0}' is not of the form name=value")]
    BadOverride(String),
}

fn suggestion(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let best = Settings::DEFINITIONS
        .iter()
        .map(|d| d.name)
        .min_by_key(|d| edit_distance(&lower, &d.to_ascii_lowercase()));
    match best {
        Some(b) if edit_distance(&lower, &b.to_ascii_lowercase()) <= 6 => {
            format!("; did you mean '{b}'?")
        }
        _ => "; see the README for the list of settings".to_string(),
    }
}

/// Levenshtein distance, for "did you mean".
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// One setting's name, default (as text) and meaning.
#[derive(Debug, Clone, Copy)]
pub struct Definition {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

macro_rules! settings {
    ($( $(#[$m:meta])* $field:ident : $ty:ty = $default:expr, $name:literal, $doc:literal; )+) => {
        /// Every setting, typed. Build with [`Settings::default`] and
        /// [`Settings::apply_toml`] or [`Settings::set`].
        #[derive(Debug, Clone, PartialEq)]
        pub struct Settings { $( $(#[$m])* #[doc = $doc] pub $field: $ty, )+ }

        impl Default for Settings {
            fn default() -> Self {
                Settings { $( $field: <$ty as SettingDefault<_>>::setting_default($default), )+ }
            }
        }

        impl Settings {
            /// Every setting with its HBase name, default and meaning.
            pub const DEFINITIONS: &'static [Definition] = &[
                $( Definition { name: $name, default: stringify!($default), doc: $doc }, )+
            ];

            /// Sets one setting by name from text.
            pub fn set(&mut self, name: &str, value: &str) -> Result<(), SettingsError> {
                match name {
                    $( $name => { self.$field = ParseSetting::parse_setting(name, value.trim())?; Ok(()) } )+
                    _ => Err(SettingsError::Unknown { name: name.to_string() }),
                }
            }

            /// Every setting's current value as text, by name.
            pub fn values(&self) -> Vec<(&'static str, String)> {
                vec![ $( ($name, self.$field.to_string()), )+ ]
            }
        }
    };
}

/// A default written in the table below: a literal of the setting's own
/// type, or text for a text setting (so the printed default reads `""`).
trait SettingDefault<T> {
    fn setting_default(value: T) -> Self;
}

impl<T> SettingDefault<T> for T {
    fn setting_default(value: T) -> T {
        value
    }
}

impl SettingDefault<&'static str> for String {
    fn setting_default(value: &'static str) -> String {
        value.to_string()
    }
}

/// `hbase.server.netty.tls.client.auth.mode`: whether a TLS port asks for
/// client certificates (HBase's `X509Util.ClientAuth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    None,
    /// One is asked for; a client without one is let in anonymously.
    Want,
    /// One is required; a client without one fails the handshake.
    Need,
}

impl std::fmt::Display for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClientAuth::None => "NONE",
            ClientAuth::Want => "WANT",
            ClientAuth::Need => "NEED",
        })
    }
}

impl ParseSetting for ClientAuth {
    fn parse_setting(name: &str, value: &str) -> Result<Self, SettingsError> {
        // HBase takes an empty value as NEED; OPTIONAL is netty's word.
        match value.to_ascii_uppercase().as_str() {
            "NONE" => Ok(ClientAuth::None),
            "WANT" | "OPTIONAL" => Ok(ClientAuth::Want),
            "NEED" | "REQUIRE" | "" => Ok(ClientAuth::Need),
            _ => Err(SettingsError::Invalid {
                name: name.into(),
                value: value.into(),
                expected: "NONE, WANT or NEED",
            }),
        }
    }
}

impl SettingDefault<&'static str> for ClientAuth {
    fn setting_default(value: &'static str) -> ClientAuth {
        ClientAuth::parse_setting("", value).unwrap_or(ClientAuth::Need)
    }
}

impl ParseSetting for String {
    fn parse_setting(_name: &str, value: &str) -> Result<Self, SettingsError> {
        Ok(value.to_string())
    }
}

trait ParseSetting: Sized {
    fn parse_setting(name: &str, value: &str) -> Result<Self, SettingsError>;
}

impl ParseSetting for u64 {
    fn parse_setting(name: &str, value: &str) -> Result<Self, SettingsError> {
        parse_size(value).ok_or_else(|| SettingsError::Invalid {
            name: name.into(),
            value: value.into(),
            expected: "a non-negative integer (suffixes k, m, g allowed)",
        })
    }
}

impl ParseSetting for i64 {
    fn parse_setting(name: &str, value: &str) -> Result<Self, SettingsError> {
        let t = value.trim().replace('_', "");
        match t.strip_prefix('-') {
            Some(rest) => rest.parse::<i64>().ok().map(|v| -v),
            None => parse_size(&t).and_then(|v| i64::try_from(v).ok()),
        }
        .ok_or_else(|| SettingsError::Invalid {
            name: name.into(),
            value: value.into(),
            expected: "an integer (suffixes k, m, g allowed)",
        })
    }
}

impl ParseSetting for usize {
    fn parse_setting(name: &str, value: &str) -> Result<Self, SettingsError> {
        u64::parse_setting(name, value).map(|v| v as usize)
    }
}

impl ParseSetting for f64 {
    fn parse_setting(name: &str, value: &str) -> Result<Self, SettingsError> {
        match value.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(SettingsError::Invalid {
                name: name.into(),
                value: value.into(),
                expected: "a non-negative number",
            }),
        }
    }
}

impl ParseSetting for bool {
    fn parse_setting(name: &str, value: &str) -> Result<Self, SettingsError> {
        match value {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(SettingsError::Invalid {
                name: name.into(),
                value: value.into(),
                expected: "true or false",
            }),
        }
    }
}

/// `123`, `64k`, `128m`, `2g` (binary units), or `1_000`.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().replace('_', "").to_ascii_lowercase();
    let t = t.strip_suffix('b').unwrap_or(&t).to_string();
    let (digits, mult) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 1u64 << 10),
        'm' => (&t[..t.len() - 1], 1 << 20),
        'g' => (&t[..t.len() - 1], 1 << 30),
        _ => (&t[..], 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}

settings! {
    memory_size: u64 = 0, "ferrobase.memory.size",
        "Memory budget in bytes that HBase's heap fractions apply to; 0 means a quarter of physical RAM.";
    memstore_flush_size: u64 = 134_217_728, "hbase.hregion.memstore.flush.size",
        "A region's memstore is flushed when it passes this many bytes.";
    memstore_block_multiplier: u64 = 4, "hbase.hregion.memstore.block.multiplier",
        "Writes to a region block when its memstore passes this multiple of the flush size.";
    blocking_store_files: usize = 16, "hbase.hstore.blockingStoreFiles",
        "Flushes of a store with this many files wait for compaction (at most blockingWaitTime).";
    blocking_wait_time_ms: u64 = 90_000, "hbase.hstore.blockingWaitTime",
        "Longest wait, in ms, of a blocked write or a delayed flush before it gives up (writes fail with 'region too busy').";
    global_memstore_size: f64 = 0.4, "hbase.regionserver.global.memstore.size",
        "Process-wide memstore limit: a fraction of ferrobase.memory.size (≤ 1.0) or bytes (> 1.0); writes block above it.";
    global_memstore_lower_limit: f64 = 0.95, "hbase.regionserver.global.memstore.size.lower.limit",
        "Fraction of the global limit where forced flushes of the largest regions start.";
    compaction_min: usize = 3, "hbase.hstore.compaction.min",
        "Fewest files a minor compaction merges.";
    compaction_max: usize = 10, "hbase.hstore.compaction.max",
        "Most files a minor compaction merges.";
    compaction_ratio: f64 = 1.2, "hbase.hstore.compaction.ratio",
        "A file joins a minor compaction when it is at most ratio × the sum of the newer files selected.";
    compaction_throughput_lower: u64 = 52_428_800, "hbase.hstore.compaction.throughput.lower.bound",
        "Bytes/s all compactions may write when no store is near blockingStoreFiles (HBase 2's pressure-aware control; 0 here or in the higher bound: no limit).";
    compaction_throughput_higher: u64 = 104_857_600, "hbase.hstore.compaction.throughput.higher.bound",
        "Bytes/s all compactions may write when a store reaches blockingStoreFiles; beyond it, no limit.";
    compaction_throttle: u64 = 2_684_354_560, "hbase.regionserver.thread.compaction.throttle",
        "Compactions reading more bytes than this go to the large pool (HBase: 2 × compaction.max × flush size).";
    flusher_count: usize = 2, "hbase.hstore.flusher.count",
        "Threads in the flush pool.";
    compaction_small_threads: usize = 1, "hbase.regionserver.thread.compaction.small",
        "Threads in the small-compaction pool.";
    compaction_large_threads: usize = 1, "hbase.regionserver.thread.compaction.large",
        "Threads in the large-compaction pool.";
    block_cache_size: f64 = 0.4, "hfile.block.cache.size",
        "Block cache size: a fraction of ferrobase.memory.size (≤ 1.0) or bytes (> 1.0); 0 disables it.";
    row_cache_size: f64 = 0.0, "ferrobase.rowcache.size",
        "Row cache size (whole get results of ROW_CACHE families): a fraction of ferrobase.memory.size (≤ 1.0) or bytes (> 1.0); 0, the default, disables it.";
    wal_block_size: u64 = 268_435_456, "hbase.regionserver.hlog.blocksize",
        "WAL block size; a segment rolls at logroll.multiplier × this.";
    dfs_replication: u64 = 3, "dfs.replication",
        "Replicas of every file ferrobase creates on an hdfs:// root (store files, manifests, WAL segments).";
    dfs_blocksize: u64 = 134_217_728, "dfs.blocksize",
        "HDFS block size of store files and other files on an hdfs:// root (WAL segments use hbase.regionserver.hlog.blocksize).";
    wal_roll_multiplier: f64 = 0.5, "hbase.regionserver.logroll.multiplier",
        "Fraction of the WAL block size at which a segment rolls.";
    wal_max_logs: usize = 32, "hbase.regionserver.maxlogs",
        "With more WAL segments than this, the regions holding the oldest edits are flushed.";
    async_wal_flush_interval_ms: u64 = 1000, "hbase.regionserver.optionallogflushinterval",
        "ASYNC_WAL edits are written out at least this often (ms).";
    keyvalue_max_size: usize = 10_485_760, "hbase.client.keyvalue.maxsize",
        "Largest cell accepted, in bytes (0: no limit).";
    max_filesize: u64 = 10_737_418_240, "hbase.hregion.max.filesize",
        "A region splits when a store's files pass this size.";
    load_split_threshold: u64 = 0, "ferrobase.split.load.threshold",
        "Load-based splits (Bigtable's): a region serving more than this many requests (rows read or written) per second over 10 s splits at the row that halves its requests; 0, the default, turns them off.";
    handler_count: usize = 30, "hbase.regionserver.handler.count",
        "RPC handler threads of a region server.";
    client_write_buffer: u64 = 2_097_152, "hbase.client.write.buffer",
        "Client write buffer, in encoded bytes.";
    client_retries: usize = 15, "hbase.client.retries.number",
        "Client retries of a failed call.";
    client_pause_ms: u64 = 100, "hbase.client.pause",
        "Base client backoff between retries (ms).";
    client_ipc_pool_size: usize = 1, "hbase.client.ipc.pool.size",
        "Connections a client opens to each server.";
    ipc_max_callqueue_length: usize = 0, "hbase.ipc.server.max.callqueue.length",
        "Calls a region server queues beyond its busy handlers before answering 'server busy'; 0 means 10 × handler.count.";
    scanner_timeout_ms: u64 = 60_000, "hbase.client.scanner.timeout.period",
        "Scanner lease (ms): a server-side scanner not continued for this long is closed.";
    client_scanner_caching: u64 = 2_147_483_647, "hbase.client.scanner.caching",
        "Rows a scan fetches per round trip (bounded also by max.result.size).";
    client_scanner_max_result_size: u64 = 2_097_152, "hbase.client.scanner.max.result.size",
        "Bytes a scan fetches per round trip, at least one row.";
    client_write_buffer_flush_ms: u64 = 1_000, "hbase.client.write.buffer.periodicflush.timeout.ms",
        "A BufferedMutator flushes buffered mutations at least this often (ms); 0 disables the timer.";
    etcd_lease_ttl_ms: u64 = 3_000, "ferrobase.etcd.lease.ttl.ms",
        "Distributed mode: TTL (ms) of the etcd lease behind a region server's registration and the master's election; a server that stops renewing it is declared dead this long after (ferrobase's zookeeper.session.timeout).";
    balancer_period_ms: u64 = 300_000, "hbase.balancer.period",
        "Distributed mode: the master evens out region counts across region servers this often (ms).";
    thrift_port: u64 = 9090, "hbase.regionserver.thrift.port",
        "Thrift gateway (`ferrobase thrift`): the TCP port it listens on.";
    thrift_framed: bool = false, "hbase.regionserver.thrift.framed",
        "Thrift gateway: accept only framed transport; false detects framed or buffered per connection.";
    thrift_max_frame_size_mb: u64 = 2, "hbase.regionserver.thrift.framed.max_frame_size_in_mb",
        "Thrift gateway: largest frame (or unframed message) accepted, in MiB; a larger one closes the connection.";
    thrift_max_idle_ms: u64 = 600_000, "hbase.thrift.connection.max-idletime",
        "Thrift gateway: a scanner not used for this long (ms) is closed and its id becomes invalid.";
    master_info_port: i64 = 16_010, "hbase.master.info.port",
        "HTTP info port of a master and of standalone (web UI, /metrics, /jmx); -1 disables it; --info-port overrides.";
    regionserver_info_port: i64 = 16_030, "hbase.regionserver.info.port",
        "HTTP info port of a region server (web UI, /metrics, /jmx); -1 disables it; --info-port overrides.";
    thrift_info_port: i64 = 9_095, "hbase.thrift.info.port",
        "HTTP info port of the Thrift gateway (/metrics, /jmx); -1 disables it; --info-port overrides.";
    zookeeper_client_port: i64 = 2_181, "hbase.zookeeper.property.clientPort",
        "ZooKeeper registry endpoint of standalone and of the active master: HBase clients that name this host in hbase.zookeeper.quorum find the cluster here; -1 disables it; --zookeeper-port overrides.";
    zookeeper_znode_parent: String = "/hbase", "zookeeper.znode.parent",
        "Root znode the ZooKeeper registry endpoint answers under (the clients' zookeeper.znode.parent).";
    etcd_tls_truststore_location: String = "", "zookeeper.ssl.trustStore.location",
        "Distributed mode, https:// etcd endpoints: PEM file of the CA certificates that sign etcd's certificate; empty: hbase.rpc.tls.truststore.location.";
    etcd_tls_keystore_location: String = "", "zookeeper.ssl.keyStore.location",
        "Distributed mode, https:// etcd endpoints: PEM key and certificate this process presents to etcd (its --client-cert-auth); empty: hbase.rpc.tls.keystore.location.";
    ipc_warn_response_time_ms: u64 = 10_000, "hbase.ipc.warn.response.time",
        "A call taking longer than this (ms) is logged as responseTooSlow and kept in the slow-request list.";
    ipc_warn_response_size: u64 = 104_857_600, "hbase.ipc.warn.response.size",
        "A call answering more than this many bytes is logged as responseTooLarge and kept in the slow-request list.";
    tls_server_enabled: bool = false, "hbase.server.netty.tls.enabled",
        "TLS on the RPC port of a master, region server or standalone (gRPC and HBase RPC); needs hbase.rpc.tls.keystore.location.";
    tls_server_support_plaintext: bool = true, "hbase.server.netty.tls.supportplaintext",
        "With TLS on, still accept plaintext connections on the RPC port (a TLS ClientHello is told apart by its first byte); false refuses them with a log line.";
    tls_client_auth: ClientAuth = "NEED", "hbase.server.netty.tls.client.auth.mode",
        "Client certificates on a TLS port: NONE, WANT (asked for, optional) or NEED; a certificate's subject CN is the caller's user name.";
    tls_client_enabled: bool = false, "hbase.client.netty.tls.enabled",
        "Clients (Rust client, shell, bench, Thrift gateway, master to region servers) connect with TLS, trusting hbase.rpc.tls.truststore.location.";
    tls_verify_server_hostname: bool = true, "hbase.client.netty.tls.verify.server.hostname",
        "A TLS client checks that the server's certificate names the host (or IP address) it dialled.";
    tls_handshake_timeout_ms: u64 = 5_000, "hbase.client.netty.tls.handshaketimeout",
        "Longest a TLS handshake may take (ms), client and server side.";
    tls_keystore_location: String = "", "hbase.rpc.tls.keystore.location",
        "Key store with this process's private key and certificate chain (a server's identity; a client's for mutual TLS): a PEM, PKCS12 (.p12, .pfx) or JKS (.jks) file.";
    tls_keystore_type: String = "", "hbase.rpc.tls.keystore.type",
        "Key store format: PEM, PKCS12 or JKS; empty: from the file name's extension (.pem, .p12/.pfx, .jks), as HBase does.";
    tls_keystore_password: String = "", "hbase.rpc.tls.keystore.password",
        "Password of a PKCS12 or JKS key store (and of its key); must be empty for PEM, whose keys are read unencrypted.";
    tls_truststore_location: String = "", "hbase.rpc.tls.truststore.location",
        "Trust store of the CA certificates trusted for peers (a client's servers, a server's client certificates): a PEM, PKCS12 or JKS file.";
    tls_truststore_type: String = "", "hbase.rpc.tls.truststore.type",
        "Trust store format: PEM, PKCS12 or JKS; empty: from the file name's extension.";
    tls_truststore_password: String = "", "hbase.rpc.tls.truststore.password",
        "Password of a PKCS12 or JKS trust store; a JKS trust store may have none (its digest is then not checked, as Java does).";
    info_ssl_enabled: bool = false, "hbase.ssl.enabled",
        "The info ports (web UI, /metrics, /jmx) serve HTTPS only, with the hbase.rpc.tls.keystore.location identity.";
    thrift_ssl_enabled: bool = false, "hbase.thrift.ssl.enabled",
        "The Thrift gateway accepts TLS only, with the hbase.rpc.tls.keystore.location identity and hbase.server.netty.tls.client.auth.mode.";
    security_authorization: bool = false, "hbase.security.authorization",
        "Enforce permissions (HBase's AccessController: grant/revoke, READ WRITE EXEC CREATE ADMIN at global, namespace, table, family and qualifier scope); false lets every caller do everything.";
    security_authentication: String = "simple", "hbase.security.authentication",
        "How servers learn who a caller is: simple (the client's claimed user name is trusted; a TLS client certificate's CN wins over it), or kerberos/token (callers must prove who they are: a TLS client certificate, or a token, over SASL DIGEST-MD5 on HBase RPC and as a bearer credential on gRPC; GSSAPI itself is not built).";
    ipc_fallback_to_simple: bool = false, "hbase.ipc.server.fallback-to-simple-auth-allowed",
        "With hbase.security.authentication=kerberos/token, still accept SIMPLE HBase RPC connections (the claimed user name) from clients without a token or certificate.";
    auth_token_max_lifetime_ms: u64 = 604_800_000, "hbase.auth.token.max.lifetime",
        "How long (ms) an authentication token stays valid after it is issued (ferrobase token create, AuthenticationService.GetAuthenticationToken).";
    auth_key_update_interval_ms: u64 = 86_400_000, "hbase.auth.key.update.interval",
        "How often (ms) the master (or standalone server) rolls the token key: new tokens use the new key, older keys keep checking their tokens until those can no longer be valid (this interval plus hbase.auth.token.max.lifetime), then are deleted.";
    snapshot_ttl_secs: u64 = 0, "hbase.master.snapshot.ttl",
        "Seconds a snapshot taken without a TTL of its own lives (0: until deleted).";
    snapshot_cleaner_interval_ms: u64 = 1_800_000, "hbase.master.cleaner.snapshot.interval",
        "How often (ms) the master (or standalone server) deletes snapshots whose TTL has passed; snapshot_cleanup_switch turns it off and on.";
    superuser: String = "", "hbase.superuser",
        "Comma-separated users and @groups with every permission everywhere; the user who started the server is always one.";
    group_mapping: String = "org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback", "hadoop.security.group.mapping",
        "Where a user's groups (for @group grants and superusers) come from, as Hadoop's class names: JniBasedUnixGroupsMappingWithFallback or ShellBasedUnixGroupsMapping (the server host's groups of the user, as `id -Gn` lists them), or NullGroupsMapping (none); hadoop.user.group.static.mapping.overrides applies first.";
    group_static_overrides: String = "dr.who=;", "hadoop.user.group.static.mapping.overrides",
        "Fixed groups for some users, `user=group1,group2;user2=;` (an empty list: no groups), consulted before hadoop.security.group.mapping.";
    groups_cache_secs: u64 = 300, "hadoop.security.groups.cache.secs",
        "How long (seconds) a server keeps a user's looked-up groups before asking again.";
    client_user: String = "", "hbase.client.user",
        "The user name a client claims under simple authentication (Rust client, shell, bench, Thrift gateway, master to region servers); empty: the OS user running it.";
    token_files: String = "", "hadoop.token.files",
        "Hadoop token files (comma separated) a client (Rust client, shell, bench, Thrift gateway) takes its HBase token from, as Hadoop's UserGroupInformation does; empty: the HADOOP_TOKEN_FILE_LOCATION environment variable.";
}

impl Settings {
    /// Applies a TOML document on top of the current values.
    pub fn apply_toml(&mut self, text: &str) -> Result<(), SettingsError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| SettingsError::Toml(e.to_string()))?;
        let mut flat = BTreeMap::new();
        flatten("", &toml::Value::Table(table), &mut flat);
        for (name, value) in flat {
            self.set(&name, &value)?;
        }
        Ok(())
    }

    /// Applies a `name=value` override.
    pub fn apply_override(&mut self, text: &str) -> Result<(), SettingsError> {
        let (name, value) = text
            .split_once('=')
            .ok_or_else(|| SettingsError::BadOverride(text.to_string()))?;
        self.set(name.trim(), value)
    }

    /// The clients' `--tls-ca FILE` and `--tls-cert FILE` flags: a CA file
    /// turns client TLS on (`hbase.client.netty.tls.enabled`) trusting it
    /// (`hbase.rpc.tls.truststore.location`); a key store (private key and
    /// certificate, PEM) is the client certificate for mutual TLS
    /// (`hbase.rpc.tls.keystore.location`).
    pub fn apply_client_tls_flags(
        &mut self,
        ca: Option<&std::path::Path>,
        key_store: Option<&std::path::Path>,
    ) {
        if let Some(ca) = ca {
            self.tls_client_enabled = true;
            self.tls_truststore_location = ca.display().to_string();
        }
        if let Some(k) = key_store {
            self.tls_keystore_location = k.display().to_string();
        }
    }

    /// The user a client claims under simple authentication:
    /// `hbase.client.user`, else the OS user running this process.
    pub fn claimed_user(&self) -> String {
        let configured = self.client_user.trim();
        if configured.is_empty() {
            os_user()
        } else {
            configured.to_string()
        }
    }

    /// The token files a client reads: `hadoop.token.files`, else the
    /// `HADOOP_TOKEN_FILE_LOCATION` environment variable (Hadoop's order).
    pub fn token_file_paths(&self) -> Vec<std::path::PathBuf> {
        let listed: Vec<std::path::PathBuf> = self
            .token_files
            .split(',')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(std::path::PathBuf::from)
            .collect();
        if !listed.is_empty() {
            return listed;
        }
        std::env::var_os("HADOOP_TOKEN_FILE_LOCATION")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .into_iter()
            .collect()
    }

    /// The memory budget the fractions apply to.
    pub fn memory_budget(&self) -> u64 {
        if self.memory_size > 0 {
            self.memory_size
        } else {
            physical_memory() / 4
        }
    }

    /// Process-wide memstore limit in bytes.
    pub fn global_memstore_limit(&self) -> u64 {
        fraction_or_bytes(self.global_memstore_size, self.memory_budget())
    }

    /// Where forced flushes start, in bytes.
    pub fn global_memstore_low_mark(&self) -> u64 {
        (self.global_memstore_limit() as f64 * self.global_memstore_lower_limit.min(1.0)) as u64
    }

    /// Block cache capacity in bytes.
    pub fn block_cache_bytes(&self) -> u64 {
        fraction_or_bytes(self.block_cache_size, self.memory_budget())
    }

    /// Row cache capacity in bytes (0: off).
    pub fn row_cache_bytes(&self) -> u64 {
        fraction_or_bytes(self.row_cache_size, self.memory_budget())
    }

    /// Size at which a WAL segment rolls.
    pub fn wal_roll_size(&self) -> u64 {
        ((self.wal_block_size as f64) * self.wal_roll_multiplier).max(4096.0) as u64
    }

    /// Bytes above which a region blocks writes.
    pub fn memstore_block_size(&self) -> u64 {
        self.memstore_flush_size
            .saturating_mul(self.memstore_block_multiplier.max(1))
    }
}

fn fraction_or_bytes(v: f64, budget: u64) -> u64 {
    if v <= 1.0 {
        (budget as f64 * v) as u64
    } else {
        v as u64
    }
}

fn flatten(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, String>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&name, v, out);
            }
        }
        toml::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// Physical RAM in bytes (from /proc/meminfo; 8 GiB if unreadable).
pub fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(8 << 30)
}

/// The OS user running this process (HBase's `User.getCurrent()` short
/// name); `unknown` when the system cannot say.
pub fn os_user() -> String {
    whoami::username()
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_nested_and_quoted_names_agree() -> Result<(), SettingsError> {
        let mut a = Settings::default();
        a.apply_toml(
            "hbase.hstore.blockingStoreFiles = 7\nhbase.hregion.memstore.flush.size = \"64m\"\n",
        )?;
        let mut b = Settings::default();
        b.apply_toml("\"hbase.hstore.blockingStoreFiles\" = 7\n\"hbase.hregion.memstore.flush.size\" = 67108864\n")?;
        assert_eq!(a, b);
        assert_eq!(a.blocking_store_files, 7);
        assert_eq!(a.memstore_flush_size, 64 << 20);
        Ok(())
    }

    #[test]
    fn bad_names_and_values_are_explained() {
        let mut s = Settings::default();
        let e = s
            .apply_override("hbase.hstore.blockingStoreFile=3")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("did you mean 'hbase.hstore.blockingStoreFiles'"),
            "{e}"
        );
        let e = s
            .apply_override("hbase.hstore.compaction.ratio=fast")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("hbase.hstore.compaction.ratio") && e.contains("fast"),
            "{e}"
        );
        assert!(s.apply_override("novalue").is_err());
        assert!(s.apply_toml("= broken").is_err());
    }

    #[test]
    fn info_ports_take_minus_one_to_disable() -> Result<(), SettingsError> {
        let mut s = Settings::default();
        assert_eq!(s.master_info_port, 16010);
        assert_eq!(s.regionserver_info_port, 16030);
        s.apply_toml("hbase.master.info.port = -1\n")?;
        assert_eq!(s.master_info_port, -1);
        s.apply_override("hbase.regionserver.info.port=0")?;
        assert_eq!(s.regionserver_info_port, 0);
        assert!(s.apply_override("hbase.master.info.port=-x").is_err());
        Ok(())
    }

    #[test]
    fn tls_settings_take_hbase_names_and_words() -> Result<(), SettingsError> {
        let mut s = Settings::default();
        assert_eq!(s.tls_client_auth, ClientAuth::Need);
        assert!(s.tls_server_support_plaintext);
        s.apply_toml(
            "hbase.server.netty.tls.client.auth.mode = \"optional\"\nhbase.rpc.tls.keystore.location = \"/etc/fb/server.pem\"\n",
        )?;
        assert_eq!(s.tls_client_auth, ClientAuth::Want);
        assert_eq!(s.tls_keystore_location, "/etc/fb/server.pem");
        s.apply_override("hbase.server.netty.tls.client.auth.mode=NONE")?;
        assert_eq!(s.tls_client_auth, ClientAuth::None);
        assert!(
            s.apply_override("hbase.server.netty.tls.client.auth.mode=maybe")
                .is_err()
        );
        let printed: Vec<_> = s.values();
        assert!(printed.contains(&("hbase.server.netty.tls.client.auth.mode", "NONE".into())));
        let def = Settings::DEFINITIONS
            .iter()
            .find(|d| d.name == "hbase.rpc.tls.truststore.location")
            .map(|d| d.default);
        assert_eq!(def, Some("\"\""));
        Ok(())
    }

    #[test]
    fn definitions_cover_every_value() {
        let s = Settings::default();
        assert_eq!(s.values().len(), Settings::DEFINITIONS.len());
        assert_eq!(s.handler_count, 30);
        assert_eq!(s.wal_roll_size(), 128 << 20);
        assert_eq!(parse_size("64k"), Some(65536));
        assert_eq!(parse_size("x"), None);
    }
}
