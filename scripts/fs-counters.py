#!/usr/bin/env python3
"""What a write costs the file system's servers, counted by Ceph itself.

On a CephFS cluster from `scripts/cluster up --fs cephfs`, reads the MDS's
and the OSD's own perf counters (`ceph tell mds.a perf dump`, `ceph tell
osd.0 perf dump`) before and after each phase:

- small objects, as mdtest's phases: COUNT empty objects created, COUNT
  SIZE-byte objects written on the first node, then stat'ed, read and
  deleted on the second (as IO500's ranks do with other nodes' files).
  POSIX calls in a node, then the same through `s3hpc serve --http` on each
  node (one data directory) from an agent, for each --bin. Reported: MDS
  requests (`mds_server.handle_client_request`) per op, and which kinds;
  for the writes also the MDS journal's events (`mds_log.evadd`), flushes
  of dirty capabilities (`mds.handle_client_caps_dirty`: a full fsync's
  times) and session messages (a sync's request to flush the journal).
- multipart: one MP_SIZE upload in PART_SIZE parts through the first
  node's server, and a POSIX write of the same size. Reported: MDS requests
  per part and the bytes the OSD wrote (`osd.op_w_in_bytes`) per byte.

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
    dump = ceph("tell", "mds.a", "perf", "dump")
    d = dump["mds_server"]
    out = {"requests": d["handle_client_request"],
           # Events written to the MDS journal, capability flushes that carry
           # dirty metadata (a full fsync's times and size), and session
           # messages (among them a sync's request to flush the journal).
           "journal_events": dump["mds_log"]["evadd"],
           "dirty_cap_flushes": dump["mds"]["handle_client_caps_dirty"],
           "session_messages": d["handle_client_session"]}
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


POSIX_OPS = {
    "create-empty": "fd=os.open(p,os.O_CREAT|os.O_EXCL|os.O_WRONLY,0o644); os.close(fd)",
    "write": "fd=os.open(p,os.O_CREAT|os.O_EXCL|os.O_WRONLY,0o644); os.write(fd,b); os.close(fd)",
    "stat": "os.stat(p)",
    "read": "fd=os.open(p,os.O_RDONLY); os.read(fd,len(b)+1); os.close(fd)",
    "delete": "os.unlink(p)",
}
# The agent's request for each phase (`s3hpc agent`), and the node it runs
# on: writes on the first node, the rest on the second, as IO500's ranks
# read, stat and delete what other nodes' ranks wrote.
S3_OPS = {
    "create-empty": "put {b} {k} 0 e",
    "write": "put {b} {k} {size} t",
    "stat": "head {b} {k}",
    "read": "get {b} {k}",
    "delete": "del {b} {k}",
}
PHASES = ["create-empty", "write", "stat", "read", "delete"]


def node_of(phase, nodes):
    return nodes[0] if phase in ("create-empty", "write") else nodes[-1]


def posix_phases(nodes, top, count, size):
    d = os.path.join(top, f"posix-{time.time_ns()}")
    in_node(nodes[0], "mkdir", "-p", d)
    out = {}
    for phase in PHASES:
        prefix = "e" if phase == "create-empty" else "f"
        code = ("import os,sys\n"
                "d,n,s=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])\n"
                "b=b'x'*s\n"
                "for i in range(n):\n"
                f"    p=f'{{d}}/{prefix}{{i}}'\n"
                f"    {POSIX_OPS[phase]}\n")
        before = mds_counts()
        in_node(node_of(phase, nodes), "python3", "-c", code, d, str(count), str(size))
        in_node(node_of(phase, nodes), "sync")
        out[phase] = diff(before, mds_counts())
    return out


def posix_large(node, top, size):
    f = os.path.join(top, f"posix-large-{time.time_ns()}")
    before = osd_bytes()
    in_node(node, "dd", "if=/dev/zero", f"of={f}", "bs=8M", f"count={size >> 23}", "conv=fsync", "status=none")
    in_node(node, "sync")
    time.sleep(1)
    return (osd_bytes() - before) / size


def s3_phases(bin_, nodes, top, port, args, logdir):
    data = os.path.join(top, f"s3-{os.path.basename(bin_)}-{time.time_ns()}")
    in_node(nodes[0], "mkdir", "-p", data)
    env = Env(bin_, logdir)
    servers, agents = {}, {}
    try:
        for i, node in enumerate(sorted(set(nodes))):
            servers[node] = xnode.Server(env, node, "http", port + i, data, listen=args.serve_args)
            agents[node] = xnode.Agent(env, node, servers[node].target())
        first = agents[nodes[0]]
        r = first.call(f"mkb {BUCKET}")
        assert r[0] == "ok", r
        # The prefixes' directories exist before counting, as POSIX's does.
        for p in ("e", "f"):
            assert first.call(f"put {BUCKET} {p}/warm 1 w")[0] == "ok"
        out = {}
        for phase in PHASES:
            node = node_of(phase, nodes)
            prefix = "e" if phase == "create-empty" else "f"
            before = mds_counts()
            for i in range(args.count):
                r = agents[node].call(S3_OPS[phase].format(b=BUCKET, k=f"{prefix}/k{i}", size=args.size))
                assert r[0] == "ok", (phase, r)
            in_node(node, "sync")
            out[phase] = diff(before, mds_counts())
        before, mds_before = osd_bytes(), mds_counts()
        up = first.call(f"mpc {BUCKET} big")
        assert up[0] == "ok", up
        parts = []
        nparts = args.mp_size // args.part_size
        for n in range(1, nparts + 1):
            r = first.call(f"mpp {BUCKET} big {up[1]} {n} {args.part_size} p{n}")
            assert r[0] == "ok", r
            parts.append(f"{n}:{r[1]}")
        r = first.call(f"mpd {BUCKET} big {up[1]} {','.join(parts)}")
        assert r[0] == "ok", r
        in_node(nodes[0], "sync")
        time.sleep(1)
        large = (osd_bytes() - before) / args.mp_size
        out["multipart"] = diff(mds_before, mds_counts())
    finally:
        for a in agents.values():
            a.close()
        for s in servers.values():
            s.stop()
        for p in env.procs:
            if p.poll() is None:
                p.kill()
    return out, large


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True, help="s3hpc binaries to compare (repeatable)")
    ap.add_argument("--nodes", default="node1,node2", help="writing node, then the node that stats, reads and deletes")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--mp-size", type=int, default=64 << 20)
    ap.add_argument("--part-size", type=int, default=8 << 20)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--port", type=int, default=19400)
    ap.add_argument("--serve-args", default="--anonymous",
                    help="what `s3hpc serve --http` gets besides its address (default: --anonymous; its defaults otherwise)")
    ap.add_argument("--json", help="write the counts as JSON here")
    args = ap.parse_args()
    args.serve_args = args.serve_args.split()
    nodes = args.nodes.split(",")
    if open(os.path.join(STATE, "fs")).read().strip() != "cephfs":
        sys.exit("fs-counters: needs a CephFS cluster (scripts/cluster up --fs cephfs)")
    top = os.path.join(open(os.path.join(STATE, "mount")).read().strip(), f"fs-counters-{os.getpid()}")
    logdir = os.path.join(STATE, f"fs-counters-logs-{os.getpid()}")
    os.makedirs(logdir, exist_ok=True)
    in_node(nodes[0], "mkdir", "-p", top)
    rows = []
    try:
        for rep in range(args.reps):
            small = posix_phases(nodes, top, args.count, args.size)
            large = posix_large(nodes[0], top, args.mp_size)
            rows.append(("posix", rep, small, large))
            for i, b in enumerate(args.bin):
                small, large = s3_phases(b, nodes, top, args.port + 10 * (rep * len(args.bin) + i), args, logdir)
                rows.append((b, rep, small, large))
    finally:
        in_node(nodes[0], "rm", "-rf", top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"count": args.count, "size": args.size, "mp_size": args.mp_size,
                       "part_size": args.part_size, "serve_args": args.serve_args,
                       "rows": [{"writer": w, "rep": r + 1, "mds": s, "osd_bytes_per_byte": l}
                                for w, r, s, l in rows]}, f, indent=1)
    nparts = args.mp_size // args.part_size
    print(f"# MDS requests per op ({args.count} objects of {args.size} B; writes on {nodes[0]}, "
          f"the rest on {nodes[-1]}); multipart: one {args.mp_size >> 20} MiB upload in {nparts} parts "
          f"of {args.part_size >> 20} MiB (MDS requests per part; POSIX: dd of the same size)")
    print("| writer | rep | " + " | ".join(PHASES) + " | multipart, per part | OSD bytes per byte |")
    print("|---|---|" + "---|" * len(PHASES) + "---|---|")
    for who, rep, small, large in rows:
        cells = [f"{small[p].get('requests', 0) / args.count:.2f}" for p in PHASES]
        mp = small.get("multipart")
        mp_cell = f"{mp.get('requests', 0) / nparts:.2f}" if mp else ""
        print(f"| {who} | {rep + 1} | " + " | ".join(cells) + f" | {mp_cell} | {large:.2f} |")
    print()
    print("| writer | rep | write: MDS requests | journal events | dirty cap flushes | session messages |")
    print("|---|---|---|---|---|---|")
    for who, rep, small, _ in rows:
        w = small["write"]
        cells = [f"{w.get(k, 0) / args.count:.2f}"
                 for k in ("requests", "journal_events", "dirty_cap_flushes", "session_messages")]
        print(f"| {who} | {rep + 1} | " + " | ".join(cells) + " |")
    print()
    print("Requests by kind (per op):")
    for who, rep, small, _ in rows:
        for p in PHASES + ["multipart"]:
            if p in small:
                per = args.count if p != "multipart" else nparts
                kinds = ", ".join(f"{k} {v / per:.2f}" for k, v in sorted(small[p].items())
                                  if k not in ("requests", "journal_events", "dirty_cap_flushes",
                                               "session_messages") and v)
                print(f"- {who} rep {rep + 1} {p}: {kinds or 'none'}")


if __name__ == "__main__":
    main()
