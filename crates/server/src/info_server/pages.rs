//! The web UI's HTML pages, rendered on the server: the master's
//! (`/master-status`), a table's (`/table.jsp?name=T`, HBase's URL) and the
//! region server's (`/rs-status`, with a live chart drawn by
//! `rs-chart.js`).
//!
//! Every name, key and message that reaches a page goes through [`esc`]
//! (row keys first through HBase's `\xNN` notation), so a table or row
//! cannot inject markup. Pages only read; none changes the cluster.

use super::{Shared, text_error};
use crate::master::Master;
use crate::region_server::RegionServer;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use ferrobase_proto::pb;
use ferrobase_types::binary::to_string_binary;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// HTML-escapes text for element content and quoted attributes.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A row key as HBase shows it (`\xNN` for bytes that are not printable),
/// escaped for HTML.
pub fn esc_key(key: &[u8]) -> String {
    esc(&to_string_binary(key))
}

/// A query-string component (`/table.jsp?name=…`).
fn url_component(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Bytes in binary units, one decimal.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

fn uptime(s: &Shared) -> String {
    let secs = s.started.elapsed().map_or(0, |d| d.as_secs());
    format!(
        "{}d {}h {}m {}s",
        secs / 86_400,
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;margin:.5em 0 1.5em}\
th,td{border:1px solid #bbb;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#e8eef6}td.n{text-align:right;font-variant-numeric:tabular-nums}\
nav a{margin-right:1em}code{background:#f3f3f3}";

fn page(title: &str, nav: &Shared, body: &str) -> Response {
    let mut links = String::new();
    if nav.parts.master.is_some() {
        links.push_str("<a href=\"/master-status\">Master</a>");
    }
    if nav.parts.region_server.is_some() {
        links.push_str("<a href=\"/rs-status\">Region server</a>");
    }
    links.push_str("<a href=\"/metrics\">Metrics</a><a href=\"/jmx\">JMX</a>");
    Html(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title}</title><style>{STYLE}</style></head>\n<body>\
         <nav>{links}</nav>\n<h1>{title}</h1>\n{body}</body></html>\n",
        title = esc(title)
    ))
    .into_response()
}

/// Every live server's load, read off the request path.
async fn cluster_status(m: &Arc<Master>) -> Option<pb::ClusterStatus> {
    let m = m.clone();
    tokio::task::spawn_blocking(move || m.cluster_status())
        .await
        .ok()
}

/// `/master-status`: the cluster summary, region servers and tables.
pub async fn master_status(State(s): State<Arc<Shared>>) -> Response {
    let Some(m) = s.parts.master.clone() else {
        return text_error(StatusCode::NOT_FOUND, "this process is not a master".into());
    };
    let Some(status) = cluster_status(&m).await else {
        return text_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "reading the cluster status failed".into(),
        );
    };
    let meta = m.meta.snapshot();
    let dead = m.dead_servers();
    let rates = s.rates.lock().clone();
    let local = s.parts.region_server.as_ref().map(|rs| rs.address());
    let mut b = String::new();
    let _ = write!(
        b,
        "<h2>Cluster</h2><table>\
         <tr><th>Version</th><td>ferrobase {}</td></tr>\
         <tr><th>Role</th><td>{}</td></tr>\
         <tr><th>Uptime</th><td>{}</td></tr>\
         <tr><th>Live region servers</th><td id=\"live-servers\">{}</td></tr>\
         <tr><th>Dead region servers</th><td id=\"dead-servers\">{}</td></tr>\
         <tr><th>Tables</th><td id=\"table-count\">{}</td></tr>\
         </table>",
        esc(env!("CARGO_PKG_VERSION")),
        esc(s.parts.role),
        uptime(&s),
        status.servers.len(),
        dead.len(),
        meta.tables.len()
    );
    if !dead.is_empty() {
        b.push_str(
            "<h2>Dead region servers</h2><table id=\"dead\"><tr><th>Server</th>\
             <th>WAL split at</th><th>Edits recovered</th><th>Regions recovered</th></tr>",
        );
        for d in dead.iter().rev() {
            let ago = d.at.elapsed().map_or(0, |t| t.as_secs());
            let _ = write!(
                b,
                "<tr><td>{}</td><td>{ago} s ago</td><td>{}</td><td>{}</td></tr>",
                esc(&d.name),
                d.edits,
                d.regions
            );
        }
        b.push_str("</table>");
    }
    b.push_str(
        "<h2>Region servers</h2><table id=\"servers\"><tr><th>Server</th><th>Regions</th>\
         <th>Requests/s</th><th>Requests</th><th>Memstore</th><th>Store files</th>\
         <th>Store file size</th></tr>",
    );
    let mut by_table: HashMap<&str, (u64, u64)> = HashMap::new();
    let mut region_load: HashMap<u64, &pb::RegionLoad> = HashMap::new();
    for l in &status.servers {
        let requests: u64 = l
            .regions
            .iter()
            .map(|r| r.read_requests + r.write_requests)
            .sum();
        let files: u64 = l.regions.iter().map(|r| r.store_files).sum();
        let file_bytes: u64 = l.regions.iter().map(|r| r.store_file_bytes).sum();
        for r in &l.regions {
            let t = by_table.entry(r.table.as_str()).or_default();
            t.0 += r.store_file_bytes;
            t.1 += r.memstore_bytes;
            region_load.insert(r.region_id, r);
        }
        let name = if local.as_deref() == Some(l.server.as_str()) {
            format!("<a href=\"/rs-status\">{}</a>", esc(&l.server))
        } else {
            esc(&l.server)
        };
        let per_sec = rates.get(&l.server).map_or(0.0, |r| r.per_sec);
        let _ = write!(
            b,
            "<tr><td>{name}</td><td class=\"n\">{}</td><td class=\"n\">{per_sec:.1}</td>\
             <td class=\"n\">{requests}</td><td class=\"n\">{}</td><td class=\"n\">{files}</td>\
             <td class=\"n\">{}</td></tr>",
            l.regions.len(),
            human_bytes(l.global_memstore_bytes),
            human_bytes(file_bytes),
        );
    }
    b.push_str("</table>");
    let in_transition: usize = meta
        .tables
        .values()
        .filter(|t| t.enabled)
        .flat_map(|t| t.regions.iter())
        .filter(|r| !region_load.contains_key(&r.id))
        .count();
    let _ = write!(
        b,
        "<h2>Regions in transition</h2><p id=\"rit\">{in_transition}</p>"
    );
    b.push_str(
        "<h2>Tables</h2><table id=\"tables\"><tr><th>Table</th><th>State</th><th>Regions</th>\
         <th>Size</th><th>Families</th><th>Attributes</th></tr>",
    );
    for (name, t) in &meta.tables {
        let (files, mem) = by_table.get(name.as_str()).copied().unwrap_or_default();
        let mut families = String::new();
        for f in &t.descriptor.families {
            let attrs: Vec<String> = f
                .attributes()
                .into_iter()
                .filter(|(k, _)| *k != "NAME")
                .map(|(k, v)| format!("{k} =&gt; {}", esc(&v)))
                .collect();
            let _ = write!(
                families,
                "<div><b>{}</b>: {}</div>",
                esc(&f.name),
                attrs.join(", ")
            );
        }
        let attrs: Vec<String> = t
            .descriptor
            .values
            .iter()
            .map(|(k, v)| format!("{} =&gt; {}", esc(k), esc(v)))
            .chain(std::iter::once(format!(
                "DURABILITY =&gt; {}",
                esc(t.descriptor.durability.name())
            )))
            .collect();
        let _ = write!(
            b,
            "<tr class=\"table-row\" data-table=\"{n}\"><td><a href=\"/table.jsp?name={u}\">{n}</a></td>\
             <td>{}</td><td class=\"n region-count\">{}</td><td class=\"n\">{}</td><td>{families}</td><td>{}</td></tr>",
            if t.enabled { "enabled" } else { "disabled" },
            t.regions.len(),
            human_bytes(files + mem),
            attrs.join(", "),
            n = esc(name),
            u = url_component(name),
        );
    }
    b.push_str("</table>");
    page("Master status", &s, &b)
}

/// Query of `/table.jsp`.
#[derive(serde::Deserialize)]
pub struct TableQuery {
    name: Option<String>,
}

/// `/table.jsp?name=T`: a table's regions.
pub async fn table(
    State(s): State<Arc<Shared>>,
    q: Result<Query<TableQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Some(m) = s.parts.master.clone() else {
        return text_error(StatusCode::NOT_FOUND, "this process is not a master".into());
    };
    let name = match q {
        Ok(Query(TableQuery { name: Some(n) })) if !n.is_empty() => n,
        _ => {
            return text_error(
                StatusCode::BAD_REQUEST,
                "bad query: give the table as /table.jsp?name=TABLE".into(),
            );
        }
    };
    let Some(t) = m.meta.table(&name) else {
        return text_error(
            StatusCode::NOT_FOUND,
            format!(
                "table '{}' does not exist",
                to_string_binary(name.as_bytes())
            ),
        );
    };
    let (_, locations) = match m.table_regions(&name) {
        Ok(v) => v,
        Err(e) => return text_error(StatusCode::NOT_FOUND, e.message),
    };
    let Some(status) = cluster_status(&m).await else {
        return text_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "reading the cluster status failed".into(),
        );
    };
    let loads: HashMap<u64, &pb::RegionLoad> = status
        .servers
        .iter()
        .flat_map(|l| l.regions.iter())
        .map(|r| (r.region_id, r))
        .collect();
    let mut b = String::new();
    let _ = write!(
        b,
        "<p>State: <b>{}</b>. Regions: <b id=\"region-count\">{}</b>.</p>",
        if t.enabled { "enabled" } else { "disabled" },
        locations.len()
    );
    b.push_str(
        "<table id=\"regions\"><tr><th>Region</th><th>Start key</th><th>End key</th><th>Server</th>\
         <th>Size</th><th>Read requests</th><th>Write requests</th><th>Store files</th>\
         <th>Memstore</th></tr>",
    );
    for (loc, info) in locations.iter().zip(t.regions.iter()) {
        let load = loads.get(&loc.region_id);
        let n = |f: fn(&pb::RegionLoad) -> u64| load.map_or(0, |l| f(l));
        let _ = write!(
            b,
            "<tr class=\"region-row\"><td>{}</td><td><code>{}</code></td><td><code>{}</code></td>\
             <td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&info.name()),
            esc_key(&loc.start_key),
            esc_key(&loc.end_key),
            if loc.server.is_empty() {
                "(not online)".to_string()
            } else {
                esc(&loc.server)
            },
            human_bytes(n(|l| l.store_file_bytes + l.memstore_bytes)),
            n(|l| l.read_requests),
            n(|l| l.write_requests),
            n(|l| l.store_files),
            human_bytes(n(|l| l.memstore_bytes)),
        );
    }
    b.push_str("</table>");
    page(
        &format!("Table {}", to_string_binary(name.as_bytes())),
        &s,
        &b,
    )
}

fn kv_table(id: &str, rows: &[(&str, String)]) -> String {
    let mut b = format!("<table id=\"{id}\">");
    for (k, v) in rows {
        let _ = write!(
            b,
            "<tr><th>{}</th><td class=\"n\">{}</td></tr>",
            esc(k),
            esc(v)
        );
    }
    b.push_str("</table>");
    b
}

/// `/rs-status`: the region server's regions, memory, cache, queues,
/// stalls, slow requests and live chart.
pub async fn rs_status(State(s): State<Arc<Shared>>) -> Response {
    let Some(rs) = s.parts.region_server.clone() else {
        return text_error(
            StatusCode::NOT_FOUND,
            "this process serves no regions".into(),
        );
    };
    let work = rs.clone();
    let Ok((load, stats)) =
        tokio::task::spawn_blocking(move || (work.load(), work.engine().stats())).await
    else {
        return text_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "reading the server's load failed".into(),
        );
    };
    let body = rs_body(&s, &rs, &load, &stats);
    page(&format!("Region server {}", rs.address()), &s, &body)
}

fn rs_body(
    s: &Shared,
    rs: &RegionServer,
    load: &pb::ServerLoad,
    stats: &ferrobase_storage::EngineStats,
) -> String {
    let mut b = String::new();
    b.push_str(
        "<h2>Requests and memstore (live)</h2>\
         <noscript><p>The chart needs JavaScript; every figure below is plain HTML.</p></noscript>\
         <canvas id=\"chart\" width=\"760\" height=\"260\" style=\"border:1px solid #bbb\"></canvas>\
         <p id=\"chart-status\">points: <span id=\"chart-points\">0</span></p>\
         <script src=\"/static/rs-chart.js\"></script>",
    );
    b.push_str(&kv_table(
        "server",
        &[
            (
                "Version",
                format!("ferrobase {}", env!("CARGO_PKG_VERSION")),
            ),
            ("Uptime", uptime(s)),
            ("Regions", load.regions.len().to_string()),
        ],
    ));
    b.push_str("<h2>Memstore</h2>");
    b.push_str(&kv_table(
        "memstore",
        &[
            ("Global memstore", human_bytes(stats.global_memstore_bytes)),
            ("Global limit", human_bytes(stats.global_memstore_limit)),
        ],
    ));
    let c = &stats.cache;
    b.push_str("<h2>Block cache</h2>");
    b.push_str(&kv_table(
        "block-cache",
        &[
            ("Size", human_bytes(c.size_bytes)),
            ("Capacity", human_bytes(c.capacity_bytes)),
            ("Blocks", c.entries.to_string()),
            ("Hits", c.hits.to_string()),
            ("Misses", c.misses.to_string()),
            ("Evictions", c.evictions.to_string()),
            ("Hit ratio", format!("{:.1}%", c.hit_ratio() * 100.0)),
        ],
    ));
    let pool = rs.pool();
    b.push_str("<h2>Queues</h2>");
    b.push_str(&kv_table(
        "queues",
        &[
            (
                "Active handlers",
                format!("{} of {}", pool.active_handlers(), pool.handler_count()),
            ),
            ("Call queue", pool.queued_calls().to_string()),
            ("Calls refused (server busy)", pool.rejected().to_string()),
            ("Flush queue", stats.flush_jobs.to_string()),
            (
                "Compaction queue",
                stats
                    .background_jobs
                    .saturating_sub(stats.flush_jobs)
                    .to_string(),
            ),
            ("Open scanners", rs.scanners().len().to_string()),
        ],
    ));
    let st = &stats.stalls;
    b.push_str("<h2>Stalls, flushes, compactions, WAL</h2>");
    b.push_str(&kv_table(
        "stalls",
        &[
            ("Blocked writes", st.blocked_writes.to_string()),
            ("Blocked time (ms)", st.blocked_ms.to_string()),
            ("Region too busy", st.too_busy.to_string()),
            ("Delayed flushes", st.delayed_flushes.to_string()),
            (
                "Forced flushes (global memstore)",
                st.forced_flushes_global.to_string(),
            ),
            (
                "Forced flushes (WAL count)",
                st.forced_flushes_wal.to_string(),
            ),
            ("Flushes", stats.flushes.to_string()),
            ("Compactions", stats.compactions.to_string()),
            (
                "Compaction throttle sleep (ms)",
                stats.compaction_throttled_ms.to_string(),
            ),
            ("WAL appends", stats.wal.appends.to_string()),
            ("WAL syncs", stats.wal.syncs.to_string()),
            ("WAL bytes", human_bytes(stats.wal.bytes)),
        ],
    ));
    b.push_str(
        "<h2>Regions</h2><table id=\"rs-regions\"><tr><th>Region</th><th>Table</th>\
         <th>Read requests</th><th>Write requests</th><th>Memstore</th><th>Store files</th>\
         <th>Store file size</th></tr>",
    );
    for r in &load.regions {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&r.name),
            esc(&r.table),
            r.read_requests,
            r.write_requests,
            human_bytes(r.memstore_bytes),
            r.store_files,
            human_bytes(r.store_file_bytes),
        );
    }
    b.push_str("</table>");
    let slow = rs.slow_log().recent();
    let _ = write!(
        b,
        "<h2>Recent slow or large requests</h2><p>Over <code>hbase.ipc.warn.response.time</code> \
         or <code>hbase.ipc.warn.response.size</code>; the newest {} of them.</p>",
        crate::slow_log::RING_SIZE
    );
    if slow.is_empty() {
        b.push_str("<p id=\"slow-none\">none</p>");
    } else {
        b.push_str(
            "<table id=\"slow\"><tr><th>Kind</th><th>Start (ms since epoch)</th><th>Protocol</th>\
             <th>Method</th><th>Time (ms)</th><th>Response bytes</th><th>Param</th><th>Client</th></tr>",
        );
        for c in slow {
            let _ = write!(
                b,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(c.tag),
                c.starttimems,
                esc(c.protocol),
                esc(c.method),
                c.processingtimems,
                c.responsesize,
                esc(&c.param),
                esc(&c.client),
            );
        }
        b.push_str("</table>");
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_binary_keys() {
        assert_eq!(
            esc("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
        assert_eq!(esc_key(b"r\x00<"), "r\\x00&lt;");
        assert_eq!(url_component("ns:t a"), "ns%3At%20a");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
