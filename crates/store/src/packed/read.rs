//! Reading a packed bucket's objects: HEAD from the index, GET from the
//! record, its data checked before a byte is returned.

use super::*;
use rustix::fs::CWD;

impl Store {
    /// The newest record of `key` in a packed bucket, if it is an
    /// object: Some(Err(NoSuchKey)) for a tombstone; None where the plain
    /// file at the key's path decides (no record, a plain one, or a plain
    /// bucket).
    fn packed_object(&self, bucket: &str, key: &str) -> Option<Result<(Arc<PackSet>, Entry)>> {
        let set = self.packed(bucket)?;
        match self.entry(&set, key) {
            Err(e) => Some(Err(e)),
            Ok(Some(e)) if e.kind == Kind::Object => Some(Ok((set, e))),
            Ok(Some(e)) if e.kind == Kind::Tombstone => Some(Err(no_such_key(bucket, key))),
            Ok(_) => None,
        }
    }

    /// HEAD of `key` in a packed bucket (see [`Store::packed_object`]).
    pub(crate) fn packed_head(&self, bucket: &str, key: &str) -> Option<Result<ObjectInfo>> {
        let got = self.packed_object(bucket, key)?;
        Some(got.map(|(set, e)| self.info_of(&set, key, &e)))
    }

    /// [`Store::packed_head`] with the data: a file holding the object's
    /// bytes (in memory), read whole and checked against its record's
    /// checksum first, so no damaged byte is ever returned.
    pub(crate) fn packed_open(
        &self,
        bucket: &str,
        key: &str,
    ) -> Option<Result<(ObjectInfo, File)>> {
        let got = self.packed_object(bucket, key)?;
        Some(got.and_then(|(set, e)| {
            let data = self.read_record(&set, bucket, key, &e)?;
            let info = self.info_of(&set, key, &e);
            Ok((info, in_memory(&data, &format!("{bucket}/{key}"))?))
        }))
    }

    /// The data of an object record, checked. A record another node is
    /// still writing can show its header before its data: a mismatch is
    /// read again a few times before it is called damage.
    pub(super) fn read_record(
        &self,
        set: &PackSet,
        bucket: &str,
        key: &str,
        e: &Entry,
    ) -> Result<Vec<u8>> {
        let (e, pack) = &self.open_pack(set, bucket, key, e)?;
        if rustix::process::geteuid() != rustix::process::getuid() {
            // A user's request: the pack's own permissions decide, as a
            // file's would (the fd was opened by whoever came first).
            may_read(set, pack)
                .map_err(|err| io_err(err, &format!("{bucket}/{key} (in pack {})", pack.name)))?;
        }
        let len = e.header.data_len as usize;
        let mut data = vec![0u8; len];
        for attempt in 0..5 {
            let n = set::pread_full(&pack.fd, &mut data, e.at + e.header.data_at())
                .map_err(|err| io_err(err, &format!("{bucket}/{key}")))?;
            if n == len && record::crc(&data) == e.header.data_crc {
                return Ok(data);
            }
            set::forget_cached(pack, e.at);
            std::thread::sleep(Duration::from_millis(1 << attempt));
        }
        Err(s3err!(
            InternalError,
            "{bucket}/{key}: its record at byte {} of pack {} fails its checksum: the pack \
             file is damaged there; no bytes of it are returned (`s3hpc pack check` lists \
             what a pack still holds)",
            e.at,
            pack.name
        ))
    }

    /// The tags of a packed object; None where the plain file decides.
    pub(crate) fn packed_tags(
        &self,
        bucket: &str,
        key: &str,
    ) -> Option<Result<BTreeMap<String, String>>> {
        let got = self.packed_object(bucket, key)?;
        Some(got.map(|(_, e)| StoredMeta::decode(&e.meta).tags))
    }

    /// The pack's file of a packed object, for reading its permissions.
    /// None where the plain file decides.
    pub(crate) fn packed_target(&self, bucket: &str, key: &str) -> Option<Result<OwnedFd>> {
        let got = self.packed_object(bucket, key)?;
        Some(got.and_then(|(set, e)| {
            let (_, pack) = self.open_pack(&set, bucket, key, &e)?;
            let flags = OFlags::RDONLY | OFlags::CLOEXEC;
            match openat(
                &set.dir,
                pack.name.as_str(),
                flags | OFlags::NOFOLLOW,
                Mode::empty(),
            ) {
                // Removed by a compaction: the same file, through its fd.
                Err(Errno::NOENT) => openat(CWD, proc_fd(&pack).as_str(), flags, Mode::empty()),
                other => other,
            }
            .map_err(|err| io_err(err, &format!("{bucket}/{key}")))
        }))
    }

    /// The pack of `e`, open; a pack this process has let go since (a
    /// compaction's copies took its place) means the key is looked up again.
    fn open_pack(
        &self,
        set: &PackSet,
        bucket: &str,
        key: &str,
        e: &Entry,
    ) -> Result<(Entry, Arc<set::Pack>)> {
        if let Some(p) = set.pack(e.pack) {
            return Ok((e.clone(), p));
        }
        match self.entry(set, key)? {
            Some(now) if now.kind == e.kind => match set.pack(now.pack) {
                Some(p) => Ok((now, p)),
                None => Err(s3err!(
                    InternalError,
                    "{bucket}/{key}: its pack is not open"
                )),
            },
            _ => Err(no_such_key(bucket, key)),
        }
    }
}

/// Whether this thread's identity may read `pack`, as the kernel would
/// decide for its file: by name, or, once a compaction removed the name,
/// through the fd this process holds.
fn may_read(set: &PackSet, pack: &set::Pack) -> rustix::io::Result<()> {
    let read = rustix::fs::Access::READ_OK;
    match rustix::fs::accessat(&set.dir, pack.name.as_str(), read, AtFlags::EACCESS) {
        Err(Errno::NOENT) => {
            rustix::fs::accessat(CWD, proc_fd(pack).as_str(), read, AtFlags::EACCESS)
        }
        other => other,
    }
}

/// The path of the pack's fd in this process.
fn proc_fd(pack: &set::Pack) -> String {
    use std::os::fd::AsRawFd;
    format!("/proc/self/fd/{}", pack.fd.as_raw_fd())
}

/// An anonymous in-memory file holding `data`, at offset 0.
fn in_memory(data: &[u8], what: &str) -> Result<File> {
    let fd = rustix::fs::memfd_create("s3hpc-object", rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|e| io_err(e, what))?;
    let mut f = File::from(fd);
    f.write_all(data)
        .and_then(|_| f.rewind())
        .map_err(|e| S3Error::from_io(&e, what))?;
    Ok(f)
}
