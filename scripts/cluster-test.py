#!/usr/bin/env python3
"""Cross-node correctness tests of s3hpc on a cluster made by scripts/cluster.

Run by `scripts/cluster test [--quick] [--only NAME,...] [--transports T,...]`.
Every client process runs inside a node (`scripts/cluster exec NODE ...`):
`s3hpc agent` processes (one S3 client each, driven line by line) over
- embedded: the engine inside the agent, one process per node;
- rpc: a gateway per node (`s3hpc serve --rpc tcp:127.0.0.1:PORT`);
- http: an HTTP server per node (`s3hpc serve --http 127.0.0.1:PORT`),
plus raw HTTP requests (http.client) where a test needs headers or timeouts.
Each test prints its counts; the exit status is 1 if any test failed.
"""

import argparse
import hashlib
import http.client
import os
import random
import signal
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUCKET = "xnode"


def log(msg):
    print(msg, flush=True)


class Agent:
    """One `s3hpc agent` in a node."""

    def __init__(self, t, node, target, prefix=()):
        self.node = node
        self.p = subprocess.Popen(
            [t.cluster, "exec", node, *prefix, t.bin, "agent", "--target", target],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        t.procs.append(self.p)
        first = self.p.stdout.readline()
        if not first.startswith("ready"):
            raise RuntimeError(f"agent on {node} ({target}) did not start: {first!r}")

    def call(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline()
        if not out:
            raise RuntimeError(f"agent on {self.node} died during {line!r}")
        return out.split()

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()


class Server:
    """`s3hpc serve` in a node: kind rpc or http."""

    def __init__(self, t, node, kind, port, data, sweep_age=None, listen=None):
        self.t, self.node, self.kind, self.port, self.data = t, node, kind, port, data
        # What it serves, when not the kind's default (the port is HTTP's).
        self.listen = listen
        self.start(sweep_age)

    def start(self, sweep_age=None):
        args = [self.t.cluster, "exec", self.node, self.t.bin, "serve", "--data", self.data]
        if self.listen:
            args += ["--http", f"127.0.0.1:{self.port}", *self.listen]
        elif self.kind == "rpc":
            args += ["--rpc", f"tcp:127.0.0.1:{self.port}"]
        else:
            args += ["--http", f"127.0.0.1:{self.port}", "--anonymous"]
        if sweep_age is not None:
            args += ["--sweep-age", str(sweep_age)]
        self.log = open(os.path.join(self.t.logdir, f"{self.kind}-{self.node}-{self.port}.log"), "a")
        import re
        swept = lambda: re.findall(r"; (\d+) stale temporaries removed", open(self.log.name).read())
        before = len(swept())
        self.p = subprocess.Popen(args, stdout=self.log, stderr=self.log)
        self.t.procs.append(self.p)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                import socket
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                # "...; N stale temporaries removed": what its sweep, in the
                # background once listening, took.
                while len(swept()) == before and time.time() < deadline and self.p.poll() is None:
                    time.sleep(0.1)
                found = swept()
                self.swept = found[-1] if len(found) > before else "?"
                return
            except OSError:
                if self.p.poll() is not None:
                    raise RuntimeError(f"server on {self.node} exited: see {self.log.name}")
                time.sleep(0.1)
        raise RuntimeError(f"server on {self.node} did not listen on {self.port}")

    def target(self):
        return f"s3hpc://127.0.0.1:{self.port}" if self.kind == "rpc" else f"http://127.0.0.1:{self.port}"

    def kill9(self):
        self.p.kill()
        self.p.wait()

    def stop(self, timeout=20):
        """SIGTERM; seconds until it exited, or None if it did not in time."""
        if self.p.poll() is not None:
            return 0.0
        t0 = time.time()
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(timeout=timeout)
            return time.time() - t0
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return None


def body(tag, size):
    unit = (tag + "|").encode()
    return (unit * (size // len(unit) + 1))[:size]


class Tests:
    def __init__(self, a):
        self.cluster = a.cluster
        self.bin = a.bin
        self.quick = a.quick
        self.state = a.state
        self.fs = open(os.path.join(a.state, "fs")).read().strip()
        self.nnodes = int(open(os.path.join(a.state, "nodes")).read())
        self.mount = open(os.path.join(a.state, "mount")).read().strip()
        if self.nnodes < 2:
            sys.exit("cluster test: needs at least 2 nodes")
        self.A, self.B = "node1", "node2"
        self.C = "node3" if self.nnodes >= 3 else "node1"
        self.procs = []
        self.failed = []
        self.fs_faults = []
        self.bail_mark = 0
        self.last_bail = 0.0
        self.results = []
        self.run_id = f"{os.getpid()}-{int(time.time())}"
        self.top = os.path.join(self.mount, f"s3hpc-xnode-{self.run_id}")
        self.logdir = os.path.join(a.state, f"xnode-logs-{self.run_id}")
        os.makedirs(self.logdir, exist_ok=True)
        # Below the ephemeral range: a server's port must not be one an
        # agent's connection to another server holds on 127.0.0.1 (a server
        # on MooseFS once failed to start so).
        self.port = random.randrange(12000, ephemeral_low() - 2000)
        self.only = set(a.only.split(",")) if a.only else None

    def n(self, full, quick):
        return quick if self.quick else full

    def next_port(self):
        self.port += 1
        return self.port

    def bailouts(self):
        """GlusterFS client calls bailed out after the frame timeout so far."""
        import glob
        n = 0
        for f in glob.glob(os.path.join(self.state, "log", "*-client.log")):
            with open(f, "rb") as fh:
                n += fh.read().count(b"call_bail")
        return n

    def await_recovery(self):
        """After a GlusterFS bail-out: wait (up to 60 s) until every node
        writes, reads and removes a file again."""
        t0 = time.time()
        ok_rounds = 0
        while time.time() - t0 < 60 and ok_rounds < 3:
            ok = all(self.in_node(n, "sh", "-c", f"echo x > {self.top}/.probe-{n} && cat {self.top}/.probe-{n} "
                                  f"&& rm {self.top}/.probe-{n}", check=False).returncode == 0
                     for n in sorted({self.A, self.B, self.C}))
            ok_rounds = ok_rounds + 1 if ok else 0
            time.sleep(0.5)
        log(f"  (GlusterFS bail-out: clients usable again after {time.time() - t0:.1f}s)")

    def brick_view(self, rel):
        """GlusterFS: directory `rel` of the data on each brick, its gfid
        and entries, as the bricks hold them (not through a client)."""
        under = os.path.relpath(os.path.join(self.data, rel), self.mount)
        out = []
        for b in sorted(os.listdir(os.path.join(self.state, "bricks"))):
            path = os.path.join(self.state, "bricks", b, under)
            if not os.path.isdir(path):
                out.append(f"{b}: absent")
                continue
            try:
                gfid = os.getxattr(path, "trusted.gfid").hex()
            except OSError as e:
                gfid = f"({e.strerror})"
            out.append(f"{b}: gfid {gfid}, entries {sorted(os.listdir(path))}")
        return "; ".join(out)

    def print_logs(self, lines=60):
        """After a failure: the end of every server's log, and of the file
        system's own client logs (GlusterFS), printed before `scripts/cluster
        down` removes them with the state directory."""
        # Logs only: the directory also holds the users test's credentials.
        logs = sorted(os.path.join(self.logdir, f) for f in os.listdir(self.logdir) if f.endswith(".log"))
        fs_logs = os.path.join(self.state, "log")
        if os.path.isdir(fs_logs):
            logs += sorted(os.path.join(fs_logs, f) for f in os.listdir(fs_logs) if f.endswith("-client.log"))
        for path in logs:
            if os.path.isfile(path):
                log(f"----- {path} (last {lines} lines)")
                for line in tail(path, lines):
                    log("  | " + line.rstrip("\n"))

    def report(self, transport, name, counts, bad, expected_failure=None):
        parts = ", ".join(f"{k} {v}" for k, v in counts.items())
        bailed = self.bailouts() - self.bail_mark if self.fs == "glusterfs" else 0
        if bailed:
            self.last_bail = time.time()
        # The client's connection stays broken for a while after a bail-out:
        # calls then fail with ENOTCONN or EIO.
        aftermath = (self.fs == "glusterfs" and time.time() - self.last_bail < 120
                     and any(m in parts for m in ("Transport endpoint is not connected",
                                                  "Input/output error")))
        if bad and (bailed or aftermath) and not expected_failure:
            bailed = bailed or "earlier"
            # A rename deadlocked in GlusterFS (gluster/glusterfs#3089); the
            # client bailed out after network.frame-timeout and reset its
            # connection, failing the calls in flight: the file system's
            # fault, reported as such and not counted against s3hpc.
            verdict = (f"FS FAULT ({bailed} GlusterFS calls bailed out after the frame timeout: "
                       "rename deadlock, gluster/glusterfs#3089)")
            self.fs_faults.append(f"{transport}/{name}")
        elif bad and expected_failure:
            verdict = f"EXPECTED FAIL ({expected_failure})"
        elif bad:
            verdict = "FAIL"
            self.failed.append(f"{transport}/{name}")
        else:
            verdict = "ok"
        line = f"xnode {self.fs} {transport:8} {name:22} {parts}: {verdict}"
        self.results.append(line)
        log(line)

    def in_node(self, node, *cmd, check=True):
        return subprocess.run([self.cluster, "exec", node, *cmd], check=check,
                              capture_output=True, text=True)

    # ------------------------------------------------------------ setup

    def setup_transport(self, label):
        # packed-KIND: transport KIND on a packed bucket (small objects
        # appended to pack files, `s3hpc bucket pack`).
        kind = label.removeprefix("packed-")
        self.kind, self.label = kind, label
        self.data = os.path.join(self.top, label)
        self.in_node(self.A, "mkdir", "-p", self.data)
        self.servers = {}
        if kind != "embedded":
            for node in sorted({self.A, self.B, self.C}):
                self.servers[node] = Server(self, node, kind, self.next_port(), self.data)
        self.agents = []
        a = self.agent(self.A)
        r = a.call(f"mkb {BUCKET}")
        if r[0] != "ok" and "BucketAlready" not in " ".join(r):
            raise RuntimeError(f"create bucket: {r}")
        if label != kind:
            self.in_node(self.A, self.bin, "bucket", "pack", "--dir", self.data, BUCKET)
            time.sleep(1.2)  # every server looks at a bucket's layout once a second

    def target(self, node):
        if self.kind == "embedded":
            return f"embedded:{self.data}"
        return self.servers[node].target()

    def agent(self, node):
        a = Agent(self, node, self.target(node))
        self.agents.append(a)
        return a

    def teardown_transport(self):
        for a in self.agents:
            a.close()
        for s in self.servers.values():
            s.stop()

    # ------------------------------------------------------------ tests

    def t_read_after_write(self):
        a, b = self.agent(self.A), self.agent(self.B)
        n = self.n(300, 60)
        stale = errors = 0
        for i in range(n):
            key = f"raw/new-{i}"
            tag = f"n{i}"
            r = a.call(f"put {BUCKET} {key} 3901 {tag}")
            if r[0] != "ok":
                errors += 1
                continue
            g = b.call(f"get {BUCKET} {key}")
            h = b.call(f"head {BUCKET} {key}")
            if g[0] != "ok" or g[1] != tag or g[5] != "1" or g[3] != r[1]:
                stale += 1
            elif h[0] != "ok" or h[2] != r[1] or h[1] != "3901":
                stale += 1
        over_stale = 0
        for i in range(n):
            tag = f"o{i}"
            r = a.call(f"put {BUCKET} raw/over 3901 {tag}")
            if r[0] != "ok":
                errors += 1
                continue
            g = b.call(f"get {BUCKET} raw/over")
            h = b.call(f"head {BUCKET} raw/over")
            if g[0] != "ok" or g[1] != tag or g[3] != r[1] or h[0] != "ok" or h[2] != r[1]:
                over_stale += 1
        self.report(self.label, "read-after-write", {"new keys": n, "stale": stale, "overwrites": n,
                                                    "stale overwrites": over_stale, "errors": errors},
                    stale + over_stale + errors)

    def t_delete(self):
        a, b = self.agent(self.A), self.agent(self.B)
        n = self.n(200, 40)
        ghosts = errors = stale = 0
        for i in range(n):
            key = f"del/k{i}"
            if a.call(f"put {BUCKET} {key} 100 d{i}")[0] != "ok":
                errors += 1
                continue
            if b.call(f"get {BUCKET} {key}")[0] != "ok":
                stale += 1
                continue
            a.call(f"del {BUCKET} {key}")
            h = b.call(f"head {BUCKET} {key}")
            g = b.call(f"get {BUCKET} {key}")
            ls = b.call(f"list {BUCKET} del/")
            if h[0] == "ok" or g[0] == "ok" or key in ls[2:]:
                ghosts += 1
            if h[0] != "ok" and h[1] != "NoSuchKey" or g[0] != "ok" and g[1] != "NoSuchKey":
                errors += 1
        self.report(self.label, "delete-then-read", {"trials": n, "ghosts": ghosts,
                                                    "new key not readable on B": stale, "errors": errors},
                    ghosts + errors + stale)

    def t_listing(self):
        a, b = self.agent(self.A), self.agent(self.B)
        n = 500
        keys = [f"ls/k{i:04d}" for i in range(n)]
        errors = 0
        for i, k in enumerate(keys):
            if a.call(f"put {BUCKET} {k} 10 l{i}")[0] != "ok":
                errors += 1
        ls = b.call(f"list {BUCKET} ls/")
        seen = set(ls[2:]) if ls[0] == "ok" else set()
        missing = sum(1 for k in keys if k not in seen)
        # A key PUT on A after B's server cached the directory's listing
        # (its window is trusted once the directory's last change is 1-2 s
        # old, where the file system's stamps are) shows in B's next one.
        unseen = 0
        for i in range(self.n(6, 1)):
            time.sleep(2.1)
            b.call(f"list {BUCKET} ls/")
            b.call(f"list {BUCKET} ls/")
            k = f"ls/k{i * 97 % n:04d}x"
            keys.append(k)
            if a.call(f"put {BUCKET} {k} 10 x{i}")[0] != "ok":
                errors += 1
            ls = b.call(f"list {BUCKET} ls/")
            unseen += ls[0] != "ok" or k not in ls[2:]
        for k in keys:
            if b.call(f"del {BUCKET} {k}")[0] != "ok":
                errors += 1
        ls2 = a.call(f"list {BUCKET} ls/")
        left = int(ls2[1]) if ls2[0] == "ok" else -1
        self.report(self.label, "list-500", {"puts": n, "missing on B": missing,
                                            "put after B's cached listing, missing": unseen,
                                            "left on A after B deleted": left, "errors": errors},
                    missing + unseen + abs(left) + errors)

    def t_concurrent(self):
        secs = self.n(6, 3)
        # A body over a block and one under: a client that keeps small
        # writes in its own buffers until close (MooseFS) served the small
        # one empty when it was renamed in before the close.
        sizes = (128 << 10, 5000)
        stop = time.time() + secs
        # Seed the key so that it always exists.
        self.agent(self.A).call(f"put {BUCKET} cc/k {sizes[0]} seed")
        counts = {"writes": 0, "reads": 0, "torn": 0, "etag mismatch": 0, "missing": 0, "errors": 0}
        lock = threading.Lock()
        first = []

        def writer(node, w):
            ag = self.agent(node)
            i = 0
            while time.time() < stop:
                r = ag.call(f"put {BUCKET} cc/k {sizes[i % 2]} {w}{i}")
                i += 1
                with lock:
                    counts["writes" if r[0] == "ok" else "errors"] += 1
                    if r[0] != "ok":
                        first.append("PUT " + " ".join(r)[:160])

        def reader(node):
            ag = self.agent(node)
            while time.time() < stop:
                g = ag.call(f"get {BUCKET} cc/k")
                with lock:
                    counts["reads"] += 1
                    if g[0] != "ok":
                        counts["missing" if g[1] == "NoSuchKey" else "errors"] += 1
                        first.append("GET " + " ".join(g)[:160])
                    elif g[5] != "1" or int(g[2]) not in sizes:
                        counts["torn"] += 1
                    elif g[4] != "1":
                        counts["etag mismatch"] += 1

        ths = [threading.Thread(target=writer, args=(self.A, "A")),
               threading.Thread(target=writer, args=(self.B, "B")),
               threading.Thread(target=reader, args=(self.A,)),
               threading.Thread(target=reader, args=(self.B,))]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        bad = counts["torn"] + counts["etag mismatch"] + counts["missing"] + counts["errors"]
        if first:
            counts["first failure"] = first[0]
        self.report(self.label, "concurrent-overwrite", counts, bad or counts["reads"] == 0)

    def t_compact(self):
        """A packed bucket compacted on A (the packs a finished writer on A
        left) while B writes new keys and C reads: every key reads as last
        written, during and after, on every node."""
        if self.label != "packed-embedded":
            return  # a plain bucket has no packs; a server's stay open
        n = self.n(300, 120)
        half = n // 2
        want, lock, first = {}, threading.Lock(), []
        a = Agent(self, self.A, self.target(self.A))
        for i in range(n):
            key = f"cp/k{i % half}"
            if a.call(f"put {BUCKET} {key} 3000 a{i}")[0] == "ok":
                want[key] = f"a{i}"
        for i in range(0, half, 5):
            if a.call(f"del {BUCKET} cp/k{i}")[0] == "ok":
                want[f"cp/k{i}"] = None
        a.close()  # its process is gone: its packs are a compaction's
        counts = {"reads": 0, "writes": 0, "wrong": 0, "errors": 0}
        stop = threading.Event()
        seen = []  # after the first wrong read, what was seen

        def check(g, key, tag):
            if tag is None:
                return g[0] == "err" and g[1] == "NoSuchKey"
            return g[0] == "ok" and g[1] == tag and g[5] == "1"

        def writer():
            b, j = self.agent(self.B), 0
            while not stop.is_set():
                key, tag = f"cp/new{j}", f"b{j}"
                r = b.call(f"put {BUCKET} {key} 3000 {tag}")
                with lock:
                    if r[0] == "ok":
                        want[key] = tag
                        counts["writes"] += 1
                    else:
                        counts["errors"] += 1
                        first.append("PUT " + " ".join(r)[:120])
                j += 1

        def reader():
            c, j = self.agent(self.C), 0
            while not stop.is_set():
                with lock:
                    items = list(want.items())
                key, tag = items[j % len(items)]
                j += 7
                g = c.call(f"get {BUCKET} {key}")
                with lock:
                    counts["reads"] += 1
                    wrong = not check(g, key, tag)
                    if wrong:
                        counts["wrong"] += 1
                        first.append(f"GET {key} want {tag}: " + " ".join(g)[:120])
                    diagnose = wrong and counts["wrong"] == 1
                if diagnose:
                    # Whose view is wrong: this process's, or the node's?
                    ls = self.in_node(self.C, "ls", "-la", f"{self.data}/{BUCKET}/.s3hpc-packs",
                                      check=False)
                    fresh = self.agent(self.C).call(f"get {BUCKET} {key}")
                    again = c.call(f"get {BUCKET} {key}")
                    # A's keys are only in packs: none listed means the
                    # process takes the bucket for a plain one.
                    listed = c.call(f"list {BUCKET} cp/k")[:2]
                    seen.append(f"then on C: a new process {' '.join(fresh)[:60]}, the same "
                                f"process {' '.join(again)[:60]}, which lists "
                                f"{' '.join(listed)} keys under cp/k; packs listed on C: "
                                + " | ".join(ls.stdout.split("\n")[1:]))

        ths = [threading.Thread(target=writer), threading.Thread(target=reader)]
        for t in ths:
            t.start()
        try:
            out = self.in_node(self.A, self.bin, "bucket", "compact", "--dir", self.data, BUCKET,
                               "--min-garbage", "0", check=False)
            time.sleep(1)
        finally:
            stop.set()
            for t in ths:
                t.join()
        rewritten = int(out.stdout.split()[0]) if out.returncode == 0 and out.stdout else -1
        c = self.agent(self.C)
        after = sum(0 if check(c.call(f"get {BUCKET} {k}"), k, v) else 1 for k, v in want.items())
        counts.update({"packs rewritten": rewritten, "wrong after": after})
        if first:
            counts["first"] = first[0]
            counts["diagnosis"] = seen[0] if seen else "none"
        if out.returncode:
            counts["compact"] = (out.stderr or out.stdout).strip()[:160]
        self.report(self.label, "compact-while-used", counts,
                    counts["wrong"] + counts["errors"] + after + (rewritten < 1))

    def t_versions(self):
        """One key of a versioned bucket written at once by 21 writers (7
        per node; 9 with --quick) on three nodes: every acknowledged write
        is a version (each read back by its id on another node), exactly
        one is the latest, and it is what a GET reads on every node; a
        DELETE then leaves a marker every node sees. On GlusterFS one
        writer per node: more renames onto one name at once deadlock its
        bricks (gluster/glusterfs#3089, 9 writers did), whatever the
        layout."""
        if self.label not in ("embedded", "http", "rpc"):
            return  # libs3 carries no versions; packed keeps one
        bucket, key = "xversions", "hot"
        a = self.agent(self.A)
        a.call(f"mkb {bucket}")
        setup = a.call(f"versioning {bucket} enabled")
        n, per_node = self.n(10, 4), 1 if self.fs == "glusterfs" else self.n(7, 3)
        acked, lock, first = set(), threading.Lock(), []

        def writer(node, w):
            ag = self.agent(node)
            for i in range(n):
                tag = f"v{node[-1]}w{w}x{i}"
                r = ag.call(f"put {bucket} {key} 3000 {tag}")
                with lock:
                    if r[0] == "ok":
                        acked.add(tag)
                    else:
                        first.append("PUT " + " ".join(r)[:120])

        ths = [threading.Thread(target=writer, args=(nd, w))
               for nd in (self.A, self.B, self.C) for w in range(per_node)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        b, c = self.agent(self.B), self.agent(self.C)
        listed = c.call(f"versions {bucket} {key}")
        ids = listed[2:] if listed[0] == "ok" else []
        latest = [i.rstrip("*") for i in ids if i.endswith("*")]
        read = {}
        for vid in ids:
            g = b.call(f"getv {bucket} {key} {vid.rstrip('*')}")
            if g[0] == "ok" and g[3] == "1":
                read[vid.rstrip("*")] = g[1]
            else:
                first.append(f"GET version {vid}: " + " ".join(g)[:120])
        current = {nd: self.agent(nd).call(f"get {bucket} {key}")[1] for nd in (self.A, self.B, self.C)}
        wrong_current = sum(1 for t in current.values() if not latest or t != read.get(latest[0]))
        ok_delete = a.call(f"del {bucket} {key}")[0] == "ok"
        after = b.call(f"versions {bucket} {key}")
        marker_latest = after[0] == "ok" and len(after) > 2 and after[2].endswith("*!")
        gone = c.call(f"get {bucket} {key}")
        counts = {"acked": len(acked), "versions": len(ids), "latest": len(latest),
                  "read back": len(set(read.values()) & acked),
                  "GETs not the latest": wrong_current,
                  "marker after DELETE": int(ok_delete and marker_latest and gone[1] == "NoSuchKey")}
        if setup[0] != "ok":
            counts["setup"] = " ".join(setup)[:120]
        if first:
            counts["first"] = first[0]
        bad = (setup[0] != "ok" or len(ids) != len(acked) or len(latest) != 1
               or set(read.values()) != acked or wrong_current or not counts["marker after DELETE"]
               or first)
        self.report(self.label, "versions-3-nodes", counts, bad)

    def t_nest(self):
        """A key that becomes a prefix too (PUT p, then p/c) moves into a
        directory of its name; where the file system has no RENAME_EXCHANGE
        (ceph-fuse) it is missing for a moment, and readers on another node
        must wait that out (nested.rs), never answer 404."""
        n = self.n(40, 15)
        a = self.agent(self.A)
        counts = {"nests": 0, "heads": 0, "missing": 0, "errors": 0}
        cur = [-1]
        done = threading.Event()
        first = []

        def reader():
            b = self.agent(self.B)
            while not done.is_set():
                j = cur[0]
                if j < 0:
                    time.sleep(0.001)
                    continue
                h = b.call(f"head {BUCKET} nest/p{j}")
                counts["heads"] += 1
                if h[0] != "ok":
                    counts["missing" if h[1] == "NoSuchKey" else "errors"] += 1
                    first.append(f"HEAD nest/p{j} " + " ".join(h)[:160])

        t = threading.Thread(target=reader)
        t.start()
        try:
            for i in range(n):
                if a.call(f"put {BUCKET} nest/p{i} 100 p{i}")[0] != "ok":
                    counts["errors"] += 1
                    continue
                cur[0] = i
                time.sleep(0.005)  # let B's HEADs run before the nest
                if a.call(f"put {BUCKET} nest/p{i}/c 100 c{i}")[0] != "ok":
                    counts["errors"] += 1
                counts["nests"] += 1
                time.sleep(0.005)
        finally:
            done.set()
            t.join()
        bad = counts["missing"] + counts["errors"]
        if first:
            counts["first failure"] = first[0]
        self.report(self.label, "nest-while-read", counts, bad or counts["heads"] == 0)

    def t_multipart(self):
        """Parts of one upload from three nodes at once; in every other
        upload part 2 is sent again from A afterwards, so that completion
        finds one part in a file of its own (copied into the data file)."""
        a, b, c = self.agent(self.A), self.agent(self.B), self.agent(self.C)
        n = self.n(4, 2)
        bad = 0
        first = []
        sizes = [5 << 20, 5 << 20, 1 << 20]
        for i in range(n):
            key = f"mp/k{i}"
            up = a.call(f"mpc {BUCKET} {key}")
            if up[0] != "ok":
                bad += 1
                first.append("create " + " ".join(up)[:160])
                continue
            uid = up[1]
            tags = [f"p{i}x{pn}" for pn in (1, 2, 3)]
            results = [None] * 3

            def send(j, ag):
                results[j] = ag.call(f"mpp {BUCKET} {key} {uid} {j + 1} {sizes[j]} {tags[j]}")

            threads = [threading.Thread(target=send, args=(j, ag)) for j, ag in enumerate((a, b, c))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if i % 2 == 1 and results[1] and results[1][0] == "ok":
                tags[1] = f"p{i}x2again"
                results[1] = a.call(f"mpp {BUCKET} {key} {uid} 2 {sizes[1]} {tags[1]}")
            failed = [f"part {j + 1}: " + " ".join(r or ["none"])[:160] for j, r in enumerate(results)
                      if not r or r[0] != "ok"]
            if failed:
                bad += 1
                first.extend(failed)
                continue
            parts = ",".join(f"{j + 1}:{r[1]}" for j, r in enumerate(results))
            whole = b"".join(body(t, sz) for t, sz in zip(tags, sizes))
            want = f'"{hashlib.md5(b"".join(hashlib.md5(body(t, sz)).digest() for t, sz in zip(tags, sizes))).hexdigest()}-3"'
            d = c.call(f"mpd {BUCKET} {key} {uid} {parts}")
            g = b.call(f"get {BUCKET} {key}")
            if (d[0] != "ok" or d[1] != want or g[0] != "ok" or g[3] != want
                    or int(g[2]) != len(whole) or g[6] != hashlib.md5(whole).hexdigest()):
                bad += 1
                first.append("complete " + " ".join(d)[:100] + " / get " + " ".join(g)[:100])
        self.report(self.label, "multipart-3-nodes", {"uploads": n, "bad": bad}
                    | ({"first failure": first[0]} if first else {}), bad)

    def t_kill_sweep(self):
        """A writer on A killed mid-upload while B starts and sweeps; a live writer on C."""
        size = 2 << 20
        c_live = self.agent(self.C)
        b = self.agent(self.B)
        if self.kind == "embedded":
            victim = Agent(self, self.A, self.target(self.A))
        else:
            victim = Agent(self, self.A, self.target(self.A))
        live_result = {}

        def live():
            # 32 chunks of 64 KiB, 150 ms apart: about 5 s mid-upload.
            live_result["r"] = c_live.call(f"slowput {BUCKET} ks/live {size} live 150")

        def dead():
            try:
                victim.call(f"slowput {BUCKET} ks/dead {size} dead 150")
            except Exception:
                pass

        tl = threading.Thread(target=live)
        td = threading.Thread(target=dead)
        tl.start()
        td.start()
        time.sleep(1.5)
        partial = 0
        # kill -9 of the writer on A: the agent itself (embedded) or A's server.
        if self.kind == "embedded":
            victim.p.kill()
        else:
            self.servers[self.A].kill9()
        td.join()
        # B starts (and sweeps everything it may).
        if self.kind == "embedded":
            sw = Agent(self, self.B, self.target(self.B))
            swept = sw.call("sweep 0")
            self.agents.append(sw)
        else:
            self.servers[self.B].stop()
            self.servers[self.B].start(sweep_age=0)
            swept = ["ok", self.servers[self.B].swept]
            b = self.agent(self.B)
        for _ in range(10):
            h = b.call(f"head {BUCKET} ks/dead")
            ls = b.call(f"list {BUCKET} ks/")
            if h[0] == "ok" or "ks/dead" in ls[2:] or "ks/live" in ls[2:] and b.call(f"get {BUCKET} ks/live")[5] != "1":
                partial += 1
            time.sleep(0.1)
        tl.join()
        r = live_result.get("r", ["err", "none"])
        g = b.call(f"get {BUCKET} ks/live")
        live_ok = r[0] == "ok" and g[0] == "ok" and g[1] == "live" and g[5] == "1" and g[3] == r[1]
        if self.kind != "embedded":
            self.servers[self.A].start()
        # The dead writer's leftovers: a sweep later (age 0 on B again) takes them.
        if self.kind == "embedded":
            sw2 = self.agent(self.B)
            sw2.call("sweep 0")
        else:
            self.servers[self.B].stop()
            self.servers[self.B].start(sweep_age=0)
        left = self.in_node(self.B, "sh", "-c", f"ls -a {self.data}/{BUCKET}/ks 2>/dev/null | grep -c 's3hpc-tmp' || true").stdout.strip()
        self.report(self.label, "kill9-writer+sweep",
                    {"live writer ok": int(live_ok), "partial visible": partial,
                     "first sweep": swept[1] if swept[0] == "ok" else " ".join(swept),
                     "temporaries left after second sweep": left},
                    (not live_ok) + partial + (left not in ("0", "")))

    def t_dir_handle(self):
        """A directory removed and re-created by B under a handle A has cached."""
        a, b = self.agent(self.A), self.agent(self.B)
        n = self.n(30, 10)
        bad_put = bad_get = 0
        first = ""
        for i in range(n):
            d = f"dh/t{i}/sub"
            a.call(f"put {BUCKET} {d}/x 10 x{i}")
            a.call(f"get {BUCKET} {d}/x")
            # The listing removes the directory the delete emptied, where a
            # delete leaves it (shared file systems), so B makes it again.
            for r in (b.call(f"del {BUCKET} {d}/x"), b.call(f"list {BUCKET} {d}/"),
                      b.call(f"put {BUCKET} {d}/y 10 y{i}")):
                if r[0] != "ok":
                    first = first or "B: " + " ".join(r)
            pz = a.call(f"put {BUCKET} {d}/z 10 z{i}")
            if pz[0] != "ok":
                bad_put += 1
                first = first or " ".join(pz)
            g = a.call(f"get {BUCKET} {d}/y")
            gx = a.call(f"get {BUCKET} {d}/x")
            if g[0] != "ok" or g[1] != f"y{i}" or gx[0] == "ok" or gx[1] != "NoSuchKey":
                bad_get += 1
                first = first or " ".join(g if g[0] != "ok" else gx)
                if self.fs == "glusterfs":
                    # What each brick holds: a directory whose rmdir failed
                    # on one brick (a bail-out) can come back with its old
                    # gfid there and a new one on the other.
                    log(f"  dir-recreated trial {i}: " + self.brick_view(os.path.join(BUCKET, d)))
        self.report(self.label, "dir-recreated", {"trials": n, "bad puts": bad_put, "bad gets": bad_get}
                    | ({"first failure": first[:160]} if first else {}), bad_put + bad_get)

    # -------------------------------------------------- HTTP only

    def http(self, node, method, path, body_=None, headers=None, timeout=20):
        port = self.servers[node].port
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            c.request(method, path, body=body_, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def t_mapped_get(self):
        """GETs of large (mapped) objects on A while B replaces them; then SIGTERM A."""
        size = 1 << 20
        secs = self.n(8, 4)
        b = self.agent(self.B)
        b.call(f"put {BUCKET} big/k {size} big0")
        stop = time.time() + secs
        counts = {"gets": 0, "hung": 0, "torn": 0, "etag mismatch": 0, "errors": 0, "replaces": 0}
        lock = threading.Lock()

        def replacer():
            i = 1
            while time.time() < stop:
                if b.call(f"put {BUCKET} big/k {size} big{i}")[0] == "ok":
                    with lock:
                        counts["replaces"] += 1
                i += 1

        def getter():
            while time.time() < stop:
                try:
                    st, hd, data = self.http(self.A, "GET", f"/{BUCKET}/big/k", timeout=15)
                except TimeoutError:
                    with lock:
                        counts["hung"] += 1
                    continue
                except (OSError, http.client.HTTPException):
                    with lock:
                        counts["errors"] += 1
                    continue
                with lock:
                    counts["gets"] += 1
                    if st != 200:
                        counts["errors"] += 1
                    elif len(data) != size or data != body(data.split(b"|")[0].decode(), size):
                        counts["torn"] += 1
                    elif hd.get("etag", "").strip('"') != hashlib.md5(data).hexdigest():
                        counts["etag mismatch"] += 1

        ths = [threading.Thread(target=replacer)] + [threading.Thread(target=getter) for _ in range(3)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        took = self.servers[self.A].stop(timeout=15)
        counts["SIGTERM exit s"] = "never (killed)" if took is None else f"{took:.1f}"
        self.servers[self.A].start()
        bad = counts["hung"] + counts["torn"] + counts["etag mismatch"] + counts["errors"] + (took is None)
        self.report(self.label, "mapped-get-replaced", counts, bad)

    def t_if_none_match(self):
        """`If-None-Match: *` creates raced from two nodes: exactly one winner."""
        # Does this build implement conditional writes at all?
        self.http(self.A, "PUT", f"/{BUCKET}/inm/probe", b"x")
        st, _, _ = self.http(self.A, "PUT", f"/{BUCKET}/inm/probe", b"y", {"If-None-Match": "*"})
        supported = st == 412
        n = 50
        trials = {"one winner": 0, "two winners": 0, "no winner": 0}
        for i in range(n):
            results = {}
            go = threading.Barrier(2)

            def put(node):
                go.wait()
                try:
                    st, _, _ = self.http(node, "PUT", f"/{BUCKET}/inm/k{i}", body(node, 1000), {"If-None-Match": "*"})
                except Exception:
                    st = 0
                results[node] = st

            ths = [threading.Thread(target=put, args=(nd,)) for nd in (self.A, self.B)]
            for t in ths:
                t.start()
            for t in ths:
                t.join()
            wins = sum(1 for s in results.values() if s == 200)
            losers_ok = all(s in (200, 412) for s in results.values())
            trials["one winner" if wins == 1 and losers_ok else "two winners" if wins == 2 else "no winner"] += 1
        bad = n - trials["one winner"]
        trials["server has conditional writes"] = "yes" if supported else "no"
        self.report(self.label, "if-none-match-race", dict(trials, trials=n), bad,
                    None if supported else "conditional writes are not implemented on this build (branch cond)")

    def t_two_connections(self):
        """The engine's own suite of two engines over one root, in one node
        on the shared volume (crates/store/tests/two_connections.rs)."""
        import glob
        bins = [b for b in glob.glob(os.path.join(REPO, "target/release/deps/two_connections-*"))
                if os.access(b, os.X_OK) and not b.endswith(".d")]
        if not bins:
            log("  (store two-connections suite not built: cargo test -p s3hpc-store --release --no-run)")
            return
        b = max(bins, key=os.path.getmtime)
        d = os.path.join(self.top, "two-connections")
        self.in_node(self.A, "mkdir", "-p", d)
        r = subprocess.run([self.cluster, "exec", self.A, "env", f"S3HPC_TEST_DIR={d}", b, "--test-threads=2"],
                           capture_output=True, text=True, timeout=300)
        passed = sum(1 for l in r.stdout.splitlines() if l.startswith("test ") and l.endswith(" ok"))
        failed = [l.split()[1] for l in r.stdout.splitlines() if l.startswith("test ") and l.endswith("FAILED")]
        # Each panic's place and message, so that a failure says what broke.
        lines = (r.stdout + r.stderr).splitlines()
        for i, l in enumerate(lines):
            if " panicked at " in l:
                log("    " + " | ".join(x.strip() for x in lines[i:i + 4]))
        self.report("engine", "two-connections-1-node", {"passed": passed, "failed": len(failed)}
                    | ({"failing": ",".join(failed)} if failed else {}), len(failed) or r.returncode != 0)

    # -------------------------------------------------- many users

    def t_users(self):
        """S3 users are POSIX users across nodes: user a writes
        through s3hpc on node A; through s3hpc on node B, b (in a's group)
        and c (not) read only what the mode bits give them, over HTTP (a
        key per user) and the RPC Unix socket (each connection acts as
        its peer). Both servers run as root with the users mapped, so what
        refuses is the file system's check as each FUSE client passes the
        caller's ids (`fuse_mount_options` says which check that is)."""
        import pwd
        if os.geteuid() != 0 or subprocess.run(["sh", "-c", "command -v useradd && command -v setpriv"],
                                               capture_output=True).returncode != 0:
            log("  (users: skipped, needs root, useradd and setpriv)")
            return
        tag = f"{os.getpid() % 100000}"
        group, names = f"s3xg{tag}", [f"s3x{tag}{u}" for u in "abc"]
        made, servers, agents = [], [], []
        data = os.path.join(self.top, "users")
        try:
            subprocess.run(["groupadd", group], check=True, capture_output=True)
            made.append(("groupdel", group))
            for i, n in enumerate(names):
                subprocess.run(["useradd", "-M", "-U", "-s", "/usr/sbin/nologin", *(["-G", group] if i < 2 else []), n],
                               check=True, capture_output=True)
                made.insert(0, ("userdel", n))
            ids = [pwd.getpwnam(n) for n in names]
            creds = os.path.join(self.logdir, "users-credentials")
            with open(creds, "w") as f:
                f.write("xadmin xadmin-secret\n")
                for n in names:
                    f.write(f"k{n} s{n}-secret {n}\n")
            # A sticky, world-writable data root, as README says.
            self.in_node(self.A, "mkdir", "-p", data)
            self.in_node(self.A, "chmod", "1777", data)
            socks = {}
            for node in (self.A, self.B):
                socks[node] = os.path.join(self.logdir, f"users-{node}.sock")
                servers.append(Server(self, node, "users", self.next_port(), data,
                                      listen=["--credentials", creds, "--rpc", f"unix:{socks[node]}"]))
                # The users must reach the socket (README: make it reachable).
                deadline = time.time() + 10
                while not os.path.exists(socks[node]) and time.time() < deadline:
                    time.sleep(0.1)
                os.chmod(socks[node], 0o666)
            port = {s.node: s.port for s in servers}

            def as_user(node, kind, u):
                n = names[u]
                if kind == "http":
                    prefix = ["env", f"S3HPC_ACCESS_KEY=k{n}", f"S3HPC_SECRET_KEY=s{n}-secret"]
                    a = Agent(self, node, f"http://127.0.0.1:{port[node]}", prefix)
                else:
                    prefix = ["setpriv", f"--reuid={n}", f"--regid={ids[u].pw_gid}", "--init-groups"]
                    a = Agent(self, node, f"unix:{socks[node]}", prefix)
                agents.append(a)
                return a

            for kind in ("http", "rpc"):
                self.users_case(kind, data, as_user, ids)
        finally:
            for a in agents:
                a.close()
            for s in servers:
                s.stop()
            for cmd in made:
                subprocess.run(list(cmd), capture_output=True)

    def t_keys(self):
        """Users' own keys across nodes: two servers share one --key-store on
        the shared file system; a user makes keys over both nodes' sockets
        at once (all land, every server honours all of them), uses one made
        on A through B's HTTP (what it writes is the user's), and revokes it
        on B: A refuses it within 10 s."""
        import pwd
        import re
        if os.geteuid() != 0 or subprocess.run(["sh", "-c", "command -v useradd && command -v setpriv"],
                                               capture_output=True).returncode != 0:
            log("  (keys: skipped, needs root, useradd and setpriv)")
            return
        user = f"s3xk{os.getpid() % 100000}"
        servers, agents, bad = [], [], []
        data, store = os.path.join(self.top, "keys-data"), os.path.join(self.top, "keys-store")
        try:
            subprocess.run(["useradd", "-M", "-U", "-s", "/usr/sbin/nologin", user], check=True, capture_output=True)
            uid = pwd.getpwnam(user).pw_uid
            self.in_node(self.A, "mkdir", "-p", data)
            self.in_node(self.A, "chmod", "1777", data)
            socks, port = {}, {}
            for node in (self.A, self.B):
                socks[node] = os.path.join(self.logdir, f"keys-{node}.sock")
                srv = Server(self, node, "keys", self.next_port(), data,
                             listen=["--key-store", store, "--rpc", f"unix:{socks[node]}"])
                servers.append(srv)
                port[node] = srv.port
            as_user = ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups"]

            def keys(node, *args):
                return [self.cluster, "exec", node, *as_user, self.bin, "keys", *args, "--socket", socks[node]]

            # Eight keys on each node at once.
            procs = [subprocess.Popen(keys(n, "create"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for n in (self.A, self.B) for _ in range(8)]
            made = []
            for p in procs:
                out, err = p.communicate(timeout=60)
                v = dict(re.findall(r"export (\w+)=(\S+)", out))
                if p.returncode or "AWS_ACCESS_KEY_ID" not in v:
                    bad.append(f"keys create failed: {err.strip()[:120]}")
                else:
                    made.append((v["AWS_ACCESS_KEY_ID"], v["AWS_SECRET_ACCESS_KEY"]))
            listed = self.in_node(self.B, *keys(self.B, "list")[3:], check=False).stdout
            landed = sum(1 for ak, _ in made if ak in listed)
            if landed != 16:
                bad.append(f"{landed} of 16 keys made at once on two nodes are listed")
            # A key made on A, used through B.
            ak, sk = made[0] if made else ("none", "none")
            env = ["env", f"S3HPC_ACCESS_KEY={ak}", f"S3HPC_SECRET_KEY={sk}"]
            t0, r = time.time(), []
            while time.time() - t0 < 10:
                ag = Agent(self, self.B, f"http://127.0.0.1:{port[self.B]}", env)
                agents.append(ag)
                r = ag.call("mkb keysx")
                if r[0] == "ok" or r[1:2] == ["BucketAlreadyOwnedByYou"]:
                    break
                time.sleep(0.5)
            r = agents[-1].call("put keysx k 10 x") if agents else ["err"]
            owner = self.in_node(self.A, "stat", "-c", "%u", os.path.join(data, "keysx", "k"), check=False).stdout.strip()
            if r[0] != "ok" or owner != str(uid):
                bad.append(f"the key made on {self.A} through {self.B}: {' '.join(r)[:80]}, owner {owner!r}")
            # Revoked on B: A refuses it within 10 s.
            rv = subprocess.run(keys(self.B, "revoke", ak), capture_output=True, text=True)
            if rv.returncode:
                bad.append(f"revoke on {self.B}: {rv.stderr.strip()[:120]}")
            t0, refused = time.time(), None
            while time.time() - t0 < 12:
                ag = Agent(self, self.A, f"http://127.0.0.1:{port[self.A]}", env)
                agents.append(ag)
                if ag.call("get keysx k")[0] == "err":
                    refused = time.time() - t0
                    break
                time.sleep(0.5)
            if refused is None or refused > 10:
                bad.append(f"the revoked key still works on {self.A} after {time.time() - t0:.1f} s")
            counts = {"keys made at once": len(made), "listed": landed,
                      "revocation seen on the other node in s": f"{refused:.1f}" if refused is not None else "never"}
            if bad:
                counts["first"] = bad[0]
            self.report("http", "keys-cross-node", counts, len(bad))
        finally:
            for a in agents:
                a.close()
            for srv in servers:
                srv.stop()
            subprocess.run(["userdel", user], capture_output=True)
            subprocess.run(["groupdel", user], capture_output=True)

    def users_case(self, kind, data, as_user, ids):
        priv, grp, pub = (f"{kind}-priv", f"{kind}-grp", f"{kind}-pub")
        a1 = as_user(self.A, kind, 0)
        checks, bad = 0, []

        def expect(what, r, ok):
            nonlocal checks
            checks += 1
            good = r[0] == "ok" if ok else r[:2] == ["err", "AccessDenied"]
            if not good:
                bad.append(f"{what}: {' '.join(r)[:120]}")

        for b in (priv, grp, pub):
            expect(f"a creates {b} on {self.A}", a1.call(f"mkb {b}"), True)
            expect(f"a writes {b}/k on {self.A}", a1.call(f"put {b} k 3901 a-{b}"), True)
        expect(f"a writes {pub}/mine on {self.A}", a1.call(f"put {pub} mine 100 mine"), True)
        # The modes each case needs, as the owner would set them.
        shared = [g for g in os.getgrouplist(ids[0].pw_name, ids[0].pw_gid) if g != ids[0].pw_gid][0]
        for mode, path in (("700", priv), ("750", grp), ("600", f"{pub}/mine")):
            self.in_node(self.A, "chmod", mode, os.path.join(data, path))
        self.in_node(self.A, "chgrp", str(shared), os.path.join(data, grp))
        owner = self.in_node(self.B, "stat", "-c", "%u", os.path.join(data, priv, "k"), check=False).stdout.strip()
        checks += 1
        if owner != str(ids[0].pw_uid):
            bad.append(f"{priv}/k belongs to uid {owner!r}, not a's {ids[0].pw_uid}")
        # Node B: a reads its own (the node and the transport work), b and
        # c only what the bits give them.
        a2, b2, c2 = (as_user(self.B, kind, u) for u in range(3))
        expect(f"a reads {priv}/k on {self.B}", a2.call(f"get {priv} k"), True)
        for who, ag, in_group in (("b", b2, True), ("c", c2, False)):
            at = f"{who} on {self.B}"
            expect(f"{at}: GET {priv}/k", ag.call(f"get {priv} k"), False)
            expect(f"{at}: HEAD {priv}/k", ag.call(f"head {priv} k"), False)
            expect(f"{at}: LIST {priv}", ag.call(f"list {priv} -"), False)
            expect(f"{at}: PUT {priv}/new", ag.call(f"put {priv} new 10 x"), False)
            expect(f"{at}: DELETE {priv}/k", ag.call(f"del {priv} k"), False)
            expect(f"{at}: GET {grp}/k", ag.call(f"get {grp} k"), in_group)
            expect(f"{at}: LIST {grp}", ag.call(f"list {grp} -"), in_group)
            expect(f"{at}: PUT {grp}/new", ag.call(f"put {grp} new 10 x"), False)
            expect(f"{at}: GET {pub}/k", ag.call(f"get {pub} k"), True)
            expect(f"{at}: LIST {pub}", ag.call(f"list {pub} -"), True)
            expect(f"{at}: GET {pub}/mine", ag.call(f"get {pub} mine"), False)
            expect(f"{at}: DELETE {pub}/k", ag.call(f"del {pub} k"), False)
        still = a2.call(f"get {priv} k")
        checks += 1
        if still[0] != "ok" or still[1] != f"a-{priv}":
            bad.append(f"{priv}/k changed: {' '.join(still)[:80]}")
        counts = {"checks": checks, "wrong": len(bad), "fuse": self.fuse_mount_options()}
        if bad:
            counts["first"] = bad[0]
        self.report(kind, "users-cross-node", counts, len(bad))

    def fuse_mount_options(self):
        """The FUSE options of node B's mount that decide who checks
        permissions: default_permissions (the kernel, from the attributes
        the file system returns) or not (the file system's client or
        servers), and allow_other (without it only the mounting user may
        enter at all)."""
        mounts = self.in_node(self.B, "cat", "/proc/self/mounts").stdout.split("\n")
        opts = next((m.split()[3] for m in mounts if len(m.split()) > 3 and m.split()[1] == self.mount), "")
        return "+".join(o for o in opts.split(",") if o in ("default_permissions", "allow_other")) or "neither"

    # ------------------------------------------------------------ run

    def run(self, transports):
        tests = [("read-after-write", self.t_read_after_write), ("delete", self.t_delete),
                 ("listing", self.t_listing), ("concurrent", self.t_concurrent),
                 ("multipart", self.t_multipart), ("dir-handle", self.t_dir_handle),
                 ("kill-sweep", self.t_kill_sweep), ("nest", self.t_nest),
                 ("compact", self.t_compact), ("versions", self.t_versions)]
        http_only = [("mapped-get", self.t_mapped_get), ("if-none-match", self.t_if_none_match)]
        # On a packed bucket: what its records must hold across nodes.
        packed = {"read-after-write", "delete", "listing", "concurrent", "multipart", "compact",
                  "if-none-match"}
        t0 = time.time()
        try:
            if not self.only or "two-connections" in self.only:
                self.t_two_connections()
            # The multi-user tests, each with servers of its own.
            for name, transport, report, fn in (("users", "users", "users-cross-node", self.t_users),
                                                ("keys", "http", "keys-cross-node", self.t_keys)):
                if self.only and name not in self.only:
                    continue
                t1 = time.time()
                try:
                    fn()
                except Exception as e:  # a broken test is a failed one
                    self.report(transport, report, {"exception": repr(e)[:200]}, 1)
                log(f"  ({name}: {time.time() - t1:.1f}s)")
            for kind in transports:
                if self.only and not any(name in self.only for name, _ in tests + http_only):
                    continue
                try:
                    self.setup_transport(kind)
                except Exception as e:  # a transport that did not start fails its tests
                    self.report(kind, "setup", {"exception": repr(e)[:300]}, 1)
                    self.teardown_transport()
                    continue
                try:
                    for name, fn in tests + (http_only if kind.endswith("http") else []):
                        if self.only and name not in self.only:
                            continue
                        if kind.startswith("packed-") and name not in packed:
                            continue
                        t1 = time.time()
                        self.bail_mark = self.bailouts() if self.fs == "glusterfs" else 0
                        try:
                            fn()
                        except Exception as e:  # a broken test is a failed one
                            self.report(kind, name, {"exception": repr(e)[:200]}, 1)
                        log(f"  ({name}: {time.time() - t1:.1f}s)")
                        if self.fs == "glusterfs" and self.bailouts() > self.bail_mark:
                            self.await_recovery()
                finally:
                    self.teardown_transport()
        finally:
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
            subprocess.run([self.cluster, "exec", self.A, "rm", "-rf", self.top], capture_output=True)
        if self.failed or self.fs_faults:
            self.print_logs()
        log(f"xnode {self.fs}: {len(self.results)} tests, {len(self.failed)} failed"
            f"{': ' + ', '.join(self.failed) if self.failed else ''}"
            f"{'; file-system faults (not counted): ' + ', '.join(self.fs_faults) if self.fs_faults else ''}"
            f" ({time.time() - t0:.0f}s; server logs in {self.logdir})")
        return 1 if self.failed else 0


def ephemeral_low():
    """The first port the kernel hands out to outgoing connections."""
    try:
        return int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def tail(path, lines):
    try:
        with open(path, errors="replace") as f:
            return f.readlines()[-lines:]
    except OSError as e:
        return [f"(cannot read: {e})\n"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--state", required=True)
    p.add_argument("--cluster", required=True)
    p.add_argument("--bin", default=os.path.join(REPO, "target/release/s3hpc"))
    p.add_argument("--quick", action="store_true", help="fewer trials (scripts/test)")
    p.add_argument("--only", help="comma-separated test names")
    p.add_argument("--transports", default="embedded,rpc,http,packed-embedded,packed-http",
                   help="embedded, rpc, http, and each as packed-KIND on a packed bucket")
    a = p.parse_args()
    a.cluster = os.path.abspath(a.cluster)
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"cluster test: no {a.bin}: cargo build --release")
    sys.exit(Tests(a).run(a.transports.split(",")))


if __name__ == "__main__":
    main()
