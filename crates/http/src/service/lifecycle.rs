//! Lifecycle configurations over HTTP: S3's XML checked as S3 checks it
//! (a malformed one is a 400 with S3's code), then kept by the engine,
//! whose pass applies the rules (docs/src/design/lifecycle.md).

use super::{run, Engine};
use s3hpc_store::{Expiration, LifecycleFilter, LifecycleRule as Rule};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::collections::{BTreeMap, HashSet};
use std::time::SystemTime;

/// S3's `x-amz-expiration` of an expiry: `expiry-date="DATE", rule-id="ID"`.
fn expiration_value(found: Option<(SystemTime, String)>) -> Option<String> {
    let (t, id) = found?;
    Some(format!(
        "expiry-date=\"{}\", rule-id=\"{id}\"",
        httpdate::fmt_http_date(t)
    ))
}

/// The `x-amz-expiration` of a GET or HEAD of `info`.
pub(super) fn expiration_of(
    engine: &Engine,
    bucket: &str,
    info: &s3hpc_store::ObjectInfo,
) -> Option<String> {
    expiration_value(run(|| engine.store.object_expiration(bucket, info)).ok()?)
}

/// The `x-amz-expiration` of a write's answer, for the object now at `key`.
pub(super) fn expiration_after_write(engine: &Engine, bucket: &str, key: &str) -> Option<String> {
    expiration_value(run(|| engine.store.key_expiration(bucket, key)).ok()?)
}

/// S3's longest lifecycle rule ID.
const MAX_RULE_ID: usize = 255;

pub(super) async fn put_bucket_lifecycle_configuration(
    engine: &Engine,
    req: S3Request<PutBucketLifecycleConfigurationInput>,
) -> S3Result<S3Response<PutBucketLifecycleConfigurationOutput>> {
    let i = req.input;
    run(|| engine.store.head_bucket(&i.bucket))?;
    let Some(c) = &i.lifecycle_configuration else {
        return Err(s3_error!(
            MalformedXML,
            "the request holds no LifecycleConfiguration"
        ));
    };
    check_lifecycle(&c.rules)?;
    let rules = c
        .rules
        .iter()
        .enumerate()
        .map(|(n, r)| rule_of(n, r))
        .collect::<S3Result<Vec<_>>>()?;
    run(|| engine.store.put_bucket_lifecycle(&i.bucket, &rules))?;
    Ok(S3Response::new(
        PutBucketLifecycleConfigurationOutput::default(),
    ))
}

pub(super) async fn get_bucket_lifecycle_configuration(
    engine: &Engine,
    req: S3Request<GetBucketLifecycleConfigurationInput>,
) -> S3Result<S3Response<GetBucketLifecycleConfigurationOutput>> {
    let bucket = &req.input.bucket;
    let Some(rules) = run(|| engine.store.bucket_lifecycle(bucket))? else {
        return Err(super::not_set(
            "NoSuchLifecycleConfiguration",
            format!("bucket {bucket:?} has no lifecycle configuration"),
        ));
    };
    Ok(S3Response::new(GetBucketLifecycleConfigurationOutput {
        rules: Some(rules.iter().map(dto_of).collect()),
        ..Default::default()
    }))
}

pub(super) async fn delete_bucket_lifecycle(
    engine: &Engine,
    req: S3Request<DeleteBucketLifecycleInput>,
) -> S3Result<S3Response<DeleteBucketLifecycleOutput>> {
    run(|| engine.store.delete_bucket_lifecycle(&req.input.bucket))?;
    Ok(S3Response::with_status(
        DeleteBucketLifecycleOutput::default(),
        hyper::StatusCode::NO_CONTENT,
    ))
}

fn positive(n: i32, what: &str) -> S3Result<u32> {
    u32::try_from(n).ok().filter(|&n| n > 0).ok_or_else(|| {
        s3_error!(
            InvalidArgument,
            "lifecycle {what} must be a positive whole number, not {n}"
        )
    })
}

fn size_of(n: Option<i64>) -> S3Result<Option<u64>> {
    n.map(|n| {
        u64::try_from(n).map_err(|_| {
            s3_error!(
                InvalidArgument,
                "a lifecycle size filter is a number of bytes, not {n}"
            )
        })
    })
    .transpose()
}

fn tags_of(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter()
        .map(|t| {
            (
                t.key.clone().unwrap_or_default(),
                t.value.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// One S3 rule as the engine keeps it (the `n`th, for an id when it has none).
fn rule_of(n: usize, r: &LifecycleRule) -> S3Result<Rule> {
    if r.transitions.as_ref().is_some_and(|t| !t.is_empty())
        || r.noncurrent_version_transitions
            .as_ref()
            .is_some_and(|t| !t.is_empty())
    {
        return Err(s3_error!(
            NotImplemented,
            "lifecycle transitions are not supported: s3hpc has one storage class, the file \
             system, so there is nowhere to move objects to; use Expiration instead"
        ));
    }
    let malformed = |why: &str| Err(s3_error!(MalformedXML, "lifecycle rule: {why}"));
    if r.prefix.is_some() && r.filter.is_some() {
        return malformed("a rule takes Prefix or Filter, not both");
    }
    let e = r.expiration.as_ref();
    if e.and_then(|e| e.expired_object_delete_marker).is_some()
        && (e.and_then(|e| e.days).is_some() || e.and_then(|e| e.date.as_ref()).is_some())
    {
        return malformed("ExpiredObjectDeleteMarker goes alone, without Days or Date");
    }
    let noncurrent = r.noncurrent_version_expiration.as_ref();
    if noncurrent.is_some_and(|n| n.noncurrent_days.is_none()) {
        return malformed("NoncurrentVersionExpiration takes NoncurrentDays");
    }
    let mut filter = LifecycleFilter::default();
    let legacy_prefix = r.filter.is_none();
    if let Some(p) = &r.prefix {
        filter.prefix = p.clone();
    }
    if let Some(f) = &r.filter {
        let and = f.and.as_ref();
        filter.prefix = f
            .prefix
            .clone()
            .or_else(|| and.and_then(|a| a.prefix.clone()))
            .unwrap_or_default();
        filter.tags = tags_of(f.tag.as_slice());
        if let Some(a) = and {
            filter
                .tags
                .extend(tags_of(a.tags.as_deref().unwrap_or(&[])));
        }
        filter.size_greater_than = size_of(
            f.object_size_greater_than
                .or(and.and_then(|a| a.object_size_greater_than)),
        )?;
        filter.size_less_than = size_of(
            f.object_size_less_than
                .or(and.and_then(|a| a.object_size_less_than)),
        )?;
    }
    let expiration = match (e.and_then(|e| e.days), e.and_then(|e| e.date.as_ref())) {
        (Some(_), Some(_)) => {
            return Err(s3_error!(
                MalformedXML,
                "a lifecycle Expiration takes Days or Date, not both"
            ))
        }
        (Some(d), None) => Some(Expiration::Days(positive(d, "Expiration Days")?)),
        (None, Some(t)) => Some(Expiration::Date(
            time::OffsetDateTime::from(t.clone()).into(),
        )),
        (None, None) => None,
    };
    Ok(Rule {
        id: r.id.clone().unwrap_or_else(|| generated_id(n)),
        enabled: r.status.as_str() == ExpirationStatus::ENABLED,
        filter,
        legacy_prefix,
        expiration,
        expired_object_delete_marker: e.and_then(|e| e.expired_object_delete_marker) == Some(true),
        noncurrent_days: noncurrent
            .and_then(|n| n.noncurrent_days)
            .map(|d| positive(d, "NoncurrentDays"))
            .transpose()?,
        newer_noncurrent_versions: noncurrent
            .and_then(|n| n.newer_noncurrent_versions)
            .map(|d| positive(d, "NewerNoncurrentVersions"))
            .transpose()?,
        abort_incomplete_upload_days: r
            .abort_incomplete_multipart_upload
            .as_ref()
            .and_then(|a| a.days_after_initiation)
            .map(|d| positive(d, "DaysAfterInitiation"))
            .transpose()?,
    })
}

/// An id for a rule sent without one, unique within its configuration.
fn generated_id(n: usize) -> String {
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros();
    format!("rule-{t:x}-{n}")
}

fn tag_dto((k, v): (&String, &String)) -> Tag {
    Tag {
        key: Some(k.clone()),
        value: Some(v.clone()),
    }
}

/// A kept rule as S3 gives it back: its prefix the way it was sent, and a
/// filter of one condition alone or of several under And.
fn dto_of(r: &Rule) -> LifecycleRule {
    let f = &r.filter;
    let conditions = usize::from(!f.prefix.is_empty())
        + f.tags.len()
        + usize::from(f.size_greater_than.is_some())
        + usize::from(f.size_less_than.is_some());
    let filter = (!r.legacy_prefix).then(|| {
        if conditions > 1 {
            LifecycleRuleFilter {
                and: Some(LifecycleRuleAndOperator {
                    prefix: (!f.prefix.is_empty()).then(|| f.prefix.clone()),
                    tags: (!f.tags.is_empty()).then(|| f.tags.iter().map(tag_dto).collect()),
                    object_size_greater_than: f.size_greater_than.map(|n| n as i64),
                    object_size_less_than: f.size_less_than.map(|n| n as i64),
                }),
                ..Default::default()
            }
        } else {
            LifecycleRuleFilter {
                prefix: (!f.prefix.is_empty()).then(|| f.prefix.clone()),
                tag: f.tags.iter().next().map(tag_dto),
                object_size_greater_than: f.size_greater_than.map(|n| n as i64),
                object_size_less_than: f.size_less_than.map(|n| n as i64),
                ..Default::default()
            }
        }
    });
    let expiration =
        (r.expiration.is_some() || r.expired_object_delete_marker).then(|| LifecycleExpiration {
            days: match r.expiration {
                Some(Expiration::Days(d)) => Some(d as i32),
                _ => None,
            },
            date: match r.expiration {
                Some(Expiration::Date(t)) => Some(crate::convert::timestamp(t)),
                _ => None,
            },
            expired_object_delete_marker: r.expired_object_delete_marker.then_some(true),
        });
    LifecycleRule {
        id: Some(r.id.clone()),
        status: ExpirationStatus::from(if r.enabled { "Enabled" } else { "Disabled" }.to_string()),
        prefix: r.legacy_prefix.then(|| f.prefix.clone()),
        filter,
        expiration,
        noncurrent_version_expiration: r.noncurrent_days.map(|d| NoncurrentVersionExpiration {
            noncurrent_days: Some(d as i32),
            newer_noncurrent_versions: r.newer_noncurrent_versions.map(|n| n as i32),
        }),
        abort_incomplete_multipart_upload: r.abort_incomplete_upload_days.map(|d| {
            AbortIncompleteMultipartUpload {
                days_after_initiation: Some(d as i32),
            }
        }),
        transitions: None,
        noncurrent_version_transitions: None,
    }
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
