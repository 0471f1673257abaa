#!/usr/bin/env python3
"""The comparison table of scripts/peers-http.sh: per IO500 phase, POSIX,
s3hpc's HTTP server, MinIO and versitygw (medians over the repetitions of
each run), s3hpc over the better peer, the same with each server's figure
taken as a ratio to the POSIX run beside it (which takes out how busy the
machine was during each server's run), and whether the target is met on
that (3x on IOR phases, 5x on mdtest and find), as Markdown; then the
median HEAD latency of each server.

    scripts/peers-table.py DIR        # DIR/results-{s3hpc,minio,versitygw}.json
"""

import json
import statistics
import sys
from pathlib import Path

SERVERS = ("s3hpc", "minio", "versitygw")


def load(path):
    doc = json.loads(path.read_text())
    medians, ratios = {}, {}
    for row in doc["summary"] + doc["score_summary"]:
        name = row.get("phase") or row.get("score")
        medians[(row["backend"], name)] = (row["median"], row["unit"])
        if "ratio_median" in row:
            ratios[(row["backend"], name)] = row["ratio_median"]
    # Median of each repetition's p50 latency of the http backend's HEADs.
    heads = [r["latency"]["p50"] for r in doc["results"]
             if r.get("backend") == "http" and r.get("phase") == "mdtest-easy-stat"
             and r.get("latency")]
    return medians, statistics.median(heads) if heads else None, ratios


def target(phase):
    return 3.0 if phase.startswith("ior-") else 5.0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = Path(sys.argv[1])
    runs = {s: load(d / f"results-{s}.json") for s in SERVERS if (d / f"results-{s}.json").exists()}
    if "s3hpc" not in runs:
        sys.exit(f"no {d}/results-s3hpc.json")
    ours = runs["s3hpc"][0]
    phases = [name for (backend, name) in ours if backend == "http"]
    peers = [s for s in SERVERS[1:] if s in runs]
    head = ["phase", "unit", "posix", "s3hpc http"] + peers + [
        "s3hpc / better peer", "same, each / its POSIX", "target"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for phase in phases:
        value, unit = ours[("http", phase)]
        posix = ours.get(("posix", phase), (None, None))[0]
        cells = [phase, unit, f"{posix:.4g}" if posix else "", f"{value:.4g}"]
        peer_values = [runs[p][0].get(("http", phase), (None, None))[0] for p in peers]
        cells += [f"{v:.4g}" if v is not None else "" for v in peer_values]
        best = max((v for v in peer_values if v), default=None)
        our_r = runs["s3hpc"][2].get(("http", phase))
        peer_r = [runs[p][2].get(("http", phase)) for p in peers]
        best_r = max((r for r in peer_r if r), default=None)
        if best and our_r and best_r:
            norm = our_r / best_r
            is_score = phase in ("bandwidth", "iops", "total")
            goal = "" if is_score else f"{target(phase):g}x " + ("met" if norm >= target(phase) else "**not met**")
            cells += [f"{value / best:.1f}x", f"{norm:.1f}x", goal]
        else:
            cells += ["", "", ""]
        print("| " + " | ".join(cells) + " |")
    print()
    for s, (_, head_p50, _) in runs.items():
        if head_p50 is not None:
            print(f"median HEAD latency (mdtest-easy-stat p50), {s}: {head_p50 * 1e6:.0f} us")


if __name__ == "__main__":
    main()
