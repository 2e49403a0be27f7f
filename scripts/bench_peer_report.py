#!/usr/bin/env python3
"""The parsing and reporting half of scripts/bench-peer.sh.

    bench_peer_report.py phase SYSTEM PHASE STDOUT STDERR EXIT CPU_TICKS HZ HWM_KIB WALL_S
        reads one YCSB run's output (or a setup step's) and prints one JSON line
    bench_peer_report.py report OUT_DIR
        reads OUT_DIR/phases.jsonl and OUT_DIR/systems.jsonl, writes
        OUT_DIR/results.json and OUT_DIR/results.md and prints the tables
"""

import json
import re
import sys

# YCSB's operation kinds, in the order its CoreWorkload reports them.
OPS = ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE"]
LINE = re.compile(r"^\[([A-Z-]+)\], ([^,]+), (.+)$")
EXCEPTION = re.compile(r"(Exception|Error)\b")


def first_error(stderr_text, stdout_text):
    """The first line that says what went wrong, most telling first."""
    for line in stderr_text.splitlines():
        # The binding's own one-line report of the first failure of a kind.
        if line.startswith("ycsb-hbase: first ") or line.startswith("CreateUserTable: "):
            return line.strip()
    for text in (stderr_text, stdout_text):
        for line in text.splitlines():
            s = line.strip()
            if EXCEPTION.search(s) and not s.startswith("at "):
                return s
    return None


def parse_ycsb(text):
    overall = {}
    ops = {}
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if not m:
            continue
        section, name, value = m.group(1), m.group(2).strip(), m.group(3).strip()
        try:
            num = float(value)
        except ValueError:
            continue
        if section == "OVERALL":
            if name == "RunTime(ms)":
                overall["runtime_ms"] = num
            elif name == "Throughput(ops/sec)":
                overall["throughput"] = num
            continue
        failed = section.endswith("-FAILED")
        kind = section[: -len("-FAILED")] if failed else section
        if kind not in OPS:
            continue
        op = ops.setdefault(kind, {"count": 0, "ok": 0, "not_found": 0, "errors": 0})
        if failed:
            if name == "Operations":
                op["failed_count"] = int(num)
            continue
        if name == "Operations":
            op["count"] = int(num)
        elif name == "AverageLatency(us)":
            op["avg_us"] = num
        elif name == "95thPercentileLatency(us)":
            op["p95_us"] = num
        elif name == "99thPercentileLatency(us)":
            op["p99_us"] = num
        elif name == "Return=OK":
            op["ok"] = int(num)
        elif name == "Return=NOT_FOUND":
            op["not_found"] = int(num)
        elif name.startswith("Return="):
            op["errors"] += int(num)
    return overall, ops


def phase(args):
    system, name, out_path, err_path, code, ticks, hz, hwm, wall = args
    stdout_text = open(out_path, errors="replace").read()
    stderr_text = open(err_path, errors="replace").read()
    code = int(code)
    rec = {
        "system": system,
        "phase": name,
        "exit_code": code,
        "wall_s": round(float(wall), 3),
        "server_cpu_s": round(int(ticks) / int(hz), 3) if ticks != "" else None,
        "server_peak_rss_kib": int(hwm) if hwm != "" else None,
    }
    if name == "create":
        ok = code == 0
        rec["status"] = "ok" if ok else "failed"
        if not ok:
            rec["error"] = first_error(stderr_text, stdout_text) or f"exit code {code}"
        print(json.dumps(rec))
        return
    overall, ops = parse_ycsb(stdout_text)
    rec.update(overall)
    rec["operations"] = ops
    done = sum(o["ok"] + o["not_found"] for o in ops.values())
    errors = sum(o["errors"] for o in ops.values())
    rec["errors"] = errors
    if code == 124 or code == 137:
        rec["status"] = "failed"
        rec["error"] = f"timed out (exit code {code}); " + (first_error(stderr_text, stdout_text) or "")
    elif code != 0 or done == 0:
        rec["status"] = "failed"
        rec["error"] = first_error(stderr_text, stdout_text) or (
            f"exit code {code}" if code else "no operation succeeded")
    elif errors:
        rec["status"] = "partial"
        rec["error"] = f"{errors} operations failed; " + (first_error(stderr_text, stdout_text) or "")
    else:
        rec["status"] = "ok"
    if rec["status"] != "failed" and rec.get("server_cpu_s") is not None and done:
        rec["server_cpu_us_per_op"] = round(rec["server_cpu_s"] * 1e6 / done, 1)
    print(json.dumps(rec))


# --- the report ------------------------------------------------------------------

def fmt(v, unit=""):
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if abs(v) >= 100:
        s = f"{v:,.0f}"
    elif abs(v) >= 10:
        s = f"{v:,.1f}"
    else:
        s = f"{v:,.2f}"
    return s + unit


def ratio(f, h):
    if isinstance(f, (int, float)) and isinstance(h, (int, float)) and h:
        return f"{f / h:.2f}"
    return "—"


def figures(rec):
    """(label, value) pairs of one phase, in display order."""
    if rec is None:
        return []
    if rec.get("status") in ("failed", "skipped"):
        return None
    rows = [("throughput, ops/s", rec.get("throughput"))]
    for op in OPS:
        o = rec.get("operations", {}).get(op)
        if not o or not o.get("count"):
            continue
        rows.append((f"{op} avg µs", o.get("avg_us")))
        rows.append((f"{op} p95 µs", o.get("p95_us")))
        rows.append((f"{op} p99 µs", o.get("p99_us")))
    rows.append(("server CPU s", rec.get("server_cpu_s")))
    rows.append(("server CPU µs/op", rec.get("server_cpu_us_per_op")))
    hwm = rec.get("server_peak_rss_kib")
    rows.append(("server peak RSS MiB", hwm / 1024 if hwm else None))
    return rows


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep] + [line(r) for r in rows])


def cell_error(rec):
    if rec is None:
        return "not run"
    text = rec.get("status", "failed").upper() + ": " + (rec.get("error") or "unknown error")
    # The whole line is in results.json; a table cell keeps its start.
    return text if len(text) <= 140 else text[:139] + "…"


def report(args):
    out_dir = args[0]
    phases = [json.loads(l) for l in open(f"{out_dir}/phases.jsonl") if l.strip()]
    systems = [json.loads(l) for l in open(f"{out_dir}/systems.jsonl") if l.strip()]
    names = []
    for s in systems:
        if s["system"] not in names:
            names.append(s["system"])
    order = []
    for p in phases:
        if p["phase"] not in order:
            order.append(p["phase"])
    by = {(p["system"], p["phase"]): p for p in phases}
    both = "hbase" in names and "ferrobase" in names

    lines = []
    meta = json.load(open(f"{out_dir}/run.json"))
    lines.append(
        f"YCSB {meta['ycsb']} ({meta['binding']}), {meta['records']:,} records, "
        f"{meta['ops']:,} operations a workload, {meta['threads']} client threads, "
        f"memory budget {meta['memory']} each, {meta['splits'] + 1} regions")
    header = ["figure"] + names + (["ferrobase/HBase"] if both else [])
    for ph in order:
        lines.append("")
        lines.append(f"== {'load' if ph == 'load' else ('create table' if ph == 'create' else 'workload ' + ph)}")
        recs = {n: by.get((n, ph)) for n in names}
        if ph == "create":
            rows = [["status"] + [("ok" if r and r["status"] == "ok" else cell_error(r)) for r in recs.values()]
                    + (["—"] if both else [])]
            lines.append(table(header, rows))
            continue
        figs = {n: figures(r) for n, r in recs.items()}
        labels = []
        for n in names:
            for lab, _ in figs[n] or []:
                if lab not in labels:
                    labels.append(lab)
        rows = []
        errs = [n for n in names if figs[n] is None or recs[n] is None]
        if errs:
            rows.append(["status"] + [cell_error(recs[n]) if n in errs else recs[n]["status"] for n in names]
                        + (["—"] if both else []))
        for n in names:
            r = recs[n]
            if r and r.get("status") == "partial":
                rows.append([f"{n} errors"] + [r.get("error", "") if m == n else "" for m in names]
                            + (["—"] if both else []))
        for lab in labels:
            vals = {n: dict(figs[n] or []).get(lab) for n in names}
            row = [lab] + [fmt(vals[n]) for n in names]
            if both:
                row.append(ratio(vals["ferrobase"], vals["hbase"]))
            rows.append(row)
        lines.append(table(header, rows))

    lines.append("")
    lines.append("== at the end")
    sysby = {s["system"]: s for s in systems}
    end_rows = []
    for lab, key, conv in [
        ("server start", "start_error", None),
        ("data directory, MiB", "disk_bytes", lambda b: b / 1048576),
        ("server CPU s, all phases", "server_cpu_s", None),
        ("server peak RSS MiB", "server_peak_rss_kib", lambda k: k / 1024),
    ]:
        vals = {}
        for n in names:
            v = sysby.get(n, {}).get(key)
            if key == "start_error":
                vals[n] = ("FAILED: " + v) if v else "ok"
            else:
                vals[n] = conv(v) if (conv and isinstance(v, (int, float))) else v
        row = [lab] + [fmt(vals[n]) for n in names]
        if both:
            row.append(ratio(vals["ferrobase"], vals["hbase"]) if key != "start_error" else "—")
        end_rows.append(row)
    lines.append(table(header, end_rows))
    if both:
        lines.append("")
        lines.append("ferrobase/HBase: above 1 is better for throughput, below 1 for latency, CPU, memory and disk.")

    text = "\n".join(lines) + "\n"
    open(f"{out_dir}/results.md", "w").write(text)
    result = {
        "run": meta,
        "systems": systems,
        "phases": phases,
    }
    if both:
        ratios = {}
        for ph in order:
            h, f = by.get(("hbase", ph)), by.get(("ferrobase", ph))
            if not h or not f or ph == "create" or {h.get("status"), f.get("status")} & {"failed", "skipped"}:
                continue
            r = {"throughput": _r(f.get("throughput"), h.get("throughput")),
                 "server_cpu_us_per_op": _r(f.get("server_cpu_us_per_op"), h.get("server_cpu_us_per_op"))}
            for op in OPS:
                fo, ho = f["operations"].get(op), h["operations"].get(op)
                if fo and ho:
                    r[op] = {k: _r(fo.get(k), ho.get(k)) for k in ("avg_us", "p95_us", "p99_us")}
            ratios[ph] = r
        result["ratios_ferrobase_over_hbase"] = ratios
    with open(f"{out_dir}/results.json", "w") as fh:
        json.dump(result, fh, indent=2)
        fh.write("\n")
    sys.stdout.write(text)


def _r(f, h):
    if isinstance(f, (int, float)) and isinstance(h, (int, float)) and h:
        return round(f / h, 3)
    return None


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("phase", "report"):
        sys.exit(__doc__)
    if sys.argv[1] == "phase":
        if len(sys.argv) != 11:
            sys.exit(__doc__)
        phase(sys.argv[2:])
    else:
        report(sys.argv[2:])
