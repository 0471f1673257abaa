#!/usr/bin/env python3
"""The front page's figure, drawn from the front page's own table: README.md's
"In one table" (S3 / POSIX per IO500 phase and file system) as grouped bars
on a log scale, 1.0 (POSIX) marked. Writes docs/src/images/io500-ratios.svg;
scripts/check-docs.py checks that the file is what this script draws, so
the figure and the table cannot disagree.

  scripts/readme-figure.py [--check]
"""

import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs/src/images/io500-ratios.svg"
COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"]


def table():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## In one table", 1)[1].split("\n## ", 1)[0]
    rows = [l for l in section.splitlines() if l.startswith("|") and not l.startswith("|---")]
    head = [c.strip() for c in rows[0].strip("|").split("|")]
    body = []
    for r in rows[1:]:
        cells = [c.strip() for c in r.strip("|").split("|")]
        body.append((cells[0], [float(re.sub(r"[^0-9.]", "", c)) for c in cells[1:]]))
    return head[1:], body


def svg(systems, rows):
    lo, hi = 0.1, 10.0
    left, width, bar, gap, top = 250, 420, 9, 10, 34
    x = lambda v: left + width * (math.log10(max(lo, min(hi, v))) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    group = bar * len(systems) + gap
    height = top + group * len(rows) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 30}" height="{height}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="16" font-weight="bold">S3 / POSIX on the same file system '
           '(log scale; right of 1: S3 faster)</text>']
    for v in (0.1, 0.2, 0.5, 1, 2, 5, 10):
        out.append(f'<line x1="{x(v):.1f}" y1="{top - 6}" x2="{x(v):.1f}" y2="{height - 34}" '
                   f'stroke="{"#333" if v == 1 else "#ddd"}" stroke-width="{2 if v == 1 else 1}"/>')
        out.append(f'<text x="{x(v):.1f}" y="{height - 20}" text-anchor="middle">{v:g}</text>')
    for i, (label, values) in enumerate(rows):
        y0 = top + i * group
        out.append(f'<text x="{left - 8}" y="{y0 + group / 2:.1f}" text-anchor="end" '
                   f'dominant-baseline="middle">{label}</text>')
        for j, v in enumerate(values):
            y = y0 + j * bar
            x0, x1 = sorted((x(1), x(v)))
            out.append(f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 1):.1f}" height="{bar - 1}" '
                       f'fill="{COLOURS[j % len(COLOURS)]}"><title>{systems[j]}: {v:g}</title></rect>')
    for j, name in enumerate(systems):
        lx = left + j * 110
        out.append(f'<rect x="{lx}" y="{height - 12}" width="10" height="10" fill="{COLOURS[j]}"/>')
        out.append(f'<text x="{lx + 14}" y="{height - 3}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    drawn = svg(*table())
    if "--check" in sys.argv:
        ok = OUT.exists() and OUT.read_text(encoding="utf-8") == drawn
        if not ok:
            print(f"{OUT.relative_to(ROOT)} is not README.md's table: run scripts/readme-figure.py")
        sys.exit(0 if ok else 1)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(drawn, encoding="utf-8")


if __name__ == "__main__":
    main()
