#!/usr/bin/env python3
"""Where the CPU time of S3 over HTTP goes, by component, from a perf profile.

    perf record -F 1000 --call-graph dwarf,32768 -o perf.data <command>
    perf script -i perf.data -F comm,tid,ip,sym,dso | scripts/perf-breakdown.py

Each sample is charged to one component: kernel samples by what the kernel
was doing (network, file system, scheduling, memory), user samples by the
nearest frame, walking from the leaf towards the root, that belongs to a
component (so a malloc or memcpy counts for whoever called it). Threads
named `s3hpc-http*` are the server, every other thread the client.
"""

import re
import sys
from collections import Counter

# (component, substrings of a frame's symbol); the first rule that matches
# a frame wins, so specific rules come before general ones.
USER_RULES = [
    ("SigV4/V2 check (s3s)", ["s3s::sig_v4", "s3s::sig_v2", "s3s::ops::signature",
                              "s3s::utils::crypto", "s3s::auth"]),
    ("SigV4 signing (client)", ["rusty_s3::signing", "rusty_s3::sign", "s3hpc_client::http::sigv4"]),
    ("URL building (client)", ["rusty_s3::", "url::"]),
    ("XML and DTO conversion (s3s)", ["s3s::xml", "quick_xml", "s3s::dto", "s3s::ops::generated",
                                      "s3s::http", "s3s::ops", "s3s::service", "s3s::"]),
    ("engine (user space)", ["s3hpc_store::"]),
    ("operation mapping (s3hpc-http)", ["s3hpc_http::"]),
    ("HTTP/1.1 (hyper)", ["hyper::", "hyper_util::", "httparse::"]),
    ("HTTP/1.1 (ureq)", ["ureq::", "ureq_proto::"]),
    ("client glue (s3hpc-client)", ["s3hpc_client::"]),
    ("tokio runtime", ["tokio::"]),
]
KERNEL_RULES = [
    ("kernel: scheduling, futex", ["finish_task_switch", "__schedule", "schedule", "futex",
                                   "try_to_wake_up", "pick_next", "ttwu", "enqueue_task",
                                   "dequeue_task", "sched_"]),
    ("kernel: network", ["tcp_", "sock_", "inet_", "skb", "ep_", "epoll", "ip_", "net_rx",
                         "loopback", "__dev_queue", "unix_stream", "sys_sendto", "sys_recvfrom",
                         "__sys_accept", "__sys_connect", "sock_poll", "__netif", "softirq"]),
    ("kernel: file system", ["shmem", "ext4", "vfs_", "path_", "d_lookup", "lookup_", "filp_open",
                             "unlink", "statx", "getdents", "filemap", "dentry", "inode", "openat",
                             "namei", "rename", "jbd2", "link_path", "dput", "fsnotify", "xattr"]),
    ("kernel: memory", ["page_fault", "do_anonymous", "mmap", "munmap", "madvise", "clear_page",
                        "handle_mm"]),
]
SYMBOL = re.compile(r"^\s*[0-9a-f]+ (.*) \((.*)\)$")


def samples(lines):
    """Yields (comm, [(symbol, dso), ...] from leaf to root)."""
    comm, frames = None, []
    for line in lines:
        if not line.strip():
            if comm is not None:
                yield comm, frames
            comm, frames = None, []
        elif not line[0].isspace():
            comm, frames = line.split()[0], []
        else:
            m = SYMBOL.match(line)
            if m:
                frames.append((m.group(1), m.group(2)))
    if comm is not None:
        yield comm, frames


def first_match(rules, symbols):
    for sym in symbols:
        for name, needles in rules:
            if any(n in sym for n in needles):
                return name
    return None


def component(frames):
    if not frames:
        return "unknown"
    if "kernel" in frames[0][1]:
        kernel = [s for s, d in frames if "kernel" in d]
        return first_match(KERNEL_RULES, kernel) or "kernel: other (syscall entry/exit)"
    user = [s for s, _ in frames]
    found = first_match(USER_RULES, user)
    if found:
        return found
    leaf = user[0]
    if "memmove" in leaf or "memcpy" in leaf or "memset" in leaf:
        return "memcpy outside the components"
    if "malloc" in leaf or "free" in leaf or "alloc" in leaf:
        return "allocator outside the components"
    return "other user space"


def main():
    counts = {"server": Counter(), "client": Counter()}
    for comm, frames in samples(sys.stdin):
        side = "server" if comm.startswith("s3hpc-http") else "client"
        counts[side][component(frames)] += 1
    total = sum(sum(c.values()) for c in counts.values())
    if total == 0:
        sys.exit("no samples on stdin (pipe `perf script -F comm,tid,ip,sym,dso` into this)")
    for side in ("server", "client"):
        c = counts[side]
        n = sum(c.values())
        print(f"\n{side}: {n} samples, {100 * n / total:.1f}% of all")
        print(f"| component | % of {side} | % of all |")
        print("|---|---|---|")
        for name, k in c.most_common():
            print(f"| {name} | {100 * k / n:.1f} | {100 * k / total:.1f} |")


if __name__ == "__main__":
    main()
