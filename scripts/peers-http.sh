#!/usr/bin/env bash
# The bench's `http` backend against s3hpc's own server, MinIO and versitygw
# on the same file system, each run with POSIX beside it (every figure is
# then also a ratio to POSIX measured in the same run). A benchmark, not a
# test. The peers are built outside this repository and passed by path:
#
#   GOBIN=/work/peers/bin go install github.com/minio/minio@latest
#   GOBIN=/work/peers/bin go install github.com/versity/versitygw/cmd/versitygw@latest
#
# Usage: scripts/peers-http.sh [--minio PATH] [--versitygw PATH] [--dir DIR]
#        [-- extra `s3hpc bench io500` arguments, e.g. --stonewall 2 --ranks 2]
# Results: DIR/results-<server>.json, each run's tables on stdout, and at
# the end the comparison of the three (scripts/peers-table.py DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
minio= versitygw= dir=/tmp/s3hpc-peers
while (($#)); do
    case $1 in
        --minio) minio=$2; shift 2 ;;
        --versitygw) versitygw=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
extra=("$@")
[ -e "$dir" ] && { echo "error: $dir exists; give an absent --dir" >&2; exit 2; }
mkdir -p "$dir"
cargo build --release -p s3hpc
bin=target/release/s3hpc
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"/data-* "$dir"/bench-*; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1" >&2; return 1; }
export S3HPC_ACCESS_KEY=peersbench S3HPC_SECRET_KEY=peers-bench-secret-0123456789

bench() { # NAME BACKENDS [--endpoint URL]
    local name=$1 backends=$2; shift 2
    echo "=== $name"
    "$bin" bench io500 --backends "$backends" --dir "$dir/bench-$name" \
        --json "$dir/results-$name.json" "$@" "${extra[@]}"
}

# s3hpc: posix, embedded and http (its own server, started by the bench).
bench s3hpc posix,embedded,http

if [ -n "$minio" ]; then
    port=$(free_port) cport=$(free_port)
    MINIO_ROOT_USER=$S3HPC_ACCESS_KEY MINIO_ROOT_PASSWORD=$S3HPC_SECRET_KEY \
        "$minio" server "$dir/data-minio" --address "127.0.0.1:$port" \
        --console-address "127.0.0.1:$cport" --quiet >"$dir/minio.log" 2>&1 &
    pids+=($!); wait_port "$port"; sleep 2
    bench minio posix,http --endpoint "http://127.0.0.1:$port"
fi
if [ -n "$versitygw" ]; then
    port=$(free_port)
    mkdir -p "$dir/data-versitygw"
    "$versitygw" --access "$S3HPC_ACCESS_KEY" --secret "$S3HPC_SECRET_KEY" \
        --port "127.0.0.1:$port" posix "$dir/data-versitygw" >"$dir/versitygw.log" 2>&1 &
    pids+=($!); wait_port "$port"
    bench versitygw posix,http --endpoint "http://127.0.0.1:$port"
fi
echo "=== comparison (medians; s3hpc over the better peer)"
python3 scripts/peers-table.py "$dir"
