//! Lifecycle rules (docs/src/design/lifecycle.md): the pass expires what
//! the rules say is due and nothing else, through the same calls as S3
//! requests (markers in versioned buckets, locks kept), and of several
//! servers sharing a file system one takes each bucket's turn.

mod common;

use common::*;
use s3hpc_store::*;
use std::time::{Duration, SystemTime};

/// A clock `days` rule days ahead, with a rule day of one second.
fn later(days: u64) -> LifecycleClock {
    LifecycleClock {
        now: SystemTime::now() + Duration::from_secs(days),
        day: Duration::from_secs(1),
    }
}

fn rule(prefix: &str) -> LifecycleRule {
    LifecycleRule {
        id: prefix.to_string(),
        enabled: true,
        filter: LifecycleFilter {
            prefix: prefix.to_string(),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn apply(env: &Env, rules: &[LifecycleRule], clock: LifecycleClock) -> LifecycleDone {
    env.store.put_bucket_lifecycle(BUCKET, rules).unwrap();
    assert_eq!(
        env.store.bucket_lifecycle(BUCKET).unwrap().as_deref(),
        Some(rules)
    );
    env.store
        .apply_lifecycle(BUCKET, rules, clock, None)
        .unwrap()
}

#[test]
fn expiration_takes_what_is_due_and_matches() {
    let env = Env::new();
    for k in ["old/a", "old/b", "keep/a", "old/big"] {
        env.put(k, b"x");
    }
    env.put("old/big", &[0u8; 100]);
    let mut expire = rule("old/");
    expire.expiration = Some(Expiration::Days(3));
    expire.filter.size_less_than = Some(50);
    let mut disabled = rule("keep/");
    disabled.enabled = false;
    disabled.expiration = Some(Expiration::Days(1));
    let rules = [expire, disabled];
    // Not yet due.
    assert_eq!(apply(&env, &rules, later(1)).expired, 0);
    let done = apply(&env, &rules, later(5));
    assert_eq!(done.expired, 2);
    assert_eq!(
        env.keys(),
        vec!["keep/a".to_string(), "old/big".to_string()]
    );
}

#[test]
fn tags_filter_and_versioned_buckets_get_markers() {
    let env = Env::new();
    env.store
        .put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    env.put("t/tagged", b"1");
    env.put("t/plain", b"1");
    let tags = std::collections::BTreeMap::from([("purge".to_string(), "yes".to_string())]);
    env.store
        .put_object_tagging(BUCKET, "t/tagged", &tags)
        .unwrap();
    let mut r = rule("t/");
    r.expiration = Some(Expiration::Days(1));
    r.filter.tags = tags;
    assert_eq!(apply(&env, &[r], later(2)).expired, 1);
    // The tagged object is hidden by a marker; its version stays.
    assert_eq!(env.keys(), vec!["t/plain".to_string()]);
    let versions = env.store.list_key_versions(BUCKET, "t/tagged").unwrap();
    assert_eq!(versions.len(), 2);
    assert!(versions[0].delete_marker);
}

#[test]
fn noncurrent_versions_go_after_their_days_and_locked_ones_stay() {
    let env = Env::new();
    let s = &env.store;
    s.put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    s.put_object_lock_configuration(BUCKET, &ObjectLockConfig::default())
        .unwrap();
    for body in [&b"1"[..], b"2", b"3", b"4"] {
        env.put("k", body);
    }
    // The oldest is locked.
    let oldest = s.list_key_versions(BUCKET, "k").unwrap().pop().unwrap();
    s.put_object_legal_hold(BUCKET, "k", Some(&oldest.version_id), true)
        .unwrap();
    let mut r = rule("");
    r.noncurrent_days = Some(1);
    r.newer_noncurrent_versions = Some(1);
    let done = apply(&env, &[r], later(3));
    // Of three noncurrent versions the newest is kept (one newer to keep),
    // the middle one goes, the locked one stays.
    assert_eq!((done.removed, done.refused), (1, 1));
    assert_eq!(s.list_key_versions(BUCKET, "k").unwrap().len(), 3);
    assert_eq!(env.get("k"), b"4");
}

#[test]
fn lone_markers_and_stale_uploads_go() {
    let env = Env::new();
    let s = &env.store;
    s.put_bucket_versioning(BUCKET, Versioning::Enabled)
        .unwrap();
    env.put("m", b"1");
    let v = s.head_object(BUCKET, "m").unwrap().version_id.unwrap();
    s.delete_object(BUCKET, "m").unwrap();
    s.delete_object_version(BUCKET, "m", &v).unwrap();
    s.create_multipart_upload(BUCKET, "u/big", &PutOptions::default())
        .unwrap();
    let mut r = rule("");
    r.expired_object_delete_marker = true;
    r.abort_incomplete_upload_days = Some(2);
    let done = apply(&env, &[r], later(3));
    assert_eq!((done.removed, done.aborted), (1, 1));
    assert!(s.list_key_versions(BUCKET, "m").unwrap().is_empty());
    assert!(s.list_multipart_uploads(BUCKET, "").unwrap().is_empty());
}

#[test]
fn one_server_takes_each_turn() {
    let env = Env::new();
    env.put("old/a", b"x");
    let mut r = rule("old/");
    r.expiration = Some(Expiration::Days(1));
    env.store.put_bucket_lifecycle(BUCKET, &[r]).unwrap();
    // Two servers on the same tree, in the same period.
    let other = Store::open(env.root(), StoreConfig::default()).unwrap();
    let hour = Duration::from_secs(3600);
    let a = env
        .store
        .apply_lifecycles(|| later(2), hour, &SweepPace::FULL)
        .unwrap();
    let b = other
        .apply_lifecycles(|| later(2), hour, &SweepPace::FULL)
        .unwrap();
    assert_eq!(a.expired + b.expired, 1);
    assert_eq!(b, LifecycleDone::default());
    assert!(env.keys().is_empty());
}

#[test]
fn reads_announce_the_expiry_s3_would() {
    let env = Env::new();
    env.put("old/a", b"x");
    env.put("new/a", b"x");
    let mut r = rule("old/");
    r.expiration = Some(Expiration::Days(2));
    env.store.put_bucket_lifecycle(BUCKET, &[r]).unwrap();
    let info = env.store.head_object(BUCKET, "old/a").unwrap();
    let (when, id) = env.store.object_expiration(BUCKET, &info).unwrap().unwrap();
    assert_eq!(id, "old/");
    let secs = when
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(secs % 86_400, 0, "at midnight UTC");
    let after = when.duration_since(info.last_modified).unwrap();
    assert!(after > Duration::from_secs(2 * 86_400) && after <= Duration::from_secs(3 * 86_400));
    assert_eq!(env.store.key_expiration(BUCKET, "new/a").unwrap(), None);
}

#[test]
fn a_bucket_with_rules_can_still_be_deleted() {
    let env = Env::new();
    env.put("old/a", b"x");
    let mut r = rule("old/");
    r.expiration = Some(Expiration::Days(1));
    env.store.put_bucket_lifecycle(BUCKET, &[r]).unwrap();
    let hour = Duration::from_secs(3600);
    let done = env
        .store
        .apply_lifecycles(|| later(2), hour, &SweepPace::FULL)
        .unwrap();
    assert_eq!(done.expired, 1);
    // Its turn files are the engine's: they go with the bucket.
    env.store.delete_bucket(BUCKET).unwrap();
}
