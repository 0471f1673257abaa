#!/usr/bin/env python3
"""Listing a directory of N objects through `s3hpc serve --http`, against
`find DIR -type f -size -1k` and `ls -f DIR`, and the time from the
server's start to its first answer on that tree.

For each N: makes a bucket directory holding N files of --size bytes (plain
files, as POSIX tools write them: no stored ETag; `--keep` keeps them for
the next run), starts the server on the data root, times its first answer,
lists every key with ListObjectsV2 (pages of 1000) and times each page,
then times `find` and `ls -f` on the same directory, the three in turn
--reps times. Prints one row per N (medians; list/find the median of the
repetitions' ratios):

  N, pages, total, median page, p90 page, find, ls -f, list/find,
  first answer, first page

The listing client is a raw HTTP client with a regex for the keys
(`--client raw`, the server's cost and little of the client's), or boto3's
paginator (`--client boto3`, what a user sees; parsing a page costs it
about 20 ms of Python). The first answer is the time from spawning the server to its answer to
HEAD bucket (start-up: no walk of the tree before it listens); the first
page, to its answer to a ListObjectsV2 of one key of the big directory
right after, which needs one read of the whole directory (`ls -f` is timed
right after it, for the floor). A temporary of a killed
writer (a dead pid of this host) is planted in the directory first; the
script checks the server's background sweep removes it.

With --versions, every key also has versions, planted as the engine keeps
them (the file at the path linked as its newest version in the directory's
`.s3hpc-versions`, and one older version beside it), the bucket's
versioning is enabled, and each repetition also pages through
ListObjectVersions (2N versions): the row then adds its median page and
its ratio to the median ListObjectsV2 page.

  scripts/list-bench.py --root /dev/shm/lb --sizes 100000,1000000
  scripts/list-bench.py --root /dev/shm/lb --sizes 100000,1000000 --versions
  scripts/cluster exec node1 scripts/list-bench.py --root MNT/lb --sizes 100000 --make-only
  scripts/cluster exec node2 scripts/list-bench.py --root MNT/lb --sizes 100000

(the objects made on one node, listed from another).
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import http.client
import multiprocessing
import urllib.parse

BUCKET = "listbench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Version ids as the engine makes them (16 hex digits of inverted time, 4
# of the writer): the current version, and an older one (a greater id).
CURRENT_ID, OLDER_ID = "8" + "0" * 15 + "0001", "9" + "0" * 15 + "0001"
VERSIONS_DIR = ".s3hpc-versions"


def make_range(d, lo, hi, size, versions=False):
    body = b"x" * size
    fd_dir = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    vdir = os.path.join(d, VERSIONS_DIR)
    try:
        for i in range(lo, hi):
            name = f"obj-{i:08d}"
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=fd_dir)
            if body:
                os.write(fd, body)
            os.close(fd)
            if versions:
                os.link(os.path.join(d, name), os.path.join(vdir, f"{name}~{CURRENT_ID}"))
                with open(os.path.join(vdir, f"{name}~{OLDER_ID}"), "wb") as f:
                    f.write(body)
    finally:
        os.close(fd_dir)


def make_tree(root, n, size, jobs=1, versions=False):
    """The bucket directory of N files, made by `jobs` processes at once
    (no fsync: on a FUSE file system each create waits for a server)."""
    d = os.path.join(root, BUCKET, f"d{n}" + ("v" if versions else ""))
    os.makedirs(d, exist_ok=True)
    if versions:
        os.makedirs(os.path.join(d, VERSIONS_DIR), exist_ok=True)
    have = len(os.listdir(d))
    if have >= n:
        return d
    step = -(-n // jobs)
    ranges = [(d, lo, min(lo + step, n), size, versions) for lo in range(0, n, step)]
    if jobs == 1:
        make_range(*ranges[0])
    else:
        with multiprocessing.Pool(jobs) as pool:
            pool.starmap(make_range, ranges)
    return d


def plant_dead_temporary(d):
    """A temporary as a killed writer of this host leaves it."""
    host = "".join(c for c in socket.gethostname() if c.isalnum() or c == "-")[:40]
    # A pid above any pid_max: no such process.
    name = f".obj-dead.s3hpc-tmp-{host}-2147483000-0"
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(b"partial")
    # And older than the sweep's age, for a server on another node.
    old = time.time() - 7 * 3600
    os.utime(path, (old, old))
    return path


def get_page(conn, query, page_times):
    """One listing request of the bucket; its time goes to `page_times`."""
    t = time.perf_counter()
    conn.request("GET", f"/{BUCKET}?{urllib.parse.urlencode(query)}")
    r = conn.getresponse()
    body = r.read()
    page_times.append(time.perf_counter() - t)
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {body[:300]!r}")
    return body


def list_raw(port, prefix, page_times):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    token = None
    keys = 0
    began = shown = time.perf_counter()
    while True:
        q = {"list-type": "2", "prefix": prefix, "max-keys": "1000"}
        if token:
            q["continuation-token"] = token
        body = get_page(conn, q, page_times)
        keys += body.count(b"<Key>")
        if len(page_times) % 100 == 0 or time.perf_counter() - shown > 30:
            # Progress, so that a run cut short still says something (pages
            # may hold fewer than 1000 keys: S3 allows a short truncated one).
            shown = time.perf_counter()
            print(f"  {shown - began:.0f} s: {len(page_times)} pages, {keys} keys, median page "
                  f"{statistics.median(page_times) * 1000:.1f} ms", file=sys.stderr, flush=True)
        m = re.search(rb"<NextContinuationToken>([^<]*)</NextContinuationToken>", body)
        if not m:
            return keys
        token = unescape(m.group(1).decode())


def unescape(text):
    return text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')


def enable_versioning(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = b"<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>"
    conn.request("PUT", f"/{BUCKET}?versioning", body=body)
    r = conn.getresponse()
    if r.status != 200:
        raise RuntimeError(f"PutBucketVersioning: HTTP {r.status}: {r.read()[:300]!r}")
    r.read()


def list_versions_raw(port, prefix, page_times):
    """Pages through ListObjectVersions; returns the versions listed."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    marker = None
    versions = 0
    while True:
        q = {"versions": "", "prefix": prefix, "max-keys": "1000"}
        if marker:
            q["key-marker"], q["version-id-marker"] = marker
        body = get_page(conn, q, page_times)
        versions += body.count(b"<Version>")
        if b"<IsTruncated>true</IsTruncated>" not in body:
            return versions
        key = re.search(rb"<NextKeyMarker>([^<]*)</NextKeyMarker>", body)
        vid = re.search(rb"<NextVersionIdMarker>([^<]*)</NextVersionIdMarker>", body)
        marker = (unescape(key.group(1).decode()), vid.group(1).decode() if vid else "")


def list_boto3(port, prefix, page_times):
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                      config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))
    keys = 0
    t = time.perf_counter()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix,
                                                             PaginationConfig={"PageSize": 1000}):
        now = time.perf_counter()
        page_times.append(now - t)
        t = now
        keys += len(page.get("Contents", []))
    return keys


def first_answer(port, proc, prefix, deadline=600):
    """Seconds from spawning the server until it answers HEAD bucket (it
    is up: no walk of the tree before it listens), and then until it
    answers a one-key listing of the big directory (that needs one read of
    the whole directory, whatever the server: S3's first key is the
    smallest name, and readdir returns names in no order)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            c.request("HEAD", f"/{BUCKET}")
            r = c.getresponse()
            r.read()
            if r.status != 200:
                raise RuntimeError(f"HEAD bucket: HTTP {r.status}")
            up = time.perf_counter() - t0
            c.request("GET", f"/{BUCKET}?list-type=2&max-keys=1&prefix={prefix}")
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                raise RuntimeError(f"HTTP {r.status}: {body[:300]!r}")
            return up, time.perf_counter() - t0
        except OSError:
            pass
        time.sleep(0.005)
    raise RuntimeError("no answer")


def timed(argv, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        # Status 1: a file went while it ran (the planted temporary, which
        # the server's sweep removes meanwhile); the walk went on.
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode not in (0, 1):
            raise RuntimeError(f"{argv}: exit {r.returncode}: {r.stderr[:300]!r}")
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, help="data root (the bucket directory goes in it)")
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated N")
    ap.add_argument("--bin", default="target/release/s3hpc")
    ap.add_argument("--client", choices=["raw", "boto3"], default="raw")
    ap.add_argument("--size", type=int, default=0, help="bytes per file (tmpfs: 0 keeps 1M files in RAM small)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of list, find and ls, in turn (medians)")
    ap.add_argument("--keep", action="store_true", help="keep the trees")
    ap.add_argument("--jobs", type=int, default=1, help="processes making the files")
    ap.add_argument("--versions", action="store_true",
                    help="every key also has an older version; ListObjectVersions is paged too")
    ap.add_argument("--make-only", action="store_true",
                    help="only make the trees (on one node, then run the rest on another)")
    a = ap.parse_args()
    rows = []
    if a.make_only:
        for n in [int(x) for x in a.sizes.split(",")]:
            t = time.perf_counter()
            make_tree(a.root, n, a.size, a.jobs, a.versions)
            print(f"N={n}: made in {time.perf_counter() - t:.1f} s")
        return
    for n in [int(x) for x in a.sizes.split(",")]:
        d = make_tree(a.root, n, a.size, a.jobs, a.versions)
        prefix = os.path.basename(d) + "/"
        tmp = plant_dead_temporary(d)
        port = free_port()
        log = open(os.path.join(a.root, f"serve-{n}.log"), "w+")
        argv = [os.path.abspath(a.bin), "serve", "--data", a.root, "--http", f"127.0.0.1:{port}", "--anonymous"]
        proc = subprocess.Popen(argv, stdout=log, stderr=log)
        try:
            start, first_page = first_answer(port, proc, prefix)
            if a.versions:
                enable_versioning(port)
            first_ls = timed(["ls", "-f", d], 1)
            print(f"N={n}: first answer {start:.3f} s, first page {first_page:.3f} s "
                  f"(ls -f right after: {first_ls:.2f} s)", file=sys.stderr, flush=True)
            # Listing, find and ls in turn, --reps times: the machine's
            # load changes less between neighbours.
            pages, totals, finds, lss, vpages = [], [], [], [], []
            for _ in range(a.reps):
                these = []
                t = time.perf_counter()
                got = (list_raw if a.client == "raw" else list_boto3)(port, prefix, these)
                totals.append(time.perf_counter() - t)
                pages += these
                if got != n:
                    print(f"N={n}: listed {got} keys", file=sys.stderr)
                if a.versions:
                    those = []
                    t = time.perf_counter()
                    got = list_versions_raw(port, prefix, those)
                    vpages += those
                    print(f"N={n}: versions {time.perf_counter() - t:.2f} s ({len(those)} pages, median "
                          f"{statistics.median(those) * 1000:.1f} ms)", file=sys.stderr, flush=True)
                    if got != 2 * n:
                        print(f"N={n}: listed {got} versions, not {2 * n}", file=sys.stderr)
                finds.append(timed(["find", d, "-type", "f", "-size", "-1k"], 1))
                lss.append(timed(["ls", "-f", d], 1))
                print(f"N={n}: list {totals[-1]:.2f} s ({len(these)} pages, median "
                      f"{statistics.median(these) * 1000:.1f} ms, slowest {max(these):.2f} s), "
                      f"find {finds[-1]:.2f} s, "
                      f"ls -f {lss[-1]:.2f} s", file=sys.stderr, flush=True)
            # The sweep in the background removed the planted temporary.
            t0 = time.time()
            while os.path.exists(tmp) and time.time() - t0 < 120:
                time.sleep(0.1)
            swept = not os.path.exists(tmp)
        finally:
            proc.terminate()
            proc.wait()
        log.seek(0)
        sweep_line = [l.strip() for l in log if "stale temporaries removed" in l]
        total, find, ls = (statistics.median(x) for x in (totals, finds, lss))
        pages_sorted = sorted(pages)
        p90 = pages_sorted[int(0.9 * (len(pages_sorted) - 1))]
        ratios = sorted(t / f for t, f in zip(totals, finds))
        rows.append((n, len(pages) // a.reps, total, statistics.median(pages), p90, find, ls,
                     statistics.median(ratios), start, first_page, swept, sweep_line[-1] if sweep_line else "?",
                     ratios, vpages))
        if not a.keep:
            subprocess.run(["rm", "-rf", d], check=True)
    print(f"client {a.client}, {a.bin}")
    print("| N | pages | total s | median page ms | p90 page ms | find s | ls -f s | list/find "
          "| first answer s | first page s | dead temporary swept |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (n, pages, total, med, p90, find, ls, ratio, start, first_page, swept, line, _, _) in rows:
        print(f"| {n} | {pages} | {total:.2f} | {med * 1000:.1f} | {p90 * 1000:.1f} | {find:.2f} "
              f"| {ls:.2f} | {ratio:.2f} | {start:.3f} | {first_page:.3f} | {'yes' if swept else 'NO'} |")
    for r in rows:
        print(f"N={r[0]}: list/find per repetition {' '.join(f'{x:.2f}' for x in r[12])}; {r[11]}")
    if a.versions:
        print("| N | version pages | median version page ms | p90 version page ms | "
              "version page / object page |")
        print("|---|---|---|---|---|")
        for r in rows:
            v = sorted(r[13])
            med = statistics.median(v)
            print(f"| {r[0]} | {len(v) // a.reps} | {med * 1000:.1f} | {v[int(0.9 * (len(v) - 1))] * 1000:.1f} "
                  f"| {med / r[3]:.2f} |")


if __name__ == "__main__":
    main()
