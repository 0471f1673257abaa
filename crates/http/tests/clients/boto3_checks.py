"""boto3 against a running s3hpc server: round trips, multipart, presigned
GET, metadata, and the negative cases a real SDK can express. Prints one
`PASS name` / `FAIL name: why` line per check; exits 0 only if all pass.

Usage: boto3_checks.py ENDPOINT ACCESS_KEY SECRET_KEY WORKDIR
"""
import hashlib
import os
import sys
import urllib.request

import botocore
from boto3.s3.transfer import TransferConfig
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from s3checks import expect_code
import s3checks

endpoint, access, secret, work = sys.argv[1:5]


def client(key=access, sec=secret):
    return s3checks.client(endpoint, key, sec)


def check(name, fn):
    s3checks.check("boto3", name, fn)


s3 = client()
B = "boto3-bucket"


def buckets():
    s3.create_bucket(Bucket=B)
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert B in names, names
    s3.head_bucket(Bucket=B)
    loc = s3.get_bucket_location(Bucket=B)
    assert loc.get("LocationConstraint") in (None, ""), loc


def small_objects():
    body = b"hello boto3\n" * 100
    put = s3.put_object(
        Bucket=B, Key="dir/a.txt", Body=body, ContentType="text/x-test",
        Metadata={"color": "blue", "n": "1"},
    )
    assert put["ETag"] == '"%s"' % hashlib.md5(body).hexdigest(), put["ETag"]
    head = s3.head_object(Bucket=B, Key="dir/a.txt")
    assert head["ContentLength"] == len(body)
    assert head["ContentType"] == "text/x-test", head["ContentType"]
    assert head["Metadata"] == {"color": "blue", "n": "1"}, head["Metadata"]
    got = s3.get_object(Bucket=B, Key="dir/a.txt")["Body"].read()
    assert got == body
    part = s3.get_object(Bucket=B, Key="dir/a.txt", Range="bytes=6-10")
    assert part["Body"].read() == body[6:11] and part["ContentRange"] == f"bytes 6-10/{len(body)}"


def conditionals():
    etag = s3.head_object(Bucket=B, Key="dir/a.txt")["ETag"]
    s3.get_object(Bucket=B, Key="dir/a.txt", IfMatch=etag)
    expect_code("PreconditionFailed", lambda: s3.get_object(Bucket=B, Key="dir/a.txt", IfMatch='"nope"'))
    expect_code("304", lambda: s3.get_object(Bucket=B, Key="dir/a.txt", IfNoneMatch=etag))
    import datetime
    future = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    past = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    expect_code("304", lambda: s3.get_object(Bucket=B, Key="dir/a.txt", IfModifiedSince=future))
    expect_code("PreconditionFailed", lambda: s3.get_object(Bucket=B, Key="dir/a.txt", IfUnmodifiedSince=past))
    s3.get_object(Bucket=B, Key="dir/a.txt", IfModifiedSince=past, IfUnmodifiedSince=future)


def listing():
    for k in ["dir/b.txt", "dir/sub/c.txt", "other/d.txt", "top.txt", "sp ace+plus"]:
        s3.put_object(Bucket=B, Key=k, Body=b"x")
    v2 = s3.list_objects_v2(Bucket=B, Prefix="dir/", Delimiter="/")
    keys = [o["Key"] for o in v2.get("Contents", [])]
    prefixes = [p["Prefix"] for p in v2.get("CommonPrefixes", [])]
    assert keys == ["dir/a.txt", "dir/b.txt"], keys
    assert prefixes == ["dir/sub/"], prefixes
    v1 = s3.list_objects(Bucket=B, Delimiter="/", MaxKeys=2)
    assert v1["IsTruncated"], v1
    everything = []
    for page in s3.get_paginator("list_objects").paginate(Bucket=B, PaginationConfig={"PageSize": 2}):
        everything += [o["Key"] for o in page.get("Contents", [])]
    assert "sp ace+plus" in everything and "dir/sub/c.txt" in everything, everything
    v2p = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=B, PaginationConfig={"PageSize": 3}):
        v2p += [o["Key"] for o in page.get("Contents", [])]
    assert v2p == sorted(v2p) and len(v2p) == 6, v2p


def copy_and_delete():
    s3.copy_object(Bucket=B, Key="copy.txt", CopySource={"Bucket": B, "Key": "dir/a.txt"})
    assert s3.head_object(Bucket=B, Key="copy.txt")["Metadata"] == {"color": "blue", "n": "1"}
    s3.copy_object(Bucket=B, Key="copy2.txt", CopySource=f"{B}/dir/a.txt",
                   MetadataDirective="REPLACE", Metadata={"new": "yes"})
    assert s3.head_object(Bucket=B, Key="copy2.txt")["Metadata"] == {"new": "yes"}
    r = s3.delete_objects(Bucket=B, Delete={"Objects": [{"Key": "copy.txt"}, {"Key": "copy2.txt"}, {"Key": "never"}]})
    assert sorted(d["Key"] for d in r["Deleted"]) == ["copy.txt", "copy2.txt", "never"], r
    expect_code("404", lambda: s3.head_object(Bucket=B, Key="copy.txt"))


def multipart_100mib():
    src = os.path.join(work, "big.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(100 << 20))
    cfg = TransferConfig(multipart_threshold=8 << 20, multipart_chunksize=16 << 20, max_concurrency=4)
    s3.upload_file(src, B, "big/object.bin", Config=cfg)
    head = s3.head_object(Bucket=B, Key="big/object.bin")
    assert head["ContentLength"] == 100 << 20 and head["ETag"].endswith('-7"'), head["ETag"]
    dst = os.path.join(work, "big.back")
    s3.download_file(B, "big/object.bin", dst, Config=cfg)
    with open(src, "rb") as a, open(dst, "rb") as b:
        assert hashlib.md5(a.read()).digest() == hashlib.md5(b.read()).digest()
    os.remove(dst)


def upload_part_copy_and_listings():
    up = s3.create_multipart_upload(Bucket=B, Key="assembled")["UploadId"]
    ups = s3.list_multipart_uploads(Bucket=B)["Uploads"]
    assert [u["UploadId"] for u in ups] == [up], ups
    p1 = s3.upload_part_copy(Bucket=B, Key="assembled", UploadId=up, PartNumber=1,
                             CopySource={"Bucket": B, "Key": "big/object.bin"},
                             CopySourceRange="bytes=0-5242879")["CopyPartResult"]["ETag"]
    p2 = s3.upload_part(Bucket=B, Key="assembled", UploadId=up, PartNumber=2, Body=b"tail")["ETag"]
    parts = s3.list_parts(Bucket=B, Key="assembled", UploadId=up)["Parts"]
    assert [p["PartNumber"] for p in parts] == [1, 2] and parts[0]["Size"] == 5 << 20, parts
    expect_code("InvalidPartOrder", lambda: s3.complete_multipart_upload(
        Bucket=B, Key="assembled", UploadId=up,
        MultipartUpload={"Parts": [{"PartNumber": 2, "ETag": p2}, {"PartNumber": 1, "ETag": p1}]}))
    s3.complete_multipart_upload(Bucket=B, Key="assembled", UploadId=up,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1}, {"PartNumber": 2, "ETag": p2}]})
    assert s3.head_object(Bucket=B, Key="assembled")["ContentLength"] == (5 << 20) + 4
    up2 = s3.create_multipart_upload(Bucket=B, Key="aborted")["UploadId"]
    s3.abort_multipart_upload(Bucket=B, Key="aborted", UploadId=up2)
    expect_code("NoSuchUpload", lambda: s3.list_parts(Bucket=B, Key="aborted", UploadId=up2))


def malformed_complete_xml():
    up = s3.create_multipart_upload(Bucket=B, Key="malformed")["UploadId"]
    url = f"{endpoint}/{B}/malformed?uploadId={up}"
    req = AWSRequest(method="POST", url=url, data=b"<CompleteMultipartUpload><Part>")
    req.headers["x-amz-content-sha256"] = hashlib.sha256(req.data).hexdigest()
    SigV4Auth(botocore.credentials.Credentials(access, secret), "s3", "us-east-1").add_auth(req)
    r = urllib.request.Request(url, data=req.data, method="POST", headers=dict(req.headers))
    try:
        urllib.request.urlopen(r)
        raise AssertionError("malformed XML was accepted")
    except urllib.error.HTTPError as e:
        body = e.read().decode()
        assert e.code == 400 and "<Code>MalformedXML</Code>" in body, (e.code, body)
    s3.abort_multipart_upload(Bucket=B, Key="malformed", UploadId=up)


def bad_digest():
    expect_code("BadDigest", lambda: s3.put_object(
        Bucket=B, Key="digest", Body=b"abc", ContentMD5="1B2M2Y8AsgTpgAmY7PhCfg=="))
    expect_code("404", lambda: s3.head_object(Bucket=B, Key="digest"))


def chunked_put(key, chunks, corrupt=False):
    """A PUT with an `aws-chunked` SigV4 streaming body, signed as the AWS
    SDKs do (botocore signs the seed; each chunk chains its signature)."""
    import hmac
    data = b"".join(chunks)
    url = f"{endpoint}/{B}/{key}"
    req = AWSRequest(method="PUT", url=url)
    req.headers["x-amz-content-sha256"] = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
    req.headers["content-encoding"] = "aws-chunked"
    req.headers["x-amz-decoded-content-length"] = str(len(data))
    SigV4Auth(botocore.credentials.Credentials(access, secret), "s3", "us-east-1").add_auth(req)
    amz_date = req.headers["X-Amz-Date"]
    day = amz_date[:8]
    scope = f"{day}/us-east-1/s3/aws4_request"
    prev = req.headers["Authorization"].rsplit("Signature=", 1)[1]
    k = ("AWS4" + secret).encode()
    for part in (day, "us-east-1", "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    empty = hashlib.sha256(b"").hexdigest()
    body = b""
    for chunk in list(chunks) + [b""]:
        to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, prev, empty,
                             hashlib.sha256(chunk).hexdigest()])
        prev = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        sig = ("0" * 64) if corrupt and chunk else prev
        body += f"{len(chunk):x};chunk-signature={sig}\r\n".encode() + chunk + b"\r\n"
    headers = dict(req.headers)
    headers["Content-Length"] = str(len(body))
    r = urllib.request.Request(url, data=body, method="PUT", headers=headers)
    return urllib.request.urlopen(r)


def aws_chunked_put():
    chunks = [os.urandom(64 << 10) for _ in range(3)] + [b"last"]
    chunked_put("chunked.bin", chunks)
    got = s3.get_object(Bucket=B, Key="chunked.bin")["Body"].read()
    assert got == b"".join(chunks), "aws-chunked body differs"
    try:
        chunked_put("forged.bin", chunks, corrupt=True)
        raise AssertionError("a forged chunk signature was accepted")
    except urllib.error.HTTPError as e:
        body = e.read()
        assert e.code == 403 and b"SignatureDoesNotMatch" in body, (e.code, body)
    expect_code("404", lambda: s3.head_object(Bucket=B, Key="forged.bin"))


def unframed_put():
    """Transfer-Encoding: chunked and no Content-Length (curl reading a
    pipe), SigV4-signed over the payload's hash and over UNSIGNED-PAYLOAD."""
    body = os.urandom(300 << 10)
    for key, sha in (("te-signed", hashlib.sha256(body).hexdigest()), ("te-unsigned", "UNSIGNED-PAYLOAD")):
        url = f"{endpoint}/{B}/{key}"
        req = AWSRequest(method="PUT", url=url)
        req.headers["x-amz-content-sha256"] = sha
        SigV4Auth(botocore.credentials.Credentials(access, secret), "s3", "us-east-1").add_auth(req)
        # An iterable body without a length goes out chunked.
        r = urllib.request.Request(url, data=iter([body[:1000], body[1000:]]), method="PUT",
                                   headers=dict(req.headers))
        assert urllib.request.urlopen(r).status == 200
        assert s3.get_object(Bucket=B, Key=key)["Body"].read() == body, key


def sigv2_bucket_calls():
    """botocore's SigV2 (`s3`) signer signs a bucket as /BUCKET/ while it
    sends PUT /BUCKET: bucket calls must verify as AWS verifies them."""
    import boto3
    from botocore.config import Config
    v2 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=access,
                      aws_secret_access_key=secret, region_name="us-east-1",
                      config=Config(signature_version="s3", s3={"addressing_style": "path"}))
    v2.create_bucket(Bucket=B + "-v2")
    v2.put_object(Bucket=B + "-v2", Key="k", Body=b"v2")
    assert [o["Key"] for o in v2.list_objects(Bucket=B + "-v2")["Contents"]] == ["k"]
    v2.delete_object(Bucket=B + "-v2", Key="k")
    v2.delete_bucket(Bucket=B + "-v2")


def presigned_get():
    url = s3.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "dir/a.txt"}, ExpiresIn=60)
    assert urllib.request.urlopen(url).read() == b"hello boto3\n" * 100


def wrong_credentials():
    expect_code("SignatureDoesNotMatch", lambda: client(sec="wrong-secret").list_buckets())
    expect_code("InvalidAccessKeyId", lambda: client(key="nobody").list_buckets())


def upload_listing_pages():
    """ListMultipartUploads pages through every upload once, also two of one
    key split across pages, and rolls keys up at the delimiter."""
    ids = {}
    for k in ["pg/a", "pg/a", "pg/b", "pg/d/1", "pg/d/2", "pg/e"]:
        ids.setdefault(k, []).append(s3.create_multipart_upload(Bucket=B, Key=k)["UploadId"])
    want = sorted((k, u) for k, us in ids.items() for u in us)
    got, kw = [], {}
    for _ in range(10):
        r = s3.list_multipart_uploads(Bucket=B, Prefix="pg/", MaxUploads=1, **kw)
        got += [(u["Key"], u["UploadId"]) for u in r.get("Uploads", [])]
        if not r["IsTruncated"]:
            break
        kw = {"KeyMarker": r["NextKeyMarker"], "UploadIdMarker": r.get("NextUploadIdMarker", "")}
    assert sorted(got) == want, (got, want)
    seen, kw = [], {}
    for _ in range(10):
        r = s3.list_multipart_uploads(Bucket=B, Prefix="pg/", Delimiter="/", MaxUploads=2, **kw)
        seen += [u["Key"] for u in r.get("Uploads", [])] + [p["Prefix"] for p in r.get("CommonPrefixes", [])]
        if not r["IsTruncated"]:
            break
        kw = {"KeyMarker": r["NextKeyMarker"], "UploadIdMarker": r.get("NextUploadIdMarker", "")}
    assert seen == ["pg/a", "pg/a", "pg/b", "pg/d/", "pg/e"], seen
    for k, us in ids.items():
        for u in us:
            s3.abort_multipart_upload(Bucket=B, Key=k, UploadId=u)


def cleanup():
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=B).get("Contents", [])]
    s3.delete_objects(Bucket=B, Delete={"Objects": [{"Key": k} for k in keys]})
    s3.delete_bucket(Bucket=B)
    expect_code("404", lambda: s3.head_bucket(Bucket=B))


for name, fn in [
    ("buckets", buckets), ("small_objects", small_objects), ("conditionals", conditionals),
    ("listing", listing), ("copy_and_delete", copy_and_delete),
    ("multipart_100mib", multipart_100mib), ("upload_part_copy", upload_part_copy_and_listings),
    ("malformed_complete_xml", malformed_complete_xml), ("bad_digest", bad_digest),
    ("presigned_get", presigned_get), ("aws_chunked_put", aws_chunked_put), ("unframed_put", unframed_put),
    ("sigv2_bucket_calls", sigv2_bucket_calls), ("upload_listing_pages", upload_listing_pages),
    ("wrong_credentials", wrong_credentials),
    ("cleanup", cleanup),
]:
    check(name, fn)
s3checks.finish()
