//! `x-amz-expected-bucket-owner`: a request that names the account it
//! expects to own the bucket is refused (403 AccessDenied, as AWS answers)
//! when the bucket is someone else's, so that a client never writes into
//! or reads from a bucket that changed hands under the same name. The
//! owner is the bucket directory's uid; the account may be named by any
//! of its keys or as `uid:N` (see `owners.rs`). Looked up (a `stat` of
//! the bucket) only when the header is sent.

use super::{run, Engine};
use s3s::dto::*;
use s3s::{s3_error, S3Result};

/// The bucket of a request and the owner it expects, if it names one.
pub(super) trait ExpectsOwner {
    fn expected(&self) -> Option<(&str, &str)>;
}

macro_rules! expects_owner {
    ($($input:ident)*) => {
        $(impl ExpectsOwner for $input {
            fn expected(&self) -> Option<(&str, &str)> {
                Some((&self.bucket, self.expected_bucket_owner.as_deref()?))
            }
        })*
    };
}

expects_owner! {
    AbortMultipartUploadInput CompleteMultipartUploadInput CopyObjectInput
    CreateMultipartUploadInput DeleteBucketCorsInput DeleteBucketEncryptionInput
    DeleteBucketInput DeleteBucketLifecycleInput DeleteBucketPolicyInput
    DeleteBucketTaggingInput DeleteBucketWebsiteInput DeleteObjectInput
    DeleteObjectTaggingInput DeleteObjectsInput DeletePublicAccessBlockInput
    GetBucketAccelerateConfigurationInput GetBucketAclInput GetBucketCorsInput
    GetBucketEncryptionInput GetBucketLifecycleConfigurationInput
    GetBucketLocationInput GetBucketLoggingInput GetBucketNotificationConfigurationInput
    GetBucketOwnershipControlsInput GetBucketPolicyInput GetBucketPolicyStatusInput
    GetBucketReplicationInput GetBucketRequestPaymentInput GetBucketTaggingInput
    GetBucketVersioningInput GetBucketWebsiteInput GetObjectAclInput
    GetObjectAttributesInput GetObjectInput GetObjectLegalHoldInput
    GetObjectLockConfigurationInput GetObjectRetentionInput GetObjectTaggingInput
    GetPublicAccessBlockInput HeadBucketInput HeadObjectInput
    ListMultipartUploadsInput ListObjectVersionsInput ListObjectsInput
    ListObjectsV2Input ListPartsInput PutBucketAclInput PutBucketCorsInput
    PutBucketLifecycleConfigurationInput PutBucketLoggingInput PutBucketOwnershipControlsInput
    PutBucketPolicyInput PutBucketTaggingInput PutBucketVersioningInput PutObjectAclInput
    PutObjectInput
    PutObjectLegalHoldInput PutObjectLockConfigurationInput PutObjectRetentionInput
    PutObjectTaggingInput UploadPartCopyInput UploadPartInput
}

/// Requests about no existing bucket name none.
macro_rules! expects_none {
    ($($input:ident)*) => {
        $(impl ExpectsOwner for $input {
            fn expected(&self) -> Option<(&str, &str)> {
                None
            }
        })*
    };
}

expects_none! { ListBucketsInput CreateBucketInput }

/// AccessDenied unless the bucket's owner is the account `input` expects.
pub(super) fn check(engine: &Engine, input: &impl ExpectsOwner) -> S3Result<()> {
    let Some((bucket, expected)) = input.expected() else {
        return Ok(());
    };
    let uid = run(|| engine.store.bucket_owner(bucket))?;
    if engine.owners.uid_of(expected.trim()) == Some(uid) {
        return Ok(());
    }
    Err(s3_error!(
        AccessDenied,
        "bucket {bucket:?} is not owned by {expected:?} (x-amz-expected-bucket-owner); its \
         owner is {}",
        engine.owners.of(uid).id.unwrap_or_default()
    ))
}
