#!/usr/bin/env python3
"""The file system's own floor under ior-easy's S3 mapping, across nodes,
without s3hpc.

IOR's S3 mapping writes every transfer of ior-easy (2 MiB) as an object of
its own; POSIX's ior-easy writes them one after another into a file per
rank. One writer at a time the two cost about the same on a FUSE client
that buffers writes (`scripts/put-calls.py`); with ranks on several nodes
at once the per-object requests queue at the metadata server. This runs,
with plain system calls and ranks on every node at once, the work each
side asks of the file system, so s3hpc's ior-easy-write ratio can be
judged against what the file system allows rather than against 1:

    posix   one file per rank, the transfers written one after another,
            closed at the end (fsynced first with --fsync: IOR's -e)
    atomic  per transfer, in one directory shared by all ranks (a bucket):
            open(O_CREAT|O_EXCL) of a named temporary, write, (fdatasync),
            close, rename onto the key, (fsync of the directory): the least
            an atomic PUT of a new object can do where there is no
            O_TMPFILE (ceph-fuse, GlusterFS, MooseFS)
    append  (with --append) each transfer behind a 100-byte header,
            appended to one open file per rank (a packed bucket's record:
            its data lands off the page boundaries POSIX's writes keep)

Each mode runs on all nodes at once from a common start time, for
--seconds or until each rank has written --cap bytes, the modes
alternating their order over --repeat rounds, with everything removed
between runs. Prints GiB/s of each run and the ratios to posix of each
round: atomic/posix is the best ior-easy-write over S3 / POSIX that the
file system allows under IOR's mapping with a plain layout.

Run as root beside a cluster from `scripts/cluster up`:

    scripts/easy-floor.py [--nodes node1,node2] [--procs 2] [--seconds 6]
                          [--size 2097152] [--cap 134217728] [--repeat 3] [--fsync] [--append]
"""
import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "cluster")


def posix(a, rank, data):
    fd = os.open(os.path.join(a.dir, f"posix.{rank}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)

    def step(i):
        return os.write(fd, data)

    def done():
        if a.fsync:
            os.fsync(fd)
        os.close(fd)
    return step, done


def append(a, rank, data):
    head = os.urandom(100)
    fd = os.open(os.path.join(a.dir, f"pack.{rank}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)

    def step(i):
        os.pwritev(fd, [head, data], i * (len(head) + len(data)))
        if a.fsync:
            os.fdatasync(fd)
        return len(data)
    return step, lambda: os.close(fd)


def atomic(a, rank, data):
    d = os.open(os.path.join(a.dir, "bucket"), os.O_RDONLY | os.O_DIRECTORY)

    def step(i):
        tmp, key = f".t.{rank}.{i}", f"o.{rank}.{i}"
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=d)
        n = os.write(fd, data)
        if a.fsync:
            os.fdatasync(fd)
        # Closed before the rename: MooseFS's client holds written data
        # until a flush, and a file renamed first reads short elsewhere.
        os.close(fd)
        os.rename(tmp, key, src_dir_fd=d, dst_dir_fd=d)
        if a.fsync:
            os.fsync(d)
        return n
    return step, lambda: os.close(d)


MODES = {"posix": posix, "atomic": atomic, "append": append}


def rank_run(a, rank, out):
    """One rank of --mode: transfers from the common start until --seconds
    or --cap; puts (bytes written, seconds) on `out`."""
    step, done = MODES[a.mode](a, rank, os.urandom(a.size))
    wait_until(a.start_at)
    t0, written, i = time.time(), 0, 0
    while time.time() - t0 < a.seconds and written < a.cap:
        written += step(i)
        i += 1
    done()
    out.put((written, time.time() - t0))


def wait_until(t):
    while time.time() < t:
        time.sleep(min(0.01, max(0.0, t - time.time())))


def worker(a):
    """The ranks of one node: prints bytes written and seconds per rank."""
    out = multiprocessing.Queue()
    ps = [multiprocessing.Process(target=rank_run, args=(a, a.rank_base + r, out)) for r in range(a.procs)]
    for p in ps:
        p.start()
    got = [out.get() for _ in ps]
    for p in ps:
        p.join()
    for written, secs in got:
        print(f"rank {written} {secs:.4f}")


def run_mode(a, mode, top):
    """One run of `mode` on every node at once; GiB/s over all ranks."""
    in_node(a.nodes[0], "mkdir", "-p", os.path.join(top, "bucket"))
    start_at = time.time() + 2.0
    procs = []
    for k, node in enumerate(a.nodes):
        cmd = [CLUSTER, "exec", node, sys.executable, os.path.abspath(__file__), "--worker",
               "--mode", mode, "--dir", top, "--rank-base", str(k * a.procs),
               "--procs", str(a.procs), "--start-at", repr(start_at), "--seconds", str(a.seconds),
               "--size", str(a.size), "--cap", str(a.cap)] + (["--fsync"] if a.fsync else [])
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True))
    total, longest = 0, 0.0
    for p in procs:
        out, _ = p.communicate(timeout=a.seconds + 120)
        if p.returncode:
            raise SystemExit(f"a {mode} worker failed (exit {p.returncode})")
        for line in out.splitlines():
            if line.startswith("rank "):
                written, secs = line.split()[1:]
                total += int(written)
                longest = max(longest, float(secs))
    in_node(a.nodes[0], "rm", "-rf", top)
    return total / longest / 2**30


def in_node(node, *cmd):
    """A command in a node (the file system is mounted only there)."""
    subprocess.run([CLUSTER, "exec", node, *cmd], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mount", default="/mnt/s3hpc-cluster")
    ap.add_argument("--nodes", default="node1,node2")
    ap.add_argument("--procs", type=int, default=2, help="ranks per node")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--size", type=int, default=2 << 20, help="bytes per transfer")
    ap.add_argument("--cap", type=int, default=128 << 20, help="bytes per rank at most")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fsync", action="store_true", help="sync as a durable PUT and IOR's -e do")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--append", action="store_true", help="also time appends of header and data")
    ap.add_argument("--mode", choices=sorted(MODES), help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--rank-base", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    a.nodes = a.nodes.split(",")
    top = os.path.join(a.mount, f"easy-floor.{os.getpid()}")
    print(f"{len(a.nodes)} nodes x {a.procs} ranks, {a.size} bytes per transfer, "
          f"{a.seconds} s or {a.cap} bytes per rank, {'fsync' if a.fsync else 'no sync'}")
    modes = ["posix", "atomic"] + (["append"] if a.append else [])
    ratios = {m: [] for m in modes[1:]}
    try:
        for r in range(a.repeat):
            order = modes if r % 2 == 0 else modes[::-1]
            got = {m: run_mode(a, m, top) for m in order}
            for m in modes[1:]:
                ratios[m].append(got[m] / got["posix"])
            print(f"round {r + 1}: " + ", ".join(f"{m} {got[m]:.4f} GiB/s" for m in modes) + ", "
                  + ", ".join(f"{m}/posix {ratios[m][-1]:.2f}" for m in modes[1:]), flush=True)
    finally:
        in_node(a.nodes[0], "rm", "-rf", top)
    for m, v in ratios.items():
        print(f"{m}/posix: median {statistics.median(v):.2f} (rounds {min(v):.2f}-{max(v):.2f})")


if __name__ == "__main__":
    main()
