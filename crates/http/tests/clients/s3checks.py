"""What the Python client checks share: a path-style boto3 client that does
not retry (a refusal must show as the refusal), one `PASS label name` /
`FAIL label name: why` line per check, and the S3 error code a call raised.
run.sh counts the lines; each script exits 0 only if every check passed.
"""
import sys
import traceback

import boto3
import botocore
from botocore.config import Config

results = []


def client(endpoint, access, secret, unsigned=False, **kwargs):
    """A boto3 S3 client; `unsigned` sends no signature (--anonymous)."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=access,
        aws_secret_access_key=secret,
        region_name="us-east-1",
        config=Config(
            signature_version=botocore.UNSIGNED if unsigned else None,
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1},
        ),
        **kwargs,
    )


def check(label, name, fn, trace=False):
    """Runs one check; `trace` adds the end of the traceback to a failure."""
    try:
        fn()
        results.append(True)
        print(f"PASS {label} {name}", flush=True)
    except Exception as e:  # a failed check, whatever raised
        results.append(False)
        print(f"FAIL {label} {name}: {type(e).__name__}: {e}", flush=True)
        if trace:
            for line in traceback.format_exc().splitlines()[-6:]:
                print(f"    {line}", flush=True)


def expect_code(code, fn):
    """Asserts that `fn` fails with S3 error `code`; returns the error."""
    try:
        fn()
    except botocore.exceptions.ClientError as e:
        got = e.response["Error"]["Code"]
        assert got == code, f"expected {code}, got {got}: {e}"
        return e
    raise AssertionError(f"expected {code}, the request succeeded")


def finish():
    sys.exit(0 if all(results) else 1)
