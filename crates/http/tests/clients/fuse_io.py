"""boto3's side of fuse.sh: put, get or check a key of the `posix` bucket,
byte for byte against a local file.

    fuse_io.py URL ACCESS SECRET put KEY FILE      (multipart above 8 MiB)
    fuse_io.py URL ACCESS SECRET get KEY FILE      (exit 1 unless equal)
    fuse_io.py URL ACCESS SECRET absent KEY        (exit 1 if it exists; KEY/: any key under it)
    fuse_io.py URL ACCESS SECRET keys PREFIX       (prints the keys, one a line)
"""

import sys

import boto3
import botocore.config
from boto3.s3.transfer import TransferConfig

url, ak, sk, cmd, *args = sys.argv[1:]
c = boto3.client("s3", endpoint_url=url, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1",
                 config=botocore.config.Config(s3={"addressing_style": "path"}))
BUCKET = "posix"

if cmd == "put":
    key, path = args
    c.upload_file(path, BUCKET, key, Config=TransferConfig(multipart_threshold=8 << 20,
                                                           multipart_chunksize=8 << 20))
elif cmd == "get":
    key, path = args
    got = c.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    want = open(path, "rb").read()
    if got != want:
        sys.exit(f"{key}: {len(got)} bytes through S3, {len(want)} written (or different bytes)")
elif cmd == "absent":
    (key,) = args
    if key.endswith("/"):
        if c.list_objects_v2(Bucket=BUCKET, Prefix=key).get("KeyCount", 0):
            sys.exit(f"keys under {key} still exist")
    else:
        try:
            c.head_object(Bucket=BUCKET, Key=key)
            sys.exit(f"{key} still exists")
        except c.exceptions.ClientError as e:
            if e.response["Error"]["Code"] not in ("404", "NoSuchKey"):
                raise
elif cmd == "keys":
    (prefix,) = args
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for o in page.get("Contents", []):
            print(o["Key"])
else:
    sys.exit(f"unknown command {cmd}")
