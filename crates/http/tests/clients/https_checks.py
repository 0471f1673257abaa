"""The current boto3 (from PyPI) against `s3hpc serve --tls-cert/--tls-key`,
signed and anonymous, and the signature time limits and body checks
through the real server over HTTPS.

Usage: https_checks.py SIGNED_ENDPOINT ANON_ENDPOINT ACCESS SECRET CA.pem WORKDIR
Prints PASS/FAIL per check.
"""

import base64
import datetime
import email.utils
import hashlib
import hmac
import http.client
import os
import ssl
import sys
import traceback
import urllib.parse

import boto3
import botocore
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

signed_ep, anon_ep, access, secret, ca, work = sys.argv[1:7]
print(f"boto3 {boto3.__version__}, botocore {botocore.__version__}")
tls = ssl.create_default_context(cafile=ca)
failed = 0


def client(endpoint, unsigned=False):
    cfg = Config(
        signature_version=botocore.UNSIGNED if unsigned else "s3v4",
        s3={"addressing_style": "path"},
        retries={"max_attempts": 1},
    )
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=access,
        aws_secret_access_key=secret,
        region_name="us-east-1",
        verify=ca,
        config=cfg,
    )


def check(name, fn):
    global failed
    try:
        fn()
        print(f"PASS https {name}")
    except Exception:  # noqa: BLE001 - report every failure the same way
        failed += 1
        print(f"FAIL https {name}")
        for line in traceback.format_exc().splitlines()[-6:]:
            print(f"    {line}")


def raw(endpoint, method, path, headers=None, body=b""):
    """One request over HTTPS: (status, headers, body)."""
    u = urllib.parse.urlsplit(endpoint)
    conn = http.client.HTTPSConnection(u.hostname, u.port, context=tls, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, r.headers, data


def expect_error(resp, status, code):
    st, hd, data = resp
    assert st == status, (st, data[:300])
    assert f"<Code>{code}</Code>".encode() in data, data[:300]
    return data.decode()


def missing(s3, bucket, key):
    try:
        s3.head_object(Bucket=bucket, Key=key)
    except botocore.exceptions.ClientError as e:
        assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 404, e.response
        return
    raise AssertionError(f"{key} was stored")


def round_trips(endpoint, unsigned, bucket):
    s3 = client(endpoint, unsigned)
    s3.create_bucket(Bucket=bucket)
    small = os.urandom(100_000)
    s3.put_object(Bucket=bucket, Key="small", Body=small)
    got = s3.get_object(Bucket=bucket, Key="small")["Body"].read()
    assert got == small, f"100 000-byte put_object came back as {len(got)} bytes"
    big = os.path.join(work, f"big-{bucket}")
    with open(big, "wb") as f:
        f.write(os.urandom(20 << 20))
    s3.upload_file(big, bucket, "big")
    back = big + ".back"
    s3.download_file(bucket, "big", back)
    with open(big, "rb") as a, open(back, "rb") as b:
        assert a.read() == b.read(), "20 MiB upload_file came back different"
    assert s3.head_object(Bucket=bucket, Key="big")["ContentLength"] == 20 << 20
    os.remove(back)


def sigv2_header(date):
    """A SigV2-signed GET of the bucket listing with this Date."""
    sts = f"GET\n\n\n{date}\n/tlsb/"
    sig = base64.b64encode(hmac.new(secret.encode(), sts.encode(), hashlib.sha1).digest())
    return {"Date": date, "Authorization": f"AWS {access}:{sig.decode()}"}


def sigv2_time_limit():
    now = datetime.datetime.now(datetime.timezone.utc)
    fresh = email.utils.format_datetime(now, usegmt=True)
    st, _, data = raw(signed_ep, "GET", "/tlsb/", sigv2_header(fresh))
    assert st == 200, (st, data[:300])
    for delta in (datetime.timedelta(days=-365), datetime.timedelta(minutes=-16),
                  datetime.timedelta(minutes=16)):
        date = email.utils.format_datetime(now + delta, usegmt=True)
        msg = expect_error(raw(signed_ep, "GET", "/tlsb/", sigv2_header(date)), 403,
                           "RequestTimeTooSkewed")
        assert "current time is too large" in msg, msg


def sigv2_query_expires():
    def url(expires):
        sts = f"GET\n\n\n{expires}\n/tlsb/small"
        sig = base64.b64encode(hmac.new(secret.encode(), sts.encode(), hashlib.sha1).digest())
        q = urllib.parse.urlencode({"AWSAccessKeyId": access, "Expires": expires,
                                    "Signature": sig.decode()})
        return f"/tlsb/small?{q}"
    now = int(datetime.datetime.now().timestamp())
    st, _, data = raw(signed_ep, "GET", url(now + 60))
    assert st == 200 and len(data) == 100_000, (st, data[:300])
    expect_error(raw(signed_ep, "GET", url(now - 60)), 403, "AccessDenied")


def presigned_week():
    s3 = client(signed_ep)
    ok = s3.generate_presigned_url("get_object", Params={"Bucket": "tlsb", "Key": "small"},
                                   ExpiresIn=604800)
    st, _, data = raw(signed_ep, "GET", ok[len(signed_ep):])
    assert st == 200 and len(data) == 100_000, (st, data[:300])
    long = s3.generate_presigned_url("get_object", Params={"Bucket": "tlsb", "Key": "small"},
                                     ExpiresIn=604801)
    msg = expect_error(raw(signed_ep, "GET", long[len(signed_ep):]), 400,
                       "AuthorizationQueryParametersError")
    assert "604800" in msg, msg


def swapped_body():
    """A body signed by its SHA-256 and swapped for another of the same
    length on the way: refused, nothing stored."""
    body = os.urandom(4096)
    swapped = bytes(b ^ 0xFF for b in body)
    for key, data in (("swapped", swapped), ("swapped-longer", body + b"x")):
        url = f"{signed_ep}/tlsb/{key}"
        req = AWSRequest(method="PUT", url=url, data=body,
                         headers={"x-amz-content-sha256": hashlib.sha256(body).hexdigest()})
        SigV4Auth(Credentials(access, secret), "s3", "us-east-1").add_auth(req)
        headers = {k: v for k, v in req.headers.items()}
        headers["Content-Length"] = str(len(data))
        resp = raw(signed_ep, "PUT", f"/tlsb/{key}", headers, data)
        if key == "swapped":
            msg = expect_error(resp, 400, "XAmzContentSHA256Mismatch")
            assert "does not match" in msg, msg
        else:
            assert resp[0] >= 400, resp
        missing(client(signed_ep), "tlsb", key)


def plain_http_to_tls_port():
    u = urllib.parse.urlsplit(signed_ep)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request("GET", "/")
    r = conn.getresponse()
    data = r.read().decode()
    assert r.status == 400 and "speaks HTTPS" in data, (r.status, data)


def untrusted_certificate_is_refused():
    s3 = boto3.client("s3", endpoint_url=signed_ep, aws_access_key_id=access,
                      aws_secret_access_key=secret, region_name="us-east-1",
                      config=Config(retries={"max_attempts": 1}))
    try:
        s3.list_buckets()
    except botocore.exceptions.SSLError:
        return
    raise AssertionError("a self-signed certificate was trusted without --ca")


check("signed: 100 000-byte put_object, 20 MiB upload_file, exact GETs",
      lambda: round_trips(signed_ep, False, "tlsb"))
check("anonymous: 100 000-byte put_object, 20 MiB upload_file, exact GETs",
      lambda: round_trips(anon_ep, True, "tlsanon"))
check("SigV2 Date over 15 minutes off is RequestTimeTooSkewed", sigv2_time_limit)
check("SigV2 query Expires is honoured", sigv2_query_expires)
check("presigned X-Amz-Expires over 604800 is AuthorizationQueryParametersError",
      presigned_week)
check("a body swapped under its signed SHA-256 is XAmzContentSHA256Mismatch", swapped_body)
check("plain HTTP to the TLS port is a 400 that says HTTPS", plain_http_to_tls_port)
check("an untrusted certificate is refused by the client", untrusted_certificate_is_refused)
sys.exit(1 if failed else 0)
