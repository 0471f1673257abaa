#!/usr/bin/env python3
"""The most any S3-over-HTTP GET can reach on this machine: PAIRS
sender/receiver process pairs over loopback TCP, each sender sending 2 MiB
messages from memory and each receiver receiving them into one reused
buffer. No HTTP, no file, no verification: only the two copies and the TCP
work that every server and client pair pays for a GET body. A benchmark,
not a test.

    scripts/loopback-ceiling.py [--pairs 2] [--seconds 4] [--repeat 3]
"""

import argparse
import multiprocessing as mp
import socket
import statistics
import time

MESSAGE = 2 << 20


def sender(port, seconds):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    body, end = bytes(MESSAGE), time.monotonic() + seconds
    while time.monotonic() < end:
        s.sendall(body)
    s.close()


def receiver(listener, results):
    conn, _ = listener.accept()
    view, received, start = memoryview(bytearray(MESSAGE)), 0, time.monotonic()
    while True:
        got = conn.recv_into(view)
        if got == 0:
            break
        received += got
    results.put((received, time.monotonic() - start))


def once(pairs, seconds):
    """GiB/s of all pairs together."""
    results, procs = mp.Queue(), []
    for _ in range(pairs):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        procs.append(mp.Process(target=receiver, args=(listener, results)))
        procs.append(mp.Process(target=sender, args=(listener.getsockname()[1], seconds)))
        for p in procs[-2:]:
            p.start()
        listener.close()
    got = [results.get() for _ in range(pairs)]
    for p in procs:
        p.join()
    return sum(n for n, _ in got) / max(t for _, t in got) / 2**30


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--seconds", type=float, default=4)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    runs = [once(a.pairs, a.seconds) for _ in range(a.repeat)]
    shown = ", ".join(f"{r:.2f}" for r in runs)
    print(f"{a.pairs} pairs, 2 MiB messages: median {statistics.median(runs):.2f} GiB/s ({shown})")


if __name__ == "__main__":
    main()
