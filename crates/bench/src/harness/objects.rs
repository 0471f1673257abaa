//! Whole objects over a backend, for the object benchmarks (warp, kv, copy,
//! sweep, visibility): the backend's `S3Client` directly for S3 backends,
//! and plain files for posix (a key is a path under the root).
//!
//! Object data is generated, never held whole: 1 MiB chunks of the run's
//! random pattern, each stamped with the object's id and offset, so any
//! object size streams in bounded memory and every read is verified against
//! what that object must hold.

use super::ranks::on_root;
use super::Target;
use crate::pattern::Pattern;
use anyhow::Context;
use s3hpc_client::{ByteRange, ErrorCode, ListRequest, PutBody, PutOptions, S3Client};
use s3hpc_store::Durability;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Objects are generated and verified in chunks of this size.
pub const CHUNK: usize = 1 << 20;

/// The pattern length (`Pattern::new`) objects of `size` bytes need.
pub fn pattern_len(size: u64) -> usize {
    size.min(CHUNK as u64) as usize
}

/// The bucket the object benchmarks use on S3 backends.
pub const BUCKET: &str = "bench";

pub enum Objects {
    Posix {
        root: PathBuf,
        fsync: bool,
    },
    S3 {
        client: Arc<dyn S3Client>,
        bucket: String,
        /// A gateway the bench started for the backend; dropped after the
        /// client (field order).
        _keep_alive: Option<Box<dyn std::any::Any + Send + Sync>>,
    },
}

/// The identity a key's data is stamped with.
pub fn object_id(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Objects {
    /// Opens the target's backend and makes its bucket (or directory):
    /// rank 0 first, then the other process ranks, which find it made.
    pub fn open(t: &Target) -> anyhow::Result<Objects> {
        let mut made = None;
        on_root(t.opts.process_comm(), || {
            made = Some(Self::open_here(t)?);
            Ok(Vec::new())
        })?;
        match made {
            Some(o) => Ok(o),
            None => Self::open_here(t),
        }
    }

    /// Opens the target's objects, runs `f` on them (on every process
    /// rank) and, unless the run keeps its data, has rank 0 remove them all
    /// once every rank is done: the frame of every object benchmark.
    pub fn with<R>(t: &Target, f: impl FnOnce(&Objects) -> anyhow::Result<R>) -> anyhow::Result<R> {
        let objects = Self::open(t)?;
        let result = f(&objects);
        let cleaned = if t.opts.keep {
            Ok(Vec::new())
        } else {
            t.opts.barrier();
            on_root(t.opts.process_comm(), || {
                objects.remove_all().map(|()| Vec::new())
            })
        };
        let r = result?;
        cleaned?;
        Ok(r)
    }

    fn open_here(t: &Target) -> anyhow::Result<Objects> {
        let cfg = &t.config;
        Ok(match t.backend.s3_client(&t.dir, cfg)? {
            None => {
                let root = t.dir.join(BUCKET);
                std::fs::create_dir_all(&root)
                    .with_context(|| format!("creating {}", root.display()))?;
                Objects::Posix {
                    root,
                    fsync: cfg.durability == Durability::Fsync,
                }
            }
            Some(handle) => {
                let client = handle.client;
                match client.create_bucket(BUCKET) {
                    Err(e) if e.code != ErrorCode::BucketAlreadyOwnedByYou => {
                        return Err(e).context("create bucket")
                    }
                    _ => {}
                }
                Objects::S3 {
                    client,
                    bucket: BUCKET.to_string(),
                    _keep_alive: handle.keep_alive,
                }
            }
        })
    }

    /// The directory the posix files live in, which is also the engine's
    /// bucket directory (visibility writes there through the file system).
    pub fn posix_root(t: &Target) -> PathBuf {
        t.dir.join(BUCKET)
    }

    /// Writes `size` bytes of `key`'s data.
    pub fn put(&self, pattern: &Pattern, key: &str, size: u64) -> anyhow::Result<()> {
        let mut src = Source::new(pattern, object_id(key), size);
        match self {
            Objects::Posix { root, fsync } => {
                let path = root.join(key);
                let mut f = match std::fs::File::create(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        // Keys with `/` need their directories, as in the engine.
                        if let Some(p) = path.parent() {
                            std::fs::create_dir_all(p)?;
                        }
                        std::fs::File::create(&path)
                    }
                    r => r,
                }
                .with_context(|| format!("create {}", path.display()))?;
                while let Some(chunk) = src.next_chunk() {
                    f.write_all(chunk)
                        .with_context(|| format!("write {}", path.display()))?;
                }
                if *fsync {
                    f.sync_all()?;
                }
            }
            Objects::S3 { client, bucket, .. } => {
                let body = if size <= CHUNK as u64 {
                    PutBody::Bytes(src.next_chunk().unwrap_or(&[]))
                } else {
                    PutBody::Stream {
                        reader: &mut src,
                        len: Some(size),
                    }
                };
                client
                    .put_object(bucket, key, body, &PutOptions::default())
                    .with_context(|| format!("put {bucket}/{key}"))?;
            }
        }
        Ok(())
    }

    /// Reads `len` bytes of `key` from `offset` (the whole object when
    /// `offset` is 0 and `len` its size), verifies them and returns the time
    /// to the first byte.
    pub fn get(
        &self,
        pattern: &Pattern,
        key: &str,
        offset: u64,
        len: u64,
        scratch: &mut Vec<u8>,
    ) -> anyhow::Result<Duration> {
        let t0 = Instant::now();
        let mut reader: Box<dyn Read + Send> = match self {
            Objects::Posix { root, .. } => {
                use std::io::Seek;
                let path = root.join(key);
                let mut f = std::fs::File::open(&path)
                    .with_context(|| format!("open {}", path.display()))?;
                if offset > 0 {
                    f.seek(std::io::SeekFrom::Start(offset))?;
                }
                Box::new(f.take(len))
            }
            Objects::S3 { client, bucket, .. } => {
                let range = (offset > 0 || len == 0).then_some(ByteRange::FromTo {
                    first: offset,
                    last: Some(offset + len.saturating_sub(1)),
                });
                let got = client
                    .get_object(bucket, key, range.filter(|_| len > 0))
                    .with_context(|| format!("get {bucket}/{key}"))?;
                anyhow::ensure!(
                    got.length == len,
                    "get {bucket}/{key}: {} bytes, expected {len}",
                    got.length
                );
                got.body
            }
        };
        verify_stream(pattern, key, offset, len, &mut *reader, scratch, t0)
    }

    /// The object's size, `None` if it does not exist.
    pub fn head(&self, key: &str) -> anyhow::Result<Option<u64>> {
        match self {
            Objects::Posix { root, .. } => match std::fs::metadata(root.join(key)) {
                Ok(m) => Ok(Some(m.len())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e).with_context(|| format!("stat {key}")),
            },
            Objects::S3 { client, bucket, .. } => match client.head_object(bucket, key) {
                Ok(i) => Ok(Some(i.size)),
                Err(e) if e.code == ErrorCode::NoSuchKey => Ok(None),
                Err(e) => Err(e).with_context(|| format!("head {bucket}/{key}")),
            },
        }
    }

    pub fn delete(&self, key: &str) -> anyhow::Result<()> {
        match self {
            Objects::Posix { root, .. } => {
                std::fs::remove_file(root.join(key)).with_context(|| format!("delete {key}"))
            }
            Objects::S3 { client, bucket, .. } => client
                .delete_object(bucket, key)
                .with_context(|| format!("delete {bucket}/{key}")),
        }
    }

    /// How many objects are directly under `prefix` (a `dir/` for posix),
    /// listing page by page as a client would.
    pub fn list(&self, prefix: &str) -> anyhow::Result<u64> {
        match self {
            Objects::Posix { root, .. } => {
                let dir = root.join(prefix.trim_end_matches('/'));
                let mut n = 0;
                for e in
                    std::fs::read_dir(&dir).with_context(|| format!("list {}", dir.display()))?
                {
                    if e?.file_type()?.is_file() {
                        n += 1;
                    }
                }
                Ok(n)
            }
            Objects::S3 { client, bucket, .. } => {
                let mut req = ListRequest {
                    prefix: prefix.to_string(),
                    delimiter: Some("/".into()),
                    max_keys: 1000,
                    ..Default::default()
                };
                let mut n = 0;
                loop {
                    let page = client
                        .list_objects(bucket, &req)
                        .with_context(|| format!("list {bucket}/{prefix}"))?;
                    n += page.objects.len() as u64;
                    if !page.is_truncated {
                        return Ok(n);
                    }
                    req.continuation_token = page.next_token;
                }
            }
        }
    }

    /// Removes every object and the bucket (untimed cleanup).
    pub fn remove_all(&self) -> anyhow::Result<()> {
        match self {
            Objects::Posix { root, .. } => std::fs::remove_dir_all(root)
                .with_context(|| format!("removing {}", root.display())),
            Objects::S3 { client, bucket, .. } => {
                let req = ListRequest {
                    max_keys: 1000,
                    ..Default::default()
                };
                loop {
                    let page = client.list_objects(bucket, &req)?;
                    for o in &page.objects {
                        client.delete_object(bucket, &o.key)?;
                    }
                    if !page.is_truncated {
                        break;
                    }
                }
                client.delete_bucket(bucket).context("delete bucket")
            }
        }
    }
}

/// Reads `len` bytes from `r` and checks them chunk by chunk against the
/// pattern of `key` at `offset`; returns the time from `t0` to the first byte.
fn verify_stream(
    pattern: &Pattern,
    key: &str,
    offset: u64,
    len: u64,
    r: &mut dyn Read,
    scratch: &mut Vec<u8>,
    t0: Instant,
) -> anyhow::Result<Duration> {
    let id = object_id(key);
    let mut ttfb = None;
    let mut pos = offset;
    let end = offset + len;
    let mut got = vec![0u8; CHUNK.min(len as usize)];
    while pos < end {
        // Chunks as written: the stamps sit at offsets from each chunk start.
        let chunk_start = pos / CHUNK as u64 * CHUNK as u64;
        let n = ((chunk_start + CHUNK as u64).min(end) - pos) as usize;
        r.read_exact(&mut got[..n])
            .with_context(|| format!("read {key} at {pos}"))?;
        ttfb.get_or_insert_with(|| t0.elapsed());
        // A chunk's bytes do not depend on its length, so the expected
        // prefix up to the end of this read is enough.
        let skip = (pos - chunk_start) as usize;
        fill_chunk(pattern, scratch, id, chunk_start, skip + n);
        if got[..n] != scratch[skip..skip + n] {
            anyhow::bail!(
                "data verification failed for {key} at offset {pos}: not the data written"
            );
        }
        pos += n as u64;
    }
    let mut extra = [0u8; 1];
    anyhow::ensure!(
        r.read(&mut extra)? == 0,
        "read {key}: more than the {len} bytes expected"
    );
    Ok(ttfb.unwrap_or_else(|| t0.elapsed()))
}

/// The `len` bytes of object `id`'s chunk starting at `chunk_start`.
fn fill_chunk(pattern: &Pattern, buf: &mut Vec<u8>, id: u64, chunk_start: u64, len: usize) {
    buf.clear();
    buf.extend_from_slice(pattern.base(len));
    Pattern::stamp(buf, id, chunk_start);
}

/// An object's data, chunk by chunk (and as a `Read` for streaming PUTs).
pub struct Source<'p> {
    pattern: &'p Pattern,
    id: u64,
    size: u64,
    /// Bytes produced so far.
    pos: u64,
    buf: Vec<u8>,
    /// Unread part of `buf` (streaming).
    buf_pos: usize,
}

impl<'p> Source<'p> {
    pub fn new(pattern: &'p Pattern, id: u64, size: u64) -> Source<'p> {
        Source {
            pattern,
            id,
            size,
            pos: 0,
            buf: Vec::with_capacity(CHUNK.min(size as usize)),
            buf_pos: 0,
        }
    }

    /// The next chunk, `None` at the end.
    pub fn next_chunk(&mut self) -> Option<&[u8]> {
        if self.pos >= self.size {
            return None;
        }
        let n = (self.size - self.pos).min(CHUNK as u64) as usize;
        fill_chunk(self.pattern, &mut self.buf, self.id, self.pos, n);
        self.pos += n as u64;
        self.buf_pos = 0;
        Some(&self.buf)
    }
}

impl Read for Source<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.buf_pos >= self.buf.len() && self.next_chunk().is_none() {
            return Ok(0);
        }
        let n = out.len().min(self.buf.len() - self.buf_pos);
        out[..n].copy_from_slice(&self.buf[self.buf_pos..self.buf_pos + n]);
        self.buf_pos += n;
        Ok(n)
    }
}
