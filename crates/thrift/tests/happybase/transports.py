"""A short round trip, run once per transport/protocol combination."""
import os

from common import connect

conn = connect()
name = os.environ["TABLE"]
conn.create_table(name, {"cf": dict(max_versions=2)})
t = conn.table(name)
with t.batch() as b:
    for i in range(30):
        b.put(b"k%02d" % i, {b"cf:v": b"x" * i, b"cf:i": str(i).encode()})
assert len(list(t.scan(batch_size=7))) == 30
assert t.row(b"k29") == {b"cf:v": b"x" * 29, b"cf:i": b"29"}
assert t.counter_inc(b"n", b"cf:c", -3) == -3
assert t.families()[b"cf"]["max_versions"] == 2
conn.delete_table(name, disable=True)
print("transport ok", os.environ.get("TRANSPORT"), os.environ.get("PROTOCOL"))
