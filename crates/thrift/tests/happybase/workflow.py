"""The happybase tour: DDL, puts, reads with versions and timestamps,
scans with every option, deletes, counters, regions, enable/disable."""
import os
from collections import OrderedDict

from common import AlreadyExists, IOError, connect

conn = connect()
name = os.environ["TABLE"]

conn.create_table(name, {
    "cf1": dict(max_versions=3, compression="snappy", bloom_filter_type="ROW",
                block_cache_enabled=True, time_to_live=86400, in_memory=True),
    "cf2": dict(),
})
assert name.encode() in conn.tables(), conn.tables()
try:
    conn.create_table(name, {"cf1": dict()})
    raise AssertionError("creating an existing table must fail")
except AlreadyExists as e:
    assert name.encode() in e.message, e.message

t = conn.table(name)
fams = t.families()
assert sorted(fams) == [b"cf1", b"cf2"], fams
cf1 = fams[b"cf1"]
assert cf1["max_versions"] == 3, cf1
assert cf1["compression"] == b"SNAPPY", cf1
assert cf1["bloom_filter_type"] == b"ROW", cf1
assert cf1["in_memory"] is True and cf1["block_cache_enabled"] is True, cf1
assert cf1["time_to_live"] == 86400, cf1
# happybase's defaults for a family are the IDL's: 3 versions, no Bloom filter.
assert fams[b"cf2"]["max_versions"] == 3, fams[b"cf2"]
assert fams[b"cf2"]["time_to_live"] == 2**31 - 1, fams[b"cf2"]

# Puts and rows.
t.put(b"row1", {b"cf1:a": b"v1", b"cf1:b": b"v2", b"cf2:x": b"x1"})
assert t.row(b"row1") == {b"cf1:a": b"v1", b"cf1:b": b"v2", b"cf2:x": b"x1"}, t.row(b"row1")
assert t.row(b"row1", columns=[b"cf1"]) == {b"cf1:a": b"v1", b"cf1:b": b"v2"}
assert t.row(b"row1", columns=[b"cf1:a", b"cf2"]) == {b"cf1:a": b"v1", b"cf2:x": b"x1"}
assert t.row(b"missing") == {}

# Versions and timestamps (in cf2: cf1's TTL would expire cells of 1970).
for ts, v in [(1000, b"old"), (2000, b"mid"), (3000, b"new")]:
    t.put(b"row2", {b"cf2:a": v}, timestamp=ts)
assert t.cells(b"row2", b"cf2:a", versions=3, include_timestamp=True) == [
    (b"new", 3000), (b"mid", 2000), (b"old", 1000)], t.cells(b"row2", b"cf2:a", versions=3)
assert t.cells(b"row2", b"cf2:a", versions=1) == [b"new"]
assert len(t.cells(b"row2", b"cf2:a")) == 3  # happybase asks for 2^31-1 versions
# A timestamp bound is exclusive, as in HBase.
assert t.cells(b"row2", b"cf2:a", versions=5, timestamp=3000) == [b"mid", b"old"]
assert t.row(b"row2", timestamp=2500) == {b"cf2:a": b"mid"}
assert t.row(b"row2", include_timestamp=True) == {b"cf2:a": (b"new", 3000)}
assert t.rows([b"row2"], timestamp=1500) == [(b"row2", {b"cf2:a": b"old"})]

# Batches and rows().
with t.batch(batch_size=7) as b:
    for i in range(20):
        b.put(b"r%02d" % i, {b"cf1:n": str(i).encode(), b"cf2:m": b"y"})
rows = t.rows([b"r01", b"r05", b"nope", b"r10"])
assert [k for k, _ in rows] == [b"r01", b"r05", b"r10"], rows
assert rows[1][1] == {b"cf1:n": b"5", b"cf2:m": b"y"}, rows
assert t.rows([b"r01"], columns=[b"cf2:m"]) == [(b"r01", {b"cf2:m": b"y"})]

# Scans.
def keys(**kw):
    return [k for k, _ in t.scan(**kw)]

assert keys(row_start=b"r05", row_stop=b"r08") == [b"r05", b"r06", b"r07"]
assert keys(row_prefix=b"r1") == [b"r%02d" % i for i in range(10, 20)]
assert keys(row_prefix=b"r", limit=5) == [b"r%02d" % i for i in range(5)]
assert keys(row_start=b"r00", row_stop=b"r99", batch_size=3) == [b"r%02d" % i for i in range(20)]
assert keys(row_prefix=b"r", batch_size=1, limit=2) == [b"r00", b"r01"]
assert all(d == {b"cf2:m": b"y"} for _, d in t.scan(row_prefix=b"r0", columns=[b"cf2"]))
assert keys(row_prefix=b"r", filter="ValueFilter(=, 'binary:7')") == [b"r07"]
assert keys(filter="PrefixFilter('row')") == [b"row1", b"row2"]
assert keys(row_start=b"r03", row_stop=b"r00", reverse=True) == [b"r03", b"r02", b"r01"]
assert keys(row_prefix=b"r1", reverse=True)[:2] == [b"r19", b"r18"]
assert keys(row_prefix=b"row", timestamp=1500) == [b"row2"]
sorted_row = dict(t.scan(row_start=b"row1", row_stop=b"row1\x00", sorted_columns=True))[b"row1"]
assert isinstance(sorted_row, OrderedDict)
assert list(sorted_row) == [b"cf1:a", b"cf1:b", b"cf2:x"], sorted_row
# scan_batching (TScan.batchSize) splits a row into results of 1 cell.
pieces = list(t.scan(row_start=b"r00", row_stop=b"r01", scan_batching=1))
assert pieces == [(b"r00", {b"cf1:n": b"0"}), (b"r00", {b"cf2:m": b"y"})], pieces
# A scan abandoned half-way still closes its scanner (generator close).
gen = t.scan(row_prefix=b"r", batch_size=2)
next(gen)
gen.close()

# Deletes.
t.delete(b"row1", columns=[b"cf1:a"])
assert t.row(b"row1") == {b"cf1:b": b"v2", b"cf2:x": b"x1"}, t.row(b"row1")
t.delete(b"row1", columns=[b"cf2"])
assert t.row(b"row1") == {b"cf1:b": b"v2"}, t.row(b"row1")
t.delete(b"row1")
assert t.row(b"row1") == {}
t.delete(b"row2", timestamp=2000)  # cells at or before 2000 of every family
assert t.cells(b"row2", b"cf2:a", versions=3) == [b"new"]
with t.batch() as b:
    b.delete(b"r00")
    b.put(b"r00b", {b"cf1:n": b"x"})
assert t.row(b"r00") == {} and t.row(b"r00b") == {b"cf1:n": b"x"}

# Counters.
assert t.counter_inc(b"c", b"cf1:cnt") == 1
assert t.counter_inc(b"c", b"cf1:cnt", 5) == 6
assert t.counter_dec(b"c", b"cf1:cnt") == 5
assert t.counter_get(b"c", b"cf1:cnt") == 5
assert t.counter_get(b"c", b"cf1:fresh") == 0
t.counter_set(b"c", b"cf1:set", 42)
assert t.counter_get(b"c", b"cf1:set") == 42

# Regions.
regions = t.regions()
assert len(regions) >= 1, regions
assert regions[0]["start_key"] == b"" and regions[-1]["end_key"] == b"", regions
assert all(r["port"] > 0 and r["server_name"] for r in regions), regions

# Administration.
conn.compact_table(name)
conn.compact_table(name, major=True)
conn.disable_table(name)
assert not conn.is_table_enabled(name)
try:
    t.row(b"r01")
    raise AssertionError("reading a disabled table must fail")
except IOError as e:
    assert name.encode() in e.message, e.message
conn.enable_table(name)
assert conn.is_table_enabled(name)
assert t.row(b"r01") == {b"cf1:n": b"1", b"cf2:m": b"y"}
conn.delete_table(name, disable=True)
assert name.encode() not in conn.tables()
print("workflow ok")
