# What the real-client test scripts here share; sourced, not run. The
# sourcing script sets `suite` (the word after PASS/FAIL) and the counters
# `passed` and `failed`.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
pass() { echo "PASS $suite $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $suite $1"; shift; [ $# -gt 0 ] && echo "$@" | tail -8 | sed 's/^/    /'; failed=$((failed + 1)); }
as_user() { setpriv --reuid "$1" --regid "$1" --init-groups -- "${@:2}"; }

# boto3 ($python) against http://127.0.0.1:PORT with the AWS_* variables
# alone (no profile, no config file): CODE runs with `s3`, and with
# `code(f)`, which gives OK or the S3 error code f raised.
py() { # PORT CODE
    env -u AWS_PROFILE AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null \
        "$python" -c "
import boto3, botocore, sys
s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:$1', region_name='us-east-1',
                  config=botocore.config.Config(retries={'max_attempts': 1}))
def code(f):
    try:
        f(); return 'OK'
    except botocore.exceptions.ClientError as e:
        return e.response['Error']['Code']
$2"
}
