//! Every transport makes the engine's file-system calls and no more: the
//! same S3 calls through the engine in-process, the RPC gateway (Unix and
//! TCP) and the HTTP server (unsigned, SigV4, aws-chunked bodies), each over
//! a fresh data root, counted by kind with `s3hpc_store::fscalls` (process
//! wide, so the servers' calls count too). The layers are `s3hpc explain`'s.
//!
//! The engine keeps two things per thread: its directory handles and its
//! guess whether the next PUT overwrites (link or rename). The gateway
//! serves a connection on one thread, as the caller's own thread would, so
//! it must make exactly the engine's calls. The HTTP server runs requests
//! on whichever worker thread has them, so it must make no call outside
//! what the engine makes on one warm thread and with every request on a
//! fresh thread (every directory opened anew, the guess at its start). Reads and writes of
//! data are printed but not compared: their number follows how a body
//! arrives (one buffer, or 1 MiB frames over TCP), not a decision.
//!
//! One test function: the counters are process-wide, so nothing else may
//! run in this test binary at the same time.

use s3hpc_bench::backend::{Backend, BackendConfig};
use s3hpc_bench::explain::layers::{self, Exec};
use s3hpc_client::{
    ByteRange, ListRequest, ObjectInfo, PutBody, PutOptions, Request, Response, Result, S3Client,
    Tags, WriteCondition,
};
use s3hpc_store::fscalls::{self, Counts, Kind};
use std::sync::Arc;

const B: &str = "calls";
const PART: usize = 5 << 20;

/// One step of the script: a name and the S3 calls it makes.
type Step = (&'static str, fn(&dyn S3Client));

fn put(c: &dyn S3Client, key: &str, data: &[u8]) {
    c.put_object(B, key, PutBody::Bytes(data), &PutOptions::default())
        .unwrap_or_else(|e| panic!("{} PUT {key}: {e}", c.transport()));
}

fn body(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

/// The script: each step runs through every layer before the next starts.
/// Keys are fresh per step where a step wants a new key, so every layer
/// sees the same tree.
const STEPS: &[Step] = &[
    ("put-new", |c| put(c, "obj/a", &body(3901))),
    ("put-new-2", |c| put(c, "obj/b", &body(3901))),
    ("put-overwrite", |c| put(c, "obj/a", &body(3901))),
    ("get", |c| {
        let mut buf = vec![0; 3901];
        c.get_object_into(B, "obj/a", &mut buf).unwrap();
    }),
    ("get-range", |c| {
        let mut g = c
            .get_object(
                B,
                "obj/a",
                Some(ByteRange::FromTo {
                    first: 10,
                    last: Some(99),
                }),
            )
            .unwrap();
        let mut buf = vec![0; 90];
        s3hpc_client::read_exact_body(&mut g, &mut buf).unwrap();
    }),
    ("head", |c| drop(c.head_object(B, "obj/a").unwrap())),
    ("head-missing", |c| {
        assert!(c.head_object(B, "obj/none").is_err())
    }),
    ("list", |c| {
        let req = ListRequest {
            prefix: "obj/".into(),
            ..Default::default()
        };
        assert_eq!(c.list_objects(B, &req).unwrap().objects.len(), 3);
    }),
    ("put-if-none-match-new", |c| {
        let o = PutOptions {
            condition: WriteCondition::IfNoneMatch,
            ..Default::default()
        };
        c.put_object(B, "obj/c", PutBody::Bytes(&body(100)), &o)
            .unwrap();
    }),
    ("put-if-none-match-exists", |c| {
        let o = PutOptions {
            condition: WriteCondition::IfNoneMatch,
            ..Default::default()
        };
        assert!(c
            .put_object(B, "obj/c", PutBody::Bytes(&body(100)), &o)
            .is_err());
    }),
    ("put-if-match", |c| {
        let etag = c.head_object(B, "obj/c").unwrap().etag;
        let o = PutOptions {
            condition: WriteCondition::IfMatch(etag),
            ..Default::default()
        };
        c.put_object(B, "obj/c", PutBody::Bytes(&body(200)), &o)
            .unwrap();
    }),
    ("copy", |c| {
        drop(c.copy_object(B, "obj/a", B, "obj/copy", None).unwrap())
    }),
    ("put-tagging", |c| {
        let tags: Tags = [("k".to_string(), "v".to_string())].into();
        c.put_object_tagging(B, "obj/a", &tags).unwrap();
    }),
    ("get-tagging", |c| {
        assert_eq!(c.get_object_tagging(B, "obj/a").unwrap().len(), 1)
    }),
    ("multipart", |c| {
        let none = PutOptions::default();
        let id = c.create_multipart_upload(B, "mpu/m", &none).unwrap();
        let data = body(PART);
        let parts: Vec<_> = (1..=3)
            .map(|n| {
                (
                    n,
                    c.upload_part(B, "mpu/m", &id, n, PutBody::Bytes(&data))
                        .unwrap(),
                )
            })
            .collect();
        let info = c
            .complete_multipart_upload(B, "mpu/m", &id, &parts)
            .unwrap();
        assert_eq!(info.size, 3 * PART as u64);
    }),
    ("delete", |c| c.delete_object(B, "obj/b").unwrap()),
    ("delete-multipart", |c| c.delete_object(B, "mpu/m").unwrap()),
];

/// The engine with every request on a thread of its own: the most a
/// server that may run any request on any thread can call.
struct FreshThreads(Arc<dyn S3Client>);

fn fresh<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().expect("a request thread"))
}

impl S3Client for FreshThreads {
    fn transport(&self) -> &'static str {
        "engine-fresh"
    }
    /// Each operation through the inner client on a new thread. A request
    /// is not `Send` (a body may be a reader), the arguments of each
    /// operation are: the script's bodies are in memory.
    fn call(&self, req: Request<'_>) -> Result<Response> {
        let c = &self.0;
        let from_memory = |body| match body {
            PutBody::Bytes(data) => data,
            PutBody::Stream { .. } => unreachable!("the script sends bodies from memory"),
        };
        match req {
            Request::PutObject(r) => {
                let data = from_memory(r.body);
                fresh(|| c.put_object(r.bucket, r.key, PutBody::Bytes(data), r.opts))
                    .map(Response::ETag)
            }
            Request::UploadPart(r) => {
                let data = from_memory(r.body);
                let body = || PutBody::Bytes(data);
                fresh(|| c.upload_part(r.bucket, r.key, r.upload_id, r.part_number, body()))
                    .map(Response::ETag)
            }
            Request::CreateBucket { bucket } => fresh(|| c.call(Request::CreateBucket { bucket })),
            Request::DeleteBucket { bucket } => fresh(|| c.call(Request::DeleteBucket { bucket })),
            Request::HeadBucket { bucket } => fresh(|| c.call(Request::HeadBucket { bucket })),
            Request::ListBuckets => fresh(|| c.call(Request::ListBuckets)),
            Request::GetObject { bucket, key, range } => {
                fresh(|| c.call(Request::GetObject { bucket, key, range }))
            }
            Request::GetObjectPart(r) => fresh(|| c.call(Request::GetObjectPart(r))),
            Request::HeadObject { bucket, key } => {
                fresh(|| c.call(Request::HeadObject { bucket, key }))
            }
            Request::DeleteObject(r) => fresh(|| c.call(Request::DeleteObject(r))),
            Request::ListObjects { bucket, list } => {
                fresh(|| c.call(Request::ListObjects { bucket, list }))
            }
            Request::CopyObject(r) => fresh(|| c.call(Request::CopyObject(r))),
            Request::GetObjectTagging { bucket, key } => {
                fresh(|| c.call(Request::GetObjectTagging { bucket, key }))
            }
            Request::PutObjectTagging { bucket, key, tags } => {
                fresh(|| c.call(Request::PutObjectTagging { bucket, key, tags }))
            }
            Request::DeleteObjectTagging { bucket, key } => {
                fresh(|| c.call(Request::DeleteObjectTagging { bucket, key }))
            }
            Request::CreateMultipartUpload { bucket, key, opts } => {
                fresh(|| c.call(Request::CreateMultipartUpload { bucket, key, opts }))
            }
            Request::CompleteMultipartUpload(r) => {
                fresh(|| c.call(Request::CompleteMultipartUpload(r)))
            }
            Request::AbortMultipartUpload(u) => fresh(|| c.call(Request::AbortMultipartUpload(u))),
            Request::ListParts(u) => fresh(|| c.call(Request::ListParts(u))),
            Request::ListMultipartUploads { bucket, prefix } => {
                fresh(|| c.call(Request::ListMultipartUploads { bucket, prefix }))
            }
            Request::PutBucketVersioning { bucket, state } => {
                fresh(|| c.call(Request::PutBucketVersioning { bucket, state }))
            }
            Request::GetBucketVersioning { bucket } => {
                fresh(|| c.call(Request::GetBucketVersioning { bucket }))
            }
            Request::ListObjectVersions { bucket, list } => {
                fresh(|| c.call(Request::ListObjectVersions { bucket, list }))
            }
            Request::GetObjectVersion { version, range } => {
                fresh(|| c.call(Request::GetObjectVersion { version, range }))
            }
            Request::HeadObjectVersion(v) => fresh(|| c.call(Request::HeadObjectVersion(v))),
            Request::DeleteObjectVersion(v) => fresh(|| c.call(Request::DeleteObjectVersion(v))),
        }
    }
    fn get_object_into(&self, b: &str, k: &str, buf: &mut [u8]) -> Result<ObjectInfo> {
        fresh(|| self.0.get_object_into(b, k, buf))
    }
}

fn describe(c: &Counts) -> String {
    Kind::ALL
        .iter()
        .filter(|&&k| c.get(k) > 0)
        .map(|&k| match c.failed(k) {
            0 => format!("{} {}", k.name(), c.get(k)),
            f => format!("{} {} ({f} failed)", k.name(), c.get(k)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The calls `run` makes through `c`, and (for a check) the metadata total.
fn count(c: &dyn S3Client, run: fn(&dyn S3Client)) -> Counts {
    let before = fscalls::snapshot();
    run(c);
    fscalls::snapshot().since(&before)
}

/// The kinds compared: all but the data transfers.
fn compared() -> impl Iterator<Item = Kind> {
    Kind::ALL
        .into_iter()
        .filter(|k| !matches!(k, Kind::Read | Kind::Write))
}

/// The metadata calls that succeeded: a failed one is a guess (the
/// engine's per-thread overwrite predictor: a failed exchange on ext4)
/// that the kind-by-kind check bounds already.
fn metadata(c: &Counts) -> u64 {
    compared().map(|k| c.get(k) - c.failed(k)).sum()
}

/// Whether `got` lies, kind by kind (calls and failures) and in total,
/// between the engine's calls on a warm thread and on a fresh one.
fn within(got: &Counts, warm: &Counts, cold: &Counts) -> bool {
    let between = |g: u64, a: u64, b: u64| a.min(b) <= g && g <= a.max(b);
    compared().all(|k| {
        between(got.get(k), warm.get(k), cold.get(k))
            && between(got.failed(k), warm.failed(k), cold.failed(k))
    }) && between(metadata(got), metadata(warm), metadata(cold))
}

fn exact(got: &Counts, warm: &Counts) -> bool {
    compared().all(|k| got.get(k) == warm.get(k) && got.failed(k) == warm.failed(k))
}

#[test]
fn transports_make_the_engines_calls() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "engine",
        "rpc-unix",
        "rpc-tcp",
        "http",
        "http-sigv4",
        "http-chunked",
    ];
    fscalls::enable(true);
    let cfg = BackendConfig::default();
    let layers = layers::open_all(dir.path(), &cfg, &[], &|n| names.contains(&n)).unwrap();
    let clients: Vec<_> = layers
        .iter()
        .map(|l| match &l.exec {
            Exec::S3 { client, .. } => (l.name.as_str(), client.clone()),
            Exec::Posix { .. } => unreachable!("posix was not selected"),
        })
        .collect();
    assert_eq!(clients.len(), names.len());
    // The engine once more, each request on a thread of its own.
    let cold_dir = dir.path().join("engine-fresh-thread");
    std::fs::create_dir(&cold_dir).unwrap();
    let cold: Arc<dyn S3Client> = Arc::new(FreshThreads(
        Backend::Embedded
            .s3_client(&cold_dir, &cfg)
            .unwrap()
            .unwrap()
            .client,
    ));
    for c in clients.iter().map(|(_, c)| c).chain([&cold]) {
        c.create_bucket(B).unwrap();
        // A key that stays, so the directories are never emptied.
        put(c.as_ref(), "obj/keep", b"");
        put(c.as_ref(), "mpu/keep", b"");
    }
    let mut differ = Vec::new();
    for (step, run) in STEPS {
        let fresh = count(cold.as_ref(), *run);
        eprintln!("{step:<26} {:<13} {}", "engine-fresh", describe(&fresh));
        let mut warm = None;
        for (name, c) in &clients {
            let d = count(c.as_ref(), *run);
            eprintln!("{step:<26} {name:<13} {}", describe(&d));
            let Some(w) = &warm else {
                warm = Some(d);
                continue;
            };
            let ok = match *name {
                n if n.starts_with("rpc") => exact(&d, w),
                _ => within(&d, w, &fresh),
            };
            if !ok {
                differ.push(format!(
                    "{step} over {name}: {} (engine: {}; on a fresh thread: {})",
                    describe(&d),
                    describe(w),
                    describe(&fresh)
                ));
            }
        }
    }
    fscalls::enable(false);
    assert!(
        differ.is_empty(),
        "transports whose file-system calls differ from the engine's:\n{}",
        differ.join("\n")
    );
}
