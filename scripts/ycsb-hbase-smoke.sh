#!/usr/bin/env bash
# YCSB's core workloads A (read/update) and E (short scans + inserts)
# through the unmodified HBase Java client against a real ferrobase
# standalone, at a small record count: a test, not a benchmark. Passes only
# when YCSB loaded and ran every phase with no failed operation.
#
#   FERROBASE_BIN=/path/to/ferrobase scripts/ycsb-hbase-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${FERROBASE_BIN:?set FERROBASE_BIN to the ferrobase binary to test}"
out=$(mktemp -d /tmp/ferrobase-ycsb-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
scripts/java-deps.sh ycsb
FERROBASE_BIN="$FERROBASE_BIN" scripts/bench-peer.sh --systems ferrobase \
  --records 2000 --ops 2000 --threads 4 --workloads a,e --out "$out/run" --timeout 300
python3 - "$out/run/results.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
text = json.dumps(data)
phases = []
def walk(x):
    if isinstance(x, dict):
        if "phase" in x and "status" in x:
            phases.append(x)
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(data)
want = {"create", "load", "a", "e"}
seen = {p["phase"]: p for p in phases if p.get("system") == "ferrobase"}
missing = want - set(seen)
bad = {k: (v["status"], v.get("error")) for k, v in seen.items() if v["status"] != "ok"}
if missing or bad:
    print(f"YCSB smoke test failed: missing phases {sorted(missing)}, not ok: {bad}", file=sys.stderr)
    sys.exit(1)
ops = {k: sum(o.get("ok", 0) for o in v.get("operations", {}).values()) for k, v in seen.items() if k != "create"}
print("YCSB smoke test passed: operations ok per phase:", ops)
PY
