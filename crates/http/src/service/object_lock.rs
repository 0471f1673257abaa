//! Object lock over HTTP: a bucket's lock configuration, each version's
//! retention and legal hold, and the `x-amz-object-lock-*` headers of
//! writes, GET and HEAD. The engine keeps and enforces them
//! (docs/src/design/object-lock.md); this module speaks S3's XML and
//! headers, checked as S3 checks them.

use super::{run, Engine};
use crate::convert::{coded, timestamp};
use s3hpc_store::{LockMode, ObjectLockConfig, Retention, RetentionPeriod};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::time::SystemTime;

fn time_of(t: &Timestamp) -> SystemTime {
    time::OffsetDateTime::from(t.clone()).into()
}

/// A retention mode as S3 takes it: upper case, one of two (MalformedXML).
fn mode_of(mode: &str) -> S3Result<LockMode> {
    LockMode::parse(mode).ok_or_else(|| {
        s3_error!(
            MalformedXML,
            "retention Mode {mode:?} is neither GOVERNANCE nor COMPLIANCE"
        )
    })
}

/// The lock a write asks for in its `x-amz-object-lock-*` headers: a mode
/// and a date together, or neither; a legal hold ON or OFF.
pub(crate) fn lock_headers(
    mode: Option<&ObjectLockMode>,
    until: Option<&Timestamp>,
    hold: Option<&ObjectLockLegalHoldStatus>,
) -> S3Result<(Option<Retention>, Option<bool>)> {
    let retention = match (mode, until) {
        (None, None) => None,
        (Some(m), Some(t)) => Some(Retention {
            mode: LockMode::parse(m.as_str()).ok_or_else(|| {
                s3_error!(
                    InvalidArgument,
                    "x-amz-object-lock-mode {:?} is neither GOVERNANCE nor COMPLIANCE",
                    m.as_str()
                )
            })?,
            until: time_of(t),
        }),
        _ => {
            return Err(s3_error!(
                InvalidArgument,
                "x-amz-object-lock-mode and x-amz-object-lock-retain-until-date go together: \
                 send both or neither"
            ))
        }
    };
    let hold = match hold.map(|h| h.as_str()) {
        None => None,
        Some(ObjectLockLegalHoldStatus::ON) => Some(true),
        Some(ObjectLockLegalHoldStatus::OFF) => Some(false),
        Some(other) => {
            return Err(s3_error!(
                InvalidArgument,
                "x-amz-object-lock-legal-hold {other:?} is neither ON nor OFF"
            ))
        }
    };
    Ok((retention, hold))
}

/// The `x-amz-object-lock-*` headers a write asks for, as the engine's
/// retention and legal hold, from any s3s input that has them.
macro_rules! asked_lock {
    ($i:expr) => {
        $crate::service::object_lock::lock_headers(
            $i.object_lock_mode.as_ref(),
            $i.object_lock_retain_until_date.as_ref(),
            $i.object_lock_legal_hold_status.as_ref(),
        )
    };
}
pub(crate) use asked_lock;

/// Sets a GET's or HEAD's `x-amz-object-lock-*` fields from the version's lock.
macro_rules! set_lock {
    ($out:expr, $lock:expr) => {
        if let Some(r) = $lock.retention {
            $out.object_lock_mode = Some(ObjectLockMode::from(r.mode.as_str().to_string()));
            $out.object_lock_retain_until_date = Some($crate::convert::timestamp(r.until));
        }
        if let Some(h) = $lock.legal_hold {
            let s = if h { "ON" } else { "OFF" };
            $out.object_lock_legal_hold_status =
                Some(ObjectLockLegalHoldStatus::from(s.to_string()));
        }
    };
}
pub(crate) use set_lock;

/// A lock configuration as S3 checks it: Enabled, and a default retention
/// of one mode and exactly one positive period.
fn config_of(c: &ObjectLockConfiguration) -> S3Result<ObjectLockConfig> {
    match c.object_lock_enabled.as_ref().map(|e| e.as_str()) {
        Some(ObjectLockEnabled::ENABLED) => {}
        other => {
            return Err(s3_error!(
                MalformedXML,
                "ObjectLockEnabled {other:?} is not Enabled, its only value"
            ))
        }
    }
    let Some(rule) = &c.rule else {
        return Ok(ObjectLockConfig { default: None });
    };
    let Some(r) = &rule.default_retention else {
        return Err(s3_error!(
            MalformedXML,
            "an object lock Rule holds a DefaultRetention"
        ));
    };
    let mode = match &r.mode {
        Some(m) => mode_of(m.as_str())?,
        None => {
            return Err(s3_error!(
                MalformedXML,
                "a DefaultRetention takes a Mode (GOVERNANCE or COMPLIANCE)"
            ))
        }
    };
    let (n, period): (i32, fn(u32) -> RetentionPeriod) = match (r.days, r.years) {
        (Some(d), None) => (d, RetentionPeriod::Days),
        (None, Some(y)) => (y, RetentionPeriod::Years),
        _ => {
            return Err(s3_error!(
                MalformedXML,
                "a DefaultRetention takes Days or Years, exactly one of them"
            ))
        }
    };
    // S3's upper bound: 100 years.
    let limit = if r.days.is_some() { 36_500 } else { 100 };
    if n <= 0 || n > limit {
        return Err(coded(
            "InvalidRetentionPeriod",
            hyper::StatusCode::BAD_REQUEST,
            format!(
                "the DefaultRetention period must be 1 to {limit} {}, not {n}",
                if r.days.is_some() { "days" } else { "years" }
            ),
        ));
    }
    Ok(ObjectLockConfig {
        default: Some((mode, period(n as u32))),
    })
}

pub(super) async fn put_object_lock_configuration(
    engine: &Engine,
    req: S3Request<PutObjectLockConfigurationInput>,
) -> S3Result<S3Response<PutObjectLockConfigurationOutput>> {
    let i = req.input;
    run(|| engine.store.head_bucket(&i.bucket))?;
    let config = match &i.object_lock_configuration {
        Some(c) => config_of(c)?,
        None => {
            return Err(s3_error!(
                MalformedXML,
                "the request holds no ObjectLockConfiguration"
            ))
        }
    };
    run(|| {
        engine
            .store
            .put_object_lock_configuration(&i.bucket, &config)
    })?;
    Ok(S3Response::new(PutObjectLockConfigurationOutput::default()))
}

pub(super) async fn get_object_lock_configuration(
    engine: &Engine,
    req: S3Request<GetObjectLockConfigurationInput>,
) -> S3Result<S3Response<GetObjectLockConfigurationOutput>> {
    let bucket = &req.input.bucket;
    let Some(config) = run(|| engine.store.object_lock_configuration(bucket))? else {
        return Err(super::not_set(
            "ObjectLockConfigurationNotFoundError",
            format!("bucket {bucket:?} has no object lock configuration"),
        ));
    };
    let rule = config.default.map(|(mode, period)| {
        let (days, years) = match period {
            RetentionPeriod::Days(d) => (Some(d as i32), None),
            RetentionPeriod::Years(y) => (None, Some(y as i32)),
        };
        ObjectLockRule {
            default_retention: Some(DefaultRetention {
                mode: Some(ObjectLockRetentionMode::from(mode.as_str().to_string())),
                days,
                years,
            }),
        }
    });
    Ok(S3Response::new(GetObjectLockConfigurationOutput {
        object_lock_configuration: Some(ObjectLockConfiguration {
            object_lock_enabled: Some(ObjectLockEnabled::from_static(ObjectLockEnabled::ENABLED)),
            rule,
        }),
    }))
}

fn lock_state(
    engine: &Engine,
    bucket: &str,
    key: &str,
    version: Option<&str>,
) -> S3Result<s3hpc_store::ObjectLockState> {
    run(|| engine.store.object_lock_state(bucket, key, version))
}

/// A legal hold as S3 spells it.
pub(crate) fn hold_status(on: bool) -> ObjectLockLegalHoldStatus {
    ObjectLockLegalHoldStatus::from(if on { "ON" } else { "OFF" }.to_string())
}

/// S3's 404 for a version that has no retention or legal hold.
fn none_set(what: &str, bucket: &str, key: &str) -> s3s::S3Error {
    coded(
        "NoSuchObjectLockConfiguration",
        hyper::StatusCode::NOT_FOUND,
        format!("{bucket}/{key} has no {what}"),
    )
}

pub(super) async fn put_object_retention(
    engine: &Engine,
    req: S3Request<PutObjectRetentionInput>,
) -> S3Result<S3Response<PutObjectRetentionOutput>> {
    let i = req.input;
    let retention = match &i.retention {
        Some(ObjectLockRetention {
            mode: Some(m),
            retain_until_date: Some(t),
        }) => Some(Retention {
            mode: mode_of(m.as_str())?,
            until: time_of(t),
        }),
        // An empty Retention removes it (GOVERNANCE, with bypass).
        Some(ObjectLockRetention {
            mode: None,
            retain_until_date: None,
        }) => None,
        _ => {
            return Err(s3_error!(
                MalformedXML,
                "a Retention holds a Mode and a RetainUntilDate (or neither, to remove it)"
            ))
        }
    };
    let bypass = i.bypass_governance_retention.unwrap_or(false);
    let version = i.version_id.as_deref();
    run(|| {
        engine
            .store
            .put_object_retention(&i.bucket, &i.key, version, retention, bypass)
    })?;
    Ok(S3Response::new(PutObjectRetentionOutput::default()))
}

pub(super) async fn get_object_retention(
    engine: &Engine,
    req: S3Request<GetObjectRetentionInput>,
) -> S3Result<S3Response<GetObjectRetentionOutput>> {
    let i = req.input;
    let r = lock_state(engine, &i.bucket, &i.key, i.version_id.as_deref())?
        .retention
        .ok_or_else(|| none_set("retention", &i.bucket, &i.key))?;
    Ok(S3Response::new(GetObjectRetentionOutput {
        retention: Some(ObjectLockRetention {
            mode: Some(ObjectLockRetentionMode::from(r.mode.as_str().to_string())),
            retain_until_date: Some(timestamp(r.until)),
        }),
    }))
}

pub(super) async fn put_object_legal_hold(
    engine: &Engine,
    req: S3Request<PutObjectLegalHoldInput>,
) -> S3Result<S3Response<PutObjectLegalHoldOutput>> {
    let i = req.input;
    let on = match i
        .legal_hold
        .as_ref()
        .and_then(|h| h.status.as_ref())
        .map(|s| s.as_str())
    {
        Some(ObjectLockLegalHoldStatus::ON) => true,
        Some(ObjectLockLegalHoldStatus::OFF) => false,
        other => {
            return Err(s3_error!(
                MalformedXML,
                "legal hold Status {other:?} is neither ON nor OFF"
            ))
        }
    };
    run(|| {
        engine
            .store
            .put_object_legal_hold(&i.bucket, &i.key, i.version_id.as_deref(), on)
    })?;
    Ok(S3Response::new(PutObjectLegalHoldOutput::default()))
}

pub(super) async fn get_object_legal_hold(
    engine: &Engine,
    req: S3Request<GetObjectLegalHoldInput>,
) -> S3Result<S3Response<GetObjectLegalHoldOutput>> {
    let i = req.input;
    let on = lock_state(engine, &i.bucket, &i.key, i.version_id.as_deref())?
        .legal_hold
        .ok_or_else(|| none_set("legal hold", &i.bucket, &i.key))?;
    Ok(S3Response::new(GetObjectLegalHoldOutput {
        legal_hold: Some(ObjectLockLegalHold {
            status: Some(hold_status(on)),
        }),
    }))
}

/// A bucket created with `x-amz-bucket-object-lock-enabled`: versioning
/// enabled and object lock on, or the bucket removed again.
pub(super) fn lock_new_bucket(engine: &Engine, bucket: &str) -> S3Result<()> {
    let locked = engine
        .store
        .put_bucket_versioning(bucket, s3hpc_store::Versioning::Enabled)
        .and_then(|()| {
            engine
                .store
                .put_object_lock_configuration(bucket, &ObjectLockConfig::default())
        });
    if let Err(e) = locked {
        let _ = engine.store.delete_bucket(bucket);
        return Err(crate::convert::s3_error(e));
    }
    Ok(())
}
