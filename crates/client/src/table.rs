//! [`Table`]: reads and writes of one table's rows, routed to the region
//! that holds each row, with retries. Mutations travel as cell blocks.
//!
//! This module never buffers writes (see [`BufferedMutator`](crate::BufferedMutator)).

use crate::connection::{Inner, RegionLocation};
use crate::error::{ClientError, Result};
use crate::read::{Get, ReadSpec, RowResult, Scan, decode_rows};
use crate::scanner::ResultScanner;
use bytes::Bytes;
use ferrobase_proto::ErrorCode;
use ferrobase_proto::cellblock::encode_mutations;
use ferrobase_proto::pb;
use ferrobase_types::RowMutation;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One table.
#[derive(Clone)]
pub struct Table {
    pub(crate) inner: Arc<Inner>,
    pub(crate) name: Arc<str>,
}

fn check_row(row: &[u8]) -> Result<()> {
    if row.is_empty() {
        return Err(ClientError::Server {
            code: ErrorCode::EmptyRow,
            message: "row key is empty".into(),
        });
    }
    Ok(())
}

impl Table {
    pub(crate) fn new(inner: Arc<Inner>, name: &str) -> Table {
        Table {
            inner,
            name: name.into(),
        }
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Applies one row mutation (puts and deletes) atomically.
    pub async fn mutate(&self, mutation: RowMutation) -> Result<()> {
        check_row(&mutation.row)?;
        let block = encode_mutations([&mutation]);
        let row = mutation.row.clone();
        self.inner
            .retry(&self.name, || {
                let (inner, table, row, block) = (
                    self.inner.clone(),
                    self.name.clone(),
                    row.clone(),
                    block.clone(),
                );
                async move {
                    let loc = inner.locate(&table, &row).await?;
                    inner
                        .region_server(&loc.server)?
                        .mutate(pb::MutateRequest {
                            region_id: loc.region_id,
                            mutations: block,
                        })
                        .await?;
                    Ok(())
                }
            })
            .await
    }

    /// A put (a [`RowMutation`] of puts).
    pub async fn put(&self, mutation: RowMutation) -> Result<()> {
        self.mutate(mutation).await
    }

    /// A delete (a [`RowMutation`] of deletes).
    pub async fn delete(&self, mutation: RowMutation) -> Result<()> {
        self.mutate(mutation).await
    }

    /// Reads one row.
    pub async fn get(&self, get: Get) -> Result<RowResult> {
        let mut rows = self.get_rows(vec![get.row], &get.spec).await?;
        rows.pop()
            .ok_or_else(|| ClientError::Malformed("get returned no row".into()))
    }

    /// Reads many rows with one spec: one call per region holding some of
    /// them. Results are in the order of `rows`.
    pub async fn get_rows(&self, rows: Vec<Bytes>, spec: &ReadSpec) -> Result<Vec<RowResult>> {
        for r in &rows {
            check_row(r)?;
        }
        let spec = spec.to_pb();
        let rows = Arc::new(rows);
        self.inner
            .retry(&self.name, || {
                let (inner, table, rows, spec) = (
                    self.inner.clone(),
                    self.name.clone(),
                    rows.clone(),
                    spec.clone(),
                );
                async move {
                    let mut by_region: BTreeMap<u64, (RegionLocation, Vec<usize>)> =
                        BTreeMap::new();
                    for (i, row) in rows.iter().enumerate() {
                        let loc = inner.locate(&table, row).await?;
                        by_region
                            .entry(loc.region_id)
                            .or_insert_with(|| (loc, Vec::new()))
                            .1
                            .push(i);
                    }
                    let mut out: Vec<Option<RowResult>> = vec![None; rows.len()];
                    for (region_id, (loc, idx)) in by_region {
                        let resp = inner
                            .region_server(&loc.server)?
                            .get(pb::GetRequest {
                                region_id,
                                rows: idx.iter().map(|&i| rows[i].clone()).collect(),
                                spec: Some(spec.clone()),
                            })
                            .await?
                            .into_inner();
                        let results = decode_rows(resp.cells)?;
                        if results.len() != idx.len() {
                            return Err(ClientError::Malformed("wrong number of rows".into()));
                        }
                        for (i, r) in idx.into_iter().zip(results) {
                            out[i] = Some(r);
                        }
                    }
                    Ok(out.into_iter().flatten().collect())
                }
            })
            .await
    }

    /// Applies many row mutations: grouped by region and by server, one
    /// `multi` call per server. Returns one result per mutation, in order;
    /// retryable failures are retried, the rest reported.
    pub async fn batch(&self, mutations: &[RowMutation]) -> Vec<Result<()>> {
        let mut results: Vec<Option<Result<()>>> = vec![None; mutations.len()];
        let mut pending: Vec<usize> = Vec::new();
        for (i, m) in mutations.iter().enumerate() {
            match check_row(&m.row) {
                Ok(()) => pending.push(i),
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let mut attempt = 0;
        while !pending.is_empty() {
            let mut retry_later: Vec<(usize, ClientError)> = Vec::new();
            // server → region → indexes
            let mut plan: BTreeMap<String, BTreeMap<u64, Vec<usize>>> = BTreeMap::new();
            for &i in &pending {
                match self.inner.locate(&self.name, &mutations[i].row).await {
                    Ok(loc) => plan
                        .entry(loc.server)
                        .or_default()
                        .entry(loc.region_id)
                        .or_default()
                        .push(i),
                    Err(e) => retry_later.push((i, e)),
                }
            }
            let calls = plan.into_iter().map(|(server, regions)| {
                let inner = self.inner.clone();
                async move {
                    let actions: Vec<pb::RegionAction> = regions
                        .iter()
                        .map(|(&region_id, idx)| pb::RegionAction {
                            region_id,
                            mutations: encode_mutations(idx.iter().map(|&i| &mutations[i])),
                        })
                        .collect();
                    let reply = match inner.region_server(&server) {
                        Ok(mut c) => c
                            .multi(pb::MultiRequest { actions })
                            .await
                            .map(|r| r.into_inner())
                            .map_err(ClientError::from),
                        Err(e) => Err(e),
                    };
                    (regions, reply)
                }
            });
            let replies = all_at_once(calls).await;
            for (regions, reply) in replies {
                match reply {
                    Err(e) => {
                        for idx in regions.values() {
                            retry_later.extend(idx.iter().map(|&i| (i, e.clone())));
                        }
                    }
                    Ok(resp) => {
                        let errors: BTreeMap<u64, pb::ActionResult> =
                            resp.results.into_iter().map(|r| (r.region_id, r)).collect();
                        for (region_id, idx) in regions {
                            let err = errors.get(&region_id).and_then(|r| {
                                if r.error_code.is_empty() {
                                    None
                                } else {
                                    Some(ClientError::Server {
                                        code: ErrorCode::parse(&r.error_code)
                                            .unwrap_or(ErrorCode::Internal),
                                        message: r.error_message.clone(),
                                    })
                                }
                            });
                            for i in idx {
                                match &err {
                                    None => results[i] = Some(Ok(())),
                                    Some(e) => retry_later.push((i, e.clone())),
                                }
                            }
                        }
                    }
                }
            }
            pending.clear();
            let can_retry = attempt < self.inner.settings.client_retries;
            let mut stale = false;
            for (i, e) in retry_later {
                if e.retryable() && can_retry {
                    stale |= e.stale_location();
                    pending.push(i);
                } else {
                    results[i] = Some(Err(e));
                }
            }
            if !pending.is_empty() {
                if stale {
                    self.inner.invalidate(&self.name);
                }
                tokio::time::sleep(self.inner.backoff(attempt)).await;
                attempt += 1;
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(ClientError::Invalid("not sent".into()))))
            .collect()
    }

    /// A scanner over `scan`'s rows, across regions in row order.
    pub fn scan(&self, scan: Scan) -> ResultScanner {
        ResultScanner::new(self.clone(), scan)
    }

    /// An increment or append, tagged with one nonce for all its attempts:
    /// retried (relocating the row) like a put, also after a failure that
    /// may have applied it, since the server applies a nonce once and
    /// answers a retry of an applied one with the row's current cells.
    async fn read_modify_write(&self, mutation: RowMutation, append: bool) -> Result<RowResult> {
        check_row(&mutation.row)?;
        let block = encode_mutations([&mutation]);
        let row = mutation.row.clone();
        let (nonce_group, nonce) = self.inner.new_nonce();
        let block = self
            .inner
            .retry(&self.name, || {
                let (inner, table, row, block) = (
                    self.inner.clone(),
                    self.name.clone(),
                    row.clone(),
                    block.clone(),
                );
                async move {
                    let loc = inner.locate(&table, &row).await?;
                    Ok(inner
                        .region_server(&loc.server)?
                        .read_modify_write(pb::ReadModifyWriteRequest {
                            region_id: loc.region_id,
                            mutation: block,
                            append,
                            nonce_group,
                            nonce,
                        })
                        .await?
                        .into_inner()
                        .cells)
                }
            })
            .await?;
        decode_rows(block)?
            .pop()
            .ok_or_else(|| ClientError::Malformed("no row returned".into()))
    }

    /// Adds `amount` to a column holding an 8-byte big-endian long (absent:
    /// 0); returns the new value.
    pub async fn increment(
        &self,
        row: impl Into<Bytes>,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        amount: i64,
    ) -> Result<i64> {
        let (family, qualifier) = (family.into(), qualifier.into());
        let m = RowMutation::new(row).put(family.clone(), qualifier.clone(), amount.to_be_bytes());
        let r = self.read_modify_write(m, false).await?;
        let v = r
            .value(&family, &qualifier)
            .ok_or_else(|| ClientError::Malformed("increment returned no value".into()))?;
        let arr: [u8; 8] = v[..]
            .try_into()
            .map_err(|_| ClientError::Malformed("increment value is not 8 bytes".into()))?;
        Ok(i64::from_be_bytes(arr))
    }

    /// Increments several columns of one row atomically (each put's value
    /// an 8-byte big-endian amount); returns the new cells.
    pub async fn increment_row(&self, mutation: RowMutation) -> Result<RowResult> {
        self.read_modify_write(mutation, false).await
    }

    /// Appends `value` to a column; returns the new value.
    pub async fn append(
        &self,
        row: impl Into<Bytes>,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        value: impl Into<Bytes>,
    ) -> Result<Bytes> {
        let (family, qualifier) = (family.into(), qualifier.into());
        let m = RowMutation::new(row).put(family.clone(), qualifier.clone(), value.into());
        let r = self.read_modify_write(m, true).await?;
        r.value(&family, &qualifier)
            .cloned()
            .ok_or_else(|| ClientError::Malformed("append returned no value".into()))
    }

    /// Applies `mutation` if column `family:qualifier` of its row holds
    /// `expected` (`None`: the column must be absent). Returns whether it
    /// was applied. Tagged with one nonce for all its attempts, like an
    /// increment: retried also after a failure that may have applied it,
    /// and the server answers a retry with the first attempt's outcome.
    pub async fn check_and_mutate(
        &self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        expected: Option<Bytes>,
        mutation: RowMutation,
    ) -> Result<bool> {
        check_row(&mutation.row)?;
        let (family, qualifier) = (family.into(), qualifier.into());
        let block = encode_mutations([&mutation]);
        let row = mutation.row.clone();
        let (nonce_group, nonce) = self.inner.new_nonce();
        self.inner
            .retry(&self.name, || {
                let (inner, table) = (self.inner.clone(), self.name.clone());
                let req = pb::CheckAndMutateRequest {
                    region_id: 0,
                    row: row.clone(),
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    expected: expected.clone(),
                    mutation: block.clone(),
                    nonce_group,
                    nonce,
                };
                async move {
                    let loc = inner.locate(&table, &req.row).await?;
                    let req = pb::CheckAndMutateRequest {
                        region_id: loc.region_id,
                        ..req
                    };
                    Ok(inner
                        .region_server(&loc.server)?
                        .check_and_mutate(req)
                        .await?
                        .into_inner()
                        .value)
                }
            })
            .await
    }
}

/// Awaits `futures` concurrently in this task (one RPC per server: a batch
/// that spans three servers takes the slowest server's time, not the sum)
/// and returns their outputs in order.
async fn all_at_once<F: std::future::Future>(
    futures: impl IntoIterator<Item = F>,
) -> Vec<F::Output> {
    use std::task::Poll;
    let mut pending: Vec<Option<std::pin::Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut out: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (slot, o) in pending.iter_mut().zip(out.iter_mut()) {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => {
                        *o = Some(v);
                        *slot = None;
                    }
                    Poll::Pending => done = false,
                }
            }
        }
        if done { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::all_at_once;

    #[tokio::test]
    async fn all_at_once_overlaps_and_keeps_order() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        // The first future can only finish after the second has run: awaited
        // one after another, this would never complete.
        let first = async move { rx.await.unwrap_or(0) + 1 };
        let second = async move {
            let _ = tx.send(41);
            7
        };
        let a: std::pin::Pin<Box<dyn std::future::Future<Output = u32>>> = Box::pin(first);
        let b: std::pin::Pin<Box<dyn std::future::Future<Output = u32>>> = Box::pin(second);
        assert_eq!(all_at_once([a, b]).await, vec![42, 7]);
    }
}
