#!/usr/bin/env bash
# A centre's keys end to end, with real Linux users and real clients: two
# `s3hpc serve --http` share one --key-store; user A makes a key with
# `s3hpc keys create` over the first server's socket and uses it on the
# second, without a restart, through boto3, the aws CLI and rclone (the
# standard AWS_* variables); the files it writes are A's; user B cannot
# revoke it; once revoked, both servers refuse it within 10 s. `s3hpc
# creds --duration 3s` gives a session that works, then fails with
# ExpiredToken. SIGHUP re-reads --credentials. No secret reaches a log.
# Servers listen on 127.0.0.1 only. Prints `PASS`/`FAIL` per check and a
# closing `real clients: N passed, N failed, N skipped` line.
#
# Usage: keys.sh PATH/TO/s3hpc PATH/TO/python-with-boto3 PATH/TO/aws
set -uo pipefail
bin=$(realpath "$1")
# Not resolved: a virtualenv's python is a link to the system's.
python=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
aws=${3:-aws}
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null; then
    echo "keys: skipped (making Linux users needs root and useradd)"
    echo "real clients: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
work=$(mktemp -d /tmp/s3hpc-keys.XXXXXX)
chmod 755 "$work"
ua=s3ka$$ ub=s3kb$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    userdel "$ua" 2>/dev/null; userdel "$ub" 2>/dev/null
    groupdel "$ua" 2>/dev/null; groupdel "$ub" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
useradd -M -U -s /usr/sbin/nologin "$ua" && useradd -M -U -s /usr/sbin/nologin "$ub" || {
    echo "real clients: 0 passed, 1 failed, 0 skipped"
    exit 1
}
passed=0 failed=0
suite=keys
. "$(dirname "$0")/common.sh"

data=$work/data store=$work/store
mkdir "$data" && chmod 1777 "$data"
printf 'admin admin-secret-0123456789\n' >"$work/credentials"
pa=$(free_port) pb=$(free_port)
"$bin" serve --data "$data" --durability none --http "127.0.0.1:$pa" --rpc "unix:$work/a.sock" \
    --key-store "$store" --credentials "$work/credentials" >>"$work/a.log" 2>&1 &
pids+=($!)
pid_a=$!
wait_port "$pa" || { cat "$work/a.log"; echo "real clients: 0 passed, 1 failed, 0 skipped"; exit 1; }
"$bin" serve --data "$data" --durability none --http "127.0.0.1:$pb" --key-store "$store" \
    --access-log "$work/access-b.log" >>"$work/b.log" 2>&1 &
pids+=($!)
wait_port "$pb" || { cat "$work/b.log"; echo "real clients: 0 passed, 1 failed, 0 skipped"; exit 1; }

mode=$(stat -c %a "$store")
[ "$mode" = 700 ] && pass "the key store is made private (0700)" || fail "the key store is made private" "mode $mode"

# A makes a key over server A's socket, as itself.
if out=$(as_user "$ua" "$bin" keys create --socket "$work/a.sock" 2>"$work/create.err"); then
    eval "$out"
    [[ $AWS_ACCESS_KEY_ID == S3HK* ]] && pass "keys create prints export lines" || fail "keys create prints export lines" "$out"
else
    fail "keys create over the socket" "$(cat "$work/create.err")"
fi
key_a=${AWS_ACCESS_KEY_ID:-none}
secrets=("${AWS_SECRET_ACCESS_KEY:-}")
# ... and uses it on server B, which was never restarted: B sees the new
# key at its next look at the store (every second).
t0=$(date +%s.%N)
for _ in $(seq 50); do
    [ "$(py "$pb" "print(code(lambda: s3.list_buckets()))" 2>&1)" = OK ] && break
    sleep 0.2
done
took=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
r=$(py "$pb" "s3.create_bucket(Bucket='keysa'); s3.put_object(Bucket='keysa', Key='k', Body=b'of a'); print(s3.get_object(Bucket='keysa', Key='k')['Body'].read().decode())" 2>&1)
[ "$r" = "of a" ] && pass "the key works on the other server (boto3, after ${took} s)" || fail "the key works on the other server (boto3)" "$r"
owner=$(stat -c %U "$data/keysa/k" 2>/dev/null)
[ "$owner" = "$ua" ] && pass "what the key writes is the user's" || fail "what the key writes is the user's" "owner: $owner"
r=$(env AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_DEFAULT_REGION=us-east-1 \
    "$aws" --endpoint-url "http://127.0.0.1:$pb" s3 cp - s3://keysa/cli <<<"by cli" 2>&1) &&
    [ "$(stat -c %U "$data/keysa/cli")" = "$ua" ] && pass "the aws CLI uses it from the environment" || fail "the aws CLI uses it" "$r"
if command -v rclone >/dev/null; then
    r=$(env -u AWS_CA_BUNDLE RCLONE_CONFIG=/dev/null RCLONE_CONFIG_S3HPC_TYPE=s3 \
        RCLONE_CONFIG_S3HPC_PROVIDER=Other RCLONE_CONFIG_S3HPC_ENV_AUTH=true \
        RCLONE_CONFIG_S3HPC_ENDPOINT="http://127.0.0.1:$pb" rclone lsf s3hpc:keysa 2>&1) &&
        grep -q '^cli$' <<<"$r" && pass "rclone uses it from the environment" || fail "rclone uses it" "$r"
fi

# B can neither see nor revoke A's key.
r=$(as_user "$ub" "$bin" keys list --socket "$work/a.sock" 2>&1)
grep -q "$key_a" <<<"$r" && fail "another user does not see the key" "$r" || pass "another user does not see the key"
r=$(as_user "$ub" "$bin" keys revoke "$key_a" --socket "$work/a.sock" 2>&1) &&
    fail "another user cannot revoke the key" "$r" || pass "another user cannot revoke the key"
r=$(as_user "$ub" "$bin" keys revoke --all --user "$ua" --socket "$work/a.sock" 2>&1) &&
    fail "another user cannot revoke all of the user's keys" "$r" || pass "another user cannot revoke all of the user's keys"
r=$(as_user "$ua" "$bin" keys list --socket "$work/a.sock" 2>&1)
grep -q "$key_a" <<<"$r" && pass "the owner lists its key" || fail "the owner lists its key" "$r"

# A revokes it: both servers refuse it within 10 s.
as_user "$ua" "$bin" keys revoke "$key_a" --socket "$work/a.sock" >/dev/null 2>&1 || fail "the owner revokes its key"
t0=$(date +%s.%N)
refused=0
for _ in $(seq 100); do
    ca=$(py "$pa" "print(code(lambda: s3.get_object(Bucket='keysa', Key='k')))" 2>&1)
    cb=$(py "$pb" "print(code(lambda: s3.get_object(Bucket='keysa', Key='k')))" 2>&1)
    if [ "$ca" = InvalidAccessKeyId ] && [ "$cb" = InvalidAccessKeyId ]; then refused=1; break; fi
    sleep 0.2
done
took=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
if [ $refused = 1 ] && python3 -c "import sys; sys.exit(0 if $took <= 10 else 1)"; then
    pass "a revoked key is refused by both servers (after ${took} s)"
else
    fail "a revoked key is refused by both servers within 10 s" "A: $ca B: $cb after $took s"
fi

# A session for 3 s works, then fails with ExpiredToken.
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
if out=$(as_user "$ua" env -u SLURM_JOB_ID "$bin" creds --duration 3s --socket "$work/a.sock" 2>/dev/null); then
    eval "$out"
    secrets+=("$AWS_SECRET_ACCESS_KEY" "$AWS_SESSION_TOKEN")
    r=$(py "$pb" "s3.put_object(Bucket='keysa', Key='s', Body=b'x'); print('put')" 2>&1)
    [ "$r" = put ] && [ "$(stat -c %U "$data/keysa/s")" = "$ua" ] && pass "a session works on the other server" || fail "a session works" "$r"
    r=$( (unset AWS_SESSION_TOKEN; py "$pb" "print(code(lambda: s3.get_object(Bucket='keysa', Key='s')))") 2>&1)
    [ "$r" = InvalidToken ] && pass "a session without its token is refused" || fail "a session without its token is refused" "$r"
    sleep 3.5
    r=$(py "$pb" "print(code(lambda: s3.get_object(Bucket='keysa', Key='s')))" 2>&1)
    [ "$r" = ExpiredToken ] && pass "an expired session answers ExpiredToken" || fail "an expired session answers ExpiredToken" "$r"
else
    fail "creds over the socket"
fi
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN

# SIGHUP re-reads --credentials: a key added to the file works, a removed one stops.
printf 'admin2 admin2-secret-0123456789\n' >"$work/credentials"
kill -HUP "$pid_a"
sleep 0.5
r=$(AWS_ACCESS_KEY_ID=admin2 AWS_SECRET_ACCESS_KEY=admin2-secret-0123456789 py "$pa" "print(code(lambda: s3.list_buckets()))" 2>&1)
o=$(AWS_ACCESS_KEY_ID=admin AWS_SECRET_ACCESS_KEY=admin-secret-0123456789 py "$pa" "print(code(lambda: s3.list_buckets()))" 2>&1)
[ "$r" = OK ] && [ "$o" = InvalidAccessKeyId ] && pass "SIGHUP re-reads --credentials" || fail "SIGHUP re-reads --credentials" "new: $r old: $o"

# The access log names the key's kind; no secret is in any log.
grep -q " key$" "$work/access-b.log" && grep -q " session$" "$work/access-b.log" &&
    pass "the access log names the key's kind" || fail "the access log names the key's kind" "$(tail -3 "$work/access-b.log")"
leak=0
for f in "$work"/*.log "$work"/*.err "$store"/used/*; do
    [ -f "$f" ] || continue
    for s in "${secrets[@]}"; do [ -n "$s" ] && grep -qF -e "$s" "$f" && leak=1; done
done
[ $leak = 0 ] && [ ${#secrets[@]} -ge 3 ] && pass "no secret in the logs" || fail "no secret in the logs" "${#secrets[@]} secrets checked"

echo "real clients: $passed passed, $failed failed, 0 skipped"
