//! The region server's calls that read and write one row under its lock:
//! increment and append (read-modify-write) and checkAndMutate, each once
//! per nonce. It owns the order "lock, read, write, answer" and the nonce
//! bookkeeping around it; the row's storage is the region's.

use super::*;

impl RegionServer {
    /// Increment (8-byte big-endian amounts) or append, under the row lock;
    /// returns the new cells.
    pub fn read_modify_write(&self, region: u64, block: Bytes, append: bool) -> Result<Bytes> {
        self.read_modify_write_once(region, block, append, (0, 0))
    }

    /// [`read_modify_write`](Self::read_modify_write) of a call tagged with
    /// the client nonce `(group, nonce)` (nonce 0: none): applied once per
    /// pair, here or (logged with its edit) on the server whose WAL this
    /// one replayed. A retry of an applied pair is answered with the row's
    /// current cells of the columns it names, as HBase converts it to a Get.
    pub fn read_modify_write_once(
        &self,
        region: u64,
        block: Bytes,
        append: bool,
        (group, nonce): (u64, u64),
    ) -> Result<Bytes> {
        let mut mutations = cellblock::decode_mutations(block)?;
        if mutations.len() != 1 {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                "increment and append take exactly one row",
            ));
        }
        let mut m = mutations.remove(0);
        let row = m.row.clone();
        if nonce != 0 {
            m.nonce = Some((group, nonce));
        }
        let table = self.region(region)?.info().table.clone();
        let cells = match self.nonces.start_on(group, nonce, &table, &row) {
            crate::nonces::Start::Duplicate | crate::nonces::Start::DuplicateFailedCheck => {
                self.current_cells(region, &m)?
            }
            crate::nonces::Start::Proceed => {
                let done = self.read_modify_write_row(region, m, append);
                self.nonces.end(group, nonce, done.is_ok());
                if done.is_ok() {
                    crate::crash_point::reached("increment-after-apply");
                }
                done?
            }
        };
        Ok(cellblock::encode_results([(&row[..], &cells[..])]))
    }

    /// The newest cells of the columns `m` names (the answer to a retried
    /// increment or append that was already applied).
    pub(crate) fn current_cells(&self, region: u64, m: &RowMutation) -> Result<Vec<Cell>> {
        let r = self.region(region)?;
        if !r.info().contains_row(&m.row) {
            return Err(ServerError::new(
                ErrorCode::WrongRegion,
                format!("row is outside region {region}"),
            ));
        }
        let mut read = Get::new(m.row.clone());
        for c in m.mutations() {
            read.add_column(c.family.clone(), Bytes::copy_from_slice(c.qualifier));
        }
        Ok(r.get(&read)?)
    }

    /// Locks `row` of `region` against other read-modify-writes until the
    /// guard is dropped.
    pub fn lock_row(&self, region: u64, row: &[u8]) -> parking_lot::MutexGuard<'_, ()> {
        self.locks.lock(region, row)
    }

    /// [`read_modify_write`](Self::read_modify_write) of one row mutation
    /// (its puts' values are the amounts or suffixes); returns the new
    /// cells.
    pub fn read_modify_write_row(
        &self,
        region: u64,
        m: RowMutation,
        append: bool,
    ) -> Result<Vec<Cell>> {
        let _guard = self.locks.lock(region, &m.row);
        self.read_modify_write_locked(region, m, append)
    }

    /// [`read_modify_write_row`](Self::read_modify_write_row) for a caller
    /// that holds the row's lock ([`lock_row`](Self::lock_row)).
    pub fn read_modify_write_locked(
        &self,
        region: u64,
        m: RowMutation,
        append: bool,
    ) -> Result<Vec<Cell>> {
        let r = self.region(region)?;
        m.validate(self.engine.settings().keyvalue_max_size)?;
        if !r.info().contains_row(&m.row) {
            return Err(ServerError::new(
                ErrorCode::WrongRegion,
                format!("row is outside region {region}"),
            ));
        }
        let mut out = RowMutation::new(m.row.clone()).with_durability(m.durability);
        // Logged with the edit, so a retry is recognised after a failover.
        out.nonce = m.nonce;
        let mut read = Get::new(m.row.clone());
        for c in m.mutations() {
            if c.kind != CellType::Put {
                return Err(ServerError::new(
                    ErrorCode::InvalidRequest,
                    "increment and append take only puts",
                ));
            }
            read.add_column(c.family.clone(), Bytes::copy_from_slice(c.qualifier));
        }
        let current = r.get(&read)?;
        let mut computed: Vec<Cell> = Vec::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        for c in m.mutations() {
            let old_cell = current
                .iter()
                .find(|x| x.family == c.family && x.qualifier == c.qualifier);
            // As HBase does: the new cell's timestamp is past the old one's,
            // so two increments in one millisecond (or after a clock step
            // back) never share a timestamp and the newer always shadows
            // the older, whatever order files and replays present them in.
            let ts = old_cell.map_or(now, |o| now.max(o.timestamp.saturating_add(1)));
            let old = old_cell.map(|x| x.value.clone());
            let new: Bytes = if append {
                let mut v = old.map(|o| o.to_vec()).unwrap_or_default();
                v.extend_from_slice(c.value);
                v.into()
            } else {
                let amount = be_i64(c.value, "amount")?;
                let base = match old {
                    Some(o) => be_i64(&o, "stored value")?,
                    None => 0,
                };
                Bytes::copy_from_slice(&base.wrapping_add(amount).to_be_bytes())
            };
            computed.push(Cell {
                row: m.row.clone(),
                family: c.family.clone(),
                qualifier: Bytes::copy_from_slice(c.qualifier),
                timestamp: ts,
                cell_type: CellType::Put,
                value: new.clone(),
            });
            out = out.put_at(c.family.clone(), c.qualifier, ts, new);
        }
        r.mutate(out)?;
        // Applied: from here on the call must not fail, or its nonce would
        // be forgotten and the client's retry applied again. A split or
        // move can close the region right after the write (the read-back
        // then fails); the answer is then the cells just written.
        match r.get(&read) {
            Ok(cells) => Ok(cells),
            Err(_) => {
                // A column named twice: the last put is the one stored.
                computed.reverse();
                computed.sort_by(|a, b| (&a.family, &a.qualifier).cmp(&(&b.family, &b.qualifier)));
                computed.dedup_by(|later, earlier| {
                    later.family == earlier.family && later.qualifier == earlier.qualifier
                });
                Ok(computed)
            }
        }
    }

    /// Applies `mutation` when the column holds `expected` (or is absent
    /// when `expected` is `None`), under the row lock. A call tagged with a
    /// nonce is answered once per pair: a retry gets the first call's
    /// outcome ([`checked_once`](Self::checked_once)).
    pub fn check_and_mutate(&self, req: pb::CheckAndMutateRequest) -> Result<bool> {
        let mut mutations = cellblock::decode_mutations(req.mutation)?;
        if mutations.len() != 1 || mutations[0].row != req.row {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                "checkAndMutate takes one mutation of the checked row",
            ));
        }
        let expected = req.expected;
        let (region, row) = (req.region_id, req.row);
        let (family, qualifier) = (req.family, req.qualifier);
        self.checked_once(region, &row, (req.nonce_group, req.nonce), |nonce| {
            for m in &mut mutations {
                m.nonce = nonce;
            }
            self.check_and_mutate_row(
                region,
                &row,
                (family, qualifier),
                (0, u64::MAX),
                move |current| match (&expected, current) {
                    (None, None) => true,
                    (Some(e), Some(c)) => *e == c.value,
                    _ => false,
                },
                mutations,
            )
        })
    }

    /// Runs a checked call tagged `(group, nonce)` (nonce 0: none) on `row`
    /// of `region` once per pair. `call` gets the pair to log with its
    /// edits (so a server that replays them knows it applied) and returns
    /// whether the check passed. A retry of a pair seen here is answered
    /// with the first outcome without checking again: `true` when it
    /// applied (here or on a server whose WAL or closed region this one
    /// read), `false` when its check failed here. A check that failed on a
    /// server that died since is not known: its retry is checked anew,
    /// once, which the caller cannot tell from a first call.
    pub fn checked_once(
        &self,
        region: u64,
        row: &Bytes,
        (group, nonce): (u64, u64),
        call: impl FnOnce(Option<(u64, u64)>) -> Result<bool>,
    ) -> Result<bool> {
        let table = self.region(region)?.info().table.clone();
        match self.nonces.start_on(group, nonce, &table, row) {
            crate::nonces::Start::Duplicate => Ok(true),
            crate::nonces::Start::DuplicateFailedCheck => Ok(false),
            crate::nonces::Start::Proceed => {
                let done = call((nonce != 0).then_some((group, nonce)));
                match done {
                    Ok(true) => {
                        self.nonces.end(group, nonce, true);
                        crate::crash_point::reached("check-and-mutate-after-apply");
                    }
                    Ok(false) => self.nonces.end_failed_check(group, nonce),
                    Err(_) => self.nonces.end(group, nonce, false),
                }
                done
            }
        }
    }

    /// Applies `mutations` (all of `row`, as one atomic batch) when `check`
    /// passes on the newest cell of the column `(family, qualifier)` within
    /// `time_range` (`None` when it has none), under the row lock. Returns
    /// whether the check passed.
    pub fn check_and_mutate_row(
        &self,
        region: u64,
        row: &Bytes,
        (family, qualifier): (Bytes, Bytes),
        time_range: (u64, u64),
        check: impl FnOnce(Option<&Cell>) -> bool,
        mutations: Vec<RowMutation>,
    ) -> Result<bool> {
        let r = self.region(region)?;
        let max = self.engine.settings().keyvalue_max_size;
        for m in &mutations {
            m.validate(max)?;
            if m.row != *row {
                return Err(ServerError::new(
                    ErrorCode::InvalidRequest,
                    "a checked mutation must be of the checked row",
                ));
            }
        }
        if !r.info().contains_row(row) {
            return Err(ServerError::new(
                ErrorCode::WrongRegion,
                format!("row is outside region {region}"),
            ));
        }
        require_family(&r, &family)?;
        let _guard = self.locks.lock(region, row);
        let mut g = Get::new(row.clone());
        g.add_column(family, qualifier);
        g.time_range = time_range;
        let cells = r.get(&g)?;
        let matches = check(cells.first());
        if matches && !mutations.is_empty() {
            r.mutate_owned(mutations)?;
        }
        Ok(matches)
    }
}

fn be_i64(v: &[u8], what: &str) -> Result<i64> {
    let arr: [u8; 8] = v.try_into().map_err(|_| {
        ServerError::new(
            ErrorCode::InvalidRequest,
            format!(
                "increment {what} is not a long: it is {} bytes wide, a long is 8",
                v.len()
            ),
        )
    })?;
    Ok(i64::from_be_bytes(arr))
}
