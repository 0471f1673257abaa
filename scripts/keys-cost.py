#!/usr/bin/env python3
"""What a request costs the server by the kind of key that signed it: the
server's CPU time (/proc/PID/stat, user + system) over N HeadObject
requests from boto3, signed with a credentials-file key, a key-store key
or a session from the store, on one `s3hpc serve --http --key-store`.
With --baseline BINARY (an s3hpc without the key store), a second server
of that binary answers the file key too. The kinds take turns, the order
turning each repetition; medians over the repetitions, and each kind's
ratio to the file key.

  scripts/keys-cost.py target/release/s3hpc --python target/py/bin/python \\
      [--baseline OLD/s3hpc] [--n 2000] [--repeat 5]
"""

import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLIENT = r"""
import sys, time, boto3, botocore
port, n, ak, sk = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
token = sys.argv[5] if len(sys.argv) > 5 else None
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                  aws_access_key_id=ak, aws_secret_access_key=sk, aws_session_token=token,
                  config=botocore.config.Config(retries={"max_attempts": 1}))
s3.head_object(Bucket="costb", Key="k")  # connection and signer warm
print("go", flush=True)
sys.stdin.readline()
for _ in range(n):
    s3.head_object(Bucket="costb", Key="k")
print("done", flush=True)
"""

def cpu_seconds(pid):
    """CPU time of the process's live threads, in nanoseconds' resolution
    (schedstat), where /proc/PID/stat counts 10 ms ticks."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e9


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port):
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"server on {port} did not start")


def serve(binary, work, with_store):
    data = tempfile.mkdtemp(dir=work)
    os.mkdir(os.path.join(data, "costb"))
    with open(os.path.join(data, "costb", "k"), "w") as f:
        f.write("x")
    creds = os.path.join(work, "credentials")
    with open(creds, "w") as f:
        f.write("filekey filekey-secret-0123456789\n")
    port = free_port()
    sock = os.path.join(work, f"gw{port}.sock")
    args = [binary, "serve", "--data", data, "--durability", "none", "--http",
            f"127.0.0.1:{port}", "--credentials", creds]
    if with_store:
        args += ["--key-store", os.path.join(work, "store"), "--rpc", f"unix:{sock}"]
    p = subprocess.Popen(args, stderr=subprocess.DEVNULL)
    wait_port(port)
    return p, port, sock


def measure(python, server, port, n, key):
    """Server CPU seconds over n HEADs signed with `key`."""
    c = subprocess.Popen([python, "-c", CLIENT, str(port), str(n), *key], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert c.stdout.readline().strip() == "go"
    before = cpu_seconds(server.pid)
    c.stdin.write("\n")
    c.stdin.flush()
    assert c.stdout.readline().strip() == "done"
    after = cpu_seconds(server.pid)
    c.wait()
    return after - before


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--baseline", help="an s3hpc binary without the key store, for the file key")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        os.chmod(work, 0o700)
        servers = []
        try:
            new, port, sock = serve(a.binary, work, True)
            servers.append(new)
            keys = {"file": (new, port, ["filekey", "filekey-secret-0123456789"])}
            for kind, cmd in (("store", ["keys", "create"]), ("session", ["creds", "--duration", "2h"])):
                out = subprocess.run([a.binary, *cmd, "--socket", sock], capture_output=True,
                                     text=True, check=True).stdout
                v = dict(re.findall(r"export (\w+)=(\S+)", out))
                key = [v["AWS_ACCESS_KEY_ID"], v["AWS_SECRET_ACCESS_KEY"]]
                if "AWS_SESSION_TOKEN" in v:
                    key.append(v["AWS_SESSION_TOKEN"])
                keys[kind] = (new, port, key)
            if a.baseline:
                old, oport, _ = serve(a.baseline, work, False)
                servers.append(old)
                keys = {"file (baseline)": (old, oport, keys["file"][2]), **keys}
            kinds = list(keys)
            got = {k: [] for k in kinds}
            for r in range(a.repeat):
                for kind in kinds[r % len(kinds):] + kinds[: r % len(kinds)]:
                    server, p, key = keys[kind]
                    got[kind].append(measure(a.python, server, p, a.n, key) / a.n * 1e6)
        finally:
            for s in servers:
                s.send_signal(signal.SIGTERM)
                s.wait()
    base = statistics.median(got[kinds[0]])
    print(f"HeadObject: server CPU per request by key kind ({a.n} requests, median of {a.repeat})")
    print(f"{'key':<16} {'CPU us':>8} {'range':>15} {'vs ' + kinds[0]:>22}")
    for k in kinds:
        m = statistics.median(got[k])
        print(f"{k:<16} {m:>8.1f} {min(got[k]):>7.1f}-{max(got[k]):<7.1f} {m / base:>22.3f}")


if __name__ == "__main__":
    main()
