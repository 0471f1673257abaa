#!/usr/bin/env bash
# `s3hpc serve --tls-cert/--tls-key` against the current boto3 (from PyPI,
# in a virtualenv that scripts/test makes): signed and anonymous uploads
# stored byte-exactly over HTTPS, the setup errors (missing file, key that
# does not match), plain HTTP to the TLS port, signature time limits and a
# body swapped under its signed hash. Certificates come from the openssl
# CLI. Servers listen on 127.0.0.1 only. Prints `PASS`/`FAIL` per check and
# a closing `real clients: N passed, N failed, 0 skipped` line.
#
# Usage: https.sh PATH/TO/s3hpc PATH/TO/python-with-boto3
set -uo pipefail
bin=$(realpath "$1")
python=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/s3hpc-https.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0
count() {
    while read -r line; do
        case $line in
            PASS*) passed=$((passed + 1)); echo "$line" ;;
            FAIL*) failed=$((failed + 1)); echo "$line" ;;
            *) echo "    $line" ;;
        esac
    done
}
check() { # NAME COMMAND... : passes when COMMAND exits 0
    local name=$1; shift
    if out=$("$@" 2>&1); then echo "PASS https $name"; else echo "FAIL https $name"; echo "$out" | tail -5; fi
}
. "$here/common.sh"
start() { # DATA PORT ARGS... : a server in the background
    local data=$1 port=$2; shift 2
    "$bin" serve --http "127.0.0.1:$port" --data "$data" "$@" >>"$work/server.log" 2>&1 &
    pids+=($!)
    wait_port "$port" || { echo "server on $port did not start:"; cat "$work/server.log"; exit 1; }
}
cert() { # NAME: NAME.pem and NAME.key, self-signed for 127.0.0.1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$work/$1.key" -out "$work/$1.pem" 2>/dev/null
}
cert server && cert other

export S3HPC_ACCESS_KEY=tlsclient S3HPC_SECRET_KEY=tls-client-secret-0123456789
refused() { # EXPECTED-MESSAGE ARGS... : serve exits at once with the message
    local want=$1; shift
    ! out=$(timeout 10 "$bin" serve --http 127.0.0.1:0 --data "$work/never" "$@" 2>&1) &&
        grep -q "$want" <<<"$out" || { echo "$out"; return 1; }
}
count < <(
    check "missing certificate file is named" refused "reading the TLS certificate $work/none.pem" \
        --tls-cert "$work/none.pem" --tls-key "$work/server.key"
    check "key that does not match the certificate" refused "does not match the certificate" \
        --tls-cert "$work/server.pem" --tls-key "$work/other.key"
    check "a key file given as the certificate" refused "no PEM CERTIFICATE" \
        --tls-cert "$work/server.key" --tls-key "$work/server.key"
)

port=$(free_port); start "$work/data" "$port" --tls-cert "$work/server.pem" --tls-key "$work/server.key"
aport=$(free_port); start "$work/anon" "$aport" --anonymous --tls-cert "$work/server.pem" --tls-key "$work/server.key"
count < <(timeout 600 "$python" "$here/https_checks.py" "https://127.0.0.1:$port" \
    "https://127.0.0.1:$aport" "$S3HPC_ACCESS_KEY" "$S3HPC_SECRET_KEY" "$work/server.pem" "$work" 2>&1)
count < <(
    check "the server still serves after all of it" bash -c \
        "curl -s --cacert $work/server.pem https://127.0.0.1:$port/ | grep -q AccessDenied"
    check "no temporaries left" bash -c "! find $work/data $work/anon -name '*s3hpc-tmp*' | grep -q ."
)
echo "real clients: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
