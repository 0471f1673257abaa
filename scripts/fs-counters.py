#!/usr/bin/env python3
"""What a write costs the file system's servers, counted by Ceph itself.

On a CephFS cluster from `scripts/cluster up --fs cephfs`, reads the MDS's
and the OSD's own perf counters (`ceph tell mds.a perf dump`, `ceph tell
osd.0 perf dump`) before and after each phase:

- small: COUNT new SIZE-byte objects, each phase on a fresh prefix: POSIX
  create-write-close in a node, then PUTs through `s3hpc serve --http` (the
  server's defaults) from an agent, for each --bin. Reported: MDS requests
  (`mds_server.handle_client_request`) per object, and which kinds.
- multipart: one MP_SIZE upload in PART_SIZE parts through the same server,
  and a POSIX write of the same size. Reported: bytes the OSD wrote
  (`osd.op_w_in_bytes`) per byte uploaded.

Each phase ends with `sync` in the writing node, so that data the client
cache still holds is counted. Phases of the binaries alternate, --reps
times, so that each ratio comes from one run.

    scripts/cluster up --fs cephfs --nodes 2
    python3 scripts/fs-counters.py --bin OLD --bin NEW --reps 3
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("xnode", os.path.join(HERE, "cluster-test.py"))
xnode = importlib.util.module_from_spec(spec)
spec.loader.exec_module(xnode)

STATE = os.environ.get("S3HPC_CLUSTER_STATE", "/var/lib/s3hpc-cluster")
CLUSTER = os.path.join(HERE, "cluster")
BUCKET = "counters"


def ceph(*args):
    conf = os.path.join(STATE, "ceph", "ceph.conf")
    out = subprocess.run(["timeout", "60", "ceph", "-c", conf, *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def mds_counts():
    d = ceph("tell", "mds.a", "perf", "dump")["mds_server"]
    out = {"requests": d["handle_client_request"]}
    for k, v in d.items():
        if k.startswith("req_") and isinstance(v, dict) and "avgcount" in v:
            out[k[4:].replace("_latency", "")] = v["avgcount"]
    return out


def osd_bytes():
    return ceph("tell", "osd.0", "perf", "dump")["osd"]["op_w_in_bytes"]


def diff(a, b):
    return {k: b[k] - a.get(k, 0) for k in b if b[k] - a.get(k, 0)}


def in_node(node, *cmd):
    subprocess.run([CLUSTER, "exec", node, *cmd], check=True)


class Env:
    """What cluster-test.py's Server and Agent want of their test."""

    def __init__(self, bin_, logdir):
        self.cluster, self.bin, self.logdir, self.procs = CLUSTER, bin_, logdir, []


def posix_small(node, top, count, size):
    d = os.path.join(top, f"posix-{time.time_ns()}")
    in_node(node, "mkdir", "-p", d)
    before = mds_counts()
    code = ("import os,sys\n"
            "d,n,s=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])\n"
            "b=b'x'*s\n"
            "for i in range(n):\n"
            "    fd=os.open(f'{d}/f{i}',os.O_CREAT|os.O_EXCL|os.O_WRONLY,0o644)\n"
            "    os.write(fd,b); os.close(fd)\n")
    in_node(node, "python3", "-c", code, d, str(count), str(size))
    in_node(node, "sync")
    return diff(before, mds_counts())


def posix_large(node, top, size):
    f = os.path.join(top, f"posix-large-{time.time_ns()}")
    before = osd_bytes()
    in_node(node, "dd", "if=/dev/zero", f"of={f}", "bs=8M", f"count={size >> 23}", "conv=fsync", "status=none")
    in_node(node, "sync")
    time.sleep(1)
    return (osd_bytes() - before) / size


def s3_phases(bin_, node, top, port, args, logdir):
    data = os.path.join(top, f"s3-{os.path.basename(bin_)}-{time.time_ns()}")
    in_node(node, "mkdir", "-p", data)
    env = Env(bin_, logdir)
    server = xnode.Server(env, node, "http", port, data)
    agent = xnode.Agent(env, node, server.target())
    try:
        r = agent.call(f"mkb {BUCKET}")
        assert r[0] == "ok", r
        # The prefix's directory exists before counting, as POSIX's does.
        assert agent.call(f"put {BUCKET} small/warm 1 w")[0] == "ok"
        before = mds_counts()
        for i in range(args.count):
            r = agent.call(f"put {BUCKET} small/k{i} {args.size} t{i}")
            assert r[0] == "ok", r
        in_node(node, "sync")
        small = diff(before, mds_counts())
        before = osd_bytes()
        up = agent.call(f"mpc {BUCKET} big")
        assert up[0] == "ok", up
        parts = []
        for n in range(1, args.mp_size // args.part_size + 1):
            r = agent.call(f"mpp {BUCKET} big {up[1]} {n} {args.part_size} p{n}")
            assert r[0] == "ok", r
            parts.append(f"{n}:{r[1]}")
        r = agent.call(f"mpd {BUCKET} big {up[1]} {','.join(parts)}")
        assert r[0] == "ok", r
        in_node(node, "sync")
        time.sleep(1)
        large = (osd_bytes() - before) / args.mp_size
    finally:
        agent.close()
        server.stop()
        for p in env.procs:
            if p.poll() is None:
                p.kill()
    return small, large


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True, help="s3hpc binaries to compare (repeatable)")
    ap.add_argument("--node", default="node1")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--mp-size", type=int, default=64 << 20)
    ap.add_argument("--part-size", type=int, default=8 << 20)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--port", type=int, default=19400)
    args = ap.parse_args()
    if open(os.path.join(STATE, "fs")).read().strip() != "cephfs":
        sys.exit("fs-counters: needs a CephFS cluster (scripts/cluster up --fs cephfs)")
    top = os.path.join(open(os.path.join(STATE, "mount")).read().strip(), f"fs-counters-{os.getpid()}")
    logdir = os.path.join(STATE, f"fs-counters-logs-{os.getpid()}")
    os.makedirs(logdir, exist_ok=True)
    in_node(args.node, "mkdir", "-p", top)
    rows = []
    try:
        for rep in range(args.reps):
            small = posix_small(args.node, top, args.count, args.size)
            large = posix_large(args.node, top, args.mp_size)
            rows.append(("posix", rep, small, large))
            for i, b in enumerate(args.bin):
                small, large = s3_phases(b, args.node, top, args.port + 10 * rep + i, args, logdir)
                rows.append((b, rep, small, large))
    finally:
        in_node(args.node, "rm", "-rf", top)
    print(f"# {args.count} new {args.size}-byte objects; one {args.mp_size >> 20} MiB upload "
          f"in {args.part_size >> 20} MiB parts (POSIX: create-write-close; dd of the same size)")
    print("| writer | rep | MDS requests per object | of which | OSD bytes written per byte |")
    print("|---|---|---|---|---|")
    for who, rep, small, large in rows:
        kinds = ", ".join(f"{k} {v / args.count:.2f}" for k, v in sorted(small.items())
                          if k != "requests" and v)
        print(f"| {who} | {rep + 1} | {small.get('requests', 0) / args.count:.2f} | {kinds} | {large:.2f} |")


if __name__ == "__main__":
    main()
