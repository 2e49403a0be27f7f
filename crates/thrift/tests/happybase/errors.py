"""Errors a happybase user sees: HBase's exceptions naming what was
wrong, never a hang."""
from common import IllegalArgument, IOError, connect

conn = connect()
t = conn.table("no_such_table")


def fails(what, call, exc=IOError, needle=b"no_such_table"):
    try:
        call()
    except exc as e:
        assert needle in e.message, (what, e.message)
        return
    raise AssertionError(what + " did not fail")


fails("row", lambda: t.row(b"r"))
fails("put", lambda: t.put(b"r", {b"cf:a": b"v"}))
fails("scan", lambda: list(t.scan()))
fails("families", lambda: t.families())
fails("counter", lambda: t.counter_inc(b"r", b"cf:c"))
fails("delete_table", lambda: conn.delete_table("no_such_table"))

conn.create_table("errs", {"cf": dict()})
e = conn.table("errs")
fails("unknown family", lambda: e.put(b"r", {b"nofam:a": b"v"}), needle=b"nofam")
fails("bad filter", lambda: list(e.scan(filter="NoSuchFilter()")), needle=b"NoSuchFilter")
fails("put without qualifier", lambda: e.put(b"r", {b"cf": b"v"}), IllegalArgument, b"qualifier")
fails("closed scanner", lambda: conn.client.scannerGetList(123456, 1), IllegalArgument, b"123456")
# The connection still works after all of that.
e.put(b"r", {b"cf:a": b"v"})
assert e.row(b"r") == {b"cf:a": b"v"}
conn.delete_table("errs", disable=True)
print("errors ok")
