#!/usr/bin/env python3
"""Markdown tables from an `s3hpc bench io500 --json` file (s3hpc-bench/1):
per phase each backend's median value, each S3 backend's median ratio to
POSIX and to embedded (paired per repetition, with their min-max), with the
bench's own flags: `*` invalid in some repetition, `~` repetitions that
disagree by more than the bench's factor. Then the notes that explain the
invalid figures and where the readers ran.

    scripts/bench-tables.py [--meta meta.txt] io500.json > io500.md
"""
import argparse
import json

BASE, IN_PROCESS = "posix", "embedded"


def fmt(v):
    return f"{v:.1f}" if v >= 100 else f"{v:.3f}" if v >= 1 else f"{v:.4f}"


def ratio_cell(row, prefix, invalid):
    if row is None or f"{prefix}median" not in row:
        return "-"
    flag = ("*" if invalid else "") + ("~" if row.get(f"{prefix}unsteady") else "")
    cell = f"{row[f'{prefix}median']:.2f}{flag}"
    if row.get("n", 1) > 1:
        cell += f" ({row[f'{prefix}min']:.2f}-{row[f'{prefix}max']:.2f})"
    return cell


def table(out, rows, key, backends, base, prefix, what):
    """One markdown table: values per backend, then ratios to `base`."""
    others = [b for b in backends if b not in (BASE, base)]
    if base not in backends or not others:
        return
    names = list(dict.fromkeys(r[key] for r in rows))
    find = {(r["backend"], r[key]): r for r in rows}
    head = ["phase", "unit"] + (backends if what == "values" else []) + [f"{b}/{base}" for b in others]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for n in names:
        unit = next(r["unit"] for r in rows if r[key] == n)
        cells = [n, unit]
        if what == "values":
            for b in backends:
                r = find.get((b, n))
                cells.append("-" if r is None else fmt(r["median"]) + ("*" if r.get("invalid") else ""))
        base_invalid = (find.get((base, n)) or {}).get("invalid", 0)
        for b in others:
            r = find.get((b, n))
            cells.append(ratio_cell(r, prefix, (r or {}).get("invalid", 0) + base_invalid))
        out.append("| " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--meta", help="a file of `key: value` lines to quote first")
    a = ap.parse_args()
    doc = json.load(open(a.json))
    run = doc["run"]
    backends = list(dict.fromkeys(r["backend"] for r in doc["summary"]))
    out = []
    if a.meta:
        out += ["```", open(a.meta).read().rstrip(), "```", ""]
    out.append(
        f"{run['ranks']} ranks, stonewall {run['stonewall_seconds']} s, {run['repeat']} repetitions, "
        f"file system {run['filesystem']}, durability {run['durability']}, etag {run['etag']}. "
        "Values are medians; a ratio is the median of the per-repetition ratios (min-max in "
        "parentheses). `*`: invalid in at least one repetition (either side of a ratio), see the "
        "notes; `~`: the repetitions of that ratio differ by more than 1.5x."
    )
    out.append("")
    out.append(f"Against POSIX ({BASE}):")
    out.append("")
    table(out, doc["summary"], "phase", backends, BASE, "ratio_", "values")
    out.append("")
    # Score rows are keyed by `score`; in the tables they follow the phases.
    scores = [dict(r, phase="score " + r["score"]) for r in doc["score_summary"]]
    if IN_PROCESS in backends:
        out.append(f"Transports against the engine in the application ({IN_PROCESS}):")
        out.append("")
        table(out, doc["summary"] + scores, "phase", backends, IN_PROCESS, "ratio_embedded_", "ratios")
        out.append("")
    out.append("Scores:")
    out.append("")
    table(out, scores, "phase", backends, BASE, "ratio_", "values")
    notes = {}
    for r in doc["results"]:
        for n in r.get("notes", []):
            if not r["valid"] or "nodes" in n:
                notes.setdefault(n, set()).add(f"{r['backend']} {r['phase']}" + ("" if r["valid"] else " (invalid)"))
    if notes:
        out += ["", "Notes from the bench:", ""]
        for n, where in notes.items():
            shown = sorted(where)
            more = f" and {len(shown) - 4} more" if len(shown) > 4 else ""
            out.append(f"- {n} ({', '.join(shown[:4])}{more})")
    print("\n".join(out))


if __name__ == "__main__":
    main()
