//! Multipart uploads.
//!
//! An upload is staged in a hidden directory inside its bucket,
//! `<bucket>/.s3hpc-uploads/<upload-id>/`, holding an `info` file (key, content
//! type, metadata) and an entry per part, each written atomically like an
//! object. Parts of one size go straight to their offsets in the upload's
//! data file, which completion renames into place (`in_place`); other parts
//! are files of their own, which completion copies in, or concatenates with
//! the rest into a temporary in the key's directory (`copy_file_range`: no
//! data passes through user space). Either way the object appears whole or
//! not at all.

mod in_place;
mod staging;

use in_place::PartData;
pub(crate) use in_place::Strides;
pub(crate) use staging::UPLOADS;
use staging::{part_file, upload_key, INFO, MIN_PART_SIZE, PART_PREFIX};

use crate::fscalls::{read_dir, statat, unlinkat};
use crate::meta::{self, StoredMeta};
use crate::names::dir_rel;
use crate::names::{validate_bucket_name, validate_key};
use crate::put::Source;
use crate::*;
use md5::{Digest, Md5};
use rustix::fs::AtFlags;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// What a completed upload leaves in its staging directory: its key and
/// the object's ETag, so that a retried completion gets the same answer.
const COMPLETED: &str = "completed";
/// How long a completion record answers retries. SDKs retry within
/// seconds; 15 minutes is S3's allowance for a request's clock.
pub const COMPLETED_AGE: std::time::Duration = std::time::Duration::from_secs(15 * 60);
const MAX_PART_NUMBER: u32 = 10_000;

/// The mode of a new directory below `parent`: an upload's staging
/// directory is its initiator's alone (another user, even one who may read
/// the bucket, cannot list, add to, complete or abort it); any other gets
/// 0777 under the umask, as `mkdir -p` gives.
pub(crate) fn dir_mode(bucket: &str, parent: &str) -> rustix::fs::Mode {
    let uploads = parent
        .strip_prefix(bucket)
        .is_some_and(|p| p.strip_prefix('/') == Some(UPLOADS));
    rustix::fs::Mode::from_bits_truncate(if uploads { 0o700 } else { 0o777 })
}

/// A fresh id: 32 hex digits from time, pid, host and a counter, so ids from
/// many processes on many nodes never collide.
fn new_upload_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let host = rustix::system::uname()
        .nodename()
        .to_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ *b as u64).wrapping_mul(0x100_0000_01b3)
        });
    let c = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut md5 = Md5::new();
    md5.update(nanos.to_le_bytes());
    md5.update(host.to_le_bytes());
    md5.update((std::process::id() as u64).to_le_bytes());
    md5.update(c.to_le_bytes());
    md5.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// An upload id is only ever 32 lowercase hex digits; anything else (a path,
/// `..`) is rejected before it comes near the file system.
fn check_upload_id(upload_id: &str) -> Result<()> {
    if upload_id.len() == 32
        && upload_id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(s3err!(
            NoSuchUpload,
            "upload id {:?} is not one this server issued",
            upload_id.get(..64).unwrap_or(upload_id)
        ))
    }
}

fn unquote(etag: &str) -> &str {
    etag.trim().trim_matches('"')
}

fn encode_info(key: &str, stored: &StoredMeta) -> Vec<u8> {
    let mut out = (key.len() as u16).to_le_bytes().to_vec();
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&stored.encode());
    out
}

fn decode_info(buf: &[u8]) -> Option<(String, StoredMeta)> {
    let n = u16::from_le_bytes(buf.get(..2)?.try_into().ok()?) as usize;
    let key = std::str::from_utf8(buf.get(2..2 + n)?).ok()?.to_string();
    Some((key, StoredMeta::decode(&buf[2 + n..])))
}

/// An upload's info or completion record as read: its key, what was
/// stored with it, when it was written and by whom (the file's uid).
type UploadFile = (String, StoredMeta, SystemTime, Option<u32>);

impl Store {
    /// After directory `parent/name` was made: the uploads directory a user
    /// made is opened to whoever may write the bucket (its mode bits, and
    /// sticky, so no one removes another's upload), as the umask would
    /// have kept everyone else out. The server's own keeps what it got.
    pub(crate) fn made_dir(&self, bucket: &str, parent: &str, name: &str) {
        if parent != bucket || name != UPLOADS || !crate::identity::acting_as_user() {
            return;
        }
        if let Ok(st) = statat(&self.root_fd, bucket, AtFlags::SYMLINK_NOFOLLOW) {
            let mode = rustix::fs::Mode::from_bits_truncate((st.st_mode & 0o777) | 0o1000);
            let _ = self.in_dir(bucket, |d: std::os::fd::BorrowedFd<'_>| {
                let r = rustix::fs::chmodat(d, UPLOADS, mode, AtFlags::empty());
                Ok(crate::fscalls::count(crate::fscalls::Kind::Chmod, r)?)
            });
        }
    }

    pub fn create_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        opts: &PutOptions,
    ) -> Result<String> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        if !opts.condition.is_always() {
            return Err(s3err!(
                InvalidArgument,
                "CreateMultipartUpload takes no If-Match / If-None-Match; send the condition \
                 with CompleteMultipartUpload, where S3 checks it"
            ));
        }
        let mut stored = StoredMeta::from_put(opts, None)?;
        if let Some(c) = &opts.checksum {
            check_multipart_type(c)?;
            // The algorithm and type the object's checksum will have.
            stored.checksum = Some(ObjectChecksum {
                algorithm: c.algorithm,
                kind: c.kind,
                value: String::new(),
            });
        }
        self.head_bucket(bucket)?;
        // A lock the bucket cannot give is refused now, not at completion.
        self.apply_lock(bucket, &mut stored.clone(), true)?;
        let id = new_upload_id();
        let info = encode_info(key, &stored);
        // The info gets the permissions the object will: one the file
        // system refuses is refused now, before any part is sent.
        let probe = StoredMeta {
            access: stored.access.clone(),
            ..Default::default()
        };
        self.write_object(
            bucket,
            &upload_key(&id, INFO),
            Source::Body(PutBody::Bytes(&info)),
            probe,
            Default::default(),
        )
        .map_err(|e| {
            // The staging directory made for it goes too.
            self.remove_upload(bucket, &id);
            S3Error::new(e.code, e.message.replace(&upload_key(&id, INFO), key))
        })?;
        Ok(id)
    }

    /// Reads the upload's info and checks that it belongs to `key`.
    fn upload_info(&self, bucket: &str, key: &str, upload_id: &str) -> Result<StoredMeta> {
        validate_bucket_name(bucket)?;
        validate_key(key)?;
        check_upload_id(upload_id)?;
        let no_upload = || {
            s3err!(NoSuchUpload, "no upload {upload_id} for key {key:?} in bucket {bucket:?}; it was completed, aborted or never started")
        };
        match self.read_upload_file(bucket, upload_id, INFO) {
            Ok(Some((k, stored, _, _))) if k == key => Ok(stored),
            Ok(_) => Err(no_upload()),
            Err(e) if e.code == ErrorCode::NoSuchKey => Err(no_upload()),
            Err(e) => Err(e),
        }
    }

    /// An upload's `info` or completion record: the key, what was stored
    /// with it, and when it was written. None if it does not decode.
    fn read_upload_file(
        &self,
        bucket: &str,
        upload_id: &str,
        file: &str,
    ) -> Result<Option<UploadFile>> {
        let mut got = self.get_unchecked(bucket, &upload_key(upload_id, file), None)?;
        let mut buf = Vec::new();
        got.body
            .by_ref()
            .take(64 << 10)
            .read_to_end(&mut buf)
            .map_err(|e| S3Error::from_io(&e, "upload info"))?;
        let (at, owner) = (got.info.last_modified, got.info.owner);
        Ok(decode_info(&buf).map(|(k, stored)| (k, stored, at, owner)))
    }

    pub fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part_number: u32,
        body: PutBody<'_>,
    ) -> Result<String> {
        let opts = PutOptions::default();
        self.upload_part_checked(bucket, key, upload_id, part_number, body, &opts)
            .map(|(etag, _)| etag)
    }

    /// [`Store::upload_part`] with the part's checksum: verified against
    /// `opts.checksum`'s value if one is given, and computed with the
    /// upload's algorithm (if it has one) in any case; and its Content-MD5
    /// (`opts.content_md5`). Other options are the upload's, not the
    /// part's, and are ignored. Returns the ETag and the part's checksum.
    pub fn upload_part_checked(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part_number: u32,
        body: PutBody<'_>,
        opts: &PutOptions,
    ) -> Result<(String, Option<ObjectChecksum>)> {
        if !(1..=MAX_PART_NUMBER).contains(&part_number) {
            return Err(s3err!(
                InvalidArgument,
                "part number {part_number} is outside 1..={MAX_PART_NUMBER}"
            ));
        }
        let info = self.upload_info(bucket, key, upload_id)?;
        let upload_alg = info.checksum.as_ref().map(|c| c.algorithm);
        let computed;
        let check = match (upload_alg, opts.checksum.as_ref()) {
            (Some(want), Some(c)) if c.algorithm != want => {
                return Err(s3err!(
                    InvalidRequest,
                    "Checksum Type mismatch occurred, expected checksum Type: {}, actual checksum Type: {}",
                    want.as_str().to_ascii_lowercase(),
                    c.algorithm.as_str().to_ascii_lowercase()
                ))
            }
            (Some(want), None) => {
                computed = ChecksumRequest::new(want);
                Some(&computed)
            }
            (_, c) => c,
        };
        let part = upload_key(upload_id, &part_file(part_number));
        let checks = crate::put::Checks {
            sum: check,
            md5: opts.content_md5.as_ref(),
        };
        let etag =
            match self.upload_part_in_place((bucket, upload_id, part_number), body, checks)? {
                Ok(etag) => etag,
                Err(body) => self.write_object(
                    bucket,
                    &part,
                    Source::Body(body),
                    StoredMeta::default(),
                    checks,
                )?,
            };
        // An abort that raced with this part may have removed the upload.
        if self.upload_info(bucket, key, upload_id).is_err() {
            let _ = self.abort_multipart_upload(bucket, key, upload_id);
            return Err(s3err!(
                NoSuchUpload,
                "upload {upload_id} was aborted while part {part_number} was written"
            ));
        }
        let sum = match check {
            None => None,
            Some(c) => match c
                .expected
                .as_deref()
                .or(c.late.as_ref().and_then(|l| l.get()))
            {
                Some(v) => Some(ObjectChecksum {
                    algorithm: c.algorithm,
                    kind: ChecksumType::FullObject,
                    value: v.trim().to_string(),
                }),
                None => self.head_unchecked(bucket, &part)?.checksum,
            },
        };
        Ok((etag, sum))
    }

    pub fn complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
    ) -> Result<ObjectInfo> {
        self.complete_multipart_upload_if(bucket, key, upload_id, parts, &WriteCondition::Always)
    }

    /// CompleteMultipartUpload that makes the object only if `cond` holds;
    /// when it does not (412), the upload stays as it was, to be completed
    /// again or aborted.
    pub fn complete_multipart_upload_if(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
        cond: &WriteCondition,
    ) -> Result<ObjectInfo> {
        self.complete_multipart_upload_checked(bucket, key, upload_id, parts, &[], None, cond)
    }

    /// [`Store::complete_multipart_upload_if`] with the part checksums the
    /// client lists (`part_checksums[i]` for `parts[i]`, base64; a missing
    /// or `None` entry is not checked) and the whole object's checksum if
    /// the client sent one. The object's checksum is formed as the upload
    /// was created to: COMPOSITE (the algorithm over the concatenated part
    /// checksums, `-N`) or FULL_OBJECT (the part CRCs combined).
    #[allow(clippy::too_many_arguments)]
    pub fn complete_multipart_upload_checked(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
        part_checksums: &[Option<String>],
        whole: Option<&ChecksumRequest>,
        cond: &WriteCondition,
    ) -> Result<ObjectInfo> {
        let mut stored = match self.upload_info(bucket, key, upload_id) {
            Err(e) if e.code == ErrorCode::NoSuchUpload => {
                return self
                    .completed_before(bucket, key, upload_id, parts)
                    .ok_or(e)
            }
            other => other?,
        };
        let plan = stored.checksum.take();
        let parts = listed_parts(parts)?;
        let mut data = Vec::with_capacity(parts.len());
        let mut sums = Vec::new();
        let mut sizes = Vec::with_capacity(parts.len());
        let mut part_sums = Vec::new();
        for (i, &(n, etag, entry)) in parts.iter().enumerate() {
            // Each named part is opened at once (open, fstat): its size,
            // ETag and checksum come with the file the copy reads, so no
            // listing of the staging directory and no stat of each part
            // (on a shared file system each is a round trip).
            let mut got =
                match self.get_unchecked(bucket, &upload_key(upload_id, &part_file(n)), None) {
                    Ok(g) => g,
                    Err(e) if e.code == ErrorCode::NoSuchKey => {
                        return Err(s3err!(
                            InvalidPart,
                            "part {n} was never uploaded (or its upload failed)"
                        ))
                    }
                    Err(e) => return Err(e),
                };
            let placed = in_place::placed(&got.info, &mut got.body);
            let size = placed.map_or(got.info.size, |pl| pl.len);
            let p = &got.info;
            if unquote(&p.etag) != unquote(etag) {
                return Err(s3err!(
                    InvalidPart,
                    "part {n} has ETag {} but the request names {etag}",
                    p.etag
                ));
            }
            if i + 1 < parts.len() && size < MIN_PART_SIZE {
                return Err(s3err!(
                    EntityTooSmall,
                    "part {n} is {size} bytes; every part but the last must be at least 5 MiB"
                ));
            }
            let listed = part_checksums.get(entry).and_then(|c| c.as_deref());
            let have_sum = p
                .checksum
                .as_ref()
                .filter(|c| Some(c.algorithm) == plan.as_ref().map(|p| p.algorithm));
            if let (Some(want), Some(plan)) = (listed, &plan) {
                if have_sum.is_none_or(|c| c.value != want.trim()) {
                    return Err(s3err!(
                        InvalidPart,
                        "part {n}: the {} checksum {want} does not match the part's",
                        plan.algorithm.as_str()
                    ));
                }
            }
            if let Some(plan) = &plan {
                let raw = have_sum.and_then(|c| c.raw()).ok_or_else(|| {
                    s3err!(
                        InvalidPart,
                        "part {n} has no {} checksum; upload it again",
                        plan.algorithm.as_str()
                    )
                })?;
                sums.push((raw, size));
            }
            sizes.push(size);
            part_sums.extend(have_sum.map(|c| c.value.clone()));
            data.push(match placed {
                Some(pl) => (n, PartData::Placed(pl)),
                None => (n, PartData::Own(got.body.into_file(), got.length)),
            });
        }
        stored.etag = Some(multipart_etag(parts.iter().map(|p| p.1), parts.len()));
        stored.parts = crate::parts::PartsRecord::new(&sizes, part_sums);
        if let Some(plan) = plan {
            let value = match plan.kind {
                ChecksumType::Composite => {
                    let raws: Vec<Vec<u8>> = sums.into_iter().map(|(r, _)| r).collect();
                    crate::checksum::composite(plan.algorithm, &raws)
                }
                ChecksumType::FullObject => crate::checksum::combine_full(plan.algorithm, &sums)
                    .ok_or_else(|| {
                        s3err!(
                            InvalidRequest,
                            "{} cannot form a FULL_OBJECT checksum",
                            plan.algorithm.as_str()
                        )
                    })?,
            };
            if let Some(w) = whole {
                // A composite value may be sent with or without its `-N`.
                let bare = value.split('-').next().unwrap_or(&value);
                let ok = w.algorithm == plan.algorithm
                    && w.expected
                        .as_deref()
                        .is_none_or(|e| e.trim() == value || e.trim() == bare);
                if !ok {
                    return Err(bad_digest(w.algorithm));
                }
            }
            stored.checksum = Some(ObjectChecksum {
                algorithm: plan.algorithm,
                kind: plan.kind,
                value,
            });
        }
        let source = match self.adopt_data(bucket, upload_id, &data)? {
            Some(adopted) => Source::Adopt(adopted),
            None => self.concatenation(bucket, upload_id, data)?,
        };
        // In a packed bucket the condition is checked against the key's
        // records too, under their lock.
        let held = self.packed_condition(bucket, key, cond)?;
        let cond = if held.is_some() {
            &WriteCondition::Always
        } else {
            cond
        };
        stored.version_id = self.new_write_version(bucket, key)?;
        self.apply_lock(bucket, &mut stored, false)?;
        let (_, st) = self.write_object_stat(
            bucket,
            key,
            source,
            stored.clone(),
            Default::default(),
            cond,
        )?;
        self.note_plain(bucket, key)?;
        drop(held);
        self.record_completion(bucket, key, upload_id, &stored);
        if !self.profile.xattrs {
            // The multipart ETag could not be stored: answer what HEAD sees.
            return self.head_object(bucket, key);
        }
        // What a HEAD would answer, from the stat taken before the rename
        // and the metadata just stored: one stat and getxattr fewer.
        Ok(meta::object_info(key, &st, Some(stored)))
    }

    pub fn abort_multipart_upload(&self, bucket: &str, key: &str, upload_id: &str) -> Result<()> {
        self.upload_info(bucket, key, upload_id)?;
        self.remove_upload(bucket, upload_id);
        Ok(())
    }

    /// A completion's answer, when the completion is retried (its first
    /// answer was lost, so an SDK sends it again): the object this upload
    /// made, if it was completed less than [`COMPLETED_AGE`] ago with the
    /// parts now listed (the same multipart ETag) and the key still holds
    /// it (same ETag). Otherwise None: the upload is gone (NoSuchUpload).
    fn completed_before(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
    ) -> Option<ObjectInfo> {
        let (k, record, at, _) = self.read_upload_file(bucket, upload_id, COMPLETED).ok()??;
        let recent = at.elapsed().is_ok_and(|age| age < COMPLETED_AGE);
        let listed = listed_parts(parts).ok()?;
        let etag = multipart_etag(listed.iter().map(|p| p.1), listed.len());
        if !recent || k != key || record.etag.as_deref() != Some(etag.as_str()) {
            return None;
        }
        let info = self.head_unchecked(bucket, key).ok()?;
        (info.etag == etag).then_some(info)
    }

    /// After a completion: the upload's staging directory keeps only a
    /// record of it (key and ETag) for [`Store::completed_before`]; the
    /// info goes first, so the upload is no longer in progress. Records
    /// past their age go with the next completion in the bucket a minute
    /// or more later, the startup sweep, or DeleteBucket.
    fn record_completion(&self, bucket: &str, key: &str, upload_id: &str, stored: &StoredMeta) {
        let record = StoredMeta {
            etag: stored.etag.clone(),
            ..Default::default()
        };
        let kept = self
            .write_object(
                bucket,
                &upload_key(upload_id, COMPLETED),
                Source::Body(PutBody::Bytes(&encode_info(key, &record))),
                StoredMeta::default(),
                Default::default(),
            )
            .is_ok();
        if !kept {
            return self.remove_upload(bucket, upload_id);
        }
        let rel = dir_rel(bucket, &format!("{UPLOADS}/{upload_id}"));
        let _ = self.in_dir(&rel, |d| Ok(unlinkat(d, INFO, AtFlags::empty())?));
        self.clear_upload_dir(&rel, Some(COMPLETED));
        if self.completions.due(bucket) {
            if let Ok(fd) = self.open_listing(&dir_rel(bucket, UPLOADS)) {
                purge_completed(&fd, SystemTime::now() - COMPLETED_AGE);
            }
        }
    }

    /// Unlinks every entry of an upload's staging directory but `keep`.
    fn clear_upload_dir(&self, rel: &str, keep: Option<&str>) {
        if let Ok(fd) = self.open_listing(rel) {
            if let Ok(dir) = read_dir(&fd) {
                for e in dir.flatten() {
                    let name = e.file_name();
                    let b = name.to_bytes();
                    if b != b"." && b != b".." && Some(b) != keep.map(str::as_bytes) {
                        let _ = unlinkat(&fd, name, AtFlags::empty());
                    }
                }
            }
        }
        if keep.is_none() {
            self.dirs.forget(rel);
        }
    }

    /// Removes an upload's staging directory and, if it was the last, the
    /// uploads directory.
    fn remove_upload(&self, bucket: &str, upload_id: &str) {
        let rel = dir_rel(bucket, &format!("{UPLOADS}/{upload_id}"));
        self.clear_upload_dir(&rel, None);
        let uploads = dir_rel(bucket, UPLOADS);
        let _ = self.in_dir(&uploads, |d| {
            Ok(unlinkat(d, upload_id, AtFlags::REMOVEDIR)?)
        });
        let _ = self.in_dir(bucket, |d| Ok(unlinkat(d, UPLOADS, AtFlags::REMOVEDIR)?));
        self.dirs.forget(&uploads);
    }

    /// The listed parts' bytes as ranges of files, in order: parts in the
    /// data file read from it, the others from their own files.
    fn concatenation(
        &self,
        bucket: &str,
        upload_id: &str,
        data: Vec<(u32, PartData)>,
    ) -> Result<Source<'static>> {
        let mut shared: Option<std::fs::File> = None;
        let mut files = Vec::with_capacity(data.len());
        for (_, d) in data {
            files.push(match d {
                PartData::Own(file, len) => (file, 0, len),
                PartData::Placed(pl) => {
                    let file = match &shared {
                        Some(f) => f.try_clone(),
                        None => {
                            let got = self.get_unchecked(
                                bucket,
                                &upload_key(upload_id, in_place::DATA),
                                None,
                            )?;
                            let f = got.body.into_file();
                            let clone = f.try_clone();
                            shared = Some(f);
                            clone
                        }
                    }
                    .map_err(|e| S3Error::from_io(&e, "upload data"))?;
                    (file, pl.offset, pl.len)
                }
            });
        }
        Ok(Source::Files(files))
    }

    pub fn list_parts(&self, bucket: &str, key: &str, upload_id: &str) -> Result<Vec<PartInfo>> {
        self.upload_info(bucket, key, upload_id)?;
        let rel = dir_rel(bucket, &format!("{UPLOADS}/{upload_id}"));
        let fd = self
            .open_listing(&rel)
            .map_err(|e| S3Error::from_io(&e, "upload parts"))?;
        let mut parts = Vec::new();
        for e in read_dir(&fd)
            .map_err(|e| S3Error::from_io(&e.into(), "upload parts"))?
            .flatten()
        {
            let Ok(name) = e.file_name().to_str() else {
                continue;
            };
            let Some(n) = name
                .strip_prefix(PART_PREFIX)
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let mut got = match self.get_unchecked(bucket, &upload_key(upload_id, name), None) {
                Ok(g) => g,
                // Replaced or gone meanwhile (a completion).
                Err(e) if e.code == ErrorCode::NoSuchKey => continue,
                Err(e) => return Err(e),
            };
            let size =
                in_place::placed(&got.info, &mut got.body).map_or(got.info.size, |pl| pl.len);
            let info = got.info;
            parts.push(PartInfo {
                part_number: n,
                size,
                etag: info.etag,
                last_modified: info.last_modified,
                checksum: info.checksum,
            });
        }
        parts.sort_by_key(|p| p.part_number);
        Ok(parts)
    }

    pub fn list_multipart_uploads(&self, bucket: &str, prefix: &str) -> Result<Vec<UploadInfo>> {
        self.head_bucket(bucket)?;
        let Ok(fd) = self.open_listing(&dir_rel(bucket, UPLOADS)) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for e in read_dir(&fd)
            .map_err(|e| S3Error::from_io(&e.into(), "uploads"))?
            .flatten()
        {
            let Ok(id) = e.file_name().to_str() else {
                continue;
            };
            if check_upload_id(id).is_err() {
                continue;
            }
            // A completed upload has no info, only its completion record.
            let Ok(Some((key, _, initiated, owner))) = self.read_upload_file(bucket, id, INFO)
            else {
                continue;
            };
            if key.starts_with(prefix) {
                out.push(UploadInfo {
                    key,
                    upload_id: id.to_string(),
                    initiated,
                    owner,
                });
            }
        }
        out.sort_by(|a, b| (a.key.as_bytes(), a.initiated).cmp(&(b.key.as_bytes(), b.initiated)));
        Ok(out)
    }
}

/// Removes the completion records (and their staging directories) in the
/// uploads directory `uploads` written before `cutoff`. Returns how many.
pub(crate) fn purge_completed(uploads: &std::os::fd::OwnedFd, cutoff: SystemTime) -> usize {
    let Ok(entries) = read_dir(uploads) else {
        return 0;
    };
    let dir_flags = rustix::fs::OFlags::RDONLY
        | rustix::fs::OFlags::DIRECTORY
        | rustix::fs::OFlags::NOFOLLOW
        | rustix::fs::OFlags::CLOEXEC;
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        if name
            .to_str()
            .map_or(true, |id| check_upload_id(id).is_err())
        {
            continue;
        }
        let Ok(sub) = crate::fscalls::openat(
            std::os::fd::AsFd::as_fd(uploads),
            name,
            dir_flags,
            rustix::fs::Mode::empty(),
        ) else {
            continue;
        };
        let old = statat(&sub, COMPLETED, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| meta::mtime(&st) <= cutoff);
        if old
            && unlinkat(&sub, COMPLETED, AtFlags::empty()).is_ok()
            && unlinkat(uploads, name, AtFlags::REMOVEDIR).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// When each bucket's completion records were last purged by this
/// process: at most once a minute, so a completion rarely reads the
/// uploads directory.
#[derive(Default)]
pub(crate) struct Purges(std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>);

impl Purges {
    /// Whether `bucket` is due for a purge; if so, marks it done now.
    fn due(&self, bucket: &str) -> bool {
        const EVERY: std::time::Duration = std::time::Duration::from_secs(60);
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = std::time::Instant::now();
        match last.get(bucket) {
            // The first completion a process makes in a bucket only starts
            // the clock: the startup sweep has just purged.
            None => {
                last.insert(bucket.to_string(), now);
                false
            }
            Some(t) if now.duration_since(*t) < EVERY => false,
            Some(_) => {
                last.insert(bucket.to_string(), now);
                true
            }
        }
    }
}

/// S3's multipart ETag: the MD5 of the parts' binary MD5s, then `-N`. A
/// part ETag that is not an MD5 (the fast policy's) enters as its text.
fn multipart_etag<'a>(etags: impl Iterator<Item = &'a str>, count: usize) -> String {
    let mut md5_of_md5s = Md5::new();
    for etag in etags {
        let hex = unquote(etag);
        match decode_hex(hex) {
            Some(bytes) => md5_of_md5s.update(bytes),
            None => md5_of_md5s.update(hex.as_bytes()),
        }
    }
    meta::quoted_hex(&md5_of_md5s.finalize(), &format!("-{count}"))
}

/// The parts a completion lists, in ascending order. A part number listed
/// several times in a row counts once, with its last entry: a client that
/// re-sent a part lists each upload's ETag, and the part that finished last
/// is the one kept (s3-tests `test_multipart_resend_first_finishes_last`).
/// A number lower than the one before is InvalidPartOrder.
/// Each comes with the index of its entry in `parts`.
fn listed_parts(parts: &[(u32, String)]) -> Result<Vec<(u32, &str, usize)>> {
    if parts.is_empty() {
        return Err(s3err!(
            InvalidArgument,
            "a multipart upload needs at least one part"
        ));
    }
    if parts.windows(2).any(|w| w[0].0 > w[1].0) {
        return Err(s3err!(
            InvalidPartOrder,
            "parts must be listed in ascending part-number order"
        ));
    }
    let mut out: Vec<(u32, &str, usize)> = Vec::with_capacity(parts.len());
    for (i, (n, etag)) in parts.iter().enumerate() {
        match out.last_mut() {
            Some(last) if last.0 == *n => *last = (*n, etag, i),
            _ => out.push((*n, etag, i)),
        }
    }
    Ok(out)
}

/// AWS's rules for a multipart upload's checksum: SHA algorithms compose
/// only, CRC64NVME combines only.
fn check_multipart_type(c: &ChecksumRequest) -> Result<()> {
    let ok = match c.kind {
        ChecksumType::FullObject => c.algorithm.is_crc(),
        ChecksumType::Composite => c.algorithm != ChecksumAlgorithm::Crc64Nvme,
    };
    if ok {
        Ok(())
    } else {
        Err(s3err!(
            InvalidRequest,
            "The {} checksum type cannot be used with the {} checksum algorithm.",
            c.kind.as_str(),
            c.algorithm.as_str().to_ascii_lowercase()
        ))
    }
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(etag: EtagPolicy) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig {
            etag,
            durability: Durability::None,
        };
        let s = Store::open(dir.path(), config).unwrap();
        s.create_bucket("bkt").unwrap();
        (dir, s)
    }

    fn read_all(s: &Store, key: &str) -> Vec<u8> {
        let mut v = Vec::new();
        s.get_object("bkt", key, None)
            .unwrap()
            .body
            .read_to_end(&mut v)
            .unwrap();
        v
    }

    #[test]
    fn complete_concatenates_parts_in_order() {
        for policy in [EtagPolicy::Md5, EtagPolicy::Fast] {
            let (_d, s) = store(policy);
            let mut opts = PutOptions {
                content_type: Some("text/plain".into()),
                ..Default::default()
            };
            opts.metadata.insert("k".into(), "v".into());
            let id = s.create_multipart_upload("bkt", "dir/obj", &opts).unwrap();
            let p1 = vec![1u8; MIN_PART_SIZE as usize];
            let p2 = b"tail".to_vec();
            // Uploaded out of order, and part 1 twice: the last upload wins.
            let e2 = s
                .upload_part("bkt", "dir/obj", &id, 2, PutBody::Bytes(&p2))
                .unwrap();
            s.upload_part("bkt", "dir/obj", &id, 1, PutBody::Bytes(b"junk"))
                .unwrap();
            let e1 = s
                .upload_part("bkt", "dir/obj", &id, 1, PutBody::Bytes(&p1))
                .unwrap();
            let parts = s.list_parts("bkt", "dir/obj", &id).unwrap();
            assert_eq!(
                parts.iter().map(|p| p.part_number).collect::<Vec<_>>(),
                [1, 2]
            );
            assert_eq!(
                s.list_multipart_uploads("bkt", "").unwrap()[0].upload_id,
                id
            );
            // Not visible before completion.
            assert!(s.head_object("bkt", "dir/obj").is_err());
            let info = s
                .complete_multipart_upload("bkt", "dir/obj", &id, &[(1, e1), (2, e2)])
                .unwrap();
            assert!(info.etag.ends_with("-2\""), "{}", info.etag);
            assert_eq!(info.content_type.as_deref(), Some("text/plain"));
            assert_eq!(info.metadata.get("k").map(String::as_str), Some("v"));
            let mut want = p1.clone();
            want.extend_from_slice(&p2);
            assert_eq!(read_all(&s, "dir/obj"), want);
            assert!(s.list_multipart_uploads("bkt", "").unwrap().is_empty());
            // The staging area is gone, so the bucket can be deleted once empty.
            s.delete_object("bkt", "dir/obj").unwrap();
            s.delete_bucket("bkt").unwrap();
        }
    }

    #[test]
    fn md5_multipart_etag_matches_s3() {
        let (_d, s) = store(EtagPolicy::Md5);
        let id = s
            .create_multipart_upload("bkt", "o", &PutOptions::default())
            .unwrap();
        let e1 = s
            .upload_part("bkt", "o", &id, 1, PutBody::Bytes(b"abc"))
            .unwrap();
        assert_eq!(e1, "\"900150983cd24fb0d6963f7d28e17f72\"");
        let info = s
            .complete_multipart_upload("bkt", "o", &id, &[(1, e1)])
            .unwrap();
        // md5(md5("abc")) over the binary digest, then "-1".
        let mut h = Md5::new();
        h.update(decode_hex("900150983cd24fb0d6963f7d28e17f72").unwrap());
        let want = format!("\"{}-1\"", meta::md5_etag(&h.finalize()).trim_matches('"'));
        assert_eq!(info.etag, want);
    }

    #[test]
    fn errors() {
        let (_d, s) = store(EtagPolicy::Md5);
        let id = s
            .create_multipart_upload("bkt", "o", &PutOptions::default())
            .unwrap();
        let e1 = s
            .upload_part("bkt", "o", &id, 1, PutBody::Bytes(b"small"))
            .unwrap();
        let e2 = s
            .upload_part("bkt", "o", &id, 2, PutBody::Bytes(b"x"))
            .unwrap();
        let code = |r: Result<ObjectInfo>| r.unwrap_err().code;
        assert_eq!(
            code(s.complete_multipart_upload("bkt", "o", &id, &[(2, e2.clone()), (1, e1.clone())])),
            ErrorCode::InvalidPartOrder
        );
        assert_eq!(
            code(s.complete_multipart_upload("bkt", "o", &id, &[(1, e1.clone()), (2, e2.clone())])),
            ErrorCode::EntityTooSmall
        );
        assert_eq!(
            code(s.complete_multipart_upload("bkt", "o", &id, &[(1, e2.clone())])),
            ErrorCode::InvalidPart
        );
        assert_eq!(
            code(s.complete_multipart_upload("bkt", "o", &id, &[(3, e2.clone())])),
            ErrorCode::InvalidPart
        );
        assert_eq!(
            code(s.complete_multipart_upload("bkt", "other", &id, &[(1, e1.clone())])),
            ErrorCode::NoSuchUpload
        );
        assert_eq!(
            code(s.complete_multipart_upload("bkt", "o", "../../etc", &[(1, e1.clone())])),
            ErrorCode::NoSuchUpload
        );
        assert_eq!(
            s.upload_part("bkt", "o", &id, 0, PutBody::Bytes(b""))
                .unwrap_err()
                .code,
            ErrorCode::InvalidArgument
        );
        s.abort_multipart_upload("bkt", "o", &id).unwrap();
        assert_eq!(
            s.abort_multipart_upload("bkt", "o", &id).unwrap_err().code,
            ErrorCode::NoSuchUpload
        );
        assert!(s
            .list_objects("bkt", &ListRequest::default())
            .unwrap()
            .objects
            .is_empty());
        s.delete_bucket("bkt").unwrap();
    }
}
