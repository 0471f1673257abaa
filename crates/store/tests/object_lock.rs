//! Object lock (docs/src/design/object-lock.md): a locked version cannot be
//! deleted through the engine (so through no transport) until its
//! retention ends or its legal hold is lifted; GOVERNANCE yields to a
//! bypass, COMPLIANCE to nothing.

mod common;

use common::*;
use s3hpc_store::*;
use std::time::{Duration, SystemTime};

fn locked(default: Option<(LockMode, RetentionPeriod)>) -> Env {
    let env = Env::new();
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    env.store
        .put_object_lock_configuration(BUCKET, &ObjectLockConfig { default })
        .unwrap();
    env
}

fn put_locked(env: &Env, key: &str, retention: Option<Retention>, hold: Option<bool>) -> String {
    let opts = PutOptions {
        retention,
        legal_hold: hold,
        ..Default::default()
    };
    let (_, v) = env
        .store
        .put_object_versioned(BUCKET, key, PutBody::Bytes(b"kept"), &opts)
        .unwrap();
    v.expect("a bucket with object lock keeps versions")
}

fn in_secs(s: u64, mode: LockMode) -> Retention {
    Retention {
        mode,
        until: SystemTime::now() + Duration::from_secs(s),
    }
}

fn code<T>(r: Result<T>) -> Option<ErrorCode> {
    r.err().map(|e| e.code)
}

fn bypassing() -> DeleteCondition {
    DeleteCondition {
        bypass_governance: true,
        ..Default::default()
    }
}

#[test]
fn governance_yields_to_a_bypass_only() {
    let env = locked(None);
    let v = put_locked(&env, "k", Some(in_secs(3600, LockMode::Governance)), None);
    let s = &env.store;
    assert_eq!(
        code(s.delete_object_version(BUCKET, "k", &v)),
        Some(ErrorCode::AccessDenied)
    );
    // A delete marker hides it; the version stays.
    let marker = s.delete_object_versioned(BUCKET, "k").unwrap().unwrap();
    s.delete_object_version(BUCKET, "k", &marker).unwrap();
    assert_eq!(env.get("k"), b"kept");
    // Shortening needs the bypass too.
    let shorter = in_secs(60, LockMode::Governance);
    assert_eq!(
        code(s.put_object_retention(BUCKET, "k", Some(&v), Some(shorter), false)),
        Some(ErrorCode::AccessDenied)
    );
    s.put_object_retention(
        BUCKET,
        "k",
        Some(&v),
        Some(in_secs(7200, LockMode::Governance)),
        false,
    )
    .unwrap();
    s.delete_object_version_if(BUCKET, "k", &v, &bypassing())
        .unwrap();
    assert!(s.list_key_versions(BUCKET, "k").unwrap().is_empty());
}

#[test]
fn compliance_and_legal_holds_yield_to_nothing() {
    let env = locked(None);
    let s = &env.store;
    let c = put_locked(&env, "c", Some(in_secs(3600, LockMode::Compliance)), None);
    assert_eq!(
        code(s.delete_object_version_if(BUCKET, "c", &c, &bypassing())),
        Some(ErrorCode::AccessDenied)
    );
    for weaker in [
        Some(in_secs(60, LockMode::Compliance)),
        Some(in_secs(7200, LockMode::Governance)),
        None,
    ] {
        assert_eq!(
            code(s.put_object_retention(BUCKET, "c", Some(&c), weaker, true)),
            Some(ErrorCode::AccessDenied)
        );
    }
    let info = s.head_object_version(BUCKET, "c", &c).unwrap();
    assert_eq!(info.lock.retention.unwrap().mode, LockMode::Compliance);

    let h = put_locked(&env, "h", None, Some(true));
    assert_eq!(
        code(s.delete_object_version_if(BUCKET, "h", &h, &bypassing())),
        Some(ErrorCode::AccessDenied)
    );
    s.put_object_legal_hold(BUCKET, "h", None, false).unwrap();
    assert_eq!(
        s.object_lock_state(BUCKET, "h", Some(&h))
            .unwrap()
            .legal_hold,
        Some(false)
    );
    s.delete_object_version(BUCKET, "h", &h).unwrap();
}

#[test]
fn the_default_retention_locks_every_new_version() {
    let env = locked(Some((LockMode::Governance, RetentionPeriod::Days(1))));
    let v = put_locked(&env, "k", None, None);
    let r = env
        .store
        .head_object(BUCKET, "k")
        .unwrap()
        .lock
        .retention
        .unwrap();
    assert_eq!(r.mode, LockMode::Governance);
    let day = r.until.duration_since(SystemTime::now()).unwrap();
    assert!(day > Duration::from_secs(86_000) && day <= Duration::from_secs(86_400));
    assert_eq!(
        code(env.store.delete_object_version(BUCKET, "k", &v)),
        Some(ErrorCode::AccessDenied)
    );
    // A multipart upload's version too.
    let s = &env.store;
    let id = s
        .create_multipart_upload(BUCKET, "m", &PutOptions::default())
        .unwrap();
    let etag = s
        .upload_part(BUCKET, "m", &id, 1, PutBody::Bytes(b"part"))
        .unwrap();
    s.complete_multipart_upload(BUCKET, "m", &id, &[(1, etag)])
        .unwrap();
    let m = s.head_object(BUCKET, "m").unwrap();
    assert!(m.lock.retention.is_some());
    assert_eq!(
        code(s.delete_object_version(BUCKET, "m", m.version_id.as_deref().unwrap())),
        Some(ErrorCode::AccessDenied)
    );
}

#[test]
fn a_bucket_without_lock_refuses_locks_and_keeps_versioning_choices() {
    let env = Env::new();
    let s = &env.store;
    env.put("k", b"x");
    let opts = PutOptions {
        legal_hold: Some(true),
        ..Default::default()
    };
    assert_eq!(
        code(s.put_object(BUCKET, "k", PutBody::Bytes(b"y"), &opts)),
        Some(ErrorCode::InvalidRequest)
    );
    assert_eq!(env.get("k"), b"x");
    assert_eq!(
        code(s.put_object_legal_hold(BUCKET, "k", None, true)),
        Some(ErrorCode::InvalidRequest)
    );
    // Lock needs versioning enabled, and keeps it enabled.
    let config = ObjectLockConfig::default();
    assert_eq!(
        code(s.put_object_lock_configuration(BUCKET, &config)),
        Some(ErrorCode::InvalidBucketState)
    );
    s.put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    s.put_object_lock_configuration(BUCKET, &config).unwrap();
    assert_eq!(
        code(s.put_bucket_versioning(BUCKET, Versioning::Suspended)),
        Some(ErrorCode::InvalidBucketState)
    );
    assert_eq!(s.object_lock_configuration(BUCKET).unwrap(), Some(config));
    assert_eq!(s.bucket_versioning(BUCKET).unwrap(), Versioning::Enabled);
    // A past date is no retention.
    let past = Retention {
        mode: LockMode::Governance,
        until: SystemTime::now() - Duration::from_secs(1),
    };
    assert_eq!(
        code(s.put_object_retention(BUCKET, "k", None, Some(past), false)),
        Some(ErrorCode::InvalidArgument)
    );
}

#[test]
fn an_expired_retention_no_longer_holds() {
    let env = locked(None);
    let v = put_locked(&env, "k", Some(in_secs(1, LockMode::Compliance)), None);
    std::thread::sleep(Duration::from_millis(1100));
    env.store.delete_object_version(BUCKET, "k", &v).unwrap();
}
