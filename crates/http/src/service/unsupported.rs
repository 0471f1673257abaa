//! Lifecycle rules and object lock, which s3hpc does not have: a request
//! is first checked as S3 checks it (a malformed one is a 400 with S3's
//! code, whether or not the feature exists), then refused with the reason
//! (NotImplemented), or with what S3 answers for a bucket that lacks the
//! feature (no bucket here has object lock). Nothing is ever stored.

use super::{run, Engine};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::collections::HashSet;

/// S3's longest lifecycle rule ID.
const MAX_RULE_ID: usize = 255;

pub(super) async fn put_bucket_lifecycle_configuration(
    engine: &Engine,
    req: S3Request<PutBucketLifecycleConfigurationInput>,
) -> S3Result<S3Response<PutBucketLifecycleConfigurationOutput>> {
    let i = req.input;
    run(|| engine.store.head_bucket(&i.bucket))?;
    if let Some(c) = &i.lifecycle_configuration {
        check_lifecycle(&c.rules)?;
    }
    Err(s3_error!(
        NotImplemented,
        "lifecycle rules are not supported: s3hpc neither expires nor transitions objects, \
         so bucket {:?} was left without rules (remove old objects with DeleteObjects, or \
         a cron job over the file system)",
        i.bucket
    ))
}

/// What S3 refuses in a lifecycle configuration before applying it.
fn check_lifecycle(rules: &[LifecycleRule]) -> S3Result<()> {
    let mut ids = HashSet::new();
    for rule in rules {
        if let Some(id) = &rule.id {
            if id.len() > MAX_RULE_ID {
                return Err(s3_error!(
                    InvalidArgument,
                    "lifecycle rule ID is {} characters long; at most {MAX_RULE_ID} are allowed",
                    id.len()
                ));
            }
            if !ids.insert(id.as_str()) {
                return Err(s3_error!(
                    InvalidArgument,
                    "lifecycle rule ID {id:?} is used twice; rule IDs must be unique"
                ));
            }
        }
        let status = rule.status.as_str();
        if status != ExpirationStatus::ENABLED && status != ExpirationStatus::DISABLED {
            return Err(s3_error!(
                MalformedXML,
                "lifecycle rule Status {status:?} is neither Enabled nor Disabled"
            ));
        }
        let expiration = rule.expiration.as_ref().and_then(|e| e.date.as_ref());
        let transitions = rule
            .transitions
            .iter()
            .flatten()
            .filter_map(|t| t.date.as_ref());
        for date in expiration.into_iter().chain(transitions) {
            check_midnight(date)?;
        }
    }
    Ok(())
}

/// Lifecycle dates are days: S3 takes only midnight UTC.
fn check_midnight(date: &Timestamp) -> S3Result<()> {
    let t: time::OffsetDateTime = date.clone().into();
    let t = t.to_offset(time::UtcOffset::UTC);
    if t.time() != time::Time::MIDNIGHT {
        return Err(s3_error!(
            InvalidArgument,
            "lifecycle Date {t} is not at midnight UTC; S3 takes dates such as \
             2030-01-01T00:00:00Z"
        ));
    }
    Ok(())
}

/// Why a bucket here never has object lock.
const NO_LOCK: &str = "s3hpc cannot lock objects against deletion (a file's owner can \
                       always remove it), so no bucket has an object lock configuration";

pub(super) async fn put_object_lock_configuration(
    engine: &Engine,
    req: S3Request<PutObjectLockConfigurationInput>,
) -> S3Result<S3Response<PutObjectLockConfigurationOutput>> {
    let i = req.input;
    run(|| engine.store.head_bucket(&i.bucket))?;
    if let Some(c) = &i.object_lock_configuration {
        check_lock_configuration(c)?;
    }
    let mut e = s3_error!(
        InvalidBucketState,
        "bucket {:?} was not created with object lock, and object lock cannot be enabled \
         on an existing bucket: {NO_LOCK}",
        i.bucket
    );
    e.set_status_code(hyper::StatusCode::CONFLICT);
    Err(e)
}

fn check_lock_configuration(c: &ObjectLockConfiguration) -> S3Result<()> {
    if let Some(enabled) = &c.object_lock_enabled {
        if enabled.as_str() != ObjectLockEnabled::ENABLED {
            return Err(s3_error!(
                MalformedXML,
                "ObjectLockEnabled {:?} is not Enabled, its only value",
                enabled.as_str()
            ));
        }
    }
    let Some(r) = c.rule.as_ref().and_then(|r| r.default_retention.as_ref()) else {
        return Ok(());
    };
    if let Some(mode) = &r.mode {
        check_mode(mode)?;
    }
    let period = match (r.days, r.years) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(s3_error!(
                MalformedXML,
                "a DefaultRetention takes Days or Years, exactly one of them"
            ))
        }
        (Some(n), None) | (None, Some(n)) => n,
    };
    if period <= 0 {
        // A code s3s has no variant for.
        return Err(crate::convert::coded(
            "InvalidRetentionPeriod",
            hyper::StatusCode::BAD_REQUEST,
            format!(
                "the DefaultRetention period must be a positive number of days or years, \
                 not {period}"
            ),
        ));
    }
    Ok(())
}

fn check_mode(mode: &ObjectLockRetentionMode) -> S3Result<()> {
    match mode.as_str() {
        ObjectLockRetentionMode::GOVERNANCE | ObjectLockRetentionMode::COMPLIANCE => Ok(()),
        other => Err(s3_error!(
            MalformedXML,
            "retention Mode {other:?} is neither GOVERNANCE nor COMPLIANCE"
        )),
    }
}

/// S3's answer to a retention or legal hold call on a bucket without
/// object lock.
fn no_lock(bucket: &str) -> s3s::S3Error {
    s3_error!(
        InvalidRequest,
        "Bucket is missing Object Lock Configuration: bucket {bucket:?} has none; {NO_LOCK}"
    )
}

pub(super) async fn put_object_retention(
    engine: &Engine,
    req: S3Request<PutObjectRetentionInput>,
) -> S3Result<S3Response<PutObjectRetentionOutput>> {
    let i = req.input;
    run(|| engine.store.head_object(&i.bucket, &i.key))?;
    if let Some(mode) = i.retention.as_ref().and_then(|r| r.mode.as_ref()) {
        check_mode(mode)?;
    }
    Err(no_lock(&i.bucket))
}

pub(super) async fn get_object_retention(
    engine: &Engine,
    req: S3Request<GetObjectRetentionInput>,
) -> S3Result<S3Response<GetObjectRetentionOutput>> {
    let i = req.input;
    run(|| engine.store.head_object(&i.bucket, &i.key))?;
    Err(no_lock(&i.bucket))
}

pub(super) async fn put_object_legal_hold(
    engine: &Engine,
    req: S3Request<PutObjectLegalHoldInput>,
) -> S3Result<S3Response<PutObjectLegalHoldOutput>> {
    let i = req.input;
    run(|| engine.store.head_object(&i.bucket, &i.key))?;
    if let Some(status) = i.legal_hold.as_ref().and_then(|h| h.status.as_ref()) {
        let s = status.as_str();
        if s != ObjectLockLegalHoldStatus::ON && s != ObjectLockLegalHoldStatus::OFF {
            return Err(s3_error!(
                MalformedXML,
                "legal hold Status {s:?} is neither ON nor OFF"
            ));
        }
    }
    Err(no_lock(&i.bucket))
}

pub(super) async fn get_object_legal_hold(
    engine: &Engine,
    req: S3Request<GetObjectLegalHoldInput>,
) -> S3Result<S3Response<GetObjectLegalHoldOutput>> {
    let i = req.input;
    run(|| engine.store.head_object(&i.bucket, &i.key))?;
    Err(no_lock(&i.bucket))
}

/// CreateBucket with object lock asks for what no bucket here can have:
/// refused before the bucket is made.
pub(super) fn refuse_object_lock(i: &CreateBucketInput) -> S3Result<()> {
    if i.object_lock_enabled_for_bucket == Some(true) {
        return Err(s3_error!(
            NotImplemented,
            "x-amz-bucket-object-lock-enabled: {NO_LOCK}; create bucket {:?} without it",
            i.bucket
        ));
    }
    Ok(())
}
