#!/usr/bin/env python3
"""Records the HBase RPC byte streams between clients and servers, as a TCP proxy.

Usage:

    scripts/hbase-wire-capture.py OUT_DIR LISTEN_HOST TARGET_HOST PORT [PORT ...]

For each PORT it listens on LISTEN_HOST:PORT and forwards every connection to
TARGET_HOST:PORT, recording both directions, until SIGINT or SIGTERM. Then it
writes, under OUT_DIR:

  conn-NN-PORT-c2s.hex / -s2c.hex   each stream in full, as an xxd-style dump
  frames.tsv                        one HBase RPC frame a line:
                                    epoch_ms, conn, server port, dir, kind, hex
                                    kind: preamble (the 6 bytes "HBas" + version
                                    + auth), registry-preamble (the 6 bytes
                                    "Regist"), connheader (ConnectionHeader),
                                    call (RequestHeader+param+cells),
                                    response (ResponseHeader+result+cells),
                                    raw (bytes that did not frame)

For every client to go through it, the servers must advertise LISTEN_HOST as
their address while listening on TARGET_HOST (scripts/hbase-wire-trace.sh
starts an HBase so: both are loopback addresses, 127.0.0.2 and 127.0.0.1).
The frames are decoded with the HBase client's own protobuf classes by
interop/java's RpcTraceDecoder.
"""

import os
import signal
import socket
import struct
import sys
import threading
import time


def hexdump(data: bytes) -> str:
    lines = []
    for off in range(0, len(data), 16):
        chunk = data[off : off + 16]
        hexpart = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{off:08x}  {hexpart:<47}  {text}")
    return "\n".join(lines) + ("\n" if lines else "")


class Stream:
    """One direction of one connection: its bytes and when each chunk arrived."""

    def __init__(self):
        self.data = bytearray()
        self.times = []  # (offset, epoch_ms)
        self.lock = threading.Lock()

    def add(self, chunk: bytes):
        with self.lock:
            self.times.append((len(self.data), time.time() * 1000.0))
            self.data.extend(chunk)


def time_at(times, offset):
    t = times[0][1] if times else 0
    for off, ts in times:
        if off <= offset:
            t = ts
        else:
            break
    return t


def frames_c2s(data: bytes):
    out = []
    pos = 0
    if data[:6] == b"Regist":
        # HBase 2.6's connection registry preamble: the server answers at once
        # with the cluster id (ConnectionRegistryService.GetConnectionRegistry).
        out.append((0, "registry-preamble", data[:6]))
        pos = 6
    elif data[:4] == b"HBas":
        out.append((0, "preamble", data[:6]))
        pos = 6
        if len(data) >= pos + 4:
            n = struct.unpack(">I", data[pos : pos + 4])[0]
            out.append((pos, "connheader", data[pos + 4 : pos + 4 + n]))
            pos += 4 + n
    while pos + 4 <= len(data):
        n = struct.unpack(">I", data[pos : pos + 4])[0]
        if n > len(data) - pos - 4:
            break
        out.append((pos, "call", data[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    if pos < len(data):
        out.append((pos, "raw", data[pos:]))
    return out


def frames_s2c(data: bytes):
    out = []
    pos = 0
    while pos + 4 <= len(data):
        n = struct.unpack(">I", data[pos : pos + 4])[0]
        if n > len(data) - pos - 4:
            break
        out.append((pos, "response", data[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    if pos < len(data):
        out.append((pos, "raw", data[pos:]))
    return out


def pump(src, dst, stream):
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            stream.add(chunk)
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out_dir, listen_host, target_host = sys.argv[1:4]
    ports = [int(p) for p in sys.argv[4:]]
    os.makedirs(out_dir, exist_ok=True)

    conns = []  # (first_ms, client_addr, port, c2s, s2c)
    lock = threading.Lock()
    stop = threading.Event()

    def serve(listener, port):
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                client, addr = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection((target_host, port))
            except OSError as e:
                print(f"cannot reach {target_host}:{port}: {e}", file=sys.stderr, flush=True)
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            c2s, s2c = Stream(), Stream()
            with lock:
                conns.append((time.time() * 1000.0, addr, port, c2s, s2c))
            threading.Thread(target=pump, args=(client, upstream, c2s), daemon=True).start()
            threading.Thread(target=pump, args=(upstream, client, s2c), daemon=True).start()

    listeners = []
    for port in ports:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((listen_host, port))
        listener.listen(64)
        listeners.append(listener)
        threading.Thread(target=serve, args=(listener, port), daemon=True).start()

    def on_signal(_sig, _frame):
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    print(f"proxying {listen_host} -> {target_host} on ports {ports}", flush=True)
    while not stop.is_set():
        stop.wait(0.2)
    for listener in listeners:
        listener.close()
    time.sleep(0.3)

    rows = []
    with lock:
        snapshot = sorted(conns, key=lambda c: c[0])
    for n, (_first, addr, port, c2s, s2c) in enumerate(snapshot, start=1):
        for direction, stream in (("c2s", c2s), ("s2c", s2c)):
            with stream.lock:
                data, times = bytes(stream.data), list(stream.times)
            name = f"conn-{n:02d}-{port}-{direction}.hex"
            with open(os.path.join(out_dir, name), "w") as f:
                f.write(
                    f"# connection {n}: client {addr[0]}:{addr[1]} <-> server :{port}, "
                    f"{direction}, {len(data)} bytes\n"
                )
                f.write(hexdump(data))
            framer = frames_c2s if direction == "c2s" else frames_s2c
            for off, kind, body in framer(data):
                rows.append((time_at(times, off), n, port, direction, kind, body.hex()))
    rows.sort(key=lambda r: (r[0], r[1]))
    with open(os.path.join(out_dir, "frames.tsv"), "w") as f:
        f.write("# epoch_ms\tconn\tserver_port\tdir\tkind\thex\n")
        for ts, n, port, direction, kind, hx in rows:
            f.write(f"{ts:.1f}\t{n}\t{port}\t{direction}\t{kind}\t{hx}\n")
    print(f"{len(snapshot)} connections, {len(rows)} frames -> {out_dir}", flush=True)


if __name__ == "__main__":
    main()
