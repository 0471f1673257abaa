//! Writing a packed bucket's keys: a PUT, a copy or a tag change appends
//! a record to this process's pack; a DELETE appends a tombstone; an
//! object too large to pack (or with permissions of its own) is a plain
//! file, and a record says so.

use super::*;

/// What a packed bucket's PUT is given: bytes in hand, or a source too
/// large to pack.
enum Gathered<'a> {
    /// Borrowed where the body was in memory already: never copied.
    Small(std::borrow::Cow<'a, [u8]>),
    Large(Source<'a>),
    /// A stream found too large: its head, read to find out, then the rest.
    LargeStream {
        head: Vec<u8>,
        rest: &'a mut dyn Read,
        len: Option<u64>,
    },
}

impl Store {
    /// Writes `key` of a packed bucket from `source`: an append where it is
    /// small enough, else a plain file and a record that says so.
    #[allow(clippy::too_many_arguments)] // a write's state, as `write_object_if` takes it
    pub(crate) fn packed_write(
        &self,
        set: &Arc<PackSet>,
        bucket: &str,
        key: &str,
        source: Source<'_>,
        mut stored: StoredMeta,
        checks: Checks<'_>,
        cond: &WriteCondition,
    ) -> Result<String> {
        if stored.retention.is_some() || stored.legal_hold.is_some() {
            // Refused: a packed bucket has no object lock.
            self.apply_lock(bucket, &mut stored, true)?;
        }
        let gathered = gather(source, set.pack_max.load(Ordering::Relaxed))?;
        // A write that makes or removes the key's plain file holds the
        // key's lock, as every such write does: the file and its record
        // change together, never between another's file and record.
        let plain = !matches!(gathered, Gathered::Small(_)) || stored.access.is_some();
        let mut lock = match cond.is_always() && !plain {
            true => None,
            false => Some(self.lock_key(set, key)?),
        };
        // Only a condition, a plain file or a sticky bucket needs the key's
        // state as the packs hold it now; a plain PUT orders itself after
        // what this process knows (and, by the clock, after every write
        // that ended before it began), without a look at other writers'
        // packs.
        let mut prev = match lock.is_none() && set.sticky_owner.is_none() {
            true => self.known(set, key),
            false => self.entry(set, key)?,
        };
        if lock.is_none() && prev.as_ref().is_some_and(|e| e.kind == Kind::Plain) {
            // This write will remove the key's file: under the lock.
            lock = Some(self.lock_key(set, key)?);
            prev = self.entry(set, key)?;
        }
        let _lock = lock;
        if !cond.is_always() {
            self.check_write(set, bucket, key, prev.as_ref(), cond)?;
        }
        self.may_replace(set, bucket, key, prev.as_ref())?;
        let stamp = stamp_after(prev.as_ref().map(|e| e.header.stamp));
        // An object with permissions of its own is a file of its own.
        let data = match gathered {
            Gathered::Small(data) if stored.access.is_none() => data,
            Gathered::Small(data) => {
                let source = Source::Body(PutBody::Bytes(&data));
                return self.write_plain(set, bucket, key, source, stored, checks, stamp);
            }
            Gathered::LargeStream { head, rest, len } => {
                let mut chained = std::io::Cursor::new(head).chain(rest);
                let reader: &mut dyn Read = &mut chained;
                let source = Source::Body(PutBody::Stream { reader, len });
                return self.write_plain(set, bucket, key, source, stored, checks, stamp);
            }
            Gathered::Large(source) => {
                return self.write_plain(set, bucket, key, source, stored, checks, stamp)
            }
        };
        self.digest_bytes(&data, &mut stored, checks)?;
        let etag = stored
            .etag
            .get_or_insert_with(|| packed_etag(stamp, data.len()))
            .clone();
        self.append(set, Kind::Object, key, &stored.encode(), &data, stamp)?;
        if prev.as_ref().is_some_and(|e| e.kind == Kind::Plain) {
            self.unlink_plain(bucket, key);
        }
        Ok(etag)
    }

    /// The plain file at `key`, then the record that makes it the key's
    /// state (under the caller's lock, if its write has a condition).
    #[allow(clippy::too_many_arguments)] // a write's state, as `write_object_if` takes it
    fn write_plain(
        &self,
        set: &PackSet,
        bucket: &str,
        key: &str,
        source: Source<'_>,
        stored: StoredMeta,
        checks: Checks<'_>,
        stamp: u64,
    ) -> Result<String> {
        let always = &WriteCondition::Always;
        let etag = self.write_object_if(bucket, key, source, stored, checks, always)?;
        self.append(set, Kind::Plain, key, &[], &[], stamp)?;
        Ok(etag)
    }

    /// After a plain file was put at `key` of a packed bucket by a path
    /// that does not go through [`Store::packed_write`] (a multipart
    /// completion): the record that makes it the key's newest state.
    pub(crate) fn note_plain(&self, bucket: &str, key: &str) -> Result<()> {
        let Some(set) = self.packed(bucket) else {
            return Ok(());
        };
        let prev = self.entry(&set, key)?;
        if prev.is_some() {
            let stamp = stamp_after(prev.map(|e| e.header.stamp));
            self.append(&set, Kind::Plain, key, &[], &[], stamp)?;
        }
        Ok(())
    }

    /// Appends one record to this process's pack and indexes it.
    pub(super) fn append(
        &self,
        set: &PackSet,
        kind: Kind,
        key: &str,
        meta: &[u8],
        data: &[u8],
        stamp: u64,
    ) -> Result<()> {
        let uid = rustix::process::geteuid().as_raw();
        let head = record::head(kind, key, meta, stamp, uid, data.len(), record::crc(data));
        self.append_record(set, key, &head, data).map(drop)
    }

    /// Appends one record, `head` (from `record::head`) then `data`, to
    /// this process's pack, indexes it, and returns its entry.
    fn append_record(&self, set: &PackSet, key: &str, head: &[u8], data: &[u8]) -> Result<Entry> {
        // Checked before anything is written; its pack and offset are
        // known only under the writer's lock.
        let parsed = Entry::of_record(head, 0, 0)
            .ok_or_else(|| s3err!(InternalError, "{key}: not a whole record"))?;
        let len = head.len() + data.len();
        let uid = rustix::process::geteuid().as_raw();
        let made = |d: &OwnedFd| sync_new_entry(self.config.durability, d);
        let writer = set.writer(uid, made)?;
        let mut w = writer.lock().unwrap();
        if w.end >= self.pack_roll() {
            // Sealed, the pack is a compaction's to rewrite.
            let seal = record::encode(Kind::Seal, "", &[], &[], stamp_after(None), uid);
            let at = w.end;
            let fd = w.fd(&set.dir)?;
            pwrite_all(&fd, &seal, at).map_err(|e| io_err(e, "sealing a pack"))?;
            // Synced as the appends are: a compaction syncs every pack
            // before it removes what they supersede, and a sync of the
            // whole pack here stalled the writer (GlusterFS, 2 MiB
            // appends: 0.70 of POSIX's writes with it, 0.85 without).
            if self.syncs_data() {
                sync_pack(&fd).map_err(|e| io_err(e, "sealing a pack"))?;
            }
            set.roll(&mut w, uid, made)?;
        }
        let at = w.end;
        let what = || format!("{key} (appending to a pack)");
        let fd = w.fd(&set.dir)?;
        if let Err(e) = pwritev_all(&fd, head, data, at) {
            // Nothing half written stays: the next record starts here.
            let _ = rustix::fs::ftruncate(&fd, at);
            return Err(match e {
                Errno::NOSPC | Errno::DQUOT => s3err!(
                    InsufficientStorage,
                    "{}: the file system is full (or the quota spent); nothing was stored",
                    what()
                ),
                e => io_err(e, &what()),
            });
        }
        w.end += len as u64;
        let end = w.end;
        let pack = w.pack;
        let group = w.sync.clone();
        group
            .written
            .store(end, std::sync::atomic::Ordering::Release);
        // The sync is waited for without the pack: appends that arrive
        // meanwhile go on, and one sync covers them all.
        drop(w);
        let e = Entry { pack, at, ..parsed };
        set.indexed(key, e.clone());
        // A failed sync leaves a whole record that readers may have read
        // past already: it stays (the next record goes after it), and the
        // writer is told the write failed, as after a lost reply.
        if self.syncs_data() {
            group
                .sync_to(end, &fd, sync_pack)
                .map_err(|err| io_err(err, &what()))?;
        }
        Ok(e)
    }

    /// The write precondition of `cond`, against the key's current state.
    pub(super) fn check_write(
        &self,
        set: &PackSet,
        bucket: &str,
        key: &str,
        prev: Option<&Entry>,
        cond: &WriteCondition,
    ) -> Result<()> {
        let current = self.current(set, bucket, key, prev)?;
        let etag = current.as_ref().map(|i| i.etag.as_str());
        let holds = match cond {
            WriteCondition::Always => true,
            WriteCondition::IfNoneMatch => current.is_none(),
            WriteCondition::IfMatch(want) => match etag {
                None => return Err(no_such_key(bucket, key)),
                Some(etag) => etag_matches(want, etag),
            },
            WriteCondition::IfNoneMatchEtag(unwanted) => {
                etag.is_none_or(|etag| !etag_matches(unwanted, etag))
            }
        };
        match holds {
            true => Ok(()),
            false => Err(precondition_failed(bucket, key, cond, etag)),
        }
    }

    /// The key's object as it stands: its record, or the plain file.
    pub(super) fn current(
        &self,
        set: &PackSet,
        bucket: &str,
        key: &str,
        prev: Option<&Entry>,
    ) -> Result<Option<ObjectInfo>> {
        match prev.map(|e| e.kind) {
            Some(Kind::Object) => Ok(Some(self.info_of(set, key, prev.unwrap()))),
            Some(Kind::Tombstone) => Ok(None),
            _ => match self.head_file(bucket, key) {
                Ok(info) => Ok(Some(info)),
                Err(e) if e.code == ErrorCode::NoSuchKey => Ok(None),
                Err(e) => Err(e),
            },
        }
    }

    /// In a sticky bucket only an object's writer, the bucket's owner or
    /// root may replace or delete it: what the kernel enforces for files
    /// there, enforced for records.
    pub(super) fn may_replace(
        &self,
        set: &PackSet,
        bucket: &str,
        key: &str,
        prev: Option<&Entry>,
    ) -> Result<()> {
        let (Some(owner), Some(e)) = (set.sticky_owner, prev) else {
            return Ok(());
        };
        let me = rustix::process::geteuid().as_raw();
        if e.kind == Kind::Tombstone || me == 0 || me == owner || me == e.header.uid {
            return Ok(());
        }
        Err(s3err!(
            AccessDenied,
            "{bucket}/{key} was written by uid {} and the bucket is sticky: only its writer \
             or the bucket's owner may replace or delete it",
            e.header.uid
        ))
    }

    pub(super) fn unlink_plain(&self, bucket: &str, key: &str) {
        let kp = crate::names::split_key(key);
        let rel = crate::names::dir_rel(bucket, kp.dir);
        let _ = self.in_dir(&rel, |d| {
            crate::fscalls::unlinkat(d, kp.name, AtFlags::empty()).map_err(Into::into)
        });
    }

    /// DeleteObject in a packed bucket (None where the bucket is plain).
    pub(crate) fn packed_delete(
        &self,
        bucket: &str,
        key: &str,
        cond: Option<&DeleteCondition>,
    ) -> Option<Result<()>> {
        let set = self.packed(bucket)?;
        let run = || -> Result<Option<()>> {
            // As for a PUT: a tombstone newer than every record this
            // process knows hides the rest too. Where it may remove a file
            // (the key is not a packed object here), under the key's lock.
            let known = self.known(&set, key);
            let file = known.as_ref().is_none_or(|e| e.kind == Kind::Plain);
            let _lock = match cond.is_some() || file {
                true => Some(self.lock_key(&set, key)?),
                false => None,
            };
            let look = cond.is_some() || file || set.sticky_owner.is_some();
            let prev = match look {
                true => self.entry(&set, key)?,
                false => known,
            };
            if look && prev.as_ref().is_some_and(|e| e.kind == Kind::Tombstone) {
                return Ok(Some(()));
            }
            if let Some(c) = cond {
                if let Some(info) = self.current(&set, bucket, key, prev.as_ref())? {
                    crate::delete_if::check(bucket, key, c, &info)?;
                }
            }
            self.may_replace(&set, bucket, key, prev.as_ref())?;
            let stamp = stamp_after(prev.as_ref().map(|e| e.header.stamp));
            self.append(&set, Kind::Tombstone, key, &[], &[], stamp)?;
            // A file at the key's path (a large object, or one from before
            // the bucket was packed) goes too.
            if prev.as_ref().is_none_or(|e| e.kind == Kind::Plain) {
                self.unlink_plain(bucket, key);
            }
            Ok(Some(()))
        };
        run().transpose()
    }

    /// PutObjectTagging on a packed object: a new record with the same
    /// data and ETag. None where the plain file decides.
    pub(crate) fn packed_set_tags(
        &self,
        bucket: &str,
        key: &str,
        tags: &BTreeMap<String, String>,
    ) -> Option<Result<()>> {
        let set = self.packed(bucket)?;
        let run = || -> Result<Option<()>> {
            let _lock = self.lock_key(&set, key)?;
            let Some(prev) = self.entry(&set, key)? else {
                return Ok(None);
            };
            match prev.kind {
                Kind::Plain => return Ok(None),
                Kind::Tombstone | Kind::Seal => return Err(no_such_key(bucket, key)),
                Kind::Object => {}
            }
            let mut stored = StoredMeta::decode(&prev.meta);
            if stored.tags == *tags {
                return Ok(Some(()));
            }
            self.may_replace(&set, bucket, key, Some(&prev))?;
            let data = self.read_record(&set, bucket, key, &prev)?;
            stored.tags = tags.clone();
            let stamp = stamp_after(Some(prev.header.stamp));
            self.append(&set, Kind::Object, key, &stored.encode(), &data, stamp)?;
            Ok(Some(()))
        };
        run().transpose()
    }
}

/// The ETag of a packed object under the fast policy: opaque, with a `-`
/// (clients never compare it with a content MD5).
fn packed_etag(stamp: u64, len: usize) -> String {
    format!(
        "\"{:016x}{:016x}-1\"",
        meta::mix(stamp),
        meta::mix(stamp ^ len as u64)
    )
}

/// The source's bytes if it is at most `max` bytes, else the source
/// (its head, read to find out, put back in front).
fn gather(source: Source<'_>, max: u64) -> Result<Gathered<'_>> {
    let read_err = |e: std::io::Error| S3Error::from_io(&e, "reading the object's data");
    match source {
        Source::Body(PutBody::Bytes(b)) if b.len() as u64 <= max => Ok(Gathered::Small(b.into())),
        Source::Body(PutBody::Stream { len: Some(n), .. }) if n > max => {
            Ok(Gathered::Large(source))
        }
        Source::Body(PutBody::Stream { reader, len }) => {
            let mut data = Vec::with_capacity(len.unwrap_or(64 << 10) as usize);
            (&mut *reader)
                .take(max + 1)
                .read_to_end(&mut data)
                .map_err(read_err)?;
            if data.len() as u64 <= max {
                if let Some(n) = len.filter(|n| *n != data.len() as u64) {
                    return Err(s3err!(
                        IncompleteBody,
                        "the body ended after {} of the {n} bytes its length announced",
                        data.len()
                    ));
                }
                return Ok(Gathered::Small(data.into()));
            }
            // Too large: the plain path writes what was read, then the rest.
            Ok(Gathered::LargeStream {
                head: data,
                rest: reader,
                len,
            })
        }
        Source::Files(parts) => {
            let total: u64 = parts.iter().map(|(_, _, len)| *len).sum();
            if total > max {
                return Ok(Gathered::Large(Source::Files(parts)));
            }
            let mut data = vec![0u8; total as usize];
            let mut at = 0;
            for (file, offset, len) in parts {
                let n = set::pread_full(&file, &mut data[at..at + len as usize], offset)
                    .map_err(|e| read_err(e.into()))?;
                if n as u64 != len {
                    return Err(s3err!(
                        InternalError,
                        "the source ended after {n} of {len} bytes (changed while copied?)"
                    ));
                }
                at += len as usize;
            }
            Ok(Gathered::Small(data.into()))
        }
        other => Ok(Gathered::Large(other)),
    }
}

/// Makes a pack's appends durable (and, where the client buffers them,
/// visible to other nodes): `fdatasync`, which keeps the data and the size
/// that finds it, without the times a full `fsync` also flushes (on
/// ceph-fuse a journal write at the MDS: measured 9-12 ms a sync, against
/// about 1 ms).
fn sync_pack(fd: &OwnedFd) -> rustix::io::Result<()> {
    crate::fscalls::fdatasync(fd)
}

/// Makes a new pack's directory entry durable in `packs_dir`, where
/// `durability` asks it.
pub(super) fn sync_new_entry(durability: Durability, packs_dir: &OwnedFd) {
    if durability == Durability::Fsync {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        if let Ok(d) = openat(packs_dir, ".", flags, Mode::empty()) {
            let _ = crate::fscalls::fsync(&d);
        }
    }
}

/// `head` then `data` at `at`, in one `pwritev` unless the file system
/// takes less (then the rest by `pwrite`s).
fn pwritev_all(fd: &OwnedFd, head: &[u8], data: &[u8], at: u64) -> rustix::io::Result<()> {
    let parts = [std::io::IoSlice::new(head), std::io::IoSlice::new(data)];
    let n = loop {
        match crate::fscalls::count(
            crate::fscalls::Kind::Write,
            rustix::io::pwritev(fd, &parts, at),
        ) {
            Err(Errno::INTR) => {}
            other => break other?,
        }
    };
    if n == 0 && head.len() + data.len() > 0 {
        return Err(Errno::NOSPC);
    }
    if n < head.len() {
        pwrite_all(fd, &head[n..], at + n as u64)?;
        pwrite_all(fd, data, at + head.len() as u64)
    } else {
        pwrite_all(fd, &data[n - head.len()..], at + n as u64)
    }
}

pub(super) fn pwrite_all(fd: &OwnedFd, mut buf: &[u8], mut at: u64) -> rustix::io::Result<()> {
    while !buf.is_empty() {
        match crate::fscalls::count(crate::fscalls::Kind::Write, rustix::io::pwrite(fd, buf, at)) {
            Ok(0) => return Err(Errno::NOSPC),
            Ok(n) => {
                buf = &buf[n..];
                at += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
