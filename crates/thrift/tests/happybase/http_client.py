"""Thrift over HTTP, as Hue and THttpClient speak it: thriftpy2's HTTP
client (binary protocol, one POST per call) against the gateway's port,
then what a plain HTTP client gets for a GET and for a body that is not a
Thrift message."""
import os
import urllib.error
import urllib.request

import happybase  # noqa: F401  (registers Hbase_thrift)
import Hbase_thrift
from thriftpy2.http import make_client

host, port, name = os.environ["HOST"], int(os.environ["PORT"]), os.environ["TABLE"]
client = make_client(Hbase_thrift.Hbase, host, port, path="/", timeout=60000)
client.createTable(name.encode(), [Hbase_thrift.ColumnDescriptor(name=b"cf:")])
assert name.encode() in client.getTableNames()
client.mutateRow(name.encode(), b"r1", [Hbase_thrift.Mutation(column=b"cf:q", value=b"v1")], {})
rows = client.getRow(name.encode(), b"r1", {})
assert len(rows) == 1 and rows[0].columns[b"cf:q"].value == b"v1", rows
try:
    client.getRow(b"no_such_table", b"r1", {})
    raise SystemExit("a get on a missing table did not fail")
except Hbase_thrift.IOError as e:
    assert "no_such_table" in str(e.message), e
client.disableTable(name.encode())
client.deleteTable(name.encode())

url = "http://%s:%d/" % (host, port)
try:
    urllib.request.urlopen(url, timeout=60)
    raise SystemExit("GET was answered 200")
except urllib.error.HTTPError as e:
    assert e.code == 405, e.code
    assert b"POST one Thrift message" in e.read()
try:
    urllib.request.urlopen(urllib.request.Request(url, data=b"hello", method="POST"), timeout=60)
    raise SystemExit("a non-Thrift body was answered 200")
except urllib.error.HTTPError as e:
    assert e.code == 400, e.code
    assert b"not a Thrift binary or compact message" in e.read()
print("http ok")
