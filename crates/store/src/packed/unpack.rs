//! The way back to files: a packed bucket's objects written out as
//! ordinary files, and a check of what its packs hold.

use super::*;

/// A key and its newest record.
type Keyed = (String, Entry);

/// What an unpack did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Unpacked {
    /// Objects written as files.
    pub written: u64,
    /// Keys whose records are damaged: not written (`s3hpc bucket check`
    /// says where), the others still are.
    pub damaged: Vec<String>,
}

impl Store {
    /// The packed objects of `bucket` under `prefix`, as the packs hold
    /// them now.
    fn packed_objects(&self, bucket: &str, prefix: &str) -> Result<(Arc<PackSet>, Vec<Keyed>)> {
        let set = self
            .packed(bucket)
            .ok_or_else(|| s3err!(InvalidRequest, "bucket {bucket:?} is not packed"))?;
        set.refresh(Instant::now())?;
        let entries = set
            .index
            .read()
            .unwrap()
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter(|(_, e)| e.kind == Kind::Object)
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect();
        Ok((set, entries))
    }

    /// Copies a packed bucket's objects under `prefix` out as ordinary
    /// files: into directory `to` (made as needed, keys as paths), or, with
    /// no `to`, into the bucket itself, where they become plain objects.
    /// A damaged record is skipped (and named); any other failure stops
    /// the unpack, its message saying how many objects were written.
    pub fn unpack(
        &self,
        bucket: &str,
        prefix: &str,
        to: Option<&std::path::Path>,
    ) -> Result<Unpacked> {
        let (set, entries) = self.packed_objects(bucket, prefix)?;
        let mut done = Unpacked::default();
        for (key, e) in entries {
            match self.unpack_one(&set, bucket, &key, &e, to) {
                Ok(true) => done.written += 1,
                Ok(false) => {}
                Err(err) if err.code == ErrorCode::InternalError => done.damaged.push(key),
                Err(mut err) => {
                    err.message +=
                        &format!(" (stopped after writing {} objects as files)", done.written);
                    return Err(err);
                }
            }
        }
        Ok(done)
    }

    /// [`Store::unpack`] of one key; false if a newer write stands.
    fn unpack_one(
        &self,
        set: &Arc<PackSet>,
        bucket: &str,
        key: &str,
        e: &Entry,
        to: Option<&std::path::Path>,
    ) -> Result<bool> {
        let Some(dir) = to else {
            return self.unpack_key(set, bucket, key, Some(e));
        };
        let path = dir.join(key);
        if !path.starts_with(dir) || key.split('/').any(|c| c == "..") {
            return Err(s3err!(InvalidArgument, "key {key:?} would leave {dir:?}"));
        }
        let data = self.read_record(set, bucket, key, e)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| S3Error::from_io(&err, &parent.display().to_string()))?;
        }
        std::fs::write(&path, &data)
            .map_err(|err| S3Error::from_io(&err, &path.display().to_string()))?;
        Ok(true)
    }

    /// Makes the packed object at `key` the plain file at its path, with a
    /// record that says so (an object given permissions of its own, or
    /// unpacked). Returns false if the key's newest record is not the
    /// object `seen` (when given): a newer write stands.
    pub(super) fn unpack_key(
        &self,
        set: &Arc<PackSet>,
        bucket: &str,
        key: &str,
        seen: Option<&Entry>,
    ) -> Result<bool> {
        let _lock = self.lock_key(set, key)?;
        let Some(e) = self.entry(set, key)? else {
            return Ok(false);
        };
        if e.kind != Kind::Object || seen.is_some_and(|s| (s.pack, s.at) != (e.pack, e.at)) {
            return Ok(false);
        }
        let data = self.read_record(set, bucket, key, &e)?;
        let stored = StoredMeta::decode(&e.meta);
        self.write_object_if(
            bucket,
            key,
            Source::Body(PutBody::Bytes(&data)),
            stored,
            Checks::default(),
            &WriteCondition::Always,
        )?;
        let stamp = stamp_after(Some(e.header.stamp));
        self.append(set, Kind::Plain, key, &[], &[], stamp)?;
        Ok(true)
    }

    /// Before a permission change on `key`: a packed object becomes a
    /// file of its own, which the change then applies to.
    pub(crate) fn unpack_for_acl(&self, bucket: &str, key: &str) -> Result<()> {
        if let Some(set) = self.packed(bucket) {
            self.unpack_key(&set, bucket, key, None)?;
        }
        Ok(())
    }

    /// Damage the packs of `bucket` hold, as (pack, byte offset), after
    /// reading them all; and how many objects they hold.
    pub fn check_packs(&self, bucket: &str) -> Result<(u64, Vec<(String, u64)>)> {
        let set = self
            .packed(bucket)
            .ok_or_else(|| s3err!(InvalidRequest, "bucket {bucket:?} is not packed"))?;
        // A check reports damage as it finds it, without waiting for it to last.
        set.refresh_with(Instant::now(), Duration::ZERO)?;
        let (set, entries) = self.packed_objects(bucket, "")?;
        let mut damage = set.damage();
        for (key, e) in &entries {
            if self.read_record(&set, bucket, key, e).is_err() {
                let name = set
                    .pack(e.pack)
                    .map_or_else(String::new, |p| p.name.clone());
                damage.push((name, e.at));
            }
        }
        Ok((entries.len() as u64, damage))
    }
}
