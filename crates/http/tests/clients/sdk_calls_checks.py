"""The calls today's SDKs and tools make, with the latest boto3 (scripts/test
installs it from PyPI into target/py): conditional writes (and
races of two writers: exactly one wins), AWS-shaped errors with RequestId,
versioning, tagging, ACLs, ListObjectVersions, ownership controls, bucket
policy. Prints `PASS name` / `FAIL name: why` lines; exits 0 only if all pass.

Usage: sdk_calls_checks.py ENDPOINT ACCESS_KEY SECRET_KEY
"""
import json
import sys
import threading

import boto3
import botocore
import s3checks

endpoint, access, secret = sys.argv[1:4]


def client():
    return s3checks.client(endpoint, access, secret)


def check(name, fn):
    s3checks.check(f"boto3-{boto3.__version__}", name, fn)

def error_of(fn):
    try:
        fn()
    except botocore.exceptions.ClientError as e:
        return e.response
    raise AssertionError("expected an error, the request succeeded")


def expect_code(code, fn):
    got = error_of(fn)["Error"].get("Code")
    assert got == code, f"expected {code}, got {got}"


s3 = client()
B = "sdk-calls"
s3.create_bucket(Bucket=B)


def body(key):
    return s3.get_object(Bucket=B, Key=key)["Body"].read()


def conditional_put():
    s3.put_object(Bucket=B, Key="c/k", Body=b"one", IfNoneMatch="*")
    expect_code("PreconditionFailed", lambda: s3.put_object(Bucket=B, Key="c/k", Body=b"two", IfNoneMatch="*"))
    assert body("c/k") == b"one", "If-None-Match overwrote the object"
    expect_code("PreconditionFailed", lambda: s3.put_object(Bucket=B, Key="c/k", Body=b"two", IfMatch='"0123"'))
    assert body("c/k") == b"one", "a wrong If-Match overwrote the object"
    etag = s3.head_object(Bucket=B, Key="c/k")["ETag"]
    s3.put_object(Bucket=B, Key="c/k", Body=b"two", IfMatch=etag)
    assert body("c/k") == b"two"
    expect_code("NoSuchKey", lambda: s3.put_object(Bucket=B, Key="c/none", Body=b"x", IfMatch=etag))


def conditional_multipart_and_copy():
    s3.put_object(Bucket=B, Key="c/mp", Body=b"first")
    up = s3.create_multipart_upload(Bucket=B, Key="c/mp")["UploadId"]
    part = s3.upload_part(Bucket=B, Key="c/mp", UploadId=up, PartNumber=1, Body=b"part")
    parts = {"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]}
    expect_code("PreconditionFailed", lambda: s3.complete_multipart_upload(
        Bucket=B, Key="c/mp", UploadId=up, MultipartUpload=parts, IfNoneMatch="*"))
    assert body("c/mp") == b"first"
    etag = s3.head_object(Bucket=B, Key="c/mp")["ETag"]
    s3.complete_multipart_upload(Bucket=B, Key="c/mp", UploadId=up, MultipartUpload=parts, IfMatch=etag)
    assert body("c/mp") == b"part"
    # The source's conditions are checked too.
    src_etag = s3.head_object(Bucket=B, Key="c/k")["ETag"]
    expect_code("PreconditionFailed", lambda: s3.copy_object(
        Bucket=B, Key="c/copy", CopySource={"Bucket": B, "Key": "c/k"}, CopySourceIfMatch='"0123"'))
    expect_code("PreconditionFailed", lambda: s3.copy_object(
        Bucket=B, Key="c/copy", CopySource={"Bucket": B, "Key": "c/k"}, CopySourceIfNoneMatch=src_etag))
    expect_code("404", lambda: s3.head_object(Bucket=B, Key="c/copy"))
    s3.copy_object(Bucket=B, Key="c/copy", CopySource={"Bucket": B, "Key": "c/k"}, CopySourceIfMatch=src_etag)
    up = s3.create_multipart_upload(Bucket=B, Key="c/upc")["UploadId"]
    expect_code("PreconditionFailed", lambda: s3.upload_part_copy(
        Bucket=B, Key="c/upc", UploadId=up, PartNumber=1, CopySource={"Bucket": B, "Key": "c/k"},
        CopySourceIfMatch='"0123"'))
    s3.upload_part_copy(Bucket=B, Key="c/upc", UploadId=up, PartNumber=1,
                        CopySource={"Bucket": B, "Key": "c/k"}, CopySourceIfMatch=src_etag)
    s3.abort_multipart_upload(Bucket=B, Key="c/upc", UploadId=up)
    # CopyObject's destination: boto3 has the parameter only in newer models.
    members = s3.meta.service_model.operation_model("CopyObject").input_shape.members
    if "IfNoneMatch" in members:
        expect_code("PreconditionFailed", lambda: s3.copy_object(
            Bucket=B, Key="c/mp", CopySource={"Bucket": B, "Key": "c/k"}, IfNoneMatch="*"))
        assert body("c/mp") == b"part"


def races():
    """Two writers (own clients, own threads) on one key: one wins, 50 of 50."""
    clients = [client(), client()]
    for mode in ["IfNoneMatch", "IfMatch"]:
        for t in range(50):
            key = f"race/{mode}/{t}"
            kw = {"IfNoneMatch": "*"}
            if mode == "IfMatch":
                kw = {"IfMatch": s3.put_object(Bucket=B, Key=key, Body=b"base")["ETag"]}
            barrier = threading.Barrier(2)
            out = [None, None]

            def write(w):
                data = bytes([w]) * (64 << 10)
                barrier.wait()
                try:
                    clients[w].put_object(Bucket=B, Key=key, Body=data, **kw)
                    out[w] = "ok"
                except botocore.exceptions.ClientError as e:
                    out[w] = e.response["Error"]["Code"]

            ts = [threading.Thread(target=write, args=(w,)) for w in (0, 1)]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
            assert sorted(out) == ["PreconditionFailed", "ok"], f"{mode} race {t}: {out}"
            winner = out.index("ok")
            assert body(key) == bytes([winner]) * (64 << 10), f"{mode} race {t}: content"


def errors_have_aws_shape():
    r = error_of(lambda: s3.create_bucket(Bucket="Bad_Name"))
    e = r["Error"]
    assert e["Code"] == "InvalidBucketName", e
    assert e.get("Message") and e["Message"] != "Unknown", f"no message: {e}"
    assert e.get("Resource") == "/Bad_Name", e
    assert r["ResponseMetadata"].get("RequestId"), f"no RequestId: {r['ResponseMetadata']}"
    assert r["ResponseMetadata"].get("HostId"), f"no HostId: {r['ResponseMetadata']}"
    r = error_of(lambda: s3.get_object(Bucket=B, Key="missing"))
    assert r["Error"]["Code"] == "NoSuchKey" and "missing" in r["Error"]["Message"], r["Error"]
    assert r["ResponseMetadata"]["RequestId"]
    ok = s3.list_objects_v2(Bucket=B, MaxKeys=1)
    assert ok["ResponseMetadata"].get("RequestId"), "a success carries a RequestId too"
    assert ok["ResponseMetadata"]["HTTPHeaders"].get("x-amz-id-2")


def versioning():
    vb = "sdk-calls-versions"
    s3.create_bucket(Bucket=vb)
    assert "Status" not in s3.get_bucket_versioning(Bucket=vb)
    s3.put_bucket_versioning(Bucket=vb, VersioningConfiguration={"Status": "Enabled"})
    assert s3.get_bucket_versioning(Bucket=vb)["Status"] == "Enabled"
    first = s3.put_object(Bucket=vb, Key="k", Body=b"one")["VersionId"]
    second = s3.put_object(Bucket=vb, Key="k", Body=b"two")["VersionId"]
    assert first != second, first
    assert s3.get_object(Bucket=vb, Key="k", VersionId=first)["Body"].read() == b"one"
    marker = s3.delete_object(Bucket=vb, Key="k")
    assert marker["DeleteMarker"] and marker["VersionId"], marker
    expect_code("NoSuchKey", lambda: s3.get_object(Bucket=vb, Key="k"))
    r = s3.list_object_versions(Bucket=vb)
    assert [v["VersionId"] for v in r["Versions"]] == [second, first], r["Versions"]
    got = [(m["VersionId"], m["IsLatest"]) for m in r["DeleteMarkers"]]
    assert got == [(marker["VersionId"], True)], got
    # Emptied as suites do: every version and marker by id.
    ids = [first, second, marker["VersionId"]]
    s3.delete_objects(Bucket=vb, Delete={"Objects": [{"Key": "k", "VersionId": v} for v in ids]})
    assert s3.list_object_versions(Bucket=vb).get("Versions", []) == []
    s3.put_bucket_versioning(Bucket=vb, VersioningConfiguration={"Status": "Suspended"})
    assert s3.get_bucket_versioning(Bucket=vb)["Status"] == "Suspended"
    s3.delete_bucket(Bucket=vb)


def tagging():
    s3.put_object(Bucket=B, Key="t/k", Body=b"tagged", Tagging="project=io500&tier=hot%20tier")
    tags = {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=B, Key="t/k")["TagSet"]}
    assert tags == {"project": "io500", "tier": "hot tier"}, tags
    assert s3.get_object(Bucket=B, Key="t/k")["TagCount"] == 2
    assert s3.head_object(Bucket=B, Key="t/k")["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"
    s3.put_object_tagging(Bucket=B, Key="t/k", Tagging={"TagSet": [{"Key": "a", "Value": "b"}]})
    assert s3.get_object_tagging(Bucket=B, Key="t/k")["TagSet"] == [{"Key": "a", "Value": "b"}]
    s3.copy_object(Bucket=B, Key="t/copy", CopySource={"Bucket": B, "Key": "t/k"})
    assert s3.get_object_tagging(Bucket=B, Key="t/copy")["TagSet"] == [{"Key": "a", "Value": "b"}]
    s3.copy_object(Bucket=B, Key="t/copy", CopySource={"Bucket": B, "Key": "t/k"},
                   TaggingDirective="REPLACE", Tagging="x=y")
    assert s3.get_object_tagging(Bucket=B, Key="t/copy")["TagSet"] == [{"Key": "x", "Value": "y"}]
    s3.delete_object_tagging(Bucket=B, Key="t/k")
    assert s3.get_object_tagging(Bucket=B, Key="t/k")["TagSet"] == []
    eleven = {"TagSet": [{"Key": f"k{i}", "Value": "v"} for i in range(11)]}
    expect_code("InvalidTag", lambda: s3.put_object_tagging(Bucket=B, Key="t/k", Tagging=eleven))
    expect_code("InvalidTag", lambda: s3.put_object_tagging(
        Bucket=B, Key="t/k", Tagging={"TagSet": [{"Key": "k" * 129, "Value": "v"}]}))


def acls():
    acl = s3.get_bucket_acl(Bucket=B)
    owner = acl["Owner"]["ID"]
    assert {"Grantee": {"DisplayName": acl["Owner"]["DisplayName"], "ID": owner,
                        "Type": "CanonicalUser"}, "Permission": "FULL_CONTROL"} in acl["Grants"], acl
    # ACLs are the files' permissions: public-read is o+r, private takes it.
    s3.put_object(Bucket=B, Key="a/k", Body=b"x", ACL="public-read")
    grants = s3.get_object_acl(Bucket=B, Key="a/k")["Grants"]
    assert [g["Permission"] for g in grants] == ["READ", "FULL_CONTROL"], grants
    assert grants[0]["Grantee"]["Type"] == "Group", grants
    s3.put_object_acl(Bucket=B, Key="a/k", ACL="private")
    grants = s3.get_object_acl(Bucket=B, Key="a/k")["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"], grants
    s3.put_object_acl(Bucket=B, Key="a/k", ACL="bucket-owner-full-control")
    r = error_of(lambda: s3.put_object_acl(
        Bucket=B, Key="a/k", GrantRead='emailAddress="x@example.com"'))
    assert r["Error"]["Code"] == "UnresolvableGrantByEmailAddress", r
    expect_code("NoSuchKey", lambda: s3.get_object_acl(Bucket=B, Key="a/missing"))
    s3.put_bucket_acl(Bucket=B, ACL="public-read")
    grants = s3.get_bucket_acl(Bucket=B)["Grants"]
    assert [g["Permission"] for g in grants] == ["READ", "FULL_CONTROL"], grants
    s3.put_bucket_acl(Bucket=B, ACL="private")


def list_object_versions():
    for k in ["v/a", "v/b", "v/d/c", "v/e"]:
        s3.put_object(Bucket=B, Key=k, Body=b"x")
    r = s3.list_object_versions(Bucket=B, Prefix="v/")
    assert [v["Key"] for v in r["Versions"]] == ["v/a", "v/b", "v/d/c", "v/e"], r["Versions"]
    assert all(v["VersionId"] == "null" and v["IsLatest"] for v in r["Versions"])
    r = s3.list_object_versions(Bucket=B, Prefix="v/", Delimiter="/")
    assert [p["Prefix"] for p in r["CommonPrefixes"]] == ["v/d/"], r
    keys, marker = [], {}
    while True:
        r = s3.list_object_versions(Bucket=B, Prefix="v/", MaxKeys=1, **marker)
        keys += [v["Key"] for v in r.get("Versions", [])]
        if not r["IsTruncated"]:
            break
        marker = {"KeyMarker": r["NextKeyMarker"], "VersionIdMarker": r["NextVersionIdMarker"]}
    assert keys == ["v/a", "v/b", "v/d/c", "v/e"], keys
    # What suites' cleanups do: delete every listed version.
    s3.delete_object(Bucket=B, Key="v/e", VersionId="null")
    s3.delete_objects(Bucket=B, Delete={"Objects": [{"Key": "v/a", "VersionId": "null"}]})
    keys = [v["Key"] for v in s3.list_object_versions(Bucket=B, Prefix="v/")["Versions"]]
    assert keys == ["v/b", "v/d/c"], keys
    expect_code("NoSuchVersion", lambda: s3.get_object(Bucket=B, Key="v/b", VersionId="3HL4kqtJlcpXroDTDmJ"))


def ownership_and_policy():
    got = s3.get_bucket_ownership_controls(Bucket=B)["OwnershipControls"]["Rules"]
    assert got == [{"ObjectOwnership": "ObjectWriter"}], got
    s3.put_bucket_ownership_controls(
        Bucket=B, OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    expect_code("NotImplemented", lambda: s3.put_bucket_ownership_controls(
        Bucket=B, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}))
    expect_code("NoSuchBucketPolicy", lambda: s3.get_bucket_policy(Bucket=B))
    # A policy the directory's permissions hold: kept and answered verbatim.
    listing = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "s3:ListBucket",
        "Resource": [f"arn:aws:s3:::{B}", f"arn:aws:s3:::{B}/*"]}]})
    s3.put_bucket_policy(Bucket=B, Policy=listing)
    assert s3.get_bucket_policy(Bucket=B)["Policy"] == listing
    assert s3.get_bucket_policy_status(Bucket=B)["PolicyStatus"]["IsPublic"] is True
    expect_code("NotImplemented", lambda: s3.put_bucket_policy(
        Bucket=B, Policy=listing.replace("Allow", "Deny")))
    expect_code("MalformedPolicy", lambda: s3.put_bucket_policy(Bucket=B, Policy="{"))
    assert s3.get_bucket_policy(Bucket=B)["Policy"] == listing, "a refused policy changes nothing"
    s3.delete_bucket_policy(Bucket=B)
    expect_code("NoSuchBucketPolicy", lambda: s3.get_bucket_policy(Bucket=B))


def bucket_configurations():
    """What tools read of a bucket: AWS's answers for "never configured"."""
    for code, call in [
        ("NoSuchCORSConfiguration", s3.get_bucket_cors),
        ("NoSuchLifecycleConfiguration", s3.get_bucket_lifecycle_configuration),
        ("NoSuchTagSet", s3.get_bucket_tagging),
        ("ServerSideEncryptionConfigurationNotFoundError", s3.get_bucket_encryption),
        ("NoSuchWebsiteConfiguration", s3.get_bucket_website),
        ("ReplicationConfigurationNotFoundError", s3.get_bucket_replication),
        ("ObjectLockConfigurationNotFoundError", s3.get_object_lock_configuration),
        ("NoSuchPublicAccessBlockConfiguration", s3.get_public_access_block),
    ]:
        r = error_of(lambda: call(Bucket=B))
        assert r["Error"]["Code"] == code, (call.__name__, r["Error"])
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 404, (call.__name__, r["ResponseMetadata"])
    assert "LoggingEnabled" not in s3.get_bucket_logging(Bucket=B)
    assert "Status" not in s3.get_bucket_accelerate_configuration(Bucket=B)
    s3.get_bucket_notification_configuration(Bucket=B)
    assert s3.get_bucket_request_payment(Bucket=B)["Payer"] == "BucketOwner"
    for call in [s3.delete_bucket_cors, s3.delete_bucket_lifecycle, s3.delete_bucket_tagging,
                 s3.delete_bucket_encryption, s3.delete_public_access_block, s3.delete_bucket_website,
                 s3.delete_bucket_policy]:
        call(Bucket=B)
    expect_code("NoSuchBucket", lambda: s3.get_bucket_cors(Bucket="no-such-bucket-here"))


def cleanup():
    while True:
        r = s3.list_object_versions(Bucket=B)
        objs = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in r.get("Versions", [])]
        if not objs:
            break
        s3.delete_objects(Bucket=B, Delete={"Objects": objs})
    s3.delete_bucket(Bucket=B)


for name, fn in [
    ("conditional_put", conditional_put), ("conditional_multipart_and_copy", conditional_multipart_and_copy),
    ("conditional_races_50_of_50", races), ("errors_have_aws_shape", errors_have_aws_shape),
    ("versioning", versioning), ("tagging", tagging), ("acls", acls),
    ("list_object_versions", list_object_versions), ("ownership_and_policy", ownership_and_policy),
    ("bucket_configurations", bucket_configurations),
    ("cleanup_by_versions", cleanup),
]:
    check(name, fn)
s3checks.finish()
