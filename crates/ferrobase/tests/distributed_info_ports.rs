//! The info ports of a distributed cluster as an operator reaches them:
//! a master and two region servers started with their info ports on
//! (`hbase.master.info.port`, `hbase.regionserver.info.port`, 0 = any free
//! port). The master's `/master-status` counts both live servers and the
//! table; each region server's `/metrics` counts the regions it holds, and
//! the counts add up to the table's regions; `/rs-status` names the server.
//! Once a region server is killed, the master counts it dead (page and
//! metrics) and its regions are served by the other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use cluster::{Cluster, client_settings, wait_servers};
use ferrobase_client::Connection;
use ferrobase_types::{FamilyDescriptor, TableDescriptor};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn http_get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, text)
}

/// `host:port` of the `  info port (...): http://HOST:PORT/` line.
fn info_addr(line: &str) -> String {
    let (_, url) = line.split_once("http://").expect("an http:// info port");
    url.trim().trim_end_matches('/').to_string()
}

/// The value of an unlabelled Prometheus sample.
fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn master_and_region_servers_serve_their_info_ports() {
    let c = Cluster::start(
        1,
        2,
        &["hbase.master.info.port=0", "hbase.regionserver.info.port=0"],
    )
    .unwrap();
    let limit = Duration::from_secs(10);
    let master_info = info_addr(&c.masters[0].wait_line("info port", limit).unwrap());
    let server_info: Vec<String> = c
        .servers
        .iter()
        .map(|s| info_addr(&s.wait_line("info port", limit).unwrap()))
        .collect();

    let conn = Connection::connect(&c.master_addresses(), client_settings()).unwrap();
    wait_servers(&conn, 2).await.unwrap();
    let desc = TableDescriptor::new("watched", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    conn.admin()
        .create_table(&desc, &["g".into(), "n".into(), "t".into()])
        .await
        .unwrap();

    // The region servers' counts add up to the table's four regions once
    // each has reported (bounded wait; nothing is timed).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let total: f64 = server_info
            .iter()
            .map(|a| {
                let (status, m) = http_get(a, "/metrics");
                assert_eq!(status, 200, "{m}");
                sample(&m, "hbase_regionserver_regions").unwrap_or_else(|| panic!("{m}"))
            })
            .sum();
        if total == 4.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "region servers report {total} regions, not 4"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let (status, page) = http_get(&master_info, "/master-status");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<td id=\"live-servers\">2</td>"), "{page}");
    assert!(page.contains("watched"), "{page}");
    for (node, info) in c.servers.iter().zip(&server_info) {
        let (status, page) = http_get(info, "/rs-status");
        assert_eq!(status, 200, "{page}");
        assert!(page.contains(&node.address()), "{page}");
    }
    // A region server is not a master.
    let (status, _) = http_get(&server_info[0], "/master-status");
    assert_eq!(status, 404);
    let (_, m) = http_get(&master_info, "/metrics");
    assert_eq!(
        sample(&m, "hbase_master_dead_region_servers"),
        Some(0.0),
        "{m}"
    );

    // One region server dies: the master lists it as dead, counts one
    // crash, and the survivor holds all four regions.
    let mut c = c;
    let victim = c.servers[1].address();
    c.servers[1].kill().unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, m) = http_get(&master_info, "/metrics");
        let (_, held) = http_get(&server_info[0], "/metrics");
        if sample(&m, "hbase_master_dead_region_servers") == Some(1.0)
            && sample(&m, "hbase_master_server_crash_total") == Some(1.0)
            && sample(&held, "hbase_regionserver_regions") == Some(4.0)
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no failover seen on the info ports:\n{m}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let (_, page) = http_get(&master_info, "/master-status");
    assert!(page.contains("<td id=\"dead-servers\">1</td>"), "{page}");
    assert!(page.contains("<td id=\"live-servers\">1</td>"), "{page}");
    let safe: String = victim
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    assert!(
        page.contains(&safe),
        "the dead server {victim} is listed: {page}"
    );
}
