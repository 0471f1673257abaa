#!/usr/bin/env bash
# Debian's unmodified /usr/bin/s3 (linked to libs3.so.2) running on our
# library: a directory holding it as libs3.so.2 goes first on
# LD_LIBRARY_PATH. Covers create, put, get (bytes compared), list, head,
# delete on file:// and on `s3hpc serve --http`, the host override and the
# failure statuses. The tool exits 0 even on errors, so checks read its
# output. Prints PASS/FAIL per check and a closing
# `libs3 s3 tool: N passed, N failed, N skipped` line; exits 1 on a failure.
#
# Usage: run.sh PATH/TO/libs3.so PATH/TO/s3hpc
set -uo pipefail
lib=$(realpath "$1")
bin=$(realpath "$2")
passed=0 failed=0 skipped=0
if [ ! -x /usr/bin/s3 ]; then
    echo "libs3 s3 tool: 0 passed, 0 failed, 1 skipped (no /usr/bin/s3)"
    exit 0
fi
work=$(mktemp -d /tmp/s3hpc-libs3.XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
    rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/lib"
cp "$lib" "$work/lib/libs3.so.2"
export LD_LIBRARY_PATH="$work/lib" S3_ACCESS_KEY_ID=libs3tool S3_SECRET_ACCESS_KEY=libs3-tool-secret-0123456789
unset S3HPC_LIBS3_HOST

check() { # NAME COMMAND... : passes when COMMAND exits 0
    local name=$1; shift
    if out=$("$@" 2>&1); then
        passed=$((passed + 1)); echo "PASS $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"; echo "$out" | tail -5 | sed 's/^/    /'
    fi
}
# s3 ARGS... with its output in $work/out; fails when it printed ERROR.
s3ok() { /usr/bin/s3 "$@" >"$work/out" 2>&1 && ! grep -q ERROR "$work/out"; }
# s3 ARGS... that must print ERROR: STATUS.
s3err() { local want=$1; shift; /usr/bin/s3 "$@" >"$work/out" 2>&1; grep -q "ERROR: $want\$" "$work/out"; }

head -c 3000017 /dev/urandom >"$work/in"

suite() { # LABEL OPTIONS... : the data path on the transport S3_HOSTNAME names
    local t=$1; shift
    check "$t: the tool loads our library" bash -c "ldd /usr/bin/s3 | grep -q '$work/lib/libs3.so.2'"
    check "$t: create" s3ok "$@" create tbkt
    check "$t: test" bash -c "$(declare -f s3ok); work=$work; s3ok $* test tbkt && grep -q tbkt $work/out"
    check "$t: put" s3ok "$@" put tbkt/dir/obj filename="$work/in"
    check "$t: get, same bytes" bash -c "$(declare -f s3ok); work=$work
        s3ok $* get tbkt/dir/obj filename=$work/back && cmp $work/in $work/back"
    check "$t: get a range" bash -c "$(declare -f s3ok); work=$work
        s3ok $* get tbkt/dir/obj filename=$work/range startByte=1000 byteCount=5000 &&
        cmp <(tail -c +1001 $work/in | head -c 5000) $work/range"
    check "$t: list service" bash -c "$(declare -f s3ok); work=$work; s3ok $* list && grep -q '^tbkt ' $work/out"
    check "$t: list bucket" bash -c "$(declare -f s3ok); work=$work; s3ok $* list tbkt && grep -q '^dir/obj ' $work/out"
    check "$t: list delimiter" bash -c "$(declare -f s3ok); work=$work
        s3ok $* list tbkt delimiter=/ && grep -q 'Common Prefix: dir/' $work/out"
    check "$t: head" bash -c "$(declare -f s3ok); work=$work
        s3ok -s $* head tbkt/dir/obj && grep -q 'Content-Length: 3000017' $work/out"
    check "$t: copy" bash -c "$(declare -f s3ok); work=$work
        s3ok $* copy tbkt/dir/obj tbkt/dir/copy && s3ok $* get tbkt/dir/copy filename=$work/copy &&
        cmp $work/in $work/copy"
    check "$t: not-supported ACL" s3err ErrorNotImplemented "$@" getacl tbkt/dir/obj
    check "$t: missing key" s3err ErrorNoSuchKey "$@" get tbkt/nope filename="$work/x"
    check "$t: missing bucket" s3err ErrorNoSuchBucket "$@" list nobkt
    check "$t: short put body" bash -c "$(declare -f s3err); work=$work
        s3err ErrorIncompleteBody $* put tbkt/short contentLength=100 </dev/null"
    check "$t: delete key" s3ok "$@" delete tbkt/dir/obj
    check "$t: delete copy" s3ok "$@" delete tbkt/dir/copy
    check "$t: key gone" s3err ErrorNoSuchKey "$@" head tbkt/dir/obj
    check "$t: delete bucket" s3ok "$@" delete tbkt
    check "$t: bucket gone" bash -c "$(declare -f s3ok); work=$work
        s3ok $* test tbkt && grep -q 'tbkt  *Does Not Exist' $work/out"
}

S3_HOSTNAME="file://$work/data" suite file
# Programs with a fixed host: the override wins over S3_HOSTNAME.
check "override: S3HPC_LIBS3_HOST" bash -c "$(declare -f s3ok); work=$work
    S3_HOSTNAME=s3.invalid S3HPC_LIBS3_HOST=file://$work/data2 s3ok create obkt && test -d $work/data2/obkt"
check "wrong host: relative file path" bash -c "$(declare -f s3err); work=$work
    S3_HOSTNAME=file://relative s3err NameLookupError list"
check "wrong host: no gateway" bash -c "$(declare -f s3err); work=$work
    S3_HOSTNAME=unix://$work/none.sock s3err FailedToConnect list"

if [ -x "$bin" ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    S3HPC_ACCESS_KEY=$S3_ACCESS_KEY_ID S3HPC_SECRET_KEY=$S3_SECRET_ACCESS_KEY \
        "$bin" serve --http "127.0.0.1:$port" --data "$work/httpdata" >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    S3_HOSTNAME="127.0.0.1:$port" suite http -u
    check "http: presigned URL (gqs)" bash -c "$(declare -f s3ok); work=$work
        export S3_HOSTNAME=127.0.0.1:$port
        s3ok -u create gbkt && s3ok -u put gbkt/k filename=$work/in && s3ok -u gqs gbkt/k &&
        curl -sf -o $work/gqs \"\$(grep -o 'http://[^ ]*' $work/out)\" && cmp $work/in $work/gqs"
    # The HTTP client reports a bad signature as AccessDenied.
    check "http: wrong secret" bash -c "$(declare -f s3err); work=$work
        S3_HOSTNAME=127.0.0.1:$port S3_SECRET_ACCESS_KEY=wrong s3err ErrorAccessDenied -u list"
else
    skipped=$((skipped + 1)); echo "SKIP http (no s3hpc binary at $bin)"
fi

echo "libs3 s3 tool: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
