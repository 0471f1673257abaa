#!/usr/bin/env python3
"""Building blocks of a "packed" bucket layout, timed on a cluster file system.

A packed layout appends small objects to a few large per-writer files and
finds them through an index. On a cluster from `scripts/cluster up` (2
nodes), this times, with N records of 4 KiB (--records, default 200):

1. POSIX baseline on node1: create + write 4 KiB (+ fsync) + close of a new
   file per record.
2. append 4 KiB (+ fsync) to one open file on node1.
3. cross-node read-after-write: node1 appends record i (with fsync, then a
   run without) and sends (offset, length) over loopback TCP to node2, which
   has held the same file open since before the first append and preads
   exactly that range at once; a wrong first read (short, or other bytes)
   is retried: pread again, then fstat + pread, then fstat + pread every ms
   for up to 1 s (60 s in all per run), then close + reopen + pread.
4. node2's tail check with nothing new: pread at the end of the file (0
   bytes), fstat of the open file (writer still open, then closed), stat of
   the directory of the pack files, readdir of a directory of 8 files.
5. fcntl byte-range write lock + unlock (fcntl.lockf, F_SETLKW / F_UNLCK) of
   one range of a shared open file, node1 and node2 alternating (and node1
   alone), plus whether a lock held on one node blocks the other.
6. append 100 B + fsync to a second open file (an index record).

Medians and p99 in microseconds, timed inside the nodes around the calls
alone. On CephFS also, per op, from the daemons' own perf counters (admin
sockets, read before and after each phase): MDS requests (all clients,
mds_server.handle_client_request), MDS requests of the node that ran the
phase (its ceph-fuse's client.reply), cap messages to and from the MDS
(mds.handle_client_caps, handle_client_cap_release, ceph_cap_op_*), and
OSD ops of that node's client (objecter.op).

Workers run in the nodes (`scripts/cluster exec NODE python3 THIS --worker
NODE`), driven line by line over their pipes; node1 and node2 talk over
loopback TCP (the nodes share the network namespace). Run as root:

    scripts/cluster up --fs cephfs --nodes 2    # or glusterfs, moosefs
    python3 scripts/pack-blocks.py [--records 200] [--json FILE]
    scripts/cluster down
"""

import argparse
import glob
import json
import math
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "cluster")
STATE = os.environ.get("S3HPC_CLUSTER_STATE", "/var/lib/s3hpc-cluster")
ns = time.perf_counter_ns


def timed(n, fn, arg):
    """Nanoseconds of each of n calls of fn(arg)."""
    out = []
    for _ in range(n):
        t0 = ns()
        fn(arg)
        out.append(ns() - t0)
    return out


def record(tag, i, size):
    unit = f"{tag}{i:07d}\n".encode()
    return (unit * (size // len(unit) + 1))[:size]


# ------------------------------------------------------------------ worker

class WorkerState:
    def __init__(self):
        self.fds = {}
        self.paths = {}

    def cmd_mkdir(self, paths):
        for p in paths:
            os.makedirs(p, exist_ok=True)
        return {}

    def cmd_touch(self, dir, n):
        for i in range(n):
            with open(os.path.join(dir, f"f{i}"), "wb") as f:
                f.write(b"x")
        return {}

    def cmd_create_files(self, dir, n, size, fsync, tag):
        out = []
        for i in range(n):
            data = record(tag, i, size)
            t0 = ns()
            fd = os.open(os.path.join(dir, f"o{i}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            w = os.write(fd, data)
            if fsync:
                os.fsync(fd)
            os.close(fd)
            out.append(ns() - t0)
            assert w == size
        return {"ns": out}

    def cmd_open(self, key, path, mode):
        flags = {"w": os.O_WRONLY | os.O_CREAT | os.O_APPEND, "r": os.O_RDONLY,
                 "rw": os.O_RDWR | os.O_CREAT}[mode]
        self.fds[key] = os.open(path, flags, 0o644)
        self.paths[key] = (path, flags)
        return {}

    def cmd_close(self, key):
        os.close(self.fds.pop(key))
        return {}

    def cmd_append(self, key, n, size, fsync, tag):
        fd, out = self.fds[key], []
        for i in range(n):
            data = record(tag, i, size)
            t0 = ns()
            w = os.write(fd, data)
            if fsync:
                os.fsync(fd)
            out.append(ns() - t0)
            assert w == size
        return {"ns": out}

    def cmd_fsync(self, key):
        os.fsync(self.fds[key])
        return {}

    def cmd_raw_writer(self, key, n, size, fsync, tag, port):
        fd, write_ns, rtt_ns = self.fds[key], [], []
        off = os.fstat(fd).st_size
        s = socket.create_connection(("127.0.0.1", port), timeout=120)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        f = s.makefile("rwb")
        for i in range(n):
            data = record(tag, i, size)
            t0 = ns()
            w = os.write(fd, data)
            if fsync:
                os.fsync(fd)
            t1 = ns()
            assert w == size
            f.write(f"{i} {off} {size}\n".encode())
            f.flush()
            if f.readline().strip() != b"ok":
                raise RuntimeError("reader did not acknowledge")
            rtt_ns.append(ns() - t1)
            write_ns.append(t1 - t0)
            off += size
        f.write(b"end\n")
        f.flush()
        s.close()
        return {"ns": write_ns, "handoff_ns": rtt_ns}

    def cmd_raw_reader(self, key, n, tag, poll_s, poll_budget_s):
        fd = self.fds[key]
        path, _ = self.paths[key]
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        ls.listen(1)
        ls.settimeout(120)
        print(json.dumps({"port": ls.getsockname()[1]}), flush=True)
        s, _ = ls.accept()
        ls.close()
        s.settimeout(120)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        f = s.makefile("rwb")
        first_ns, bad, fixed, visible_ns = [], {}, {}, []
        polled = 0
        for _ in range(n):
            line = f.readline().split()
            i, off, ln = int(line[0]), int(line[1]), int(line[2])
            want = record(tag, i, ln)
            t0 = ns()
            b = os.pread(fd, ln, off)
            first_ns.append(ns() - t0)
            if b != want:
                kind = "empty" if not b else ("short" if len(b) < ln else "other bytes")
                bad[kind] = bad.get(kind, 0) + 1
                how = None
                if os.pread(fd, ln, off) == want:
                    how = "pread again"
                if not how:
                    os.fstat(fd)
                    if os.pread(fd, ln, off) == want:
                        how = "fstat + pread"
                if not how and polled < poll_budget_s * 1e9:
                    p0 = ns()
                    while ns() - p0 < poll_s * 1e9:
                        time.sleep(0.001)
                        os.fstat(fd)
                        if os.pread(fd, ln, off) == want:
                            how = "polling fstat + pread"
                            break
                    polled += ns() - p0
                if not how:
                    fd2 = os.open(path, os.O_RDONLY)
                    if os.pread(fd2, ln, off) == want:
                        how = "close + reopen"
                    os.close(fd2)
                how = how or "not fixed"
                fixed[how] = fixed.get(how, 0) + 1
                visible_ns.append(ns() - t0)
            f.write(b"ok\n")
            f.flush()
        assert f.readline().strip() == b"end"
        s.close()
        return {"ns": first_ns, "bad": bad, "fixed": fixed, "late_visible_ns": visible_ns}

    def cmd_check_visible(self, key, n, size, tag):
        """Records 0..n-1 of `tag` readable now through the open fd: before
        and after an fstat, then through a new open."""
        fd = self.fds[key]
        path, _ = self.paths[key]
        count = lambda d: sum(os.pread(d, size, i * size) == record(tag, i, size) for i in range(n))
        out = {"open_fd": count(fd)}
        os.fstat(fd)
        out["after_fstat"] = count(fd)
        fd2 = os.open(path, os.O_RDONLY)
        out["reopened"] = count(fd2)
        os.close(fd2)
        return out

    def cmd_pread_end(self, key, n, size):
        fd = self.fds[key]
        off = os.fstat(fd).st_size
        out, nonempty = [], 0
        for _ in range(n):
            t0 = ns()
            b = os.pread(fd, size, off)
            out.append(ns() - t0)
            nonempty += bool(b)
        return {"ns": out, "nonempty": nonempty, "offset": off}

    def cmd_fstat(self, key, n):
        return {"ns": timed(n, os.fstat, self.fds[key])}

    def cmd_stat(self, path, n):
        return {"ns": timed(n, os.stat, path)}

    def cmd_listdir(self, path, n):
        out, sizes = [], set()
        for _ in range(n):
            t0 = ns()
            names = os.listdir(path)
            out.append(ns() - t0)
            sizes.add(len(names))
        return {"ns": out, "entries": sorted(sizes)}

    def cmd_lock(self, key, start, length, k):
        import fcntl
        fd, lock_ns, unlock_ns = self.fds[key], [], []
        for _ in range(k):
            t0 = ns()
            fcntl.lockf(fd, fcntl.LOCK_EX, length, start)
            t1 = ns()
            fcntl.lockf(fd, fcntl.LOCK_UN, length, start)
            t2 = ns()
            lock_ns.append(t1 - t0)
            unlock_ns.append(t2 - t1)
        return {"ns": [a + b for a, b in zip(lock_ns, unlock_ns)], "lock_ns": lock_ns, "unlock_ns": unlock_ns}

    def cmd_lock_hold(self, key, start, length):
        import fcntl
        fcntl.lockf(self.fds[key], fcntl.LOCK_EX, length, start)
        return {}

    def cmd_unlock(self, key, start, length):
        import fcntl
        fcntl.lockf(self.fds[key], fcntl.LOCK_UN, length, start)
        return {}

    def cmd_try_lock(self, key, start, length):
        import fcntl
        try:
            fcntl.lockf(self.fds[key], fcntl.LOCK_EX | fcntl.LOCK_NB, length, start)
        except OSError:
            return {"got": False}
        fcntl.lockf(self.fds[key], fcntl.LOCK_UN, length, start)
        return {"got": True}

    def cmd_rmtree(self, path):
        import shutil
        shutil.rmtree(path, ignore_errors=True)
        return {}


def worker(limit_s):
    # Bounded whatever happens to the coordinator.
    signal.alarm(limit_s)
    st = WorkerState()
    print(json.dumps({"ready": socket.gethostname()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        op = req.pop("op")
        try:
            res = getattr(st, "cmd_" + op)(**req)
        except Exception as e:  # reported to the coordinator, which stops
            res = {"error": f"{op}: {e!r}"}
        print(json.dumps(res), flush=True)


# ------------------------------------------------------------- coordinator

class Worker:
    def __init__(self, node, limit_s):
        self.node = node
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(
            [CLUSTER, "exec", node, "python3", os.path.abspath(__file__), "--worker", str(limit_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, bufsize=0)
        self.buf = b""
        hello = self.recv(60)
        if hello.get("ready") != node:
            raise RuntimeError(f"worker on {node}: {hello}")

    def send(self, op, **kw):
        self.p.stdin.write((json.dumps({"op": op, **kw}) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, timeout=300):
        deadline = time.time() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise RuntimeError(f"worker on {self.node}: no answer within {timeout} s")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    self.err.seek(0)
                    raise RuntimeError(f"worker on {self.node} exited: {self.err.read().decode()[-2000:]}")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        res = json.loads(line)
        if "error" in res:
            raise RuntimeError(f"worker on {self.node}: {res['error']}")
        return res

    def call(self, op, timeout=300, **kw):
        self.send(op, **kw)
        return self.recv(timeout)

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


class CephCounters:
    """Perf counters through the daemons' admin sockets."""

    def __init__(self):
        run = os.path.join(STATE, "ceph", "run")
        self.mds = os.path.join(run, "mds.a.asok")
        self.clients = {}
        for node in ("node1", "node2"):
            found = glob.glob(os.path.join(run, f"client.fuse-{node}.*.asok"))
            if len(found) != 1:
                raise RuntimeError(f"admin socket of {node}'s ceph-fuse: found {found}")
            self.clients[node] = found[0]

    @staticmethod
    def dump(sock):
        out = subprocess.run(["ceph", "--admin-daemon", sock, "perf", "dump"],
                             check=True, capture_output=True, text=True, timeout=60).stdout
        return json.loads(out)

    def snap(self):
        m = self.dump(self.mds)
        s = {"mds_req": m["mds_server"]["handle_client_request"],
             "caps": sum(m["mds"][k] for k in ("handle_client_caps", "handle_client_cap_release",
                                               "ceph_cap_op_revoke", "ceph_cap_op_grant",
                                               "ceph_cap_op_trunc", "ceph_cap_op_flush_ack"))}
        for k, v in m["mds_server"].items():
            if k.startswith("req_") and isinstance(v, dict):
                s["req:" + k[4:].replace("_latency", "")] = v["avgcount"]
        for node, sock in self.clients.items():
            c = self.dump(sock)
            s[f"{node}_req"] = c["client"]["reply"]["avgcount"]
            s[f"{node}_osd"] = c["objecter"]["op"]
        return s


def pct(xs, q):
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]


class Run:
    def __init__(self, args):
        self.args = args
        self.fs = open(os.path.join(STATE, "fs")).read().strip()
        self.mount = open(os.path.join(STATE, "mount")).read().strip()
        self.top = os.path.join(self.mount, f"pack-blocks-{os.getpid()}")
        self.ceph = CephCounters() if self.fs == "cephfs" else None
        self.rows = []
        self.notes = []

    def measure(self, name, node, ops, fn):
        """Runs fn() between two counter snapshots; a row per result."""
        before = self.ceph.snap() if self.ceph else None
        res = fn()
        after = self.ceph.snap() if self.ceph else None
        d = {k: after[k] - before.get(k, 0) for k in after} if self.ceph else {}
        row = {"phase": name, "node": node, "ops": ops, "res": res, "counters": d}
        if res and "ns" in res:
            us = [x / 1000 for x in res["ns"]]
            row["median_us"] = pct(us, 0.5)
            row["p99_us"] = pct(us, 0.99)
        self.rows.append(row)
        print(f"  {name} ({node}): " + (f"median {row['median_us']:.0f} us, p99 {row['p99_us']:.0f} us"
                                       if "median_us" in row else "done")
              + (f", MDS req/op {d['mds_req'] / ops:.2f}" if d else ""), file=sys.stderr, flush=True)
        return row

    def go(self, w1, w2):
        a, n, top = self.args, self.args.records, self.top
        K = 4096
        w1.call("mkdir", paths=[top, f"{top}/files-fsync", f"{top}/files-nofsync", f"{top}/packs", f"{top}/dir8"])
        w1.call("touch", dir=f"{top}/dir8", n=8)
        w2.call("stat", path=f"{top}/packs", n=1)
        # An idle interval: what the counters move by when nothing runs.
        self.measure("idle 2 s (counter noise, per 2 s)", "-", 1, lambda: time.sleep(2))

        # 1. POSIX baseline.
        self.measure("1 create+write 4 KiB+fsync+close, new file", "node1", n,
                     lambda: w1.call("create_files", dir=f"{top}/files-fsync", n=n, size=K, fsync=True, tag="a"))
        self.measure("1 create+write 4 KiB+close, new file (no fsync)", "node1", n,
                     lambda: w1.call("create_files", dir=f"{top}/files-nofsync", n=n, size=K, fsync=False, tag="b"))

        # 2. Appends to one open file, no reader elsewhere.
        w1.call("open", key="p2", path=f"{top}/packs/local", mode="w")
        self.measure("2 append 4 KiB+fsync, one open file", "node1", n,
                     lambda: w1.call("append", key="p2", n=n, size=K, fsync=True, tag="c"))
        self.measure("2 append 4 KiB (no fsync), one open file", "node1", n,
                     lambda: w1.call("append", key="p2", n=n, size=K, fsync=False, tag="d"))
        w1.call("close", key="p2")

        # 3. Cross-node read-after-write: node2 holds the file open from the start.
        for key, fsync, tag in (("p3f", True, "e"), ("p3n", False, "f")):
            path = f"{top}/packs/{key}"
            w1.call("open", key=key, path=path, mode="w")
            w2.call("open", key=key, path=path, mode="r")
            label = "+fsync" if fsync else " (no fsync)"
            before = self.ceph.snap() if self.ceph else None
            w2.send("raw_reader", key=key, n=n, tag=tag, poll_s=1.0, poll_budget_s=60)
            port = w2.recv(60)["port"]
            wres = w1.call("raw_writer", key=key, n=n, size=K, fsync=fsync, tag=tag, port=port, timeout=600)
            rres = w2.recv(600)
            after = self.ceph.snap() if self.ceph else None
            d = {k: after[k] - before.get(k, 0) for k in after} if self.ceph else {}
            for name, node, res in ((f"3 node1 append 4 KiB{label}, node2 has it open", "node1", wres),
                                    (f"3 node2 pread of node1's record{'' if fsync else ' (no fsync)'}, first try",
                                     "node2", rres)):
                us = [x / 1000 for x in res["ns"]]
                self.rows.append({"phase": name, "node": node, "ops": n, "res": res, "counters": d,
                                  "median_us": pct(us, 0.5), "p99_us": pct(us, 0.99), "shared_counters": True})
                print(f"  {name}: median {pct(us, 0.5):.0f} us; bad first reads {res.get('bad')}, "
                      f"fixed by {res.get('fixed')}", file=sys.stderr, flush=True)
            hand = [x / 1000 for x in wres["handoff_ns"]]
            self.notes.append(f"3{label}: node1's send-to-ack round trip (node2's checks included) "
                              f"median {pct(hand, 0.5):.0f} us, p99 {pct(hand, 0.99):.0f} us")
            if not fsync:
                # Still missing on node2 at the end? Then after node1's fsync, and after its close.
                v = w2.call("check_visible", key=key, n=n, size=K, tag=tag)
                self.notes.append(f"3 (no fsync): after the run, node2 saw {v['open_fd']}/{n} records through its "
                                  f"open fd, {v['after_fstat']}/{n} after an fstat, {v['reopened']}/{n} after a reopen")
                if min(v.values()) < n:
                    w1.call("fsync", key=key)
                    v = w2.call("check_visible", key=key, n=n, size=K, tag=tag)
                    self.notes.append(f"3 (no fsync): after node1 then fsynced, node2 saw {v['open_fd']}/{n} "
                                      f"through its open fd, {v['after_fstat']}/{n} after an fstat, "
                                      f"{v['reopened']}/{n} after a reopen")
        # 4. Tail checks on node2 with nothing new written (node1 still has p3f open).
        self.measure("4 pread at end of file (0 B), writer open on node1", "node2", n,
                     lambda: w2.call("pread_end", key="p3f", n=n, size=K))
        self.measure("4 fstat of the open file, writer open on node1", "node2", n,
                     lambda: w2.call("fstat", key="p3f", n=n))
        w1.call("close", key="p3f")
        w1.call("close", key="p3n")
        self.measure("4 pread at end of file (0 B), writer closed", "node2", n,
                     lambda: w2.call("pread_end", key="p3f", n=n, size=K))
        self.measure("4 fstat of the open file, writer closed", "node2", n,
                     lambda: w2.call("fstat", key="p3f", n=n))
        self.measure("4 stat of the packs' directory", "node2", n,
                     lambda: w2.call("stat", path=f"{top}/packs", n=n))
        self.measure("4 readdir of a directory of 8 files", "node2", n,
                     lambda: w2.call("listdir", path=f"{top}/dir8", n=n))
        w2.call("close", key="p3f")
        w2.call("close", key="p3n")

        # 5. fcntl byte-range locks on one shared open file.
        lk = f"{top}/packs/lockfile"
        w1.call("open", key="lk", path=lk, mode="rw")
        w2.call("open", key="lk", path=lk, mode="rw")
        w1.call("lock_hold", key="lk", start=0, length=K)
        blocked = not w2.call("try_lock", key="lk", start=0, length=K)["got"]
        w1.call("unlock", key="lk", start=0, length=K)
        free = w2.call("try_lock", key="lk", start=0, length=K)["got"]
        self.notes.append(f"5: a lock held on node1 {'blocked' if blocked else 'did NOT block'} node2's "
                          f"F_SETLK of the same range; after node1's unlock node2 "
                          f"{'got' if free else 'did NOT get'} it")

        def alternate():
            out = {"ns": [], "node1_ns": [], "node2_ns": []}
            for _ in range(n):
                for w in (w1, w2):
                    r = w.call("lock", key="lk", start=0, length=K, k=1)
                    out["ns"] += r["ns"]
                    out[w.node + "_ns"] += r["ns"]
            return out
        row = self.measure("5 lock+unlock, node1 and node2 alternating (per pair)", "both", 2 * n, alternate)
        for node in ("node1", "node2"):
            us = [x / 1000 for x in row["res"][node + "_ns"]]
            self.notes.append(f"5 alternating, {node}'s lock+unlock: median {pct(us, 0.5):.0f} us, "
                              f"p99 {pct(us, 0.99):.0f} us")
        self.measure("5 lock+unlock, node1 alone (node2 has the file open)", "node1", n,
                     lambda: w1.call("lock", key="lk", start=0, length=K, k=n))
        w1.call("close", key="lk")
        w2.call("close", key="lk")

        # 6. An index record: 100 B appended + fsync to a second open file.
        w1.call("open", key="pk", path=f"{top}/packs/pack6", mode="w")
        w1.call("open", key="ix", path=f"{top}/packs/index6", mode="w")
        self.measure("6 append 100 B+fsync to a second open file (index)", "node1", n,
                     lambda: w1.call("append", key="ix", n=n, size=100, fsync=True, tag="g"))
        w1.call("close", key="pk")
        w1.call("close", key="ix")

    def table(self):
        n = self.args.records
        out = [f"### {self.fs} (2 nodes, {n} records; µs)", ""]
        if self.ceph:
            out.append("| phase | node | median µs | p99 µs | MDS req/op (all) | MDS req/op (this node) "
                       "| cap msgs/op | OSD ops/op (this node) | notes |")
            out.append("|---|---|---|---|---|---|---|---|---|")
        else:
            out.append("| phase | node | median µs | p99 µs | notes |")
            out.append("|---|---|---|---|---|")
        for r in self.rows:
            res, d, ops = r["res"] or {}, r["counters"], r["ops"]
            notes = []
            if "bad" in res:
                nb = sum(res["bad"].values())
                notes.append(f"bad first reads {nb}/{ops}" + (f" ({', '.join(f'{k} {v}' for k, v in res['bad'].items())};"
                                                              f" fixed by {', '.join(f'{k} {v}' for k, v in res['fixed'].items())})"
                                                              if nb else ""))
                if res["late_visible_ns"]:
                    lv = [x / 1000 for x in res["late_visible_ns"]]
                    notes.append(f"time to a good read median {pct(lv, 0.5):.0f} µs, max {max(lv):.0f} µs")
            if "nonempty" in res and res["nonempty"]:
                notes.append(f"{res['nonempty']} reads returned data")
            if "entries" in res:
                notes.append(f"entries seen {res['entries']}")
            if r.get("shared_counters"):
                notes.append("counters: node1's appends and node2's reads together")
            if d:
                kinds = {k[4:]: v for k, v in d.items() if k.startswith("req:") and v}
                if kinds:
                    notes.append("MDS requests: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
            med = f"{r['median_us']:.0f}" if "median_us" in r else ""
            p99 = f"{r['p99_us']:.0f}" if "p99_us" in r else ""
            if self.ceph:
                node = r["node"] if r["node"] in ("node1", "node2") else None
                if r["node"] == "both":
                    mine = f"{(d['node1_req'] + d['node2_req']) / ops:.2f}"
                    osd = f"{(d['node1_osd'] + d['node2_osd']) / ops:.2f}"
                elif node:
                    mine, osd = f"{d[node + '_req'] / ops:.2f}", f"{d[node + '_osd'] / ops:.2f}"
                else:
                    mine = f"{d['node1_req']}+{d['node2_req']}"
                    osd = f"{d['node1_osd']}+{d['node2_osd']}"
                out.append(f"| {r['phase']} | {r['node']} | {med} | {p99} | {d['mds_req'] / ops:.2f} | {mine} "
                           f"| {d['caps'] / ops:.2f} | {osd} | {'; '.join(notes)} |")
            else:
                out.append(f"| {r['phase']} | {r['node']} | {med} | {p99} | {'; '.join(notes)} |")
        out.append("")
        out += [f"- {x}" for x in self.notes]
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--json", help="write every row (with the raw timings) here")
    ap.add_argument("--worker", type=int, metavar="LIMIT_S", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    if not os.path.exists(os.path.join(STATE, "fs")):
        sys.exit("pack-blocks: no cluster is up (scripts/cluster up --fs cephfs --nodes 2)")
    if int(open(os.path.join(STATE, "nodes")).read()) < 2:
        sys.exit("pack-blocks: needs 2 nodes (scripts/cluster up --nodes 2)")
    run = Run(args)
    t0 = time.time()
    print(f"pack-blocks: {run.fs}, {args.records} records, in {run.top}", file=sys.stderr, flush=True)
    ws = []
    try:
        ws.append(Worker("node1", 1200))
        ws.append(Worker("node2", 1200))
        run.go(*ws)
    finally:
        try:
            if ws:
                ws[0].call("rmtree", path=run.top, timeout=120)
        except Exception as e:
            print(f"pack-blocks: cleanup of {run.top} failed: {e}", file=sys.stderr)
        for w in ws:
            w.close()
    run.notes.append(f"run took {time.time() - t0:.0f} s")
    print(run.table())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"fs": run.fs, "records": args.records, "rows": run.rows, "notes": run.notes}, f)


if __name__ == "__main__":
    main()
