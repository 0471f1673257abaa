//! Keys that are also prefixes of other keys.
//!
//! A key is a plain file until another key needs its name as a directory
//! (`a/b` exists, `a/b/c` is written). Then the file moves into a new
//! directory of the same name as its hidden self-entry (`a/b/.s3hpc-self`),
//! without a moment where readers find neither:
//!
//! 1. make a hidden directory `T` beside the file and hard-link the file into
//!    it as `T/.s3hpc-self` (the same inode: no data moves);
//! 2. `renameat2(T, a/b, RENAME_EXCHANGE)`: in one step `a/b` becomes the
//!    directory holding the object, and `T` the old name of the file;
//! 3. unlink `T`.
//!
//! A reader sees the file or the directory with the self-entry, never
//! neither. Where the file system has no `RENAME_EXCHANGE` (NFS, some FUSE
//! file systems), step 2 becomes unlink `a/b` plus rename `T` to `a/b`, and
//! between those two calls `a/b` is missing. So there the nest first makes a
//! marker beside the name, `.s3hpc-tmp.nest.HASH` (a hash of `b`), and
//! removes it after the rename; a GET or HEAD that misses on a shared file
//! system looks for that marker and retries only while it is there
//! (`Store::retry_shared`). A real miss costs two more lookups, no sleep.
//!
//! Lookups of such keys cost nothing on the common path: GET and HEAD try the
//! plain file first and look for the self-entry only when they find a
//! directory there; DELETE only when unlink says EISDIR.

use crate::fscalls::{linkat, mkdirat, openat, renameat, renameat_with, statat, unlinkat};
use crate::names::SELF_ENTRY;
use crate::*;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// How long a reader that misses a key waits while a nest of it is marked.
/// A nest takes milliseconds; a killed one leaves its marker until the
/// sweep takes it, and until then a real miss of that name costs this.
pub(crate) const NEST_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// See [`Store::after_miss`].
pub(crate) enum Miss {
    /// A nest of the name is under way: look again after a while.
    Marked,
    /// The name is there now: look again at once.
    Back,
    /// Nothing was there while no nest was under way.
    Real,
}

impl Store {
    /// Some directory of `rel` (a key's directory, below the bucket) is a
    /// plain object. Moves each such object into a directory of its name,
    /// so that the key's directories can be made.
    pub(crate) fn make_room(&self, bucket: &str, key: &str, rel: &str) -> Result<()> {
        let mut end = bucket.len();
        while end < rel.len() {
            let next = rel[end + 1..].find('/').map_or(rel.len(), |i| end + 1 + i);
            let (parent, name) = (&rel[..end], &rel[end + 1..next]);
            let st = match self.in_dir(parent, |p| Ok(statat(p, name, AtFlags::SYMLINK_NOFOLLOW)?))
            {
                Ok(st) => st,
                // Missing here (or above: pruned meanwhile): the caller makes
                // the directories and comes back if it must.
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(()),
                Err(e) => return Err(self.write_dir_error(bucket, key, e)),
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {}
                FileType::RegularFile => {
                    self.in_dir(parent, |p| self.nest(p, name))
                        .map_err(|e| S3Error::from_io(&e, &format!("{bucket}/{key}")))?;
                    return Ok(());
                }
                // A symlink or a special file: not an object, never replaced.
                _ => {
                    return Err(self.write_dir_error(
                        bucket,
                        key,
                        io::Error::from_raw_os_error(libc::ENOTDIR),
                    ))
                }
            }
            end = next;
        }
        Ok(())
    }

    /// Whether a nest can leave `name` missing for a moment here, so that it
    /// marks itself for readers (see the module documentation).
    pub(crate) fn nest_gaps(&self) -> bool {
        self.profile.shared && !self.profile.rename_exchange
    }

    /// What a miss of entry `name` of directory `rel` was, where a nest can
    /// leave a gap: looked up in that order, the nest's marker (then the
    /// miss may be its gap), and `name` once more (a nest that ended since
    /// the miss left it there).
    pub(crate) fn after_miss(&self, rel: &str, name: &str) -> Miss {
        let Ok(d) = self.dirs.get(self.root_fd.as_fd(), rel) else {
            return Miss::Real;
        };
        let at = |n: &str| statat(&*d, n, AtFlags::SYMLINK_NOFOLLOW).is_ok();
        if at(&nest_marker(name)) {
            Miss::Marked
        } else if at(name) {
            Miss::Back
        } else {
            Miss::Real
        }
    }

    /// Turns the plain object `name` of directory `parent` into a directory
    /// holding it as its self-entry (see the module documentation), marked
    /// for readers where that leaves a gap. Whatever raced with it, the
    /// caller resolves the path again afterwards.
    fn nest(&self, parent: BorrowedFd<'_>, name: &str) -> io::Result<()> {
        if !self.nest_gaps() {
            return self.nest_steps(parent, name);
        }
        let marker = nest_marker(name);
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
        // Only the nest that made the marker removes it: one that finds it
        // made runs beside another nest, or after one that was killed (the
        // sweep takes that marker; until then misses of `name` are slow).
        // Locked as a PUT's temporary is, so that no sweep elsewhere takes
        // it while the nest runs.
        let owned = match openat(
            parent,
            marker.as_str(),
            flags,
            Mode::from_bits_truncate(0o600),
        ) {
            Ok(fd) => {
                if self.profile.fcntl_locks {
                    let _ = crate::probe::lock_file(fd.as_fd());
                }
                Some(fd)
            }
            Err(Errno::EXIST) => None,
            Err(e) => return Err(e.into()),
        };
        let done = self.nest_steps(parent, name);
        if owned.is_some() {
            let _ = unlinkat(parent, marker.as_str(), AtFlags::empty());
        }
        done
    }

    /// The steps of [`Store::nest`].
    fn nest_steps(&self, parent: BorrowedFd<'_>, name: &str) -> io::Result<()> {
        let mut tmp = String::new();
        self.temps.next(&mut tmp);
        mkdirat(parent, tmp.as_str(), Mode::from_bits_truncate(0o777))?;
        let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let cleanup = |t: &str| {
            if let Ok(d) = openat(parent, t, dir_flags, Mode::empty()) {
                let _ = unlinkat(&d, SELF_ENTRY, AtFlags::empty());
            }
            let _ = unlinkat(parent, t, AtFlags::REMOVEDIR);
        };
        let t = match openat(parent, tmp.as_str(), dir_flags, Mode::empty()) {
            Ok(t) => t,
            Err(e) => {
                cleanup(&tmp);
                return Err(e.into());
            }
        };
        let mut linked = true;
        match linkat(parent, name, &t, SELF_ENTRY, AtFlags::empty()) {
            Ok(()) => {}
            // Deleted or replaced by a directory meanwhile: nothing to move.
            Err(Errno::NOENT) => {
                cleanup(&tmp);
                return Ok(());
            }
            // No hard links here: move the file itself (readers then miss
            // the key until the directory is renamed into place).
            // EPERM is also what linking a directory gives: another writer
            // may have nested the object first.
            Err(Errno::PERM | Errno::OPNOTSUPP | Errno::MLINK) => {
                let still_file = statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
                if !still_file {
                    cleanup(&tmp);
                    return Ok(());
                }
                linked = false;
                if let Err(e) = renameat(parent, name, &t, SELF_ENTRY) {
                    cleanup(&tmp);
                    return Err(e.into());
                }
            }
            Err(e) => {
                cleanup(&tmp);
                return Err(e.into());
            }
        }
        // The version linked (a PUT may have replaced the one `make_room` saw).
        let st = match statat(&t, SELF_ENTRY, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => st,
            Ok(_) => {
                // A directory took the name between the check and the move:
                // put it back.
                let _ = renameat_with(&t, SELF_ENTRY, parent, name, RenameFlags::NOREPLACE);
                let _ = unlinkat(parent, tmp.as_str(), AtFlags::REMOVEDIR);
                return Ok(());
            }
            Err(e) => {
                cleanup(&tmp);
                return Err(e.into());
            }
        };
        let exchanged = if linked {
            // Another writer may have nested it since: then there is nothing
            // to do, and exchanging would hide that directory for a moment.
            match statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(now) if FileType::from_raw_mode(now.st_mode) != FileType::RegularFile => {
                    cleanup(&tmp);
                    return Ok(());
                }
                _ => {}
            }
            match self.profile.rename_exchange {
                true => renameat_with(parent, tmp.as_str(), parent, name, RenameFlags::EXCHANGE),
                // The probe saw it fail: no failed call here.
                false => Err(Errno::INVAL),
            }
        } else {
            Err(Errno::INVAL)
        };
        match exchanged {
            Ok(()) => self.after_exchange(parent, name, &tmp, &t, &st),
            Err(Errno::NOENT) => {
                // Deleted between the link and the exchange.
                cleanup(&tmp);
                Ok(())
            }
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                if linked {
                    match unlinkat(parent, name, AtFlags::empty()) {
                        Ok(()) | Err(Errno::NOENT) => {}
                        // Another writer nested it since the check above.
                        Err(Errno::ISDIR) => {
                            cleanup(&tmp);
                            return Ok(());
                        }
                        Err(e) => {
                            cleanup(&tmp);
                            return Err(e.into());
                        }
                    }
                }
                match renameat(parent, tmp.as_str(), parent, name) {
                    Ok(()) => Ok(()),
                    Err(_) => {
                        // Another writer made `name` meanwhile (a file or a
                        // directory): hand the object to a directory there,
                        // else give up the move.
                        if let Ok(d) = openat(parent, name, dir_flags, Mode::empty()) {
                            let _ = renameat_with(
                                &t,
                                SELF_ENTRY,
                                &d,
                                SELF_ENTRY,
                                RenameFlags::NOREPLACE,
                            );
                        }
                        cleanup(&tmp);
                        Ok(())
                    }
                }
            }
            Err(e) => {
                cleanup(&tmp);
                Err(e.into())
            }
        }
    }

    /// After the exchange, `tmp` holds what `name` was: normally the object's
    /// old name (a second link to the self-entry), which goes.
    fn after_exchange(
        &self,
        parent: BorrowedFd<'_>,
        name: &str,
        tmp: &str,
        t: &OwnedFd,
        st: &rustix::fs::Stat,
    ) -> io::Result<()> {
        let was = statat(parent, tmp, AtFlags::SYMLINK_NOFOLLOW)?;
        match FileType::from_raw_mode(was.st_mode) {
            FileType::Directory => {
                // Another writer made `name` a directory first: swap back and
                // drop ours (its link to the object is superfluous).
                renameat_with(parent, tmp, parent, name, RenameFlags::EXCHANGE)?;
                let _ = unlinkat(t, SELF_ENTRY, AtFlags::empty());
                let _ = unlinkat(parent, tmp, AtFlags::REMOVEDIR);
                Ok(())
            }
            FileType::RegularFile if was.st_ino != st.st_ino || was.st_dev != st.st_dev => {
                // A PUT replaced the object between the link and the
                // exchange: its version is the newer one and becomes the
                // self-entry.
                Ok(renameat(parent, tmp, t, SELF_ENTRY)?)
            }
            _ => Ok(unlinkat(parent, tmp, AtFlags::empty())?),
        }
    }
}

/// The name of the marker of a nest of `name`: a temporary's (hidden from
/// listings, reserved against keys, swept when old), of fixed length
/// whatever the length of `name`, the same on every node and build
/// (FNV-1a, not std's hasher, which may change between Rust releases).
fn nest_marker(name: &str) -> String {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}nest.{hash:016x}", crate::temp::TEMP_PREFIX)
}
