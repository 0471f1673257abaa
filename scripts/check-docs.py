#!/usr/bin/env python3
"""Checks of the documentation, run by scripts/test after `mdbook build docs`.

- links: every relative link and image of the built guide (docs/book)
  resolves, anchors included; every relative link of README.md and
  ARCHITECTURE.md names a tracked file.
- compat: docs/src/reference/s3-compatibility.md lists each operation of
  the AWS S3 API (botocore's service model) exactly once, and its status
  agrees with the HTTP server's routes (crates/http/src/service/mod.rs).
- words: no tracked line speaks of numbered work periods or of the folders
  of the machine a figure was measured on.
- figure: README's figure is drawn from README's table.
- packaging: examples/packaging/install.sh stages what a package holds.
- quickstart: each ```sh block of README.md's Quick starts runs (they use the release
  build and fresh temporary directories).

Prints one line per failure and closes with `docs: N passed, M failed`.
"""

import argparse
import gzip
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# One test per check (and per quick-start block), as the closing line of
# scripts/test counts them; each failure is printed.
tests = {}


def check(ok, what):
    test = what.split(":")[0]
    tests.setdefault(test, True)
    if not ok:
        tests[test] = False
        print(f"FAIL {what}", flush=True)


class Links(html.parser.HTMLParser):
    """The links, images and element ids of one HTML page."""

    def __init__(self):
        super().__init__()
        self.refs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        ref = a.get("href") if tag == "a" else a.get("src") if tag == "img" else None
        if ref:
            self.refs.append(ref)


def parse(page, cache={}):
    if page not in cache:
        p = Links()
        p.feed(page.read_text(encoding="utf-8"))
        cache[page] = p
    return cache[page]


def check_links(book):
    # print.html repeats every page; 404.html and toc.html are mdBook's own.
    pages = [p for p in book.rglob("*.html") if p.name not in ("print.html", "404.html", "toc.html")]
    check(len(pages) > 20, f"links: only {len(pages)} pages in {book} (was `mdbook build docs` run?)")
    for page in pages:
        for ref in parse(page).refs:
            u = urllib.parse.urlsplit(ref)
            if u.scheme or ref.startswith("//") or ref.startswith("mailto:"):
                continue
            target = page if not u.path else (page.parent / urllib.parse.unquote(u.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            name = f"links: {page.relative_to(book)} -> {ref}"
            if not target.is_file():
                check(False, f"{name}: no such page")
                continue
            if u.fragment and target.suffix == ".html":
                check(u.fragment in parse(target).ids, f"{name}: no anchor #{u.fragment}")
            else:
                check(True, name)
    for doc in ("README.md", "ARCHITECTURE.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        for ref in re.findall(r"\]\(([^)\s]+)\)", text):
            u = urllib.parse.urlsplit(ref)
            if u.scheme or not u.path:
                continue
            check((ROOT / u.path).exists(), f"links: {doc} -> {ref}: no such file")


def camel(snake):
    return "".join(w[:1].upper() + w[1:] for w in snake.split("_"))


def s3_operations():
    import botocore

    model = Path(botocore.__file__).parent / "data/s3/2006-03-01/service-2.json.gz"
    return set(json.loads(gzip.decompress(model.read_bytes()))["operations"])


# Deprecated operations whose requests are their successors' (same method,
# same sub-resource): the server answers them with the successor's route.
SAME_REQUEST = {
    "GetBucketLifecycle": "GetBucketLifecycleConfiguration",
    "PutBucketLifecycle": "PutBucketLifecycleConfiguration",
    "GetBucketNotification": "GetBucketNotificationConfiguration",
    "PutBucketNotification": "PutBucketNotificationConfiguration",
}


def check_compat():
    table = (ROOT / "docs/src/reference/s3-compatibility.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\|\s*`(\w+)`\s*\|\s*`?(\w+)`?\s*\|\s*(.*?)\s*\|\s*$", table, re.M)
    listed = {}
    for op, status, notes in rows:
        check(op not in listed, f"compat: {op} is listed twice")
        listed[op] = status
        check(status in ("supported", "partial", "refused"), f"compat: {op}: status {status!r}")
        check(status == "supported" or notes, f"compat: {op} is {status} without a reason")
    aws = s3_operations()
    for op in sorted(aws - listed.keys()):
        check(False, f"compat: {op} (an AWS S3 operation) is missing from the table")
    for op in sorted(listed.keys() - aws):
        check(False, f"compat: {op} is not an operation of the AWS S3 API")
    check(len(aws) > 100, f"compat: only {len(aws)} operations in botocore's model")
    routes = (ROOT / "crates/http/src/service/mod.rs").read_text(encoding="utf-8")
    routed = dict(
        (camel(op), module) for module, op in re.findall(r"^\s*(\w+)::(\w+)\(\w+Input\) ->", routes, re.M)
    )
    check(len(routed) > 40, f"compat: only {len(routed)} routes found in service/mod.rs")
    for op, status in listed.items():
        module = routed.get(SAME_REQUEST.get(op, op))
        if module is None or module == "unsupported":
            check(status == "refused", f"compat: {op} is {status}, but the server refuses it")
        else:
            check(status != "refused" or module == "configurations",
                  f"compat: {op} is refused, but {module}.rs serves it")


# Numbered work periods and the measuring machine's folders (written so
# that this line does not match itself).
WORDS = re.compile(
    r"\b(sessions?[ ][0-9]+|round[ ][0-9]+|issue[ ][0-9]+|other[ ](people|engineers)'?s?)\b"
    r"|/wor[k]/|/var/tm[p]/",
    re.I,
)


def check_words():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    bad = 0
    for f in files:
        try:
            text = (ROOT / f).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if WORDS.search(line):
                bad += 1
                check(False, f"words: {f}:{n}: {line.strip()[:100]}")
    check(bad == 0, f"words: {bad} lines")


def check_quickstart():
    """Each block runs from the repository (it calls target/release/s3hpc)
    with TMPDIR a fresh directory, removed afterwards with what the block
    left there for its reader."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Quick starts\n(.*?)(^## |\Z)", text, re.M | re.S)
    blocks = re.findall(r"^```sh\n(.*?)^```", section.group(1) if section else "", re.M | re.S)
    check(len(blocks) >= 3, f"quickstart: {len(blocks)} ```sh blocks in README.md, expected one per reader")
    for i, block in enumerate(blocks, 1):
        with tempfile.TemporaryDirectory(prefix="s3hpc-quickstart-") as tmp:
            env = dict(os.environ, TMPDIR=tmp)
            try:
                r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=ROOT, env=env,
                                   capture_output=True, text=True, timeout=600)
                ok, out = r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
            except subprocess.TimeoutExpired:
                ok, out = False, "timed out after 600 s"
            first = block.strip().splitlines()[0]
            check(ok, f"quickstart block {i}: ({first}) failed:\n{out}")
            if ok:
                print(f"quickstart: block {i} ({first}) ran", flush=True)


def check_figure():
    """The front page's figure is drawn from its table (scripts/readme-figure.py)."""
    r = subprocess.run([sys.executable, ROOT / "scripts/readme-figure.py", "--check"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"figure: {r.stdout.strip()}")


def check_packaging():
    """examples/packaging/install.sh stages the binary, >= 5 man pages that
    man(1) renders, the libs3 drop-in and the systemd files."""
    with tempfile.TemporaryDirectory(prefix="s3hpc-pkg-") as dest:
        r = subprocess.run([ROOT / "examples/packaging/install.sh", f"DESTDIR={dest}"],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"packaging: install.sh failed: {r.stdout}{r.stderr}")
        man = Path(dest, "usr/local/share/man/man1")
        pages = sorted(p.name for p in man.glob("s3hpc*.1.gz")) if man.is_dir() else []
        check(len(pages) >= 5, f"packaging: {len(pages)} man pages staged: {pages}")
        for f in ("usr/local/bin/s3hpc", "usr/local/lib/s3hpc/libs3.so.4",
                  "usr/local/lib/s3hpc/libs3.so.2", "etc/systemd/system/s3hpc.service"):
            check(Path(dest, f).is_file(), f"packaging: {f} not staged")
        if "s3hpc.1.gz" in pages:
            r = subprocess.run(["man", "-l", man / "s3hpc.1.gz"], capture_output=True, text=True,
                               env=dict(os.environ, MANPAGER="cat", MANWIDTH="80"))
            check(r.returncode == 0 and "SUBCOMMANDS" in r.stdout,
                  f"packaging: man -l s3hpc.1.gz: {r.stdout[:300]}{r.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checks", nargs="*", default=["links", "compat", "words", "figure", "packaging", "quickstart"])
    ap.add_argument("--book", default=ROOT / "docs/book", type=Path)
    a = ap.parse_args()
    for c in a.checks:
        {"links": lambda: check_links(a.book), "compat": check_compat, "words": check_words, "figure": check_figure, "packaging": check_packaging,
         "quickstart": check_quickstart}[c]()
    failed = sum(1 for ok in tests.values() if not ok)
    print(f"docs: {len(tests) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
