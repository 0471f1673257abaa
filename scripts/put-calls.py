#!/usr/bin/env python3
"""Each file-system call of one s3hpc PUT on a shared file system, timed
alone: what a PUT of a new object costs there, call by call, against the
create-write-close of plain POSIX. In the engine's order (crates/store
put.rs, where there is no O_TMPFILE: ceph-fuse, GlusterFS, MooseFS):

    create     open(O_CREAT|O_EXCL) of a named temporary (a quick PUT's
               goes unlocked; --lock adds the fcntl lock and its release,
               setlk and unlk, that a long write's temporary takes)
    write      SIZE bytes
    setxattr   the stored metadata (the MD5 ETag, 40 bytes here)
    sync       the data (durability fsync, serve's default): fdatasync,
               or with --sync fsync the full fsync the engine once made
    rename     onto the key
    fsyncdir   the directory (the rename made durable)
    close

    scripts/put-calls.py DIR [--count 100] [--size 4096] [--sync fsync] [--lock]

Prints the median µs of each call, their sum, and the sum without the
durability calls; DIR is made if missing, and what this makes is removed.
"""

import argparse
import fcntl
import os
import shutil
import statistics
import time

CALLS = ("create", "setlk", "write", "setxattr", "sync", "unlk", "rename", "fsyncdir", "close")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--sync", choices=("fdatasync", "fsync"), default="fdatasync")
    ap.add_argument("--lock", action="store_true")
    a = ap.parse_args()
    d = os.path.join(a.dir, f"put-calls.{os.getpid()}")
    os.makedirs(d)
    took = {c: [] for c in CALLS}

    def timed(call, f):
        t0 = time.perf_counter()
        r = f()
        took[call].append(time.perf_counter() - t0)
        return r

    data = os.urandom(a.size)
    sync = os.fdatasync if a.sync == "fdatasync" else os.fsync
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(a.count):
            tmp, key = os.path.join(d, f".tmp{i}"), os.path.join(d, f"obj{i}")
            fd = timed("create", lambda: os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            if a.lock:
                timed("setlk", lambda: fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))
            timed("write", lambda: os.write(fd, data))
            timed("setxattr", lambda: os.setxattr(fd, "user.s3hpc.probe", b"e" * 40))
            timed("sync", lambda: sync(fd))
            if a.lock:
                timed("unlk", lambda: fcntl.lockf(fd, fcntl.LOCK_UN))
            timed("rename", lambda: os.rename(tmp, key))
            timed("fsyncdir", lambda: os.fsync(dfd))
            timed("close", lambda: os.close(fd))
    finally:
        os.close(dfd)
        shutil.rmtree(d)
    med = {c: statistics.median(v) * 1e6 for c, v in took.items() if v}
    print(f"{a.count} PUTs of {a.size} bytes in {a.dir} ({a.sync}): median µs per call")
    print(" ".join(f"{c} {med[c]:.0f}" for c in CALLS if c in med))
    durable = med["sync"] + med["fsyncdir"]
    print(f"sum {sum(med.values()):.0f} µs; without sync and fsyncdir {sum(med.values()) - durable:.0f} µs; "
          f"create+write+close (POSIX) {med['create'] + med['write'] + med['close']:.0f} µs")


if __name__ == "__main__":
    main()
