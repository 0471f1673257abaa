//! Conditional writes (If-None-Match: *, If-Match) on PUT, CopyObject and
//! CompleteMultipartUpload, and races of two writers on one key between
//! threads and between processes: exactly one wins, every time.

mod common;
use common::*;
use s3hpc_store::*;
use std::path::Path;
use std::sync::Barrier;

const TRIALS: usize = 50;

fn cond_put(store: &Store, key: &str, data: &[u8], cond: WriteCondition) -> Result<String> {
    let opts = PutOptions {
        condition: cond,
        ..Default::default()
    };
    store.put_object(BUCKET, key, PutBody::Bytes(data), &opts)
}

#[test]
fn if_none_match_creates_only() {
    for etag in [EtagPolicy::Md5, EtagPolicy::Fast] {
        let env = Env::with(etag, Durability::None);
        let s = &env.store;
        cond_put(s, "a/new", b"one", WriteCondition::IfNoneMatch).unwrap();
        assert_eq!(env.get("a/new"), b"one");
        let e = expect_err(
            cond_put(s, "a/new", b"two", WriteCondition::IfNoneMatch),
            ErrorCode::PreconditionFailed,
            &["a/new", "If-None-Match"],
        );
        assert_eq!(e.code.http_status(), 412);
        assert_eq!(env.get("a/new"), b"one", "the loser must leave the object");
        // Empty bodies take the O_EXCL path.
        cond_put(s, "empty", b"", WriteCondition::IfNoneMatch).unwrap();
        expect_err(
            cond_put(s, "empty", b"", WriteCondition::IfNoneMatch),
            ErrorCode::PreconditionFailed,
            &[],
        );
        expect_err(
            cond_put(s, "a/new", b"", WriteCondition::IfNoneMatch),
            ErrorCode::PreconditionFailed,
            &[],
        );
        assert_eq!(env.get("a/new"), b"one");
        // An empty directory is no object: it gives way; a prefix holding
        // no object of its own name is created as its self-entry, once.
        std::fs::create_dir_all(env.path("d/e")).unwrap();
        cond_put(s, "d/e", b"x", WriteCondition::IfNoneMatch).unwrap();
        cond_put(s, "d", b"x", WriteCondition::IfNoneMatch).unwrap();
        expect_err(
            cond_put(s, "d", b"y", WriteCondition::IfNoneMatch),
            ErrorCode::PreconditionFailed,
            &[],
        );
        assert_eq!(env.get("d"), b"x");
        // No temporaries left behind by the losers.
        assert_eq!(env.keys(), ["a/new", "d", "d/e", "empty"]);
        let hidden: Vec<_> = walk(&env.path(""))
            .into_iter()
            .filter(|p| p.contains(".s3hpc") && !p.ends_with(".s3hpc-self"))
            .collect();
        assert!(hidden.is_empty(), "{hidden:?}");
    }
}

#[test]
fn if_match_replaces_only_that_version() {
    for etag in [EtagPolicy::Md5, EtagPolicy::Fast] {
        let env = Env::with(etag, Durability::None);
        let s = &env.store;
        expect_err(
            cond_put(s, "k", b"x", WriteCondition::IfMatch("\"abc\"".into())),
            ErrorCode::NoSuchKey,
            &["k"],
        );
        assert!(env.keys().is_empty());
        let e1 = env.put("k", b"first");
        expect_err(
            cond_put(s, "k", b"x", WriteCondition::IfMatch("\"0123\"".into())),
            ErrorCode::PreconditionFailed,
            &["k", "If-Match"],
        );
        assert_eq!(env.get("k"), b"first");
        let e2 = cond_put(s, "k", b"second", WriteCondition::IfMatch(e1.clone())).unwrap();
        assert_eq!(env.get("k"), b"second");
        // The old ETag no longer matches; unquoted and `*` forms work.
        expect_err(
            cond_put(s, "k", b"x", WriteCondition::IfMatch(e1)),
            ErrorCode::PreconditionFailed,
            &[],
        );
        let unquoted = e2.trim_matches('"').to_string();
        cond_put(s, "k", b"third", WriteCondition::IfMatch(unquoted)).unwrap();
        cond_put(s, "k", b"fourth", WriteCondition::IfMatch("*".into())).unwrap();
        assert_eq!(env.get("k"), b"fourth");
        // Empty bodies too.
        let e = s.head_object(BUCKET, "k").unwrap().etag;
        cond_put(s, "k", b"", WriteCondition::IfMatch(e)).unwrap();
        assert_eq!(env.get("k"), b"");
    }
}

#[test]
fn copy_and_complete_take_conditions() {
    let env = Env::new();
    let s = &env.store;
    env.put("src", b"source");
    let dst = env.put("dst", b"dest");
    expect_err(
        s.copy_object_if(
            BUCKET,
            "src",
            BUCKET,
            "dst",
            None,
            &WriteCondition::IfNoneMatch,
        ),
        ErrorCode::PreconditionFailed,
        &[],
    );
    assert_eq!(env.get("dst"), b"dest");
    s.copy_object_if(
        BUCKET,
        "src",
        BUCKET,
        "new",
        None,
        &WriteCondition::IfNoneMatch,
    )
    .unwrap();
    expect_err(
        s.copy_object_if(
            BUCKET,
            "src",
            BUCKET,
            "dst",
            None,
            &WriteCondition::IfMatch("\"nope\"".into()),
        ),
        ErrorCode::PreconditionFailed,
        &[],
    );
    s.copy_object_if(
        BUCKET,
        "src",
        BUCKET,
        "dst",
        None,
        &WriteCondition::IfMatch(dst),
    )
    .unwrap();
    assert_eq!(env.get("dst"), b"source");

    // Multipart: a failed condition leaves the upload to be completed later.
    let id = s
        .create_multipart_upload(BUCKET, "mp", &PutOptions::default())
        .unwrap();
    let p1 = s
        .upload_part(BUCKET, "mp", &id, 1, PutBody::Bytes(b"part"))
        .unwrap();
    env.put("mp", b"there first");
    let parts = [(1, p1)];
    expect_err(
        s.complete_multipart_upload_if(BUCKET, "mp", &id, &parts, &WriteCondition::IfNoneMatch),
        ErrorCode::PreconditionFailed,
        &[],
    );
    assert_eq!(env.get("mp"), b"there first");
    let cur = s.head_object(BUCKET, "mp").unwrap().etag;
    s.complete_multipart_upload_if(BUCKET, "mp", &id, &parts, &WriteCondition::IfMatch(cur))
        .unwrap();
    assert_eq!(env.get("mp"), b"part");
    // Conditions belong to the completion, not the start.
    let opts = PutOptions {
        condition: WriteCondition::IfNoneMatch,
        ..Default::default()
    };
    expect_err(
        s.create_multipart_upload(BUCKET, "mp2", &opts),
        ErrorCode::InvalidArgument,
        &["CompleteMultipartUpload"],
    );
}

/// Two writers, one key, released together: exactly one succeeds.
fn race_threads(env: &Env, if_match: bool) {
    let store = &env.store;
    let body = |w: u8| vec![w; 256 << 10];
    let mut wins = [0usize; 2];
    for t in 0..TRIALS {
        let key = format!("race/{if_match}/{t}");
        let cond = if if_match {
            WriteCondition::IfMatch(env.put(&key, b"base"))
        } else {
            WriteCondition::IfNoneMatch
        };
        let barrier = Barrier::new(2);
        let results: Vec<Result<String>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..2u8)
                .map(|w| {
                    let (barrier, key, cond) = (&barrier, &key, cond.clone());
                    sc.spawn(move || {
                        let data = body(w);
                        barrier.wait();
                        cond_put(store, key, &data, cond)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won: Vec<usize> = (0..2).filter(|&w| results[w].is_ok()).collect();
        assert_eq!(won.len(), 1, "trial {t}: {results:?}");
        let lost = 1 - won[0];
        assert_eq!(
            results[lost].as_ref().unwrap_err().code,
            ErrorCode::PreconditionFailed
        );
        assert_eq!(env.get(&key), body(won[0] as u8), "trial {t}");
        wins[won[0]] += 1;
    }
    eprintln!("thread races (if_match={if_match}): wins per writer {wins:?}");
}

#[test]
fn races_between_threads_have_one_winner() {
    let env = Env::new();
    race_threads(&env, false);
    race_threads(&env, true);
    let env = Env::with(EtagPolicy::Fast, Durability::Fsync);
    race_threads(&env, false);
    race_threads(&env, true);
}

/// One racing writer process: `S3HPC_RACE` = `<root>|<sync dir>|<me>|<mode>`.
/// For each trial it meets the other writer at a file barrier, writes, and
/// prints `<trial> ok|412`.
#[test]
fn race_writer_process() {
    let Ok(spec) = std::env::var("S3HPC_RACE") else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let (root, sync, me, mode) = (parts[0], Path::new(parts[1]), parts[2], parts[3]);
    let other = if me == "0" { "1" } else { "0" };
    let store = Store::open(root, StoreConfig::default()).unwrap();
    if mode.ends_with("-min") {
        store.emulate_minimal_fs();
    }
    let data = vec![me.as_bytes()[0]; 256 << 10];
    let mut out = String::new();
    for t in 0..TRIALS {
        let key = format!("prace/{mode}/{t}");
        let cond = if mode.starts_with("match") {
            WriteCondition::IfMatch(store.head_object(BUCKET, &key).unwrap().etag)
        } else {
            WriteCondition::IfNoneMatch
        };
        std::fs::write(sync.join(format!("{me}.{t}")), b"").unwrap();
        while !sync.join(format!("{other}.{t}")).exists() {
            std::hint::spin_loop();
        }
        match cond_put(&store, &key, &data, cond) {
            Ok(_) => out.push_str(&format!("{t} ok\n")),
            Err(e) if e.code == ErrorCode::PreconditionFailed => {
                out.push_str(&format!("{t} 412\n"))
            }
            Err(e) => panic!("trial {t}: {e}"),
        }
    }
    std::fs::write(sync.join(format!("result.{me}")), out).unwrap();
}

fn race_processes(env: &Env, mode: &str) {
    let sync = env.tmp.path().join(format!("sync-{mode}"));
    std::fs::create_dir(&sync).unwrap();
    if mode.starts_with("match") {
        for t in 0..TRIALS {
            env.put(&format!("prace/{mode}/{t}"), b"base");
        }
    }
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|me| {
            std::process::Command::new(&exe)
                .args(["--exact", "race_writer_process", "--test-threads=1"])
                .env(
                    "S3HPC_RACE",
                    format!("{}|{}|{me}|{mode}", env.root().display(), sync.display()),
                )
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer process failed");
    }
    let read = |me: usize| -> Vec<bool> {
        std::fs::read_to_string(sync.join(format!("result.{me}")))
            .unwrap()
            .lines()
            .map(|l| l.ends_with(" ok"))
            .collect()
    };
    let (a, b) = (read(0), read(1));
    assert_eq!((a.len(), b.len()), (TRIALS, TRIALS));
    let mut wins = [0usize; 2];
    for t in 0..TRIALS {
        assert!(a[t] ^ b[t], "trial {t}: exactly one process must win");
        let winner = if a[t] { 0 } else { 1 };
        wins[winner] += 1;
        let want = vec![b'0' + winner as u8; 256 << 10];
        assert_eq!(env.get(&format!("prace/{mode}/{t}")), want, "trial {t}");
    }
    eprintln!("process races ({mode}): wins per writer {wins:?}");
}

#[test]
fn races_between_processes_have_one_winner() {
    if std::env::var_os("S3HPC_RACE").is_some() {
        return;
    }
    let env = Env::new();
    race_processes(&env, "create");
    race_processes(&env, "match");
    // Named temporaries with link(2), classic POSIX locks.
    race_processes(&env, "create-min");
    race_processes(&env, "match-min");
}

#[test]
fn races_on_a_minimal_file_system() {
    let env = Env::new();
    env.store.emulate_minimal_fs();
    race_threads(&env, false);
    race_threads(&env, true);
}

/// The calls of one PUT of each kind, between marker lookups, for
/// `strace -f -e trace=%file,%desc` (see ARCHITECTURE.md, "Conditional
/// writes": an unconditional PUT makes no call it did not make before).
#[test]
#[ignore = "run under strace by hand"]
fn syscalls_of_one_put_of_each_kind() {
    let env = Env::new();
    let s = &env.store;
    let mark = |m: &str| {
        let _ = std::fs::metadata(format!("/MARK-{m}"));
    };
    env.put("warm/up", b"x");
    mark("plain-new");
    env.put("k/new", b"data");
    mark("plain-overwrite");
    env.put("k/new", b"data2");
    mark("if-none-match-new");
    cond_put(s, "k/inm", b"data", WriteCondition::IfNoneMatch).unwrap();
    mark("if-none-match-exists");
    let _ = cond_put(s, "k/inm", b"data", WriteCondition::IfNoneMatch);
    mark("if-match");
    let e = s.head_object(BUCKET, "k/inm").unwrap().etag;
    mark("if-match-put");
    cond_put(s, "k/inm", b"data3", WriteCondition::IfMatch(e)).unwrap();
    mark("end");
}
