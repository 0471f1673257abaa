#!/usr/bin/env python3
"""Where one metadata server caps the IO500 phases at scale: POSIX against S3 over s3hpc.

A model on paper, not a measurement. NODES client nodes with RANKS ranks
each share one metadata server (MDS) that serves at most R requests/s
(Lustre-like: one MDS, no striped directories). For each phase and writer:

    offered  = nodes * ranks * per-rank client rate
    MDS cap  = R / (MDS requests per op)
    achieved = min(offered, MDS cap); the smaller one is the limit that binds

An op is a file for mdtest and one transfer (--transfer, 2 MiB) for IOR.
Assumptions:
- MDS requests per op are CephFS's counts (docs/src/results/cephfs.md, "What a write
  costs Ceph's servers"; the MDS's mds_server.handle_client_request) and
  stand in for any single MDS: create 1.00 (POSIX and a 0-byte PUT); new
  small object POSIX 1.00, PUT 3.00 (create, setxattr for the MD5 ETag,
  rename), 2.00 with --etag fast; stat 2.01 both; delete POSIX 2.99, s3hpc
  2.00. All transports make the same file-system calls, so the same requests.
- mdtest-hard-write over S3 is two PUTs per file (IOR/mdtest's S3 mapping: a
  0-byte PUT, then an overwrite with 3901 bytes): 1 + 3 = 4 (MD5), 1 + 2 = 3
  (fast). POSIX: 1 per file.
- ior-easy over S3 is one object (one PUT, one GET) per transfer: 3 / 2
  requests per write. POSIX: 0 per transfer; its one create per rank's
  file costs the MDS ranks / R seconds once (0.32 s at 16000 ranks and
  50000/s), left out.
- A small read on another node was 0 requests (capabilities); the model
  charges --open-requests (0 to 1, default 1, the pessimistic end) per open:
  per file for mdtest-hard-read (POSIX and GET alike), per transfer for an S3
  ior-easy-read, once per rank's file for POSIX (so 0 per transfer).
- Empty PUTs, reads, stats and deletes cost the same with either ETag kind.
- The MDS serves requests of every kind at the same rate; nothing else
  (OSTs, network) limits unless --data-gibs caps the IOR phases, so POSIX
  ior-easy is client-bound by construction.
- Per-rank client rate (--client-ops) is POSIX's when the MDS is not the
  limit. An S3 op's time on a rank is POSIX's op time with each MDS request
  taken as one synchronous round trip of --mds-rtt (so requests beyond
  POSIX's add time, fewer take it away), plus MD5 at 0.5 GiB/s per core
  (docs/src/design/costs.md) on written bytes with MD5 ETags, plus the transport's
  cost per S3 call and per byte (docs/src/design/explain-traces.md's layer tables, over the
  engine: rpc-unix +10-31 us per small call, +14-390 us per 2 MiB; http
  +21-42 us, +630-1900 us per 2 MiB; modelled as 12 us + bytes at 8 GiB/s
  and 25 us + bytes at 2 GiB/s).
- --mds-rtt 0.25 ms: CephFS requests took 0.3-1 ms on ceph-fuse nodes
  sharing one machine (docs/src/results/cephfs.md); a Lustre client on a fast
  network is taken to be at the low end.
- Multipart uploads (boto3, aws CLI, rclone): 17.1 requests per 8 MiB part.
"""
import argparse
import json
import math
import sys

GIB = 1 << 30
# Per-rank POSIX op rates when the MDS is not the limit. Assumed, not measured:
# each MDS request one round trip (--mds-rtt, 0.25 ms) plus ~0.25-0.4 ms of client
# and data-server work per op, the order of an mdtest rank on a Lustre client.
CLIENT_OPS = {
    "mdtest-easy-write": 2000,   # create: 1 round trip + 0.25 ms
    "mdtest-hard-write": 1500,   # create, 3901 B write, close: 1 round trip + 0.42 ms
    "ior-easy-write": None,      # --rank-gibs / --transfer: 1 GiB/s per rank = 512 x 2 MiB
    "mdtest-hard-stat": 1500,    # lookup + getattr: 2 round trips + 0.17 ms
    "mdtest-hard-read": 1500,    # open, read 3901 B, close: 0-1 round trip + 0.42-0.67 ms
    "ior-easy-read": None,       # as ior-easy-write
    "mdtest-hard-delete": 1000,  # lookup, lookup, unlink: 3 round trips + 0.25 ms
}
# Transport cost over the embedded engine: (us per S3 call, GiB/s through the socket).
TRANSPORTS = {"embedded": (0.0, 0.0), "remote": (12.0, 8.0), "http": (25.0, 2.0)}
MD5_GIBS = 0.5
MULTIPART_REQ, PART = 17.1, 8 << 20


def phases(a):
    """phase -> (is_ior, POSIX requests/op, {writer: requests/op}, S3 calls/op, bytes/op, written)."""
    t, o = a.transfer, a.open_requests
    return {
        "mdtest-easy-write": (False, 1.0, {"s3": 1.0}, 1, 0, True),  # a 0-byte PUT stores no xattr
        "mdtest-hard-write": (False, 1.0, {"md5": 4.0, "fast": 3.0}, 2, 3901, True),
        "ior-easy-write": (True, 0.0, {"md5": 3.0, "fast": 2.0}, 1, t, True),
        "mdtest-hard-stat": (False, 2.01, {"s3": 2.01}, 1, 0, False),
        "mdtest-hard-read": (False, o, {"s3": o}, 1, 3901, False),
        "ior-easy-read": (True, 0.0, {"s3": o}, 1, t, False),
        "mdtest-hard-delete": (False, 2.99, {"s3": 2.00}, 1, 0, False),
    }


def model(a, rate):
    rows, ranks = [], a.nodes * a.ranks_per_node
    for name, (ior, preq, writers, calls, nbytes, written) in phases(a).items():
        crate = a.client_ops.get(name) or (a.rank_gibs * GIB / a.transfer if ior else CLIENT_OPS[name])
        t_local = max(1.0 / crate - preq * a.mds_rtt, 0.0)  # POSIX's op time outside the MDS
        cap_data = a.data_gibs * GIB / a.transfer if (ior and a.data_gibs) else float("inf")

        def limit(req, per_rank):
            offered = ranks * per_rank
            cap = rate / req if req > 0 else float("inf")
            got = min(offered, cap, cap_data)
            binds = "MDS" if got == cap else ("data" if got == cap_data else "client")
            n_mds = rate / (req * a.ranks_per_node * per_rank) if req > 0 else float("inf")
            return dict(per_rank=per_rank, offered=offered, mds_cap=cap, achieved=got,
                        binds=binds, mds_binds_from_nodes=n_mds)

        posix = limit(preq, crate)
        rows.append(dict(phase=name, ior=ior, writer="posix", mds_req=preq, **{"posix": posix}))
        for w, req in writers.items():
            per_t = {}
            for tr in a.transports:
                us, gibs = TRANSPORTS[tr]
                t = t_local + req * a.mds_rtt + calls * us * 1e-6 + (nbytes / (gibs * GIB) if gibs else 0)
                if w == "md5" and written:
                    t += nbytes / (MD5_GIBS * GIB)
                r = limit(req, 1.0 / t)
                r["vs_posix"] = r["achieved"] / posix["achieved"]
                per_t[tr] = r
            label = {"md5": "s3hpc md5", "fast": "s3hpc fast", "s3": "s3hpc"}[w]
            rows.append(dict(phase=name, ior=ior, writer=label, mds_req=req, **per_t))
    return rows


def fmt(v, ior, transfer):
    if v == float("inf"):
        return "none"
    if ior:
        g = v * transfer / GIB
        return f"{g:,.0f} GiB/s" if g >= 100 else f"{g:.3g} GiB/s"
    return f"{v / 1e6:.3g}M" if v >= 1e6 else f"{v / 1e3:.3g}k"


def table(a, rate, rows):
    out = [f"nodes {a.nodes}, ranks/node {a.ranks_per_node}, MDS {rate:,.0f} req/s, "
           f"MDS round trip {a.mds_rtt * 1e3:g} ms, open requests {a.open_requests:g}, "
           f"transfer {a.transfer / (1 << 20):g} MiB; mdtest in ops/s, ior in GiB/s",
           "", "| phase | writer | MDS req/op | per-rank ops/s (" + " / ".join(a.transports)
           + ") | MDS cap | achieved | binds | S3/POSIX | MDS binds from (nodes) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        res = [r["posix"]] if r["writer"] == "posix" else [r[t] for t in a.transports]

        def col(key, f):
            vals = [f(x[key]) for x in res]
            return vals[0] if len(set(vals)) == 1 else " / ".join(vals)

        ratio = "" if r["writer"] == "posix" else col("vs_posix", lambda v: f"{v:.2f}" if v >= 0.1 else f"{v:.2g}")
        nodes = max(x["mds_binds_from_nodes"] for x in res)
        out.append(f"| {r['phase']} | {r['writer']} | {r['mds_req']:.3g} | "
                   + " / ".join(f"{x['per_rank']:.0f}" for x in res)
                   + f" | {fmt(res[0]['mds_cap'], r['ior'], a.transfer)}"
                   + f" | {col('achieved', lambda v: fmt(v, r['ior'], a.transfer))}"
                   + f" | {col('binds', str)} | {ratio} | "
                   + ("never" if nodes == float("inf") else str(math.ceil(nodes))) + " |")
    mp = rate / MULTIPART_REQ
    out += ["", f"Multipart ({MULTIPART_REQ} requests per 8 MiB part): the MDS caps uploads at "
            f"{mp:,.0f} parts/s = {mp * PART / GIB:.1f} GiB/s; POSIX writes of large files: no cap.", ""]
    return "\n".join(out)


def size(s):
    s = s.strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(float(s.rstrip("KMG")) * mult)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--ranks-per-node", type=int, default=16)
    ap.add_argument("--mds-rate", default="50000,200000", help="MDS requests/s, comma list: a table each")
    ap.add_argument("--client-ops", action="append", default=[], metavar="PHASE=OPS",
                    help="per-rank POSIX ops/s of a phase when the MDS is not the limit (repeatable)")
    ap.add_argument("--rank-gibs", type=float, default=1.0, help="per-rank ior-easy GiB/s (default rate)")
    ap.add_argument("--transfer", type=size, default=2 << 20, help="IOR transfer size (2MiB)")
    ap.add_argument("--mds-rtt", type=float, default=0.25, help="ms per synchronous MDS request")
    ap.add_argument("--open-requests", type=float, default=1.0, help="MDS requests per open of a read (0-1)")
    ap.add_argument("--data-gibs", type=float, default=1000, help="aggregate GiB/s the storage servers give IOR (0: no cap); default a large centre's")
    ap.add_argument("--transports", default="embedded,remote,http")
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    a = ap.parse_args()
    a.mds_rtt /= 1e3
    a.transports = a.transports.split(",")
    if bad := [t for t in a.transports if t not in TRANSPORTS]:
        ap.error(f"unknown transport {bad}; known: {', '.join(TRANSPORTS)}")
    ops = dict(kv.split("=", 1) for kv in a.client_ops)
    if bad := [p for p in ops if p not in CLIENT_OPS]:
        ap.error(f"unknown phase {bad}; known: {', '.join(CLIENT_OPS)}")
    a.client_ops = {p: float(v) for p, v in ops.items()}
    rates = [float(r) for r in a.mds_rate.split(",")]
    if a.json:
        params = {k: v for k, v in vars(a).items() if k not in ("json", "mds_rate")}
        def clean(v):  # JSON has no infinity: no cap is null
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            return None if v == float("inf") else v
        tables = [{"mds_rate": r, "rows": [clean(x) for x in model(a, r)]} for r in rates]
        json.dump({"params": params, "tables": tables}, sys.stdout, indent=1)
        print()
    else:
        print("\n".join(table(a, r, model(a, r)) for r in rates).rstrip())


if __name__ == "__main__":
    main()
