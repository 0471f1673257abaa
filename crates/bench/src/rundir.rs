//! The run directory: the only place the bench writes, and the only thing it
//! removes. Pointed at a non-empty directory it refuses unless allowed, and
//! even then works in a fresh, uniquely named subdirectory.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

pub struct RunDir {
    /// `<dir>/s3hpc-io500-<pid>-<unixtime>`, created by us.
    pub path: PathBuf,
    parent: PathBuf,
    /// Whether `parent` did not exist before (then it is removed too, if empty).
    created_parent: bool,
}

impl RunDir {
    pub fn create(dir: &Path, allow_nonempty: bool) -> anyhow::Result<RunDir> {
        // `metadata` follows a symlink: pointing --dir at a link to a
        // directory is fine, since only our own subdirectory is ever removed.
        let created_parent = match std::fs::metadata(dir) {
            Ok(m) if !m.is_dir() => bail!("{} exists and is not a directory", dir.display()),
            Ok(_) => {
                let nonempty = std::fs::read_dir(dir)
                    .with_context(|| format!("reading {}", dir.display()))?
                    .next()
                    .is_some();
                if nonempty && !allow_nonempty {
                    bail!(
                        "{} is not empty; s3hpc only writes into an empty directory (or one it creates). \
                         Pass --allow-nonempty to work in a fresh subdirectory of it; nothing else in it is touched.",
                        dir.display()
                    );
                }
                false
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                true
            }
            Err(e) => return Err(e).with_context(|| format!("checking {}", dir.display())),
        };
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let path = dir.join(format!("s3hpc-io500-{}-{unix}", std::process::id()));
        // create_dir (not _all) fails if it exists: the directory is ours alone.
        std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(RunDir {
            path,
            parent: dir.to_path_buf(),
            created_parent,
        })
    }

    /// Removes the run directory, and the parent if we created it and it is
    /// empty now.
    pub fn remove(self) -> anyhow::Result<()> {
        std::fs::remove_dir_all(&self.path)
            .with_context(|| format!("removing {}", self.path.display()))?;
        if self.created_parent {
            // Only if empty: remove_dir never deletes contents.
            let _ = std::fs::remove_dir(&self.parent);
        }
        Ok(())
    }
}

/// Whether `path` is on ext4 mounted without a journal. There every inode
/// allocation scans past the inodes freed in its block group in the last
/// one to six minutes (`recently_deleted` in fs/ext4/ialloc.c, for
/// journal-less mounts only): a backend that runs after another's deletes
/// pays for them, and mdtest-hard over S3 (a 0-byte PUT, then an
/// overwriting one: two inodes made and one freed per file, against
/// POSIX's one) pays twice. Asking for fresh block groups (`chattr +T` on
/// the run directory) did not help: ext4's Orlov allocator puts a new
/// top-level directory where inodes are free, which after a run's deletes
/// is the group that just freed them.
pub fn ext4_without_journal(path: &Path) -> bool {
    if fs_type(path) != "ext4" {
        return false;
    }
    let Ok(st) = rustix::fs::stat(path) else {
        return false;
    };
    let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    // /sys/fs/ext4/<device>/journal_task names the journal's thread, or
    // says `<none>`; the device's name comes from /sys/dev/block.
    let Ok(link) = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")) else {
        return false;
    };
    let Some(dev) = link.file_name() else {
        return false;
    };
    std::fs::read_to_string(Path::new("/sys/fs/ext4").join(dev).join("journal_task"))
        .is_ok_and(|t| t.trim() == "<none>")
}

/// Bytes available to us on the file system holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Inodes available to us on the file system holding `path`.
pub fn free_inodes(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    // Some file systems (btrfs) report 0: no fixed inode table.
    (s.f_files > 0).then_some(s.f_favail)
}

/// The file system's type, from its magic number (cheap: one statfs).
pub fn fs_type(path: &Path) -> String {
    let Ok(s) = rustix::fs::statfs(path) else {
        return "unknown".into();
    };
    let magic = s.f_type as u64;
    let name = match magic {
        0x0102_1994 => "tmpfs",
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x794C_7630 => "overlayfs",
        0x6969 => "nfs",
        0x0BD0_0BD0 => "lustre",
        0x4750_4653 => "gpfs",
        0x2FC1_2FC1 => "zfs",
        0x1983_0326 => "beegfs",
        0x0027_E0EB => "cgroup",
        0x6573_5546 => "fuse",
        0x0000_9FA0 => "proc",
        _ => return format!("0x{magic:x}"),
    };
    name.into()
}

/// `MemAvailable` from /proc/meminfo, in bytes: tmpfs data lives in RAM.
pub fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_nonempty_and_removes_only_its_own() {
        let t = tempfile::tempdir().unwrap();
        let keep = t.path().join("precious");
        std::fs::write(&keep, b"x").unwrap();
        let err = RunDir::create(t.path(), false).err().unwrap().to_string();
        assert!(err.contains("not empty"), "{err}");
        let rd = RunDir::create(t.path(), true).unwrap();
        std::fs::write(rd.path.join("data"), b"y").unwrap();
        let run = rd.path.clone();
        rd.remove().unwrap();
        assert!(!run.exists());
        assert!(keep.exists());
        assert!(t.path().exists());
    }

    #[test]
    fn removes_a_parent_it_created() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("new/sub");
        let rd = RunDir::create(&dir, false).unwrap();
        rd.remove().unwrap();
        assert!(!dir.exists());
        // Only the directory it was pointed at; intermediate ones are left.
        assert!(t.path().join("new").exists());
    }
}
