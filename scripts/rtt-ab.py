#!/usr/bin/env python3
"""Before/after of a change, in one run: two builds of the rtt example
(crates/rpc/examples/rtt.rs) run alternately, and for each op the median
microseconds of each and their ratio. Alternating spreads the noise of a
shared machine over both builds.

    scripts/rtt-ab.py OLD_BINARY NEW_BINARY [--rounds 5] [-- RTT ARGUMENTS]

for example `scripts/rtt-ab.py /tmp/rtt-old target/release/examples/rtt
-- 3000 /dev/shm http`.
"""

import argparse
import statistics
import subprocess
import sys


def run(binary, args):
    """{(measure, op): {column: microseconds}} from one run of the rtt
    example; measure is `wall` or `cpu` (the process's CPU time, which a
    busy machine distorts less)."""
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout
    result, measure, columns = {}, "wall", []
    for line in out.splitlines():
        if "iterations per op" in line:
            measure = "cpu" if "CPU" in line else "wall"
        elif line.startswith("op "):
            columns = line.split()[1:]
        else:
            fields = [f for f in line.split() if not f.startswith("(")]
            if columns and len(fields) == len(columns) + 1:
                result[(measure, fields[0])] = dict(zip(columns, map(float, fields[1:])))
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rounds", type=int, default=5)
    argv = sys.argv[1:]
    rtt_args = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[: len(argv) - len(rtt_args) - (1 if "--" in argv else 0)])
    a.rtt_args = rtt_args
    runs = {"old": [], "new": []}
    for i in range(a.rounds):
        order = ("old", "new") if i % 2 == 0 else ("new", "old")
        for which in order:
            runs[which].append(run(getattr(a, which), a.rtt_args))
            print(f"round {i + 1}/{a.rounds}: {which} done", file=sys.stderr)
    first = runs["old"][0]
    print(f"median of {a.rounds} alternating runs, microseconds per op")
    print(f"{'measure':<8}{'op':<12}{'column':<12}{'old':>10}{'new':>10}{'new/old':>9}")
    both = [op for op in first if all(op in r for r in runs["old"] + runs["new"])]
    for op in both:
        for col in first[op]:
            old = statistics.median(r[op][col] for r in runs["old"])
            new = statistics.median(r[op][col] for r in runs["new"])
            print(f"{op[0]:<8}{op[1]:<12}{col:<12}{old:>10.1f}{new:>10.1f}{new / old:>9.2f}")


if __name__ == "__main__":
    main()
