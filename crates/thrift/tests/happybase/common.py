"""Shared by the happybase scripts: a connection to the gateway the Rust
test started (HOST, PORT, TRANSPORT, PROTOCOL from the environment)."""
import os

import happybase
import Hbase_thrift  # registered by happybase's import (thriftpy2)


def connect():
    return happybase.Connection(
        os.environ["HOST"],
        int(os.environ["PORT"]),
        transport=os.environ.get("TRANSPORT", "buffered"),
        protocol=os.environ.get("PROTOCOL", "binary"),
        compat="0.98",
        # A socket timeout (ms): a gateway that never answers fails the
        # script instead of hanging it.
        timeout=60000,
    )


IOError = Hbase_thrift.IOError
IllegalArgument = Hbase_thrift.IllegalArgument
AlreadyExists = Hbase_thrift.AlreadyExists
