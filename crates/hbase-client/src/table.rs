//! [`Table`]: single-row reads and writes, and batches grouped per region
//! and server.
//!
//! This module owns `ClientService.Get`, `Mutate` (one Put or Delete, its
//! cells in the cell block) and `Multi` (a batch cut into one call per
//! region server, one `RegionAction` per region, every cell in one cell
//! block), with the retry loop: actions that failed with a retryable
//! exception are located again and resent, the others fail alone. Scans
//! live in [`crate::scan`]. It never buffers: that is
//! [`crate::mutator::BufferedMutator`].

use crate::connection::{CLIENT_SERVICE, Connection};
use crate::error::{ClientError, Result};
use crate::locator::RegionLocation;
use crate::results::CellSource;
use crate::scan::{Scan, Scanner};
use bytes::{Bytes, BytesMut};
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::convert::mutation::{MutationKind, mutation_to_pb};
use ferrobase_hbase_wire::{RemoteException, pb};
use ferrobase_types::{Cell, CellType, RowMutation};
use std::collections::BTreeMap;

/// A read of one row.
#[derive(Clone, Debug, Default)]
pub struct Get {
    pub row: Bytes,
    /// `(family, qualifiers)`; no qualifiers: the whole family; empty: every
    /// family.
    pub columns: Vec<(Bytes, Vec<Bytes>)>,
    /// Versions per column (HBase's default 1).
    pub max_versions: u32,
    /// `[min, max)` timestamps, when set.
    pub time_range: Option<(u64, u64)>,
}

impl Get {
    /// The latest version of every cell of `row`.
    pub fn new(row: impl Into<Bytes>) -> Get {
        Get {
            row: row.into(),
            columns: Vec::new(),
            max_versions: 1,
            time_range: None,
        }
    }

    /// Reads the whole of `family`.
    pub fn family(mut self, family: impl Into<Bytes>) -> Get {
        self.columns.push((family.into(), Vec::new()));
        self
    }

    /// Reads one column.
    pub fn column(mut self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> Get {
        let family = family.into();
        let q = qualifier.into();
        match self.columns.iter_mut().find(|(f, _)| *f == family) {
            Some((_, qs)) => qs.push(q),
            None => self.columns.push((family, vec![q])),
        }
        self
    }

    /// Up to `n` versions per column.
    pub fn versions(mut self, n: u32) -> Get {
        self.max_versions = n.max(1);
        self
    }

    fn to_pb(&self) -> pb::Get {
        pb::Get {
            row: self.row.clone(),
            column: self
                .columns
                .iter()
                .map(|(f, qs)| pb::Column {
                    family: f.clone(),
                    qualifier: qs.clone(),
                })
                .collect(),
            max_versions: Some(self.max_versions),
            time_range: self.time_range.map(|(from, to)| pb::TimeRange {
                from: Some(from),
                to: Some(to),
            }),
            ..Default::default()
        }
    }
}

/// A handle on one table; cheap to clone.
#[derive(Clone, Debug)]
pub struct Table {
    conn: Connection,
    name: String,
}

/// What a mutation asks for: a Put when every cell is a put, a whole-row
/// Delete when it has no cells, else a Delete (every cell a delete marker).
fn kind_of(m: &RowMutation) -> Result<MutationKind> {
    let mut puts = 0;
    let mut total = 0;
    for c in m.mutations() {
        total += 1;
        if c.kind == CellType::Put {
            puts += 1;
        }
    }
    match (total, puts) {
        (0, _) => Ok(MutationKind::Delete),
        (t, p) if t == p => Ok(MutationKind::Put),
        (_, 0) => Ok(MutationKind::Delete),
        _ => Err(ClientError::Invalid(
            "a mutation mixes put cells and delete markers; send them as two mutations".into(),
        )),
    }
}

impl Table {
    pub(crate) fn new(conn: Connection, name: &str) -> Table {
        Table {
            conn,
            name: name.to_string(),
        }
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The connection this handle uses.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub(crate) async fn locate(&self, row: &[u8]) -> Result<RegionLocation> {
        self.conn
            .inner
            .locator
            .locate(&self.conn, &self.name, row)
            .await
    }

    /// Reads one row: its cells, empty when it has none.
    pub async fn get(&self, get: &Get) -> Result<Vec<Cell>> {
        let g = get.to_pb();
        self.conn
            .retrying(Some(&self.name), |_| {
                let (this, g, row) = (self.clone(), g.clone(), get.row.clone());
                async move {
                    let loc = this.locate(&row).await?;
                    let req = pb::GetRequest {
                        region: loc.specifier(),
                        get: g,
                    };
                    let (resp, block): (pb::GetResponse, _) = this
                        .conn
                        .call(&loc.server, CLIENT_SERVICE, "Get", &req, None, 0)
                        .await?;
                    match &resp.result {
                        Some(r) => CellSource::new(block.as_ref()).result(r),
                        None => Ok(Vec::new()),
                    }
                }
            })
            .await
    }

    /// Writes one Put (every cell a put) or Delete (every cell a delete
    /// marker; no cells: the whole row) with `Mutate`.
    pub async fn mutate(&self, m: &RowMutation) -> Result<()> {
        let kind = kind_of(m)?;
        let mut block = BytesMut::new();
        let proto = mutation_to_pb(kind, m, None, CellCodec::KeyValue, &mut block)?;
        let block = block.freeze();
        self.conn
            .retrying(Some(&self.name), |_| {
                let (this, proto, block, row) =
                    (self.clone(), proto.clone(), block.clone(), m.row.clone());
                async move {
                    let loc = this.locate(&row).await?;
                    let req = pb::MutateRequest {
                        region: loc.specifier(),
                        mutation: proto,
                        ..Default::default()
                    };
                    let _: (pb::MutateResponse, _) = this
                        .conn
                        .call(&loc.server, CLIENT_SERVICE, "Mutate", &req, Some(&block), 0)
                        .await?;
                    Ok(())
                }
            })
            .await
    }

    /// [`mutate`](Self::mutate) of a Put.
    pub async fn put(&self, m: &RowMutation) -> Result<()> {
        self.mutate(m).await
    }

    /// Deletes every cell of `row` (every family, every version).
    pub async fn delete_row(&self, row: impl Into<Bytes>) -> Result<()> {
        self.mutate(&RowMutation::new(row.into())).await
    }

    /// A scanner over `scan`'s rows.
    pub fn scanner(&self, scan: Scan) -> Scanner {
        Scanner::new(self.clone(), scan)
    }

    /// Reads every row `scan` covers.
    pub async fn scan_all(&self, scan: Scan) -> Result<Vec<Vec<Cell>>> {
        let mut s = self.scanner(scan);
        let mut rows = Vec::new();
        while let Some(r) = s.next_row().await? {
            rows.push(r);
        }
        Ok(rows)
    }

    /// Writes `mutations` (each a Put, or a Delete as for
    /// [`mutate`](Self::mutate)) with one `Multi` per region server,
    /// retrying what failed retryably; one result per mutation, in order.
    pub async fn batch(&self, mutations: &[RowMutation]) -> Vec<Result<()>> {
        let mut results: Vec<Option<Result<()>>> = vec![None; mutations.len()];
        let mut todo: Vec<usize> = Vec::with_capacity(mutations.len());
        for (i, m) in mutations.iter().enumerate() {
            match kind_of(m) {
                Ok(_) => todo.push(i),
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let config = self.conn.config().clone();
        let start = std::time::Instant::now();
        let mut attempt = 0u32;
        while !todo.is_empty() {
            let mut retry: Vec<(usize, ClientError)> = Vec::new();
            // Group by server, then region.
            let mut by_server: BTreeMap<String, BTreeMap<Bytes, (RegionLocation, Vec<usize>)>> =
                BTreeMap::new();
            for &i in &todo {
                match self.locate(&mutations[i].row).await {
                    Ok(loc) => {
                        by_server
                            .entry(loc.server.clone())
                            .or_default()
                            .entry(loc.region_name.clone())
                            .or_insert_with(|| (loc, Vec::new()))
                            .1
                            .push(i);
                    }
                    Err(e) if e.is_retryable() => retry.push((i, e)),
                    Err(e) => results[i] = Some(Err(e)),
                }
            }
            let calls = by_server
                .into_iter()
                .map(|(server, regions)| self.multi(server, regions, mutations));
            for outcome in futures::future::join_all(calls).await {
                for (i, r) in outcome {
                    match r {
                        Err(e) if e.is_retryable() => retry.push((i, e)),
                        other => results[i] = Some(other),
                    }
                }
            }
            if retry.is_empty() {
                break;
            }
            if retry.iter().any(|(_, e)| e.relocates()) {
                self.conn.inner.locator.invalidate(&self.name);
            }
            let pause = config.backoff(attempt);
            attempt += 1;
            if attempt > config.retries || start.elapsed() + pause > config.operation_timeout {
                for (i, e) in retry {
                    results[i] = Some(Err(ClientError::RetriesExhausted {
                        attempts: attempt,
                        last: Box::new(e),
                    }));
                }
                break;
            }
            tokio::time::sleep(pause).await;
            todo = retry.into_iter().map(|(i, _)| i).collect();
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(ClientError::Protocol("no result".into()))))
            .collect()
    }

    /// One `Multi` to `server`: every region's actions, every cell in one
    /// block. Returns a result per mutation index.
    async fn multi(
        &self,
        server: String,
        regions: BTreeMap<Bytes, (RegionLocation, Vec<usize>)>,
        mutations: &[RowMutation],
    ) -> Vec<(usize, Result<()>)> {
        let mut block = BytesMut::new();
        let mut region_actions = Vec::with_capacity(regions.len());
        let mut out = Vec::new();
        for (loc, indices) in regions.values() {
            let mut actions = Vec::with_capacity(indices.len());
            for &i in indices {
                let m = &mutations[i];
                let encoded = kind_of(m)
                    .and_then(|k| Ok(mutation_to_pb(k, m, None, CellCodec::KeyValue, &mut block)?));
                match encoded {
                    Ok(proto) => actions.push(pb::Action {
                        index: Some(i as u32),
                        mutation: Some(proto),
                        ..Default::default()
                    }),
                    Err(e) => out.push((i, Err(e))),
                }
            }
            region_actions.push(pb::RegionAction {
                region: loc.specifier(),
                action: actions,
                ..Default::default()
            });
        }
        let req = pb::MultiRequest {
            region_action: region_actions,
            ..Default::default()
        };
        let sent: Vec<usize> = req
            .region_action
            .iter()
            .flat_map(|ra| ra.action.iter().filter_map(|a| a.index))
            .map(|i| i as usize)
            .collect();
        let answer: Result<(pb::MultiResponse, _)> = self
            .conn
            .call(&server, CLIENT_SERVICE, "Multi", &req, Some(&block), 0)
            .await;
        let resp = match answer {
            Ok((resp, _)) => resp,
            Err(e) => {
                out.extend(sent.into_iter().map(|i| (i, Err(e.clone()))));
                return out;
            }
        };
        let mut answered = vec![false; mutations.len()];
        for (ra, rar) in req.region_action.iter().zip(&resp.region_action_result) {
            if let Some(e) = &rar.exception {
                let err: ClientError = RemoteException::from(e).into();
                for a in &ra.action {
                    if let Some(i) = a.index.map(|i| i as usize) {
                        answered[i] = true;
                        out.push((i, Err(err.clone())));
                    }
                }
                continue;
            }
            for roe in &rar.result_or_exception {
                let Some(i) = roe
                    .index
                    .map(|i| i as usize)
                    .filter(|i| *i < mutations.len())
                else {
                    continue;
                };
                answered[i] = true;
                match &roe.exception {
                    Some(e) => out.push((i, Err(RemoteException::from(e).into()))),
                    None => out.push((i, Ok(()))),
                }
            }
        }
        for i in sent {
            if !answered[i] {
                out.push((
                    i,
                    Err(ClientError::Protocol(format!(
                        "Multi to {server} left action {i} unanswered"
                    ))),
                ));
            }
        }
        out
    }
}
