#!/usr/bin/env bash
# Real, unmodified S3 clients against `s3hpc serve --http`: Debian's aws CLI,
# boto3 (Debian's and the latest from PyPI), rclone, s3cmd, libs3's `s3` tool (SigV2), curl, and the negative cases
# (bad credentials, hostile paths, huge headers, dropped uploads, 500
# concurrent connections). Servers listen on 127.0.0.1 only; every load is
# bounded in count and time. Prints `PASS`/`FAIL` per check and a closing
# `real clients: N passed, N failed, 0 skipped` line; exits 1 on a failure.
#
# Usage: run.sh PATH/TO/s3hpc   (scripts/test installs the clients first)
# S3HPC_AWS: the aws CLI to use (scripts/test installs the latest from PyPI);
# without it, Debian's /usr/bin/aws.
# S3HPC_PYTHON: the Python whose boto3 to use (scripts/test makes a
# virtualenv with the latest from PyPI); without it, /usr/bin/python3.
set -uo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/s3hpc-clients.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0
check() { # NAME COMMAND... : passes when COMMAND exits 0
    local name=$1; shift
    if out=$("$@" 2>&1); then
        passed=$((passed + 1)); echo "PASS $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"; echo "$out" | tail -5 | sed 's/^/    /'
    fi
}
. "$here/common.sh"
start() { # DATA PORT ARGS... : a server in the background
    local data=$1 port=$2; shift 2
    "$bin" serve --http "127.0.0.1:$port" --data "$data" "$@" >>"$work/server.log" 2>&1 &
    pids+=($!)
    wait_port "$port" || { echo "server on $port did not start:"; cat "$work/server.log"; exit 1; }
}

export S3HPC_ACCESS_KEY=realclient S3HPC_SECRET_KEY=real-client-secret-0123456789
port=$(free_port); start "$work/data" "$port"
ep="http://127.0.0.1:$port"
head -c 3000 /dev/urandom >"$work/small"
head -c $((100 << 20)) /dev/urandom >"$work/big"

# ---- aws CLI (Debian's, whatever comes first on PATH)
aws_() {
    AWS_ACCESS_KEY_ID=$S3HPC_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3HPC_SECRET_KEY AWS_DEFAULT_REGION=us-east-1 \
    AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true \
    AWS_PAGER= "${S3HPC_AWS:-/usr/bin/aws}" --endpoint-url "$ep" "$@"
}
check "aws mb/ls" bash -c "$(declare -f aws_); ep=$ep; aws_ s3 mb s3://awsb && aws_ s3 ls | grep -q awsb"
check "aws put/head small with metadata" bash -c "$(declare -f aws_); ep=$ep
    aws_ s3 cp $work/small s3://awsb/dir/small --metadata color=red --content-type text/x-aws &&
    aws_ s3api head-object --bucket awsb --key dir/small >$work/head.json &&
    grep -q '\"color\": \"red\"' $work/head.json && grep -q text/x-aws $work/head.json"
check "aws get small" bash -c "$(declare -f aws_); ep=$ep; aws_ s3 cp s3://awsb/dir/small $work/small.back && cmp $work/small $work/small.back"
check "aws 100 MiB multipart put/get" bash -c "$(declare -f aws_); ep=$ep
    aws_ s3 cp $work/big s3://awsb/big && aws_ s3 cp s3://awsb/big $work/big.back && cmp $work/big $work/big.back && rm $work/big.back"
check "aws list prefix/delimiter (v2 and v1)" bash -c "$(declare -f aws_); ep=$ep
    aws_ s3 cp $work/small s3://awsb/dir/sub/x >/dev/null &&
    aws_ s3api list-objects-v2 --bucket awsb --prefix dir/ --delimiter / --output text --query 'CommonPrefixes[].Prefix' | grep -qx dir/sub/ &&
    aws_ s3api list-objects --bucket awsb --prefix dir/ --delimiter / --output text --query 'Contents[].Key' | grep -qx dir/small"
check "aws presigned GET with curl" bash -c "$(declare -f aws_); ep=$ep
    url=\$(aws_ s3 presign s3://awsb/dir/small --expires-in 60) && curl -sf \"\$url\" -o $work/presigned && cmp $work/small $work/presigned"
check "aws wrong secret is SignatureDoesNotMatch" bash -c "$(declare -f aws_); ep=$ep
    ! S3HPC_SECRET_KEY=wrong aws_ s3 ls 2>$work/err; grep -q SignatureDoesNotMatch $work/err"
check "aws unknown key is InvalidAccessKeyId" bash -c "$(declare -f aws_); ep=$ep
    ! S3HPC_ACCESS_KEY=nobody aws_ s3 ls 2>$work/err; grep -q InvalidAccessKeyId $work/err"
check "aws rm/rb" bash -c "$(declare -f aws_); ep=$ep; aws_ s3 rm --recursive s3://awsb >/dev/null && aws_ s3 rb s3://awsb && ! aws_ s3 ls | grep -q awsb"

# ---- boto3: Debian's, and the latest from PyPI (S3HPC_PYTHON, the
# virtualenv scripts/test makes): the same checks, and with the latest the
# calls today's SDKs and tools make (conditional writes and their races,
# AWS-shaped errors, versioning, tagging, ACLs, ListObjectVersions).
py=("${S3HPC_PYTHON:-/usr/bin/python3}")
relay() { # counts the PASS/FAIL lines of the Python check script $1; $2 tags them
    local results=0
    while read -r line; do
        case $line in
            PASS*) passed=$((passed + 1)); results=$((results + 1)); echo "$line${2:-}" ;;
            FAIL*) failed=$((failed + 1)); results=$((results + 1)); echo "$line${2:-}" ;;
            *) echo "    $line" ;;
        esac
    done
    if [ "$results" -eq 0 ]; then failed=$((failed + 1)); echo "FAIL $1 ran no checks"; fi
}
relay boto3_checks.py < <(timeout 600 /usr/bin/python3 "$here/boto3_checks.py" "$ep" "$S3HPC_ACCESS_KEY" "$S3HPC_SECRET_KEY" "$work" 2>&1)
if [ -n "${S3HPC_PYTHON:-}" ]; then
    mkdir -p "$work/latest"
    for script in boto3_checks.py sdk_calls_checks.py; do
        relay "$script" " (latest)" < <(timeout 600 "${py[@]}" "$here/$script" "$ep" "$S3HPC_ACCESS_KEY" "$S3HPC_SECRET_KEY" "$work/latest" 2>&1)
    done
fi

# ---- rclone (Debian's), default settings apart from the endpoint
rc_() {
    env -u AWS_CA_BUNDLE RCLONE_CONFIG=/dev/null RCLONE_CONFIG_S3HPC_TYPE=s3 RCLONE_CONFIG_S3HPC_PROVIDER=Other \
        RCLONE_CONFIG_S3HPC_ACCESS_KEY_ID=$S3HPC_ACCESS_KEY RCLONE_CONFIG_S3HPC_SECRET_ACCESS_KEY=$S3HPC_SECRET_KEY \
        RCLONE_CONFIG_S3HPC_ENDPOINT=$ep rclone "$@"
}
mkdir -p "$work/rc/sub" && cp "$work/small" "$work/rc/a" && head -c $((20 << 20)) /dev/urandom >"$work/rc/sub/big" && echo hi >"$work/rc/sub/c"
check "rclone mkdir/copy/ls" bash -c "$(declare -f rc_); ep=$ep
    rc_ mkdir s3hpc:rcloneb && rc_ copy $work/rc s3hpc:rcloneb/dst &&
    rc_ ls s3hpc:rcloneb | grep -q ' dst/sub/big\$' && [ \$(rc_ ls s3hpc:rcloneb | wc -l) = 3 ]"
check "rclone check (sizes and MD5s)" bash -c "$(declare -f rc_); ep=$ep; rc_ check $work/rc s3hpc:rcloneb/dst"
check "rclone sync (add, remove)" bash -c "$(declare -f rc_); ep=$ep
    echo new >$work/rc/a2 && rm $work/rc/sub/c && rc_ sync $work/rc s3hpc:rcloneb/dst &&
    [ \"\$(rc_ lsf -R --files-only s3hpc:rcloneb/dst | sort | tr '\n' ' ')\" = 'a a2 sub/big ' ] && rc_ check $work/rc s3hpc:rcloneb/dst"
check "rclone copy back" bash -c "$(declare -f rc_); ep=$ep
    rc_ copy s3hpc:rcloneb/dst $work/rc.back && cmp $work/rc/sub/big $work/rc.back/sub/big"
check "rclone delete/purge" bash -c "$(declare -f rc_); ep=$ep
    rc_ delete s3hpc:rcloneb/dst/sub && [ \"\$(rc_ lsf -R --files-only s3hpc:rcloneb | sort | tr '\n' ' ')\" = 'dst/a dst/a2 ' ] &&
    rc_ purge s3hpc:rcloneb && ! rc_ lsd s3hpc: | grep -q rcloneb"

# ---- versioning-heavy clients, unmodified: rclone's --s3-versions reads
# old versions as files, restic backs up into a versioned bucket.
check "rclone --s3-versions lists and reads old versions" bash -c "$(declare -f rc_ aws_); ep=$ep
    aws_ s3 mb s3://rcver >/dev/null &&
    aws_ s3api put-bucket-versioning --bucket rcver --versioning-configuration Status=Enabled &&
    echo one >$work/ver && rc_ copyto $work/ver s3hpc:rcver/f && sleep 1.1 &&
    echo two >$work/ver && rc_ copyto $work/ver s3hpc:rcver/f &&
    old=\$(rc_ lsf --s3-versions s3hpc:rcver | grep '^f-v') && [ \$(rc_ lsf --s3-versions s3hpc:rcver | wc -l) = 2 ] &&
    [ \"\$(rc_ cat --s3-versions s3hpc:rcver/\$old)\" = one ] && [ \"\$(rc_ cat s3hpc:rcver/f)\" = two ] &&
    rc_ delete s3hpc:rcver/f && [ \$(rc_ lsf s3hpc:rcver | wc -l) = 0 ] &&
    [ \$(rc_ lsf --s3-versions s3hpc:rcver | wc -l) = 2 ]"
if command -v restic >/dev/null; then
    check "restic backup, prune, check, restore in a versioned bucket" bash -c "$(declare -f aws_); ep=$ep
        export AWS_ACCESS_KEY_ID=$S3HPC_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3HPC_SECRET_KEY RESTIC_PASSWORD=restic-test
        export RESTIC_CACHE_DIR=$work/restic-cache
        aws_ s3 mb s3://resticb >/dev/null &&
        aws_ s3api put-bucket-versioning --bucket resticb --versioning-configuration Status=Enabled &&
        mkdir -p $work/rs/src/sub && cp $work/small $work/rs/src/sub/small && echo hi >$work/rs/src/a && cd $work/rs &&
        r=s3:$ep/resticb && restic -r \$r init -q && restic -r \$r backup -q src &&
        echo more >>src/a && restic -r \$r backup -q src &&
        restic -r \$r forget -q --keep-last 1 --prune && restic -r \$r check -q &&
        restic -r \$r restore latest --target back -q && diff -r src back/src"
fi

# ---- s3cmd (SigV4, path style)
cat >"$work/s3cfg" <<CFG
[default]
access_key = $S3HPC_ACCESS_KEY
secret_key = $S3HPC_SECRET_KEY
host_base = 127.0.0.1:$port
host_bucket = 127.0.0.1:$port
use_https = False
signature_v2 = False
bucket_location = us-east-1
CFG
s3c() { s3cmd -c "$work/s3cfg" "$@"; }
check "s3cmd mb/ls" bash -c "$(declare -f s3c); work=$work; s3c mb s3://s3cmdb && s3c ls | grep -q s3://s3cmdb"
check "s3cmd put/get/info with metadata" bash -c "$(declare -f s3c); work=$work
    s3c put --add-header=x-amz-meta-shape:round $work/small s3://s3cmdb/d/small && s3c get --force s3://s3cmdb/d/small $work/s3cmd.back &&
    cmp $work/small $work/s3cmd.back && s3c info s3://s3cmdb/d/small | grep -q 'x-amz-meta-shape: round'"
check "s3cmd 100 MiB multipart" bash -c "$(declare -f s3c); work=$work
    s3c put --multipart-chunk-size-mb=15 $work/big s3://s3cmdb/big && s3c get --force s3://s3cmdb/big $work/big.back && cmp $work/big $work/big.back && rm $work/big.back"
check "s3cmd ls prefix" bash -c "$(declare -f s3c); work=$work; s3c ls s3://s3cmdb/d/ | grep -q s3://s3cmdb/d/small"
check "s3cmd del/rb" bash -c "$(declare -f s3c); work=$work; s3c del --recursive --force s3://s3cmdb && s3c rb s3://s3cmdb"

# ---- Debian's libs3 2.0 `s3` tool: SigV2 only
s3t() { S3_ACCESS_KEY_ID=$S3HPC_ACCESS_KEY S3_SECRET_ACCESS_KEY=$S3HPC_SECRET_KEY S3_HOSTNAME=127.0.0.1:$port /usr/bin/s3 -u -r 0 "$@"; }
check "libs3 s3 (SigV2) create/put/get/list/delete" bash -c "$(declare -f s3t); port=$port
    s3t create libs3b && s3t put libs3b/k filename=$work/small && s3t get libs3b/k filename=$work/libs3.back &&
    cmp $work/small $work/libs3.back && s3t list libs3b | grep -q '^k ' && s3t delete libs3b/k && s3t delete libs3b"

# ---- negative cases over raw HTTP
check "unsigned request is AccessDenied" bash -c "curl -s $ep/ | grep -q '<Code>AccessDenied</Code>'"
check "1 MiB header is rejected and the server lives on" bash -c "
    python3 -c 'print(\"X-Big: \" + \"a\" * (1 << 20))' >$work/bigheader
    code=\$(timeout 20 curl -s -o /dev/null -w '%{http_code}' -H @$work/bigheader $ep/ || true)
    [ \"\$code\" != 200 ] && curl -s $ep/ | grep -q AccessDenied"
# An anonymous server for paths no signing client would send.
aport=$(free_port); start "$work/anon" "$aport" --anonymous --virtual-host s3.localhost
aep="http://127.0.0.1:$aport"
# Checksums and aws-chunked bodies (header and trailer, signed and
# anonymous), multipart COMPOSITE/FULL_OBJECT, GetObjectAttributes.
relay checksum_checks.py < <(timeout 600 "${py[@]}" "$here/checksum_checks.py" "$ep" "$aep" "$S3HPC_ACCESS_KEY" "$S3HPC_SECRET_KEY" 2>&1)
curl -sf -X PUT "$aep/anonb" >/dev/null
check "virtual-host-style addressing" bash -c "
    curl -sf -X PUT --data vh -H 'Host: anonb.s3.localhost:$aport' $aep/vhost-key >/dev/null &&
    curl -sf $aep/anonb/vhost-key | grep -qx vh &&
    curl -sf -H 'Host: anonb.s3.localhost:$aport' '$aep/?list-type=2' | grep -q '<Key>vhost-key</Key>' &&
    curl -sf -X DELETE -H 'Host: anonb.s3.localhost:$aport' $aep/vhost-key"
check "encoded traversal and NUL keys never leave the data root" bash -c "
    for p in '%2e%2e%2fescape1' '%2e%2e/%2e%2e/escape2' '..%2f..%2fescape3' 'a%00b' '%2e%2e%2f%2e%2e%2fescape4'; do
        code=\$(curl -s --path-as-is -o /dev/null -w '%{http_code}' -X PUT --data x $aep/anonb/\$p)
        case \$code in 2*) echo \"PUT \$p answered \$code\"; exit 1;; esac
    done
    ! find $work -name 'escape*' | grep -q . &&
    ! curl -s --path-as-is $aep/anonb/..%2f..%2f..%2f..%2fetc%2fpasswd | grep -q root: &&
    [ -z \"\$(ls -A $work/anon/anonb)\" ]"
check "a client that disconnects mid-upload leaves nothing visible" python3 -c "
import socket, time, subprocess, sys
s = socket.create_connection(('127.0.0.1', $aport))
s.sendall(b'PUT /anonb/partial HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n' + b'x' * (1 << 20))
time.sleep(0.3); s.close(); time.sleep(0.5)
listing = subprocess.run(['curl', '-s', '$aep/anonb?list-type=2'], capture_output=True, text=True).stdout
assert 'partial' not in listing, listing
import os
left = [f for f in os.listdir('$work/anon/anonb')]
assert left == [], left
"
check "500 concurrent connections are all served within 60 s" timeout 60 python3 -c "
import socket, threading
N = 500; ok = []
def one(i):
    s = socket.create_connection(('127.0.0.1', $aport), timeout=50)
    barrier.wait()
    s.sendall(b'GET /anonb?list-type=2 HTTP/1.1\r\nHost: localhost:$aport\r\nConnection: close\r\n\r\n')
    data = b''
    while chunk := s.recv(65536): data += chunk
    ok.append(data.startswith(b'HTTP/1.1 200'))
barrier = threading.Barrier(N)
ts = [threading.Thread(target=one, args=(i,)) for i in range(N)]
[t.start() for t in ts]; [t.join() for t in ts]
assert len(ok) == N and all(ok), (len(ok), ok.count(False))
"

echo "real clients: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
