//! The fixed set of operations, as S3 calls and as the POSIX calls an
//! application would make for the same work. POSIX goes through the
//! engine's counted wrappers (`s3hpc_store::fscalls`), so both sides are
//! counted the same way.

use super::layers::{Exec, BUCKET};
use rustix::fs::{AtFlags, Mode, OFlags, CWD};
use s3hpc_client::{read_exact_body, ByteRange, ListRequest, PutBody, PutOptions};
use s3hpc_store::fscalls;
use std::path::Path;

/// Keys of the listing, under `list/`.
pub const LIST_PREFIX: &str = "list/";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    PutNew,
    PutOverwrite,
    Get,
    GetRange,
    Head,
    HeadMissing,
    Delete,
    List,
    Multipart,
}

impl Op {
    pub const ALL: [Op; 9] = [
        Op::PutNew,
        Op::PutOverwrite,
        Op::Get,
        Op::GetRange,
        Op::Head,
        Op::HeadMissing,
        Op::Delete,
        Op::List,
        Op::Multipart,
    ];

    /// The ops whose cost depends on the object size, run once per size.
    pub const SIZED: [Op; 6] = [
        Op::PutNew,
        Op::PutOverwrite,
        Op::Get,
        Op::GetRange,
        Op::Head,
        Op::Delete,
    ];
    /// The others, run once per repetition.
    pub const UNSIZED: [Op; 3] = [Op::HeadMissing, Op::List, Op::Multipart];

    pub fn name(self) -> &'static str {
        match self {
            Op::PutNew => "put-new",
            Op::PutOverwrite => "put-overwrite",
            Op::Get => "get",
            Op::GetRange => "get-range",
            Op::Head => "head",
            Op::HeadMissing => "head-missing",
            Op::Delete => "delete",
            Op::List => "list",
            Op::Multipart => "multipart",
        }
    }

    /// Whether the op is one of [`Op::SIZED`].
    pub fn sized(self) -> bool {
        Op::SIZED.contains(&self)
    }

    /// S3 requests the op makes: create, 3 parts and complete for multipart.
    pub fn requests(self) -> u64 {
        match self {
            Op::Multipart => 5,
            _ => 1,
        }
    }
}

/// The parts of the multipart upload, of S3's minimum part size (5 MiB),
/// so every S3 server accepts them.
pub const PARTS: u64 = 3;
pub const PART_SIZE: u64 = 5 << 20;

/// The range a ranged GET asks for: a quarter in, at most 64 KiB.
pub fn range_of(size: u64) -> (u64, u64) {
    let first = size / 4;
    (first, (size / 2).clamp(1, 64 << 10))
}

fn io(e: impl std::fmt::Display, what: &str) -> anyhow::Error {
    anyhow::anyhow!("{what}: {e}")
}

impl Exec {
    /// Prepares the bucket and the listing's keys (untimed).
    pub fn prepare(&self, list_keys: usize) -> anyhow::Result<()> {
        match self {
            Exec::Posix { root } => {
                let d = root.join(BUCKET).join(LIST_PREFIX);
                std::fs::create_dir_all(&d)?;
                for i in 0..list_keys {
                    std::fs::write(d.join(format!("{i:06}")), b"")?;
                }
            }
            Exec::S3 { client, bucket, .. } => {
                client
                    .create_bucket(bucket)
                    .map_err(|e| io(e, "create bucket"))?;
                for i in 0..list_keys {
                    let key = format!("{LIST_PREFIX}{i:06}");
                    client
                        .put_object(bucket, &key, PutBody::Bytes(b""), &PutOptions::default())
                        .map_err(|e| io(e, "put a listing key"))?;
                }
            }
        }
        Ok(())
    }

    /// Runs `op` once on `key` with `data` (the object's bytes; for
    /// multipart, one part). `buf` receives GET bodies.
    pub fn run(&self, op: Op, key: &str, data: &[u8], buf: &mut Vec<u8>) -> anyhow::Result<()> {
        match self {
            Exec::Posix { root } => posix(root, op, key, data, buf),
            Exec::S3 { client, bucket, .. } => {
                let c = client.as_ref();
                let b = bucket.as_str();
                let none = PutOptions::default();
                match op {
                    Op::PutNew | Op::PutOverwrite => {
                        c.put_object(b, key, PutBody::Bytes(data), &none).map(drop)
                    }
                    Op::Get => {
                        buf.resize(data.len(), 0);
                        c.get_object_into(b, key, buf).map(drop)
                    }
                    Op::GetRange => {
                        let (first, len) = range_of(data.len() as u64);
                        let range = ByteRange::FromTo {
                            first,
                            last: Some(first + len - 1),
                        };
                        buf.resize(len as usize, 0);
                        c.get_object(b, key, Some(range))
                            .and_then(|mut g| read_exact_body(&mut g, buf))
                    }
                    Op::Head => c.head_object(b, key).map(drop),
                    Op::HeadMissing => match c.head_object(b, key) {
                        Ok(_) => return Err(anyhow::anyhow!("{key} exists; expected a miss")),
                        Err(_) => Ok(()),
                    },
                    Op::Delete => c.delete_object(b, key),
                    Op::List => {
                        let req = ListRequest {
                            prefix: LIST_PREFIX.into(),
                            ..Default::default()
                        };
                        c.list_objects(b, &req).map(drop)
                    }
                    Op::Multipart => (|| {
                        let id = c.create_multipart_upload(b, key, &none)?;
                        let mut parts = Vec::new();
                        for n in 1..=PARTS as u32 {
                            let etag = c.upload_part(b, key, &id, n, PutBody::Bytes(data))?;
                            parts.push((n, etag));
                        }
                        c.complete_multipart_upload(b, key, &id, &parts).map(drop)
                    })(),
                }
                .map_err(|e| io(e, op.name()))
            }
        }
    }

    /// Removes what a multipart op made (untimed).
    pub fn remove(&self, key: &str) -> anyhow::Result<()> {
        match self {
            Exec::Posix { root } => Ok(std::fs::remove_file(root.join(BUCKET).join(key))?),
            Exec::S3 { client, bucket, .. } => client
                .delete_object(bucket, key)
                .map_err(|e| io(e, "delete")),
        }
    }

    /// Empties and deletes the bucket of a layer that keeps its data after
    /// the run (an external endpoint), so nothing of the run stays behind.
    pub fn teardown(&self) -> anyhow::Result<()> {
        let Exec::S3 {
            client,
            bucket,
            owns_bucket: true,
            ..
        } = self
        else {
            return Ok(());
        };
        let mut req = ListRequest::default();
        loop {
            let page = client
                .list_objects(bucket, &req)
                .map_err(|e| io(e, "listing the bucket to remove it"))?;
            for o in &page.objects {
                client
                    .delete_object(bucket, &o.key)
                    .map_err(|e| io(e, "emptying the bucket"))?;
            }
            match page.next_token {
                Some(t) if page.is_truncated => req.continuation_token = Some(t),
                _ => break,
            }
        }
        client
            .delete_bucket(bucket)
            .map_err(|e| io(e, &format!("deleting the bucket {bucket}")))
    }
}

/// The POSIX side: paths under `root/explain/`, with what an application
/// storing files would do (no atomic replace, no metadata).
fn posix(root: &Path, op: Op, key: &str, data: &[u8], buf: &mut Vec<u8>) -> anyhow::Result<()> {
    let path = root.join(BUCKET).join(key);
    let what = op.name();
    let write_all = |fd: &rustix::fd::OwnedFd, mut b: &[u8]| -> anyhow::Result<()> {
        while !b.is_empty() {
            let n = fscalls::write(fd, b).map_err(|e| io(e, what))?;
            b = &b[n..];
        }
        Ok(())
    };
    let create = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC;
    let mode = Mode::from_raw_mode(0o644);
    match op {
        Op::PutNew | Op::PutOverwrite => {
            let fd = fscalls::open(&path, create, mode).map_err(|e| io(e, what))?;
            write_all(&fd, data)?;
        }
        Op::Multipart => {
            let fd = fscalls::open(&path, create, mode).map_err(|e| io(e, what))?;
            for _ in 0..PARTS {
                write_all(&fd, data)?;
            }
        }
        Op::Get | Op::GetRange => {
            let (mut off, len) = match op {
                Op::Get => (0, data.len() as u64),
                _ => range_of(data.len() as u64),
            };
            buf.resize(len as usize, 0);
            let fd = fscalls::open(&path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| io(e, what))?;
            let mut got = 0;
            while got < buf.len() {
                let n = fscalls::count(
                    fscalls::Kind::Read,
                    rustix::io::pread(&fd, &mut buf[got..], off),
                )
                .map_err(|e| io(e, what))?;
                anyhow::ensure!(n > 0, "{}: short read", path.display());
                got += n;
                off += n as u64;
            }
        }
        Op::Head => {
            fscalls::statat(CWD, &path, AtFlags::empty()).map_err(|e| io(e, what))?;
        }
        Op::HeadMissing => {
            anyhow::ensure!(
                fscalls::statat(CWD, &path, AtFlags::empty()).is_err(),
                "{} exists; expected a miss",
                path.display()
            );
        }
        Op::Delete => {
            fscalls::unlinkat(CWD, &path, AtFlags::empty()).map_err(|e| io(e, what))?;
        }
        Op::List => {
            // `ls -l`: the names and, as S3 listings give, each size and time.
            let dir = root.join(BUCKET).join(LIST_PREFIX);
            let fd = fscalls::open(
                &dir,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| io(e, what))?;
            for e in fscalls::read_dir(&fd).map_err(|e| io(e, what))? {
                let e = e.map_err(|e| io(e, what))?;
                let name = e.file_name();
                if name.to_bytes().starts_with(b".") {
                    continue;
                }
                fscalls::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| io(e, what))?;
            }
        }
    }
    Ok(())
}
