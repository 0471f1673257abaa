#!/usr/bin/env bash
# OIDC logins against a real OpenID Connect provider (npm's oidc-provider,
# oidc/provider.mjs) on loopback: `s3hpc serve --oidc-issuer` answers
# AssumeRoleWithWebIdentity for its ID tokens with temporary credentials of
# the POSIX user the token names (a real Linux user made for the test),
# through boto3's STS client and the aws CLI; what they write is that
# user's. Refused, each with the error AWS gives: a token for another
# audience, a forged one (claims changed under the issuer's signature), a
# user the user database does not know, and a token past its expiry.
# Prints `PASS`/`FAIL` per check and a closing `real clients: N passed, N
# failed, N skipped` line.
#
# Usage: oidc.sh PATH/TO/s3hpc PATH/TO/python-with-boto3 PATH/TO/aws NODE_MODULES_DIR
set -uo pipefail
bin=$(realpath "$1")
# Not resolved: a virtualenv's python is a link to the system's.
python=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
aws=$3
modules=$(realpath "$4")
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v node >/dev/null; then
    echo "oidc: skipped (needs root, useradd and node)"
    echo "real clients: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
work=$(mktemp -d /tmp/s3hpc-oidc.XXXXXX)
chmod 755 "$work"
user=s3oi$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    userdel "$user" 2>/dev/null; groupdel "$user" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
useradd -M -U -s /usr/sbin/nologin "$user" || { echo "real clients: 0 passed, 1 failed, 0 skipped"; exit 1; }
passed=0 failed=0
suite=oidc
. "$here/common.sh"
finish() { echo "real clients: $passed passed, $failed failed, 0 skipped"; exit 0; }

# The provider: tokens for the test's user and for a name no one has, valid 12 s.
ttl=12
NODE_PATH=$modules/node_modules node "$here/oidc/provider.mjs" --port 0 --out "$work/tokens" \
    --users "$user,ghost$$" --ttl $ttl >"$work/provider.out" 2>"$work/provider.log" &
pids+=($!)
for _ in $(seq 300); do grep -q '^ready' "$work/provider.out" && break; sleep 0.1; done
grep -q '^ready' "$work/provider.out" || { fail "the OIDC provider starts" "$(cat "$work/provider.log")"; finish; }
made=$(date +%s)
issuer=$(cat "$work/tokens/issuer")
pass "the OIDC provider issues ID tokens ($issuer)"

data=$work/data
mkdir "$data" && chmod 1777 "$data"
port=$(free_port)
"$bin" serve --data "$data" --durability none --http "127.0.0.1:$port" --key-store "$work/store" \
    --oidc-issuer "$issuer" --oidc-audience s3hpc --access-log "$work/access.log" >"$work/server.log" 2>&1 &
pids+=($!)
wait_port "$port" || { fail "the server starts" "$(cat "$work/server.log")"; finish; }

# STS through boto3: the error code for a token, or OK after a PUT with
# the credentials it gave.
sts() { # TOKEN-FILE
    env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN AWS_CONFIG_FILE=/dev/null \
        AWS_SHARED_CREDENTIALS_FILE=/dev/null "$python" - "$port" "$1" <<'PY'
import sys, boto3, botocore
port, token = sys.argv[1], open(sys.argv[2]).read().strip()
ep = f"http://127.0.0.1:{port}"
sts = boto3.client("sts", endpoint_url=ep, region_name="us-east-1")
try:
    c = sts.assume_role_with_web_identity(RoleArn="arn:aws:iam::000000000000:role/s3hpc",
                                          RoleSessionName="test", WebIdentityToken=token)["Credentials"]
except botocore.exceptions.ClientError as e:
    print(e.response["Error"]["Code"]); sys.exit(0)
s3 = boto3.client("s3", endpoint_url=ep, region_name="us-east-1", aws_access_key_id=c["AccessKeyId"],
                  aws_secret_access_key=c["SecretAccessKey"], aws_session_token=c["SessionToken"])
try:
    s3.create_bucket(Bucket="oidcbucket")
except botocore.exceptions.ClientError as e:
    if e.response["Error"]["Code"] != "BucketAlreadyOwnedByYou":
        raise
s3.put_object(Bucket="oidcbucket", Key="by-login", Body=b"hello")
print("OK", c["Expiration"])
PY
}

r=$(sts "$work/tokens/s3hpc-$user.jwt" 2>&1)
[[ $r == OK* ]] && [ "$(stat -c %U "$data/oidcbucket/by-login" 2>/dev/null)" = "$user" ] &&
    pass "a login gets credentials, and what they write is the user's (boto3)" || fail "a login gets the user's credentials (boto3)" "$r"
r=$(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null \
    "$aws" sts assume-role-with-web-identity --endpoint-url "http://127.0.0.1:$port" --region us-east-1 \
    --role-arn arn:aws:iam::000000000000:role/s3hpc --role-session-name cli \
    --web-identity-token "$(cat "$work/tokens/s3hpc-$user.jwt")" --query Credentials.AccessKeyId --output text 2>&1)
[[ $r == S3HS* ]] && pass "the aws CLI gets credentials" || fail "the aws CLI gets credentials" "$r"
grep -q " oidc$" "$work/access.log" && pass "the access log names the login's key kind" || fail "the access log names oidc keys" "$(tail -2 "$work/access.log")"

r=$(sts "$work/tokens/other-$user.jwt" 2>&1)
[ "$r" = InvalidIdentityToken ] && pass "a token for another audience is refused" || fail "a token for another audience is refused" "$r"
# Forged: the payload says another user, the issuer's signature stays.
"$python" - "$work/tokens/s3hpc-$user.jwt" "$work/forged.jwt" <<'PY'
import base64, json, sys
h, p, s = open(sys.argv[1]).read().strip().split(".")
claims = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
claims["preferred_username"] = claims["sub"] = "nobody"
p = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
open(sys.argv[2], "w").write(".".join([h, p, s]))
PY
r=$(sts "$work/forged.jwt" 2>&1)
[ "$r" = InvalidIdentityToken ] && pass "a forged token is refused" || fail "a forged token is refused" "$r"
r=$(sts "$work/tokens/s3hpc-ghost$$.jwt" 2>&1)
[ "$r" = AccessDenied ] && pass "a user the user database does not know is refused" || fail "an unknown user is refused" "$r"
# Replayed after its expiry.
left=$((made + ttl + 1 - $(date +%s)))
[ $left -gt 0 ] && sleep $left
r=$(sts "$work/tokens/s3hpc-$user.jwt" 2>&1)
[ "$r" = ExpiredTokenException ] && pass "an expired token is refused" || fail "an expired token is refused" "$r"
grep -q "$(cut -d. -f3 "$work/tokens/s3hpc-$user.jwt")" "$work"/*.log &&
    fail "no token in the logs" || pass "no token in the logs"
finish
