"""Checksums and aws-chunked bodies with the current boto3 against running
s3hpc servers, one signed and one --anonymous. Prints one `PASS name` /
`FAIL name: why` line per check; exits 0 only if all pass.

Over plain HTTP botocore sends checksums in headers; it switches to an
aws-chunked body with a trailer checksum only over HTTPS. `https_mode()`
makes botocore take the HTTPS path over HTTP (its only test is the URL's
scheme), so both paths are exercised without TLS.

Usage: checksum_checks.py ENDPOINT ANON_ENDPOINT ACCESS_KEY SECRET_KEY
"""
import base64
import hashlib
import hmac
import os
import sys
import urllib.error
import urllib.request
import zlib

import boto3
import botocore
import botocore.httpchecksum
from boto3.s3.transfer import TransferConfig
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from s3checks import expect_code
import s3checks

try:  # CRC32C and CRC64NVME, for botocore and for the expected values here
    import awscrt.checksums
except ImportError:
    awscrt = None

endpoint, anon_endpoint, access, secret = sys.argv[1:5]
ALGS = ["CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"]
_urlparse = botocore.httpchecksum.urlparse


def https_mode(on):
    botocore.httpchecksum.urlparse = (
        (lambda u: _urlparse(u.replace("http://", "https://", 1))) if on else _urlparse)


def client(ep=endpoint, anonymous=False):
    return s3checks.client(ep, access, secret, unsigned=anonymous)


def check(name, fn):
    try:
        s3checks.check("boto3", name, fn)
    finally:
        https_mode(False)

def raw(alg, data):
    if alg in ("CRC32C", "CRC64NVME") and awscrt is None:
        raise RuntimeError("awscrt is missing: pip install 'boto3[crt]'")
    if alg == "CRC32":
        return zlib.crc32(data).to_bytes(4, "big")
    if alg == "CRC32C":
        return awscrt.checksums.crc32c(data).to_bytes(4, "big")
    if alg == "CRC64NVME":
        return awscrt.checksums.crc64nvme(data).to_bytes(8, "big")
    return hashlib.new(alg.lower(), data).digest()


def b64(alg, data):
    return base64.b64encode(raw(alg, data)).decode()


s3 = client()
anon = client(anon_endpoint, anonymous=True)
B = "checksum-bucket"
data = os.urandom(100_000)


def setup():
    s3.create_bucket(Bucket=B)
    anon.create_bucket(Bucket=B)


def every_algorithm(c, trailer):
    def run():
        https_mode(trailer)
        for alg in ALGS:
            key = f"alg/{alg}/{trailer}"
            c.put_object(Bucket=B, Key=key, Body=data, ChecksumAlgorithm=alg)
            h = c.head_object(Bucket=B, Key=key, ChecksumMode="ENABLED")
            assert h["ContentLength"] == len(data), h["ContentLength"]
            assert h[f"Checksum{alg}"] == b64(alg, data), (alg, h.get(f"Checksum{alg}"))
            assert h["ChecksumType"] == "FULL_OBJECT", h.get("ChecksumType")
            # boto3 validates the returned checksum on download.
            g = c.get_object(Bucket=B, Key=key, ChecksumMode="ENABLED")
            assert g["Body"].read() == data
            assert g[f"Checksum{alg}"] == b64(alg, data)
            # Without ChecksumMode, no checksum.
            assert f"Checksum{alg}" not in c.head_object(Bucket=B, Key=key)
    return run


def wrong_crc32_keeps_nothing(c):
    def run():
        wrong = base64.b64encode(b"\0\0\0\1").decode()
        e = expect_code("BadDigest", lambda: c.put_object(
            Bucket=B, Key="wrong/new", Body=data, ChecksumCRC32=wrong))
        msg = e.response["Error"]["Message"]
        assert msg == "The CRC32 you specified did not match the calculated checksum.", msg
        expect_code("404", lambda: c.head_object(Bucket=B, Key="wrong/new"))
        c.put_object(Bucket=B, Key="wrong/old", Body=b"old")
        expect_code("BadDigest", lambda: c.put_object(
            Bucket=B, Key="wrong/old", Body=data, ChecksumCRC32=wrong))
        assert c.get_object(Bucket=B, Key="wrong/old")["Body"].read() == b"old"
    return run


def raw_chunked(ep, key, body, decoded_len, sha, trailer=None, sign=False):
    url = f"{ep}/{B}/{key}"
    headers = {"x-amz-content-sha256": sha, "content-encoding": "aws-chunked",
               "x-amz-decoded-content-length": str(decoded_len)}
    if trailer:
        headers["x-amz-trailer"] = trailer
    if sign:
        req = AWSRequest(method="PUT", url=url, headers=headers)
        SigV4Auth(botocore.credentials.Credentials(access, secret), "s3", "us-east-1").add_auth(req)
        headers = dict(req.headers)
    headers["Content-Length"] = str(len(body))
    r = urllib.request.Request(url, data=body, method="PUT", headers=headers)
    try:
        return urllib.request.urlopen(r).status, b""
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def frame(chunks, trailer_lines=b""):
    out = b""
    for c in chunks:
        out += f"{len(c):x}\r\n".encode() + c + b"\r\n"
    return out + b"0\r\n" + trailer_lines + b"\r\n"


def anonymous_trailer_and_lengths():
    chunks = [data[:65536], data[65536:]]
    good = f"x-amz-checksum-crc32:{b64('CRC32', data)}\r\n".encode()
    sha = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    st, body = raw_chunked(anon_endpoint, "raw/good", frame(chunks, good), len(data), sha,
                           trailer="x-amz-checksum-crc32")
    assert st == 200, (st, body)
    got = anon.get_object(Bucket=B, Key="raw/good", ChecksumMode="ENABLED")
    assert got["Body"].read() == data and got["ChecksumCRC32"] == b64("CRC32", data)
    bad = b"x-amz-checksum-crc32:AAAAAQ==\r\n"
    st, body = raw_chunked(anon_endpoint, "raw/bad", frame(chunks, bad), len(data), sha,
                           trailer="x-amz-checksum-crc32")
    assert st == 400 and b"BadDigest" in body, (st, body)
    # The chunks hold 10 bytes more, or fewer, than the decoded length says.
    for n, name in [(len(data) - 10, "raw/long"), (len(data) + 10, "raw/short")]:
        st, body = raw_chunked(anon_endpoint, name, frame(chunks), n, sha)
        assert st == 400 and b"IncompleteBody" in body, (n, st, body)
    st, body = raw_chunked(anon_endpoint, "raw/garbage", b"zz\r\n" + data, len(data), sha)
    assert st == 400, (st, body)
    for k in ["raw/bad", "raw/long", "raw/short", "raw/garbage"]:
        expect_code("404", lambda: anon.head_object(Bucket=B, Key=k))


def presigned_chunked_put():
    """A presigned PUT URL with an aws-chunked body (Content-Encoding: s3s
    0.14 answers NotImplemented to a STREAMING-* payload hash on a
    presigned URL): s3s checks the URL's signature and leaves the body
    framed; s3hpc decodes it."""
    v4 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=access, aws_secret_access_key=secret,
                      region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}, signature_version="s3v4"))
    url = v4.generate_presigned_url("put_object", Params={"Bucket": B, "Key": "presigned/chunked"},
                                    ExpiresIn=60)
    crc = b64("CRC32", data)
    body = frame([data[:30000], data[30000:]], f"x-amz-checksum-crc32:{crc}\r\n".encode())
    headers = {"content-encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
               "x-amz-trailer": "x-amz-checksum-crc32", "Content-Length": str(len(body))}
    r = urllib.request.Request(url, data=body, method="PUT", headers=headers)
    assert urllib.request.urlopen(r).status == 200
    h = s3.head_object(Bucket=B, Key="presigned/chunked", ChecksumMode="ENABLED")
    assert h["ContentLength"] == len(data) and h["ChecksumCRC32"] == crc, h
    assert s3.get_object(Bucket=B, Key="presigned/chunked")["Body"].read() == data


def signed_chunks_with_trailer():
    """STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, signed chunk by chunk and
    the trailer too, as the AWS SDKs' signed-streaming mode does."""
    def put(key, crc, decoded_len):
        url = f"{endpoint}/{B}/{key}"
        req = AWSRequest(method="PUT", url=url)
        req.headers["x-amz-content-sha256"] = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
        req.headers["content-encoding"] = "aws-chunked"
        req.headers["x-amz-decoded-content-length"] = str(decoded_len)
        req.headers["x-amz-trailer"] = "x-amz-checksum-crc32"
        SigV4Auth(botocore.credentials.Credentials(access, secret), "s3", "us-east-1").add_auth(req)
        amz_date = req.headers["X-Amz-Date"]
        scope = f"{amz_date[:8]}/us-east-1/s3/aws4_request"
        prev = req.headers["Authorization"].rsplit("Signature=", 1)[1]
        k = ("AWS4" + secret).encode()
        for p in (amz_date[:8], "us-east-1", "s3", "aws4_request"):
            k = hmac.new(k, p.encode(), hashlib.sha256).digest()
        empty = hashlib.sha256(b"").hexdigest()
        body = b""
        for chunk in [data[:65536], data[65536:], b""]:
            to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, prev, empty,
                                 hashlib.sha256(chunk).hexdigest()])
            prev = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
            body += f"{len(chunk):x};chunk-signature={prev}\r\n".encode() + chunk
            if chunk:
                body += b"\r\n"
        trailer = f"x-amz-checksum-crc32:{crc}\n"
        to_sign = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, scope, prev,
                             hashlib.sha256(trailer.encode()).hexdigest()])
        tsig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        body += f"x-amz-checksum-crc32:{crc}\r\nx-amz-trailer-signature:{tsig}\r\n\r\n".encode()
        headers = dict(req.headers)
        headers["Content-Length"] = str(len(body))
        r = urllib.request.Request(url, data=body, method="PUT", headers=headers)
        try:
            return urllib.request.urlopen(r).status, b""
        except urllib.error.HTTPError as e:
            return e.code, e.read()
    st, body = put("signed/good", b64("CRC32", data), len(data))
    assert st == 200, (st, body)
    h = s3.head_object(Bucket=B, Key="signed/good", ChecksumMode="ENABLED")
    assert h["ContentLength"] == len(data) and h["ChecksumCRC32"] == b64("CRC32", data), h
    st, body = put("signed/bad", "AAAAAQ==", len(data))
    assert st == 400 and b"BadDigest" in body, (st, body)
    st, body = put("signed/long", b64("CRC32", data), len(data) - 10)
    assert st == 400 and b"IncompleteBody" in body, (st, body)
    for k in ["signed/bad", "signed/long"]:
        expect_code("404", lambda: s3.head_object(Bucket=B, Key=k))


def composite(alg, parts):
    return base64.b64encode(raw(alg, b"".join(raw(alg, p) for p in parts))).decode() + f"-{len(parts)}"


def multipart_composite(c):
    def run():
        https_mode(True)
        path = f"/tmp/s3hpc-checksum-mp-{os.getpid()}"
        body = os.urandom(12 << 20)
        with open(path, "wb") as f:
            f.write(body)
        try:
            cfg = TransferConfig(multipart_threshold=5 << 20, multipart_chunksize=5 << 20,
                                 preferred_transfer_client="classic")
            parts = [body[i:i + (5 << 20)] for i in range(0, len(body), 5 << 20)]
            for alg in ["CRC32", "SHA256"]:
                key = f"mp/composite/{alg}"
                c.upload_file(path, B, key, Config=cfg, ExtraArgs={"ChecksumAlgorithm": alg})
                h = c.head_object(Bucket=B, Key=key, ChecksumMode="ENABLED")
                assert h["ChecksumType"] == "COMPOSITE", h.get("ChecksumType")
                assert h[f"Checksum{alg}"] == composite(alg, parts), (h[f"Checksum{alg}"], composite(alg, parts))
                out = path + ".back"
                c.download_file(B, key, out, ExtraArgs={"ChecksumMode": "ENABLED"})
                assert open(out, "rb").read() == body
                os.remove(out)
                a = c.get_object_attributes(Bucket=B, Key=key,
                                            ObjectAttributes=["ETag", "Checksum", "ObjectParts", "ObjectSize", "StorageClass"])
                assert a["ObjectSize"] == len(body), a
                assert a["ObjectParts"]["TotalPartsCount"] == len(parts), a
                assert a["Checksum"]["ChecksumType"] == "COMPOSITE", a
                # The composite value with its -N, as HEAD gives it (and s3-tests expect).
                assert a["Checksum"][f"Checksum{alg}"] == composite(alg, parts), a
                assert a["StorageClass"] == "STANDARD" and a["ETag"] == h["ETag"].strip('"'), a
        finally:
            os.remove(path)
    return run


def multipart_full_object():
    body = os.urandom(11 << 20)
    parts = [body[:5 << 20], body[5 << 20:10 << 20], body[10 << 20:]]
    for alg, typ in [("CRC64NVME", None), ("CRC32", "FULL_OBJECT"), ("CRC32C", "FULL_OBJECT")]:
        key = f"mp/full/{alg}"
        args = {"ChecksumAlgorithm": alg}
        if typ:
            args["ChecksumType"] = typ
        up = s3.create_multipart_upload(Bucket=B, Key=key, **args)["UploadId"]
        done = []
        for n, p in enumerate(parts, 1):
            r = s3.upload_part(Bucket=B, Key=key, UploadId=up, PartNumber=n, Body=p, ChecksumAlgorithm=alg)
            assert r[f"Checksum{alg}"] == b64(alg, p), r
            done.append({"PartNumber": n, "ETag": r["ETag"], f"Checksum{alg}": r[f"Checksum{alg}"]})
        lp = s3.list_parts(Bucket=B, Key=key, UploadId=up)
        assert [p[f"Checksum{alg}"] for p in lp["Parts"]] == [b64(alg, p) for p in parts], lp
        # A part checksum that does not match is refused.
        wrong = [dict(done[0], **{f"Checksum{alg}": done[1][f"Checksum{alg}"]})] + done[1:]
        expect_code("InvalidPart", lambda: s3.complete_multipart_upload(
            Bucket=B, Key=key, UploadId=up, MultipartUpload={"Parts": wrong}))
        r = s3.complete_multipart_upload(Bucket=B, Key=key, UploadId=up, MultipartUpload={"Parts": done},
                                         ChecksumType="FULL_OBJECT", **{f"Checksum{alg}": b64(alg, body)})
        assert r[f"Checksum{alg}"] == b64(alg, body), r
        h = s3.head_object(Bucket=B, Key=key, ChecksumMode="ENABLED")
        assert h["ChecksumType"] == "FULL_OBJECT" and h[f"Checksum{alg}"] == b64(alg, body), h
        # boto3 checks a full-object checksum on download.
        g = s3.get_object(Bucket=B, Key=key, ChecksumMode="ENABLED")
        assert g["Body"].read() == body
    # AWS's rules: SHA only composite, CRC64NVME only full-object.
    expect_code("InvalidRequest", lambda: s3.create_multipart_upload(
        Bucket=B, Key="x", ChecksumAlgorithm="SHA1", ChecksumType="FULL_OBJECT"))
    expect_code("InvalidRequest", lambda: s3.create_multipart_upload(
        Bucket=B, Key="x", ChecksumAlgorithm="CRC64NVME", ChecksumType="COMPOSITE"))


def single_put_attributes():
    s3.put_object(Bucket=B, Key="attrs", Body=data, ChecksumAlgorithm="SHA1")
    a = s3.get_object_attributes(Bucket=B, Key="attrs", ObjectAttributes=["ETag", "Checksum", "ObjectSize"])
    assert a["ObjectSize"] == len(data) and a["Checksum"]["ChecksumSHA1"] == b64("SHA1", data), a
    # Unquoted, as AWS sends this one ETag.
    assert a["ETag"] == hashlib.md5(data).hexdigest(), a
    assert "ObjectParts" not in a, a


def cleanup():
    for c in (s3, anon):
        keys = [o["Key"] for o in c.list_objects_v2(Bucket=B).get("Contents", [])]
        while keys:
            c.delete_objects(Bucket=B, Delete={"Objects": [{"Key": k} for k in keys[:1000]]})
            keys = keys[1000:]
        for u in c.list_multipart_uploads(Bucket=B).get("Uploads", []):
            c.abort_multipart_upload(Bucket=B, Key=u["Key"], UploadId=u["UploadId"])
        c.delete_bucket(Bucket=B)


print(f"    boto3 {boto3.__version__}, botocore {botocore.__version__}", flush=True)
for name, fn in [
    ("checksum setup", setup),
    ("checksum every algorithm, header (signed)", every_algorithm(s3, False)),
    ("checksum every algorithm, aws-chunked trailer (signed, unsigned payload)", every_algorithm(s3, True)),
    ("checksum every algorithm, header (anonymous)", every_algorithm(anon, False)),
    ("checksum every algorithm, aws-chunked trailer (anonymous)", every_algorithm(anon, True)),
    ("checksum wrong CRC32 is BadDigest, nothing stored (signed)", wrong_crc32_keeps_nothing(s3)),
    ("checksum wrong CRC32 is BadDigest, nothing stored (anonymous)", wrong_crc32_keeps_nothing(anon)),
    ("aws-chunked anonymous: trailer checksum, decoded length, framing", anonymous_trailer_and_lengths),
    ("aws-chunked signed chunks with signed trailer", signed_chunks_with_trailer),
    ("aws-chunked presigned PUT", presigned_chunked_put),
    ("checksum multipart COMPOSITE + GetObjectAttributes (signed)", multipart_composite(s3)),
    ("checksum multipart COMPOSITE (anonymous, trailers)", multipart_composite(anon)),
    ("checksum multipart FULL_OBJECT", multipart_full_object),
    ("GetObjectAttributes of a single PUT", single_put_attributes),
    ("checksum cleanup", cleanup),
]:
    check(name, fn)
s3checks.finish()
