#!/usr/bin/env python3
"""The file system's own floor under IOR-hard's S3 mapping, without s3hpc.

IOR's S3 mapping makes every 47008-byte transfer an object of its own;
POSIX's ior-hard writes it into one shared file. This times, with plain
system calls, the work each side asks of the file system, so a ratio can be
judged against what the file system makes possible rather than against 1:

  write phase (run on one node, `--phase write`):
    pwrite     47008 bytes at the next offset of one open shared file
               (POSIX's ior-hard-write)
    create     a new file per transfer: open(O_CREAT|O_EXCL), write, close
               (the least any S3 PUT of a new object can do, and what a PUT
               that wrote in place would do: partial objects visible)
    tmp+rename a named temporary, written, renamed onto its key (an atomic
               PUT where there is no O_TMPFILE: GlusterFS, MooseFS, ceph-fuse)

  read phase (run on another node, `--phase read`, same DIR):
    pread      47008 bytes from the shared file (POSIX's ior-hard-read)
    open+read  open, fstat, read, close of each file (an S3 GET)

Per-file calls are made relative to an open directory, as the engine makes
them. Prints the median µs per transfer of each and the ratios pwrite/create,
pwrite/tmp+rename and pread/open+read: the best embedded/POSIX the
file system allows for ior-hard-write and ior-hard-read.

  scripts/put-floor.py --phase write DIR [--count N]
  scripts/put-floor.py --phase read DIR
  scripts/put-floor.py --phase clean DIR
"""
import argparse
import os
import statistics
import time

SIZE = 47008


def timed(op, n):
    times = []
    for i in range(n):
        t0 = time.perf_counter_ns()
        op(i)
        times.append((time.perf_counter_ns() - t0) / 1000)
    return statistics.median(times)


def write_phase(d, n):
    os.makedirs(d, exist_ok=True)
    data = os.urandom(SIZE)
    shared = os.open(f"{d}/shared", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    os.makedirs(f"{d}/new")
    os.makedirs(f"{d}/tmp")
    # Calls relative to an open directory, as the engine makes them: no
    # path walk (a LOOKUP per component where entries are not cached).
    new = os.open(f"{d}/new", os.O_RDONLY | os.O_DIRECTORY)
    tmpd = os.open(f"{d}/tmp", os.O_RDONLY | os.O_DIRECTORY)

    def pwrite(i):
        os.pwrite(shared, data, i * SIZE)

    def create(i):
        fd = os.open(f"f{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=new)
        os.write(fd, data)
        os.close(fd)

    def tmp_rename(i):
        tmp = f".f{i}.tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=tmpd)
        os.write(fd, data)
        os.close(fd)
        os.rename(tmp, f"f{i}", src_dir_fd=tmpd, dst_dir_fd=tmpd)

    # Interleaved in rounds, so a slow spell of the machine falls on all.
    res = {"pwrite": [], "create": [], "tmp+rename": []}
    rounds, per = 5, max(1, n // 5)
    for r in range(rounds):
        base = r * per
        res["pwrite"].append(timed(lambda i: pwrite(base + i), per))
        res["create"].append(timed(lambda i: create(base + i), per))
        res["tmp+rename"].append(timed(lambda i: tmp_rename(base + i), per))
    for fd in (shared, new, tmpd):
        os.close(fd)
    with open(f"{d}/count", "w") as f:
        f.write(str(rounds * per))
    report(res, [("pwrite", "create"), ("pwrite", "tmp+rename")])


def read_phase(d):
    n = int(open(f"{d}/count").read())
    shared = os.open(f"{d}/shared", os.O_RDONLY)
    tmpd = os.open(f"{d}/tmp", os.O_RDONLY | os.O_DIRECTORY)

    def pread(i):
        assert len(os.pread(shared, SIZE, i * SIZE)) == SIZE

    def open_read(i):
        fd = os.open(f"f{i}", os.O_RDONLY, dir_fd=tmpd)
        os.fstat(fd)
        assert len(os.read(fd, SIZE + 1)) == SIZE
        os.close(fd)

    res = {"pread": [], "open+read": []}
    rounds, per = 5, n // 5
    for r in range(rounds):
        base = r * per
        res["pread"].append(timed(lambda i: pread(base + i), per))
        res["open+read"].append(timed(lambda i: open_read(base + i), per))
    os.close(shared)
    os.close(tmpd)
    report(res, [("pread", "open+read")])


def report(res, pairs):
    for k, v in res.items():
        print(f"{k:12s} {statistics.median(v):10.1f} µs per transfer (median of {len(v)} rounds)")
    for a, b in pairs:
        ratios = [x / y for x, y in zip(res[a], res[b])]
        print(f"{a}/{b}: {statistics.median(ratios):.2f} (rounds {min(ratios):.2f}-{max(ratios):.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phase", choices=["write", "read", "clean"], required=True)
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("dir")
    a = ap.parse_args()
    if a.phase == "write":
        if os.path.exists(a.dir):
            raise SystemExit(f"{a.dir} exists: give a fresh directory")
        write_phase(a.dir, a.count)
    elif a.phase == "read":
        read_phase(a.dir)
    else:
        import shutil
        shutil.rmtree(a.dir)


if __name__ == "__main__":
    main()
