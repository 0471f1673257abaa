#!/usr/bin/env bash
# The REST baseline: GET throughput of one large object from nginx serving
# the file statically, and from s3hpc's HTTP server serving the same file
# (same path, same page cache) as an object, through the same client, in
# alternating repetitions. A benchmark, not a test.
#
# Usage: scripts/nginx-get.sh [--nginx PATH] [--s3hpc PATH] [--dir DIR] [--size MIB] [--repeat N]
#   --nginx   nginx binary (default: nginx on PATH; Debian: apt-get install nginx)
#   --s3hpc   s3hpc binary (default: target/release/s3hpc, built first)
#   --dir     an absent directory for the data, nginx's prefix and logs
#             (default /tmp/s3hpc-nginx-get); removed afterwards
#   --size    object size in MiB (default 256)
#   --repeat  GETs per server (default 7)
#
# nginx runs from a private configuration in DIR (`nginx -c CONF -p DIR`,
# one worker, sendfile on, no access log) on a free loopback port and is
# stopped by its PID; nothing outside DIR is touched. The client is curl
# writing to /dev/null (SigV4 for s3hpc, `--aws-sigv4`; nginx ignores no
# header it needs). Prints each GET's GiB/s, the medians and s3hpc/nginx.
set -euo pipefail
cd "$(dirname "$0")/.."
nginx=nginx bin= dir=/tmp/s3hpc-nginx-get size=256 repeat=7
while (($#)); do
    case $1 in
        --nginx) nginx=$2; shift 2 ;;
        --s3hpc) bin=$(realpath "$2"); shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
command -v "$nginx" >/dev/null || { echo "error: no nginx at '$nginx' (apt-get install nginx, or --nginx PATH)" >&2; exit 2; }
[ -e "$dir" ] && { echo "error: $dir exists; give an absent --dir" >&2; exit 2; }
if [ -z "$bin" ]; then
    cargo build --release -p s3hpc
    bin=$PWD/target/release/s3hpc
fi
mkdir -p "$dir/data/bucket" "$dir/nginx"
# nginx's workers may run as another user: let them read the data.
chmod 755 "$dir" "$dir/data" "$dir/data/bucket"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1" >&2; return 1; }

head -c "$((size << 20))" /dev/urandom >"$dir/data/bucket/object"
chmod 644 "$dir/data/bucket/object"

nport=$(free_port)
cat >"$dir/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    client_body_temp_path $dir/nginx/body;
    proxy_temp_path $dir/nginx/proxy;
    fastcgi_temp_path $dir/nginx/fastcgi;
    uwsgi_temp_path $dir/nginx/uwsgi;
    scgi_temp_path $dir/nginx/scgi;
    server {
        listen 127.0.0.1:$nport;
        root $dir/data;
    }
}
EOF
"$nginx" -c "$dir/nginx/nginx.conf" -p "$dir/nginx" -e "$dir/nginx/error.log" -g 'daemon off;' &
pids+=($!)
wait_port "$nport"

sport=$(free_port)
export S3HPC_ACCESS_KEY=nginxget S3HPC_SECRET_KEY=nginx-get-secret-0123456789
"$bin" serve --http "127.0.0.1:$sport" --data "$dir/data" >"$dir/serve.log" 2>&1 &
pids+=($!)
wait_port "$sport"

# One GET; prints GiB/s. Extra arguments go to curl.
get() { # URL [curl args]
    local url=$1; shift
    curl -sS --fail -o /dev/null -w '%{size_download} %{time_total}\n' "$@" "$url" |
        awk -v want="$((size << 20))" '$1 != want { print "short body: " $1 " bytes" > "/dev/stderr"; exit 1 }
            { printf "%.3f\n", $1 / $2 / 1073741824 }'
}
nginx_get() { get "http://127.0.0.1:$nport/bucket/object"; }
s3hpc_get() {
    get "http://127.0.0.1:$sport/bucket/object" --aws-sigv4 "aws:amz:us-east-1:s3" \
        --user "$S3HPC_ACCESS_KEY:$S3HPC_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD"
}
# Warm the page cache and both servers.
nginx_get >/dev/null; s3hpc_get >/dev/null

ng=() s3=()
for i in $(seq "$repeat"); do
    if ((i % 2)); then ng+=("$(nginx_get)"); s3+=("$(s3hpc_get)")
    else s3+=("$(s3hpc_get)"); ng+=("$(nginx_get)"); fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mn=$(median "${ng[@]}") ms=$(median "${s3[@]}")
echo "GET of a ${size} MiB object over loopback, curl to /dev/null, $repeat alternating repetitions (GiB/s)"
echo "nginx $("$nginx" -v 2>&1 | sed 's/.*\///'): ${ng[*]}"
echo "s3hpc:        ${s3[*]}"
echo "median: nginx $mn, s3hpc $ms, s3hpc/nginx $(awk -v a="$ms" -v b="$mn" 'BEGIN { printf "%.2f", a / b }')"
