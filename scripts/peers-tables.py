#!/usr/bin/env python3
"""The tables of scripts/peers-bench, in seed 001's layout (NHR 2022: warp get
as read and write per object size, warp mixed as IOPS and bandwidth per
object size), with ratios to POSIX and to s3hpc, the per-op percentiles of
warp mixed, IO500 over S3 per phase, and the issue's speed goals checked.
Every cell is the median over the repetitions; a ratio is the median of the
per-repetition ratios (each store against POSIX or s3hpc of the same
repetition), which takes out how busy the machine was in each one.

Also writes DIR/compare.json: every row of DIR/runs/*.json in one file
(schema s3hpc-bench/1), the store as the backend, for `s3hpc report`.

    scripts/peers-tables.py DIR
"""

import json
import re
import statistics
import sys
from pathlib import Path

SMALL = 64 << 10  # the small objects: 4-64 KiB
LARGE = 16 << 20


def size_name(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt(v):
    if v is None:
        return ""
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def ms(s):
    return "" if s is None else f"{s * 1e3:.3g}"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Runs:
    """Every row of DIR/runs, keyed by (store, benchmark, phase, size, rep)."""

    def __init__(self, d):
        self.rows = {}
        self.all = []
        self.stores = []
        for f in sorted((d / "runs").glob("*.json")):
            m = re.match(r"(\d+)-(.+)-([^-]+)$", f.stem)
            if not m:
                continue
            rep, workload, store = int(m[1]), m[2], m[3]
            doc = json.loads(f.read_text())
            if store not in self.stores:
                self.stores.append(store)
            for r in doc.get("results", []):
                r = dict(r, backend=store, iteration=rep, transport=r.get("backend"))
                r["workload"] = workload
                self.all.append(r)
                size = r.get("object_size") if r["benchmark"] == "warp" else None
                self.rows[(store, r["benchmark"], r["phase"], size, rep)] = r
        # POSIX, then s3hpc, then the peers in the order they came up,
        # then the POSIX-over-S3 mounts.
        order = {"posix": 0, "s3hpc": 1}
        self.stores.sort(key=lambda s: order.get(s, 3 if "+" in s else 2))
        self.reps = sorted({k[4] for k in self.rows})
        self.sizes = sorted({k[3] for k in self.rows if k[3] is not None})

    def per_rep(self, store, bench, phase, size, get):
        return {rep: get(r) for rep in self.reps
                if (r := self.rows.get((store, bench, phase, size, rep))) is not None}

    def med(self, store, bench, phase, size, get):
        return median(self.per_rep(store, bench, phase, size, get).values())

    def ratio(self, store, other, bench, phase, size, get):
        a = self.per_rep(store, bench, phase, size, get)
        b = self.per_rep(other, bench, phase, size, get)
        rs = [a[r] / b[r] for r in a if r in b and a[r] and b[r]]
        return median(rs)


def is_peer(store):
    """Another S3 store (not POSIX, s3hpc, nor a STORE+CLIENT mount)."""
    return store not in ("posix", "s3hpc") and "+" not in store


def value(r):
    return r.get("value")


def mib(r):
    return r.get("mib_per_s")


def lat(q):
    return lambda r: (r.get("latency") or {}).get(q)


def x(v):
    return "" if v is None else f"{v:.2f}x"


def table(head, lines):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(cells) + " |" for cells in lines]
    return "\n".join(out)


def measured(runs, phase):
    """(object size, store, median obj/s) of each warp run of `phase`."""
    for size in runs.sizes:
        for s in runs.stores:
            v = runs.med(s, "warp", phase, size, value)
            if v is not None:
                yield size, s, v


def warp_get(runs):
    head = ["object size", "store", "Read [obj/s]", "Write [obj/s]", "Read [MiB/s]",
            "Write [MiB/s]", "read / POSIX", "read / s3hpc", "write / POSIX", "write / s3hpc"]
    lines = []
    for size, s, rd in measured(runs, "get.GET"):
        lines.append([size_name(size), s, fmt(rd),
                      fmt(runs.med(s, "warp", "get.PUT", size, value)),
                      fmt(runs.med(s, "warp", "get.GET", size, mib)),
                      fmt(runs.med(s, "warp", "get.PUT", size, mib))]
                     + [x(runs.ratio(s, o, "warp", ph, size, value))
                        for ph in ("get.GET", "get.PUT") for o in ("posix", "s3hpc")])
    return table(head, lines)


def warp_mixed(runs):
    head = ["object size", "store", "Mixed IOPS [obj/s]", "Mixed Bandwidth [MiB/s]",
            "/ POSIX", "/ s3hpc"]
    ops = ("GET", "STAT", "PUT", "DELETE")
    head += [f"{op} p50/p90/p99 [ms]" for op in ops]
    lines = []
    for size, s, v in measured(runs, "mixed"):
        cells = [size_name(size), s, fmt(v), fmt(runs.med(s, "warp", "mixed", size, mib)),
                 x(runs.ratio(s, "posix", "warp", "mixed", size, value)),
                 x(runs.ratio(s, "s3hpc", "warp", "mixed", size, value))]
        for op in ops:
            qs = [runs.med(s, "warp", f"mixed.{op}", size, lat(q)) for q in ("p50", "p90", "p99")]
            cells.append("/".join(ms(q) for q in qs) if qs[0] is not None else "")
        lines.append(cells)
    return table(head, lines)


def io500_phases(runs):
    seen = []
    for (s, b, ph, _, _) in runs.rows:
        if b == "io500" and ph not in seen:
            seen.append(ph)
    return seen


def io500(runs):
    phases = io500_phases(runs)
    stores = [s for s in runs.stores if any(k[0] == s and k[1] == "io500" for k in runs.rows)]
    if not phases:
        return "", ""
    unit = {k[2]: r.get("unit", "") for k, r in runs.rows.items() if k[1] == "io500"}
    head = ["phase", "unit"] + stores
    lines = [[ph, unit.get(ph, "")] + [fmt(runs.med(s, "io500", ph, None, value)) for s in stores]
             for ph in phases]
    peers = [s for s in stores if is_peer(s)]
    rhead = ["phase"] + [f"{s} / POSIX" for s in stores if s != "posix"] + [f"s3hpc / {p}" for p in peers]
    rlines = [[ph] + [x(runs.ratio(s, "posix", "io500", ph, None, value)) for s in stores if s != "posix"]
              + [x(runs.ratio("s3hpc", p, "io500", ph, None, value)) for p in peers]
              for ph in phases]
    return table(head, lines), table(rhead, rlines)


def goals(runs):
    """The issue's speed goals, each with its numbers."""
    out = []
    peers = [s for s in runs.stores if is_peer(s)]
    if not peers:
        return out
    for size in runs.sizes:
        if size > SMALL and size != LARGE:
            continue
        want = 3.0 if size <= SMALL else 1.0
        ratios = {p: runs.ratio("s3hpc", p, "warp", "mixed", size, value) for p in peers}
        ratios = {p: r for p, r in ratios.items() if r is not None}
        if not ratios:
            continue
        best = min(ratios, key=ratios.get)
        ok = ratios[best] >= want
        out.append(f"- warp mixed {size_name(size)}: s3hpc / best peer ({best}) = {ratios[best]:.2f}x, "
                   f"goal {want:g}x: {'met' if ok else '**not met**'} "
                   f"({', '.join(f'{p} {r:.2f}x' for p, r in ratios.items())})")
    for p in peers:
        lost = []
        for ph in io500_phases(runs):
            r = runs.ratio("s3hpc", p, "io500", ph, None, value)
            if r is not None and r < 1.0:
                lost.append(f"{ph} {r:.2f}x")
        if any(k[0] == p and k[1] == "io500" for k in runs.rows):
            out.append(f"- IO500 over S3, s3hpc against {p}: "
                       + ("ahead on every phase" if not lost else "**behind** on " + ", ".join(lost)))
    return out


def real_warp(d, runs):
    """warp's own averages (get: its GET report; mixed: its Total) beside
    the bench's figure of the same repetition, store and size."""
    lines = []
    for f in sorted((d / "warp").glob("*.txt")) if (d / "warp").is_dir() else []:
        m = re.match(r"(\d+)-(mixed|get)-(\d+)([kmg]?)-(.+)$", f.stem)
        if not m:
            continue
        rep, mode, size, store = int(m[1]), m[2], int(m[3]) << {"": 0, "k": 10, "m": 20, "g": 30}[m[4]], m[5]
        want = "GET" if mode == "get" else "Total"
        text = f.read_text(errors="replace")
        got = re.search(rf"Report: {want}\b.*?\n \* Average: (?:([\d.]+) MiB/s, )?([\d.]+) obj/s", text)
        bench = runs.rows.get((store, "warp", "get.GET" if mode == "get" else "mixed", size, rep))
        lines.append([store, f"{mode} {size_name(size)}", str(rep),
                      got[2] if got else "(no report)", got[1] if got and got[1] else "",
                      fmt(bench["value"]) if bench else "", fmt(bench.get("mib_per_s")) if bench else "",
                      x(float(got[2]) / bench["value"]) if got and bench and bench["value"] else ""])
    head = ["store", "workload", "rep", "warp obj/s", "warp MiB/s", "bench obj/s", "bench MiB/s",
            "warp / bench"]
    return table(head, lines) if lines else ""


def write_compare(d, runs):
    params = json.loads((d / "params.json").read_text()) if (d / "params.json").exists() else {}
    summary = []
    keys = sorted({(k[0], k[1], k[2], k[3]) for k in runs.rows}, key=str)
    for s, b, ph, size in keys:
        vals = list(runs.per_rep(s, b, ph, size, value).values())
        name = ph if size is None else f"{ph} {size_name(size)}"
        row = {"benchmark": b, "backend": s, "phase": name, "unit": next(
            r["unit"] for k, r in runs.rows.items() if k[:4] == (s, b, ph, size)),
            "median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}
        if s != "posix":
            a, o = runs.per_rep(s, b, ph, size, value), runs.per_rep("posix", b, ph, size, value)
            rs = [a[r] / o[r] for r in a if r in o and o[r]]
            if rs:
                row.update(ratio_median=statistics.median(rs), ratio_min=min(rs), ratio_max=max(rs))
        summary.append(row)
    # IO500 rows carry their ratio to the POSIX run of the same repetition.
    for r in runs.all:
        if r["benchmark"] == "io500" and r["backend"] != "posix":
            o = runs.rows.get(("posix", "io500", r["phase"], None, r["iteration"]))
            if o and o.get("value"):
                r["ratio_to_posix"] = r["value"] / o["value"]
    doc = {"schema": "s3hpc-bench/1",
           "run": dict(params, label="peers", benchmark="peers-bench", stores=runs.stores),
           "results": runs.all, "summary": [s for s in summary if s["benchmark"] == "io500"],
           "score_summary": []}
    (d / "compare.json").write_text(json.dumps(doc))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = Path(sys.argv[1])
    runs = Runs(d)
    if not runs.rows:
        sys.exit(f"no results in {d}/runs")
    write_compare(d, runs)
    params = json.loads((d / "params.json").read_text()) if (d / "params.json").exists() else {}
    print(f"Stores: {', '.join(runs.stores)}; {len(runs.reps)} repetitions; "
          f"warp {params.get('duration_seconds', '?')} s, concurrency {params.get('concurrent', '?')}; "
          f"IO500: {params.get('io500_args', '?')}.\n")
    if runs.sizes:
        print("warp get (seed 001's Get table: read from the GET run, write from its prepare step)\n")
        print(warp_get(runs) + "\n")
        print("warp mixed (seed 001's Mixed table, with the per-op request percentiles)\n")
        print(warp_mixed(runs) + "\n")
    values, ratios = io500(runs)
    if values:
        print("IO500 over S3 (IOR and mdtest S3 mappings; POSIX on the same file system)\n")
        print(values + "\n\n" + ratios + "\n")
    g = goals(runs)
    if g:
        print("Speed goals\n")
        print("\n".join(g) + "\n")
    w = real_warp(d, runs)
    if w:
        print("warp itself, beside the bench's warp\n")
        print(w + "\n")


if __name__ == "__main__":
    main()
