//! Checksums through the engine API: computed while writing, verified
//! before the object becomes visible, stored and returned; multipart
//! COMPOSITE and FULL_OBJECT values as AWS forms them.

mod common;
use common::*;
use md5::Digest as _;
use s3hpc_store::*;
use std::io::Cursor;

fn with_sum(check: ChecksumRequest) -> PutOptions {
    PutOptions {
        checksum: Some(check),
        ..Default::default()
    }
}

const ALWAYS: WriteCondition = WriteCondition::Always;
#[test]
fn every_algorithm_is_verified_stored_and_returned() {
    let env = Env::new();
    let s = &env.store;
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    for alg in ChecksumAlgorithm::ALL {
        let want = alg.checksum_of(&data);
        let key = format!("k-{}", alg.as_str());
        // From memory and streamed (a length unknown to the engine).
        s.put_object(
            BUCKET,
            &key,
            PutBody::Bytes(&data),
            &with_sum(ChecksumRequest::expecting(alg, want.clone())),
        )
        .unwrap();
        let info = s.head_object(BUCKET, &key).unwrap();
        let got = info.checksum.unwrap();
        assert_eq!((got.algorithm, got.kind), (alg, ChecksumType::FullObject));
        assert_eq!(got.value, want);
        let mut r = Cursor::new(&data);
        s.put_object(
            BUCKET,
            &key,
            PutBody::Stream {
                reader: &mut r,
                len: None,
            },
            &with_sum(ChecksumRequest::new(alg)),
        )
        .unwrap();
        assert_eq!(
            s.head_object(BUCKET, &key).unwrap().checksum.unwrap().value,
            want
        );
        assert_eq!(get(s, BUCKET, &key), data);
    }
}

#[test]
fn a_wrong_checksum_keeps_nothing() {
    let env = Env::new();
    let s = &env.store;
    // (AAAAAA== is the CRC32 of nothing.)
    let wrong = ChecksumRequest::expecting(ChecksumAlgorithm::Crc32, "AAAAAQ==");
    // A new key: nothing appears, not even an empty file.
    for empty in [false, true] {
        let body: &[u8] = if empty { b"" } else { b"hello" };
        let e = s
            .put_object(
                BUCKET,
                "new",
                PutBody::Bytes(body),
                &with_sum(wrong.clone()),
            )
            .unwrap_err();
        if !empty {
            assert_eq!(e.code, ErrorCode::BadDigest);
            assert_eq!(
                e.message,
                "The CRC32 you specified did not match the calculated checksum."
            );
        }
    }
    assert_eq!(code(s.head_object(BUCKET, "new")), ErrorCode::NoSuchKey);
    // An overwrite: the old object stays, streamed or not.
    put(s, BUCKET, "old", b"old data");
    let before = snapshot(env.tmp.path());
    assert_eq!(
        code(s.put_object(
            BUCKET,
            "old",
            PutBody::Bytes(b"new"),
            &with_sum(wrong.clone())
        )),
        ErrorCode::BadDigest
    );
    let mut r = Cursor::new(vec![7u8; 3 << 20]);
    let body = PutBody::Stream {
        reader: &mut r,
        len: None,
    };
    assert_eq!(
        code(s.put_object(BUCKET, "old", body, &with_sum(wrong))),
        ErrorCode::BadDigest
    );
    assert_eq!(get(s, BUCKET, "old"), b"old data");
    assert_eq!(snapshot(env.tmp.path()), before, "no temporary left behind");
    // A trailer value that never came.
    let late = ChecksumRequest {
        late: Some(LateChecksum::new()),
        ..ChecksumRequest::new(ChecksumAlgorithm::Sha256)
    };
    assert_eq!(
        code(s.put_object(BUCKET, "new", PutBody::Bytes(b"x"), &with_sum(late))),
        ErrorCode::InvalidRequest
    );
    assert_eq!(code(s.head_object(BUCKET, "new")), ErrorCode::NoSuchKey);
}

#[test]
fn no_checksum_asked_none_stored() {
    let env = Env::new();
    put(&env.store, BUCKET, "plain", b"abc");
    assert!(env
        .store
        .head_object(BUCKET, "plain")
        .unwrap()
        .checksum
        .is_none());
    // A copy keeps the source's checksum.
    let opts = with_sum(ChecksumRequest::new(ChecksumAlgorithm::Crc32c));
    env.store
        .put_object(BUCKET, "src", PutBody::Bytes(b"abc"), &opts)
        .unwrap();
    let c = env
        .store
        .copy_object(BUCKET, "src", BUCKET, "dst", None)
        .unwrap();
    assert_eq!(
        c.checksum.unwrap().value,
        ChecksumAlgorithm::Crc32c.checksum_of(b"abc")
    );
}

#[test]
fn content_md5_is_verified_by_the_engine() {
    for policy in [EtagPolicy::Md5, EtagPolicy::Fast] {
        let env = Env::with(policy, Durability::None);
        let s = &env.store;
        let good: [u8; 16] = md5::Md5::digest(b"abc").into();
        let opts = |m: [u8; 16]| PutOptions {
            content_md5: Some(m),
            ..Default::default()
        };
        assert_eq!(
            code(s.put_object(BUCKET, "k", PutBody::Bytes(b"abc"), &opts([0; 16]))),
            ErrorCode::BadDigest
        );
        assert_eq!(code(s.head_object(BUCKET, "k")), ErrorCode::NoSuchKey);
        s.put_object(BUCKET, "k", PutBody::Bytes(b"abc"), &opts(good))
            .unwrap();
        assert_eq!(get(s, BUCKET, "k"), b"abc");
    }
}

fn multipart(
    s: &Store,
    key: &str,
    alg: ChecksumAlgorithm,
    kind: ChecksumType,
    parts: &[Vec<u8>],
) -> Result<ObjectInfo> {
    let opts = with_sum(ChecksumRequest {
        kind,
        ..ChecksumRequest::new(alg)
    });
    let id = s.create_multipart_upload(BUCKET, key, &opts)?;
    let mut listed = Vec::new();
    let mut sums = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        // Odd parts bring their value, even ones let the engine compute it.
        let check = (i % 2 == 1).then(|| ChecksumRequest::expecting(alg, alg.checksum_of(p)));
        let (etag, sum) = s.upload_part_checked(
            BUCKET,
            key,
            &id,
            i as u32 + 1,
            PutBody::Bytes(p),
            &PutOptions {
                checksum: check,
                ..Default::default()
            },
        )?;
        let sum = sum.unwrap();
        assert_eq!(sum.value, alg.checksum_of(p));
        listed.push((i as u32 + 1, etag));
        sums.push(Some(sum.value));
    }
    let have = s.list_parts(BUCKET, key, &id)?;
    assert_eq!(
        have[0].checksum.as_ref().unwrap().value,
        alg.checksum_of(&parts[0])
    );
    s.complete_multipart_upload_checked(BUCKET, key, &id, &listed, &sums, None, &ALWAYS)
}

#[test]
fn multipart_composite_and_full_object() {
    let env = Env::new();
    let s = &env.store;
    let parts = vec![vec![1u8; 5 << 20], vec![2u8; 5 << 20], b"tail".to_vec()];
    let whole = parts.concat();
    for alg in ChecksumAlgorithm::ALL {
        let key = format!("c-{}", alg.as_str());
        if alg == ChecksumAlgorithm::Crc64Nvme {
            assert_eq!(
                code(multipart(s, &key, alg, ChecksumType::Composite, &parts)),
                ErrorCode::InvalidRequest
            );
            continue;
        }
        let info = multipart(s, &key, alg, ChecksumType::Composite, &parts).unwrap();
        let c = info.checksum.unwrap();
        let mut concat = Vec::new();
        for p in &parts {
            let mut h = Hasher::new(alg);
            h.update(p);
            concat.extend(h.finish());
        }
        assert_eq!(c.kind, ChecksumType::Composite);
        assert_eq!(c.value, format!("{}-3", alg.checksum_of(&concat)));
    }
    for alg in ChecksumAlgorithm::ALL {
        let key = format!("f-{}", alg.as_str());
        let r = multipart(s, &key, alg, ChecksumType::FullObject, &parts);
        if !alg.is_crc() {
            assert_eq!(code(r), ErrorCode::InvalidRequest);
            continue;
        }
        let c = r.unwrap().checksum.unwrap();
        assert_eq!(c.kind, ChecksumType::FullObject);
        assert_eq!(c.value, alg.checksum_of(&whole), "{alg:?}");
        assert_eq!(get(s, BUCKET, &key), whole);
    }
}

#[test]
fn multipart_checks_what_the_client_lists() {
    let env = Env::new();
    let s = &env.store;
    let alg = ChecksumAlgorithm::Crc32;
    let opts = with_sum(ChecksumRequest {
        kind: ChecksumType::Composite,
        ..ChecksumRequest::new(alg)
    });
    let id = s.create_multipart_upload(BUCKET, "m", &opts).unwrap();
    // A part with a different algorithm, or a wrong value, is refused.
    let sha = ChecksumRequest::expecting(
        ChecksumAlgorithm::Sha1,
        ChecksumAlgorithm::Sha1.checksum_of(b"p"),
    );
    assert_eq!(
        code(s.upload_part_checked(BUCKET, "m", &id, 1, PutBody::Bytes(b"p"), &with_sum(sha))),
        ErrorCode::InvalidRequest
    );
    let bad = ChecksumRequest::expecting(alg, "AAAAAA==");
    assert_eq!(
        code(s.upload_part_checked(BUCKET, "m", &id, 1, PutBody::Bytes(b"p"), &with_sum(bad))),
        ErrorCode::BadDigest
    );
    assert!(s.list_parts(BUCKET, "m", &id).unwrap().is_empty());
    let (etag, _) = s
        .upload_part_checked(
            BUCKET,
            "m",
            &id,
            1,
            PutBody::Bytes(b"p"),
            &PutOptions::default(),
        )
        .unwrap();
    let parts = [(1, etag)];
    assert_eq!(
        code(s.complete_multipart_upload_checked(
            BUCKET,
            "m",
            &id,
            &parts,
            &[Some("AAAAAA==".into())],
            None,
            &ALWAYS
        )),
        ErrorCode::InvalidPart
    );
    let whole = ChecksumRequest::expecting(alg, "AAAAAA==-1");
    assert_eq!(
        code(s.complete_multipart_upload_checked(
            BUCKET,
            "m",
            &id,
            &parts,
            &[],
            Some(&whole),
            &ALWAYS
        )),
        ErrorCode::BadDigest
    );
    assert_eq!(code(s.head_object(BUCKET, "m")), ErrorCode::NoSuchKey);
    let info = s
        .complete_multipart_upload(BUCKET, "m", &id, &parts)
        .unwrap();
    assert!(info.checksum.unwrap().value.ends_with("-1"));
}
