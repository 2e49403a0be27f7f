//! A session: one etcd lease kept alive in the background, and a signal
//! when it is lost. Whoever holds keys under it (a region server's
//! registration, a master's election key) must stop acting on them once
//! the session is lost, because the cluster already considers it dead.

use super::{Client, err};
use crate::error::Result;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A live lease.
pub struct Session {
    lease: i64,
    lost: watch::Receiver<bool>,
    keeper: JoinHandle<()>,
    client: Client,
}

impl Session {
    /// Grants a lease of `ttl` (rounded up to whole seconds, at least 1)
    /// and renews it every third of its TTL.
    ///
    /// The session counts as lost once `ttl` has passed since the *sending*
    /// of the last renewal etcd answered: etcd restarts a lease's TTL when
    /// it receives the renewal, after it was sent, so by then etcd may have
    /// expired the lease but not earlier. Every wait on etcd is bounded by
    /// that deadline, so a partition (packets dropped, no reset) is noticed
    /// on time: a region server stops serving before its regions can be
    /// reopened elsewhere.
    pub async fn start(client: &Client, ttl: Duration) -> Result<Session> {
        let mut client = client.clone();
        let secs = ttl.as_millis().div_ceil(1000).max(1) as i64;
        let granted_at = Instant::now();
        let lease = client
            .lease_grant(secs, None)
            .await
            .map_err(err("lease grant"))?
            .id();
        let (keeper, mut stream) = client
            .lease_keep_alive(lease)
            .await
            .map_err(err("lease keep-alive"))?;
        let (tx, lost) = watch::channel(false);
        let period = Duration::from_millis((secs as u64 * 1000) / 3);
        let ttl = Duration::from_secs(secs as u64);
        let mut c2 = client.clone();
        let keeper = tokio::spawn(async move {
            let mut keeper = keeper;
            let mut valid_until = granted_at + ttl;
            loop {
                let deadline = tokio::time::Instant::from_std(valid_until);
                let sent = Instant::now();
                let renewed = async {
                    keeper.keep_alive().await.ok()?;
                    stream.message().await.ok()?.map(|r| r.ttl())
                };
                let wait = deadline.min(tokio::time::Instant::from_std(sent + period));
                match tokio::time::timeout_at(wait, renewed).await {
                    Ok(Some(t)) if t > 0 => {
                        let granted = Duration::from_secs(t as u64).min(ttl);
                        valid_until = sent + granted;
                    }
                    Ok(Some(_)) => break, // etcd says the lease is gone
                    _ => {
                        // A broken stream: open a new one while time is left.
                        let reopen = c2.lease_keep_alive(lease);
                        if let Ok(Ok((k, s))) = tokio::time::timeout_at(deadline, reopen).await {
                            keeper = k;
                            stream = s;
                        }
                    }
                }
                if Instant::now() >= valid_until {
                    break;
                }
                let next = (Instant::now() + period).min(valid_until);
                tokio::time::sleep_until(tokio::time::Instant::from_std(next)).await;
            }
            tracing::error!(lease, "etcd session lost");
            let _ = tx.send(true);
        });
        Ok(Session {
            lease,
            lost,
            keeper,
            client,
        })
    }

    /// The lease id.
    pub fn lease(&self) -> i64 {
        self.lease
    }

    /// Resolves when the lease is lost.
    pub async fn lost(&self) {
        let mut rx = self.lost.clone();
        let _ = rx.wait_for(|lost| *lost).await;
    }

    /// Revokes the lease (its keys disappear at once) and stops renewing.
    pub async fn close(mut self) {
        self.keeper.abort();
        let _ = self.client.lease_revoke(self.lease).await;
    }
}
