#!/usr/bin/env python3
"""Server CPU per PUT, store by store: what one PUT of SIZE costs each
server that `scripts/peers status` lists (s3hpc, MinIO, versitygw, ...),
from its process's CPU time (/proc/PID/stat, user + system) before and
after N PUTs of one random body, C at a time, by boto3 (unsigned payload,
no client checksum: the server's own work only). The stores take turns,
the order turning each repetition. Medians over the repetitions.

    scripts/put-cpu.py [--size 16m] [--puts 32] [--concurrent 4] [--repeat 3] [STORE...]

Needs boto3 (target/py/bin/python has it) and the state of `scripts/peers up`
($S3HPC_PEERS_STATE).
"""

import argparse
import concurrent.futures as cf
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import boto3
from botocore.config import Config

UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def size_of(s):
    s = s.lower().rstrip("ib")
    return int(s[:-1]) * UNITS[s[-1]] if s[-1] in UNITS else int(s)


def cpu_seconds(pid):
    # Fields after the command name: utime and stime are the 12th and 13th.
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def stores(only):
    peers = Path(__file__).resolve().parent / "peers"
    out = subprocess.run([str(peers), "status"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] != "mount" and f[4].isdigit() and (not only or f[0] in only):
            found.append((f[0], f[1], f[2], f[3], int(f[4])))
    return found


def one_round(store, body, puts, concurrent):
    name, url, ak, sk, pid = store
    s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id=ak, aws_secret_access_key=sk,
                      region_name="us-east-1",
                      config=Config(s3={"payload_signing_enabled": False},
                                    request_checksum_calculation="when_required",
                                    max_pool_connections=concurrent))
    try:
        s3.create_bucket(Bucket="put-cpu")
    except s3.exceptions.ClientError:
        pass  # already there
    c0, t0 = cpu_seconds(pid), time.perf_counter()
    with cf.ThreadPoolExecutor(concurrent) as ex:
        list(ex.map(lambda i: s3.put_object(Bucket="put-cpu", Key=f"k{i % concurrent}", Body=body),
                    range(puts)))
    c1, t1 = cpu_seconds(pid), time.perf_counter()
    for i in range(min(puts, concurrent)):
        s3.delete_object(Bucket="put-cpu", Key=f"k{i}")
    s3.delete_bucket(Bucket="put-cpu")
    return (c1 - c0) / puts, (t1 - t0) / puts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="16m")
    ap.add_argument("--puts", type=int, default=32)
    ap.add_argument("--concurrent", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("store", nargs="*")
    a = ap.parse_args()
    found = stores(set(a.store))
    if not found:
        sys.exit("put-cpu: no store is up (scripts/peers up --data DIR)")
    body = os.urandom(size_of(a.size))
    got = {s[0]: [] for s in found}
    for rep in range(a.repeat):
        turn = found[rep % len(found):] + found[:rep % len(found)]
        for s in turn:
            got[s[0]].append(one_round(s, body, a.puts, a.concurrent))
    print(f"{a.puts} PUTs of {a.size}, {a.concurrent} at a time, {a.repeat} repetitions (medians)")
    print(f"{'store':12} {'server CPU ms/PUT':>18} {'wall ms/PUT':>12}")
    for name, rows in got.items():
        cpu = statistics.median(r[0] for r in rows) * 1e3
        wall = statistics.median(r[1] for r in rows) * 1e3
        print(f"{name:12} {cpu:18.1f} {wall:12.1f}")


if __name__ == "__main__":
    main()
