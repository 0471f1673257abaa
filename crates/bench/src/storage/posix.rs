//! The POSIX baseline: the file system directly, with `pwrite`/`pread` as
//! IOR's POSIX backend does.
//!
//! Paths resolve with `*at` calls against a directory descriptor of the root
//! (no path joining, so no allocation per op), like the engine does.

use super::{Entry, FileHandle, FileStat, Result, StorageApi};
use anyhow::Context;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use s3hpc_store::Durability;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub struct PosixStorage {
    root: PathBuf,
    root_fd: OwnedFd,
    durability: Durability,
}

impl PosixStorage {
    /// Opens `root`, which must exist.
    pub fn new(root: &Path, durability: Durability) -> Result<PosixStorage> {
        let root_fd = rustix::fs::open(
            root,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("opening {}", root.display()))?;
        Ok(PosixStorage {
            root: root.to_path_buf(),
            root_fd,
            durability,
        })
    }

    fn open_fd(&self, path: &str, flags: OFlags) -> Result<File> {
        let fd = rustix::fs::openat(
            &self.root_fd,
            rel(path),
            flags | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .with_context(|| format!("open {}", self.root.join(path).display()))?;
        Ok(File::from(fd))
    }
}

/// `*at` calls take `.` for the root itself.
fn rel(path: &str) -> &str {
    if path.is_empty() {
        "."
    } else {
        path
    }
}

fn to_stat(st: &rustix::fs::Stat) -> FileStat {
    FileStat {
        size: st.st_size as u64,
        mtime: SystemTime::UNIX_EPOCH + Duration::new(st.st_mtime as u64, st.st_mtime_nsec as u32),
    }
}

impl StorageApi for PosixStorage {
    fn api(&self) -> String {
        "posix".into()
    }
    fn transport(&self) -> &'static str {
        "posix"
    }

    fn create<'a>(&'a self, path: &'a str) -> Result<Box<dyn FileHandle + 'a>> {
        let file = self.open_fd(path, OFlags::CREATE | OFlags::WRONLY | OFlags::TRUNC)?;
        Ok(Box::new(PosixFile {
            file,
            path,
            fsync: self.durability == Durability::Fsync,
        }))
    }

    fn open<'a>(&'a self, path: &'a str, write: bool) -> Result<Box<dyn FileHandle + 'a>> {
        let mode = if write {
            OFlags::WRONLY
        } else {
            OFlags::RDONLY
        };
        let file = self.open_fd(path, mode)?;
        Ok(Box::new(PosixFile {
            file,
            path,
            fsync: write && self.durability == Durability::Fsync,
        }))
    }

    fn stat(&self, path: &str) -> Result<FileStat> {
        let st = rustix::fs::statat(&self.root_fd, rel(path), AtFlags::SYMLINK_NOFOLLOW)
            .with_context(|| format!("stat {path}"))?;
        Ok(to_stat(&st))
    }

    fn delete(&self, path: &str) -> Result<()> {
        rustix::fs::unlinkat(&self.root_fd, rel(path), AtFlags::empty())
            .with_context(|| format!("unlink {path}"))?;
        Ok(())
    }

    fn mkdir(&self, path: &str) -> Result<()> {
        match rustix::fs::mkdirat(&self.root_fd, rel(path), Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("mkdir {path}")),
        }
    }

    fn rmdir(&self, path: &str) -> Result<()> {
        rustix::fs::unlinkat(&self.root_fd, rel(path), AtFlags::REMOVEDIR)
            .with_context(|| format!("rmdir {path}"))?;
        Ok(())
    }

    fn list_dir(&self, dir: &str, visit: &mut dyn FnMut(Entry<'_>)) -> Result<()> {
        let fd = rustix::fs::openat(
            &self.root_fd,
            rel(dir),
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("opendir {dir}"))?;
        let entries = rustix::fs::Dir::read_from(&fd)?;
        for ent in entries {
            let ent = ent.with_context(|| format!("readdir {dir}"))?;
            let name = ent.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            let ft = ent.file_type();
            if ft == FileType::Directory {
                visit(Entry::Dir { name });
                continue;
            }
            // Like find/pfind: -newer and -size need a stat per file.
            let st = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .with_context(|| format!("stat {dir}/{name}"))?;
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => visit(Entry::Dir { name }),
                FileType::RegularFile => visit(Entry::File {
                    name,
                    stat: to_stat(&st),
                }),
                _ => {}
            }
        }
        Ok(())
    }

    fn remove_tree(&self, dir: &str) -> Result<()> {
        let path = self.root.join(dir);
        if !dir.is_empty() {
            return std::fs::remove_dir_all(&path)
                .with_context(|| format!("removing {}", path.display()));
        }
        for ent in std::fs::read_dir(&path)? {
            let ent = ent?;
            let p = ent.path();
            if ent.file_type()?.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            }
            .with_context(|| format!("removing {}", p.display()))?;
        }
        Ok(())
    }
}

struct PosixFile<'a> {
    file: File,
    path: &'a str,
    fsync: bool,
}

impl FileHandle for PosixFile<'_> {
    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.file
            .write_all_at(data, offset)
            .with_context(|| format!("write {} at {offset}", self.path))
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .with_context(|| format!("read {} bytes of {} at {offset}", buf.len(), self.path))
    }

    fn close(self: Box<Self>) -> Result<()> {
        if self.fsync {
            self.file
                .sync_all()
                .with_context(|| format!("fsync {}", self.path))?;
        }
        Ok(())
    }
}
