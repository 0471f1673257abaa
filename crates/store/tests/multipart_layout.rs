//! Multipart data written once: parts of one size go to their final offsets
//! in the upload's data file and completion renames that file into place
//! (the object is the data file's inode); whatever does not line up is
//! copied in or concatenated, with the same bytes, ETags and checksums.

mod common;

use common::*;
use md5::{Digest, Md5};
use s3hpc_store::*;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

const MIB: usize = 1 << 20;
const KEY: &str = "dir/obj";

fn part(tag: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| tag.wrapping_add((i / 4096) as u8))
        .collect()
}

/// The inode of the upload's data file, if it has one.
fn data_ino(env: &Env, id: &str) -> Option<u64> {
    std::fs::metadata(env.path(&format!(".s3hpc-uploads/{id}/data")))
        .ok()
        .map(|m| m.ino())
}

fn object_ino(env: &Env, key: &str) -> u64 {
    std::fs::metadata(env.path(key)).unwrap().ino()
}

/// S3's multipart ETag of these bodies.
fn md5_of_md5s(bodies: &[&[u8]]) -> String {
    let mut h = Md5::new();
    for b in bodies {
        h.update(Md5::digest(b));
    }
    format!("\"{}-{}\"", hex(&h.finalize()), bodies.len())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn begin(env: &Env, key: &str) -> String {
    env.store
        .create_multipart_upload(BUCKET, key, &PutOptions::default())
        .unwrap()
}

fn upload(env: &Env, id: &str, n: u32, data: &[u8]) -> String {
    env.store
        .upload_part(BUCKET, KEY, id, n, PutBody::Bytes(data))
        .unwrap()
}

/// Whether this file system takes the layout (it needs xattrs and locks).
fn layout_applies(env: &Env) -> bool {
    let p = env.store.profile();
    p.xattrs && p.fcntl_locks
}

#[test]
fn one_size_parts_are_published_without_a_copy() {
    for policy in [EtagPolicy::Md5, EtagPolicy::Fast] {
        let env = Env::with(policy, Durability::None);
        if !layout_applies(&env) {
            eprintln!("skipped: no xattrs or fcntl locks here");
            return;
        }
        let id = begin(&env, KEY);
        let bodies = [
            part(1, 5 * MIB),
            part(2, 5 * MIB),
            part(3, 5 * MIB),
            part(4, MIB + 3),
        ];
        // Out of order, the short last part before the stride is known
        // from part 1 (it is set by the first part of at least 5 MiB).
        let mut etags = vec![String::new(); 4];
        for i in [3usize, 2, 0, 1] {
            etags[i] = upload(&env, &id, i as u32 + 1, &bodies[i]);
        }
        let listed = env.store.list_parts(BUCKET, KEY, &id).unwrap();
        assert_eq!(
            listed
                .iter()
                .map(|p| (p.part_number, p.size))
                .collect::<Vec<_>>(),
            [(1, 5 << 20), (2, 5 << 20), (3, 5 << 20), (4, (1 << 20) + 3)]
        );
        assert_eq!(
            listed.iter().map(|p| p.etag.clone()).collect::<Vec<_>>(),
            etags
        );
        if policy == EtagPolicy::Md5 {
            for (e, b) in etags.iter().zip(&bodies) {
                assert_eq!(e, &format!("\"{}\"", hex(&Md5::digest(b))));
            }
        }
        let ino = data_ino(&env, &id).expect("parts of one size go to the data file");
        let parts: Vec<(u32, String)> = (1..=4).zip(etags.iter().cloned()).collect();
        assert!(
            env.store.head_object(BUCKET, KEY).is_err(),
            "visible before completion"
        );
        let info = env
            .store
            .complete_multipart_upload(BUCKET, KEY, &id, &parts)
            .unwrap();
        let want: Vec<u8> = bodies.concat();
        assert_eq!(env.get(KEY), want);
        assert_eq!(info.size, want.len() as u64);
        assert_eq!(
            object_ino(&env, KEY),
            ino,
            "the data file itself is the object"
        );
        if policy == EtagPolicy::Md5 {
            let refs: Vec<&[u8]> = bodies.iter().map(|b| &b[..]).collect();
            assert_eq!(info.etag, md5_of_md5s(&refs));
        }
        assert_eq!(env.store.head_object(BUCKET, KEY).unwrap().etag, info.etag);
        // A retried completion gets the same answer; the staging is gone.
        let again = env
            .store
            .complete_multipart_upload(BUCKET, KEY, &id, &parts)
            .unwrap();
        assert_eq!(again.etag, info.etag);
        assert!(env
            .store
            .list_multipart_uploads(BUCKET, "")
            .unwrap()
            .is_empty());
    }
}

#[test]
fn a_resent_part_is_copied_into_its_slot() {
    let env = Env::new();
    if !layout_applies(&env) {
        return;
    }
    let id = begin(&env, KEY);
    let (p1, p2, p2b, p3) = (
        part(1, 5 * MIB),
        part(2, 5 * MIB),
        part(9, 5 * MIB),
        part(3, 77),
    );
    let e1 = upload(&env, &id, 1, &p1);
    let e2 = upload(&env, &id, 2, &p2);
    let e3 = upload(&env, &id, 3, &p3);
    // Sent again with other bytes: a file of its own, never over the
    // bytes the first upload's record vouches for.
    let e2b = upload(&env, &id, 2, &p2b);
    assert_ne!(e2, e2b);
    let stale = env
        .store
        .complete_multipart_upload(
            BUCKET,
            KEY,
            &id,
            &[(1, e1.clone()), (2, e2), (3, e3.clone())],
        )
        .unwrap_err();
    assert_eq!(stale.code, ErrorCode::InvalidPart, "{stale}");
    let ino = data_ino(&env, &id).unwrap();
    env.store
        .complete_multipart_upload(BUCKET, KEY, &id, &[(1, e1), (2, e2b), (3, e3)])
        .unwrap();
    assert_eq!(env.get(KEY), [p1, p2b, p3].concat());
    assert_eq!(object_ino(&env, KEY), ino);
}

#[test]
fn parts_that_do_not_line_up_are_concatenated() {
    let env = Env::new();
    // Middle part shorter than the stride; part numbers with a gap; a
    // part longer than the stride; a single small part.
    let cases: Vec<Vec<(u32, Vec<u8>)>> = vec![
        vec![
            (1, part(1, 6 * MIB)),
            (2, part(2, 5 * MIB)),
            (3, part(3, 10)),
        ],
        vec![
            (1, part(4, 5 * MIB)),
            (3, part(5, 5 * MIB)),
            (7, part(6, 3)),
        ],
        vec![
            (1, part(7, 5 * MIB)),
            (2, part(8, 6 * MIB)),
            (3, part(9, 1)),
        ],
        vec![(1, part(10, 1000))],
    ];
    for (c, case) in cases.iter().enumerate() {
        let key = format!("k{c}");
        let id = begin(&env, &key);
        let mut parts = Vec::new();
        for (n, b) in case {
            let e = env
                .store
                .upload_part(BUCKET, &key, &id, *n, PutBody::Bytes(b))
                .unwrap();
            parts.push((*n, e));
        }
        let sizes: Vec<u64> = env
            .store
            .list_parts(BUCKET, &key, &id)
            .unwrap()
            .iter()
            .map(|p| p.size)
            .collect();
        assert_eq!(
            sizes,
            case.iter().map(|(_, b)| b.len() as u64).collect::<Vec<_>>()
        );
        let info = env
            .store
            .complete_multipart_upload(BUCKET, &key, &id, &parts)
            .unwrap();
        let want: Vec<u8> = case.iter().flat_map(|(_, b)| b.clone()).collect();
        assert_eq!(env.get(&key), want, "case {c}");
        let refs: Vec<&[u8]> = case.iter().map(|(_, b)| &b[..]).collect();
        assert_eq!(info.etag, md5_of_md5s(&refs), "case {c}");
    }
}

/// Completes with If-None-Match over an existing object: refused, and the
/// object stays.
fn refused_completion(env: &Env, id: &str, parts: &[(u32, String)]) {
    env.put(KEY, b"already here");
    let refused = env
        .store
        .complete_multipart_upload_if(BUCKET, KEY, id, parts, &WriteCondition::IfNoneMatch)
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::PreconditionFailed);
    assert_eq!(env.get(KEY), b"already here");
}

#[test]
fn unlisted_parts_survive_a_refused_completion() {
    let env = Env::new();
    let id = begin(&env, KEY);
    let bodies = [part(1, 5 * MIB), part(2, 5 * MIB), part(3, 5 * MIB)];
    let etags: Vec<String> = (0..3)
        .map(|i| upload(&env, &id, i as u32 + 1, &bodies[i]))
        .collect();
    let two: Vec<(u32, String)> = (1..=2).zip(etags.iter().cloned()).collect();
    refused_completion(&env, &id, &two);
    // The same upload completes later with all three parts.
    let three: Vec<(u32, String)> = (1..=3).zip(etags.iter().cloned()).collect();
    env.store
        .complete_multipart_upload(BUCKET, KEY, &id, &three)
        .unwrap();
    assert_eq!(env.get(KEY), bodies.concat());
}

#[test]
fn a_refused_completion_leaves_the_data_file_to_the_upload() {
    let env = Env::new();
    let id = begin(&env, KEY);
    let bodies = [part(1, 5 * MIB), part(2, 100)];
    let parts: Vec<(u32, String)> = (0..2)
        .map(|i| (i as u32 + 1, upload(&env, &id, i as u32 + 1, &bodies[i])))
        .collect();
    let ino = data_ino(&env, &id);
    refused_completion(&env, &id, &parts);
    assert_eq!(
        data_ino(&env, &id),
        ino,
        "the data file is back in the upload"
    );
    let tmps: Vec<_> = std::fs::read_dir(env.path("dir"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "obj")
        .collect();
    assert!(tmps.is_empty(), "left behind: {tmps:?}");
    env.store
        .complete_multipart_upload(BUCKET, KEY, &id, &parts)
        .unwrap();
    assert_eq!(env.get(KEY), bodies.concat());
}

#[test]
fn abort_removes_the_data_file() {
    let env = Env::new();
    let id = begin(&env, KEY);
    upload(&env, &id, 1, &part(1, 5 * MIB));
    upload(&env, &id, 2, &part(2, 5 * MIB));
    env.store.abort_multipart_upload(BUCKET, KEY, &id).unwrap();
    assert!(!env.path(&format!(".s3hpc-uploads/{id}")).exists());
    assert!(!env.path(".s3hpc-uploads").exists());
    assert!(env.store.head_object(BUCKET, KEY).is_err());
}

#[test]
fn checksums_hold_for_parts_in_the_data_file() {
    let env = Env::new();
    for kind in [ChecksumType::Composite, ChecksumType::FullObject] {
        let key = format!("sum-{}", kind.as_str());
        let opts = PutOptions {
            checksum: Some(ChecksumRequest {
                kind,
                ..ChecksumRequest::new(ChecksumAlgorithm::Crc32c)
            }),
            ..Default::default()
        };
        let id = env
            .store
            .create_multipart_upload(BUCKET, &key, &opts)
            .unwrap();
        let bodies = [part(1, 5 * MIB), part(2, 5 * MIB), part(3, 5)];
        let mut parts = Vec::new();
        let mut sums = Vec::new();
        for (i, b) in bodies.iter().enumerate() {
            let (etag, sum) = env
                .store
                .upload_part_checked(
                    BUCKET,
                    &key,
                    &id,
                    i as u32 + 1,
                    PutBody::Bytes(b),
                    &PutOptions::default(),
                )
                .unwrap();
            let sum = sum.expect("the upload's algorithm is computed for every part");
            let alone = ChecksumRequest::new(ChecksumAlgorithm::Crc32c);
            assert_eq!(sum.value, checksum_of(&alone, b), "part {}", i + 1);
            parts.push((i as u32 + 1, etag));
            sums.push(Some(sum.value));
        }
        let info = env
            .store
            .complete_multipart_upload_checked(
                BUCKET,
                &key,
                &id,
                &parts,
                &sums,
                None,
                &WriteCondition::Always,
            )
            .unwrap();
        let whole = bodies.concat();
        assert_eq!(env.get(&key), whole);
        let got = info.checksum.expect("the object's checksum");
        if kind == ChecksumType::FullObject {
            let alone = ChecksumRequest::new(ChecksumAlgorithm::Crc32c);
            assert_eq!(got.value, checksum_of(&alone, &whole));
        } else {
            assert!(got.value.ends_with("-3"), "{}", got.value);
        }
    }
}

/// A checksum of `data` with `req`'s algorithm, as the engine computes it
/// for a PUT (base64).
fn checksum_of(req: &ChecksumRequest, data: &[u8]) -> String {
    let env = Env::new();
    let opts = PutOptions {
        checksum: Some(req.clone()),
        ..Default::default()
    };
    env.store
        .put_object(BUCKET, "c", PutBody::Bytes(data), &opts)
        .unwrap();
    env.store
        .head_object(BUCKET, "c")
        .unwrap()
        .checksum
        .unwrap()
        .value
}

#[test]
fn concurrent_writers_of_one_upload() {
    // Eight parts from four threads, and part 3 sent by two threads at once
    // with different bytes: whichever finished last is the part, whole.
    let env = Arc::new(Env::new());
    let id = begin(&env, KEY);
    let bodies: Arc<Vec<Vec<u8>>> = Arc::new((0..8).map(|i| part(i as u8 * 17, 5 * MIB)).collect());
    let other3 = Arc::new(part(200, 5 * MIB));
    let threads: Vec<_> = (0..5)
        .map(|t| {
            let (env, id, bodies, other3) =
                (env.clone(), id.clone(), bodies.clone(), other3.clone());
            std::thread::spawn(move || {
                if t == 4 {
                    upload(&env, &id, 3, &other3);
                    return;
                }
                for i in (t..8).step_by(4) {
                    upload(&env, &id, i as u32 + 1, &bodies[i]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let listed = env.store.list_parts(BUCKET, KEY, &id).unwrap();
    let parts: Vec<(u32, String)> = listed
        .iter()
        .map(|p| (p.part_number, p.etag.clone()))
        .collect();
    assert_eq!(parts.len(), 8);
    let third = if listed[2].etag == format!("\"{}\"", hex(&Md5::digest(&other3[..]))) {
        other3.to_vec()
    } else {
        bodies[2].clone()
    };
    env.store
        .complete_multipart_upload(BUCKET, KEY, &id, &parts)
        .unwrap();
    let mut want = Vec::new();
    for (i, b) in bodies.iter().enumerate() {
        want.extend_from_slice(if i == 2 { &third } else { b });
    }
    assert!(env.get(KEY) == want, "the object is not the listed parts");
}

#[test]
fn parts_from_another_process_land_in_the_same_file() {
    // Two stores over one data root stand for two nodes' gateways: each has
    // its own stride cache and its own locks.
    let env = Env::new();
    let other = Store::open(
        env.root(),
        StoreConfig {
            etag: EtagPolicy::Md5,
            durability: Durability::None,
        },
    )
    .unwrap();
    let id = begin(&env, KEY);
    let (p1, p2, p3) = (part(1, 5 * MIB), part(2, 5 * MIB), part(3, 4096));
    let e2 = other
        .upload_part(BUCKET, KEY, &id, 2, PutBody::Bytes(&p2))
        .unwrap();
    let e1 = upload(&env, &id, 1, &p1);
    let e3 = other
        .upload_part(BUCKET, KEY, &id, 3, PutBody::Bytes(&p3))
        .unwrap();
    let ino = data_ino(&env, &id);
    other
        .complete_multipart_upload(BUCKET, KEY, &id, &[(1, e1), (2, e2), (3, e3)])
        .unwrap();
    assert_eq!(env.get(KEY), [p1, p2, p3].concat());
    if layout_applies(&env) {
        assert_eq!(Some(object_ino(&env, KEY)), ino);
    }
}

/// A body that fails after `after` bytes, as a client killed mid-part.
struct Broken {
    left: usize,
}

impl std::io::Read for Broken {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "client went away",
            ));
        }
        let n = buf.len().min(self.left);
        buf[..n].fill(0xee);
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn a_part_cut_off_midway_leaves_no_part_and_its_slot_free() {
    let env = Env::new();
    let id = begin(&env, KEY);
    let (p1, p2) = (part(1, 5 * MIB), part(2, 5 * MIB));
    upload(&env, &id, 2, &p2);
    let cut = env.store.upload_part(
        BUCKET,
        KEY,
        &id,
        1,
        PutBody::Stream {
            reader: &mut Broken { left: 3 * MIB },
            len: Some(5 * MIB as u64),
        },
    );
    assert!(cut.is_err());
    let listed: Vec<u32> = env
        .store
        .list_parts(BUCKET, KEY, &id)
        .unwrap()
        .iter()
        .map(|p| p.part_number)
        .collect();
    assert_eq!(listed, [2], "a part cut off is no part");
    // Sent again, it goes to its slot (the cut one's bytes are overwritten).
    let e1 = upload(&env, &id, 1, &p1);
    let e2 = env.store.list_parts(BUCKET, KEY, &id).unwrap()[1]
        .etag
        .clone();
    let ino = data_ino(&env, &id);
    env.store
        .complete_multipart_upload(BUCKET, KEY, &id, &[(1, e1), (2, e2)])
        .unwrap();
    assert_eq!(env.get(KEY), [p1, p2].concat());
    if layout_applies(&env) {
        assert_eq!(Some(object_ino(&env, KEY)), ino);
    }
}
