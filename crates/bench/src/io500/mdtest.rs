//! One mdtest engine for mdtest-easy and mdtest-hard, parameterised by the
//! layout: write (create [+ write] + close), stat, read (hard) and delete.

use super::phase::{finish, RankStats};
use super::{Group, Io500Params, PhaseResult};
use crate::comm::Comm;
use crate::pattern::Pattern;
use crate::storage::StorageApi;
use std::fmt::Write as _;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MdLayout {
    /// `-u -L`: a directory per rank, empty files.
    Easy,
    /// One shared directory, 3901-byte files (`-w 3901 -e 3901`).
    Hard,
}

pub const HARD_FILE_SIZE: usize = 3901;

/// The operation of a phase after the write phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MdOp {
    Stat,
    Read,
    Delete,
}

impl MdLayout {
    pub fn top(self) -> &'static str {
        match self {
            MdLayout::Easy => "mdtest-easy",
            MdLayout::Hard => "mdtest-hard",
        }
    }
    fn dir(self, owner: usize) -> String {
        match self {
            MdLayout::Easy => format!("mdtest-easy/test-dir.0-0/mdtest_tree.{owner}"),
            MdLayout::Hard => "mdtest-hard/test-dir.0-0/mdtest_tree.0".to_string(),
        }
    }
    pub fn file_size(self) -> usize {
        match self {
            MdLayout::Easy => 0,
            MdLayout::Hard => HARD_FILE_SIZE,
        }
    }
    fn phase_name(self, op: Option<MdOp>) -> &'static str {
        match (self, op) {
            (MdLayout::Easy, None) => "mdtest-easy-write",
            (MdLayout::Easy, Some(MdOp::Stat)) => "mdtest-easy-stat",
            (MdLayout::Easy, Some(MdOp::Read)) => "mdtest-easy-read",
            (MdLayout::Easy, Some(MdOp::Delete)) => "mdtest-easy-delete",
            (MdLayout::Hard, None) => "mdtest-hard-write",
            (MdLayout::Hard, Some(MdOp::Stat)) => "mdtest-hard-stat",
            (MdLayout::Hard, Some(MdOp::Read)) => "mdtest-hard-read",
            (MdLayout::Hard, Some(MdOp::Delete)) => "mdtest-hard-delete",
        }
    }
}

/// The stamp id of file `i` of rank `owner`.
fn file_id(owner: usize, i: u64) -> u64 {
    (1 << 62) | ((owner as u64) << 32) | i
}

/// `<dir>/file.mdtest.<owner>.<i>`, rebuilt in place: no allocation per op.
pub struct Names {
    buf: String,
    base: usize,
}

impl Names {
    pub fn new(layout: MdLayout, owner: usize) -> Names {
        let mut buf = layout.dir(owner);
        let _ = write!(buf, "/file.mdtest.{owner}.");
        let base = buf.len();
        buf.reserve(24);
        Names { buf, base }
    }
    pub fn at(&mut self, i: u64) -> &str {
        self.buf.truncate(self.base);
        let _ = write!(self.buf, "{i}");
        &self.buf
    }
}

/// Untimed: the directory tree mdtest builds before its file phases.
pub fn make_dirs(
    comm: &dyn Comm,
    storage: &dyn StorageApi,
    layout: MdLayout,
) -> anyhow::Result<()> {
    let top = layout.top();
    let mut res = Ok(());
    if comm.rank() == 0 {
        res = (|| {
            storage.mkdir(top)?;
            storage.mkdir(&format!("{top}/test-dir.0-0"))?;
            storage.mkdir(&layout.dir(0))
        })();
    }
    comm.barrier();
    if layout == MdLayout::Easy && comm.rank() != 0 && res.is_ok() {
        res = storage.mkdir(&layout.dir(comm.rank()));
    }
    let failed = comm.allreduce_max(res.is_err() as u64);
    res?;
    anyhow::ensure!(failed == 0, "making the {top} tree failed on another rank");
    Ok(())
}

/// The write phase (create, write, close per file; stonewalled). Returns the
/// result (rank 0) and the file count per rank after wear-out.
pub fn write(
    comm: &dyn Comm,
    storage: &dyn StorageApi,
    p: &Io500Params,
    layout: MdLayout,
    cap_files: u64,
) -> anyhow::Result<(Option<PhaseResult>, u64)> {
    let rank = comm.rank();
    let size = layout.file_size();
    let mut names = Names::new(layout, rank);
    let mut buf = p.pattern.buffer(size);
    let mut st = RankStats::new(&p.stop);

    comm.barrier();
    let start = Instant::now();
    let count = st.stonewalled(comm, start, start + p.stonewall, cap_files, |i| {
        let path = names.at(i);
        let mut h = storage.create(path)?;
        if size > 0 {
            Pattern::stamp(&mut buf, file_id(rank, i), 0);
            h.write_at(0, &buf)?;
        }
        h.close()
    });
    st.elapsed = start.elapsed();
    st.bytes = st.ops * size as u64;
    let mut res = finish(comm, layout.phase_name(None), Group::Metadata, st)?;
    if let Some(r) = res.as_mut() {
        r.check_stonewall(p.stonewall, cap_files.saturating_mul(comm.size() as u64));
    }
    Ok((res, count))
}

/// stat, read or delete `count` files of rank (r+shift) mod N (mdtest
/// `-N shift`).
pub fn run(
    comm: &dyn Comm,
    storage: &dyn StorageApi,
    p: &Io500Params,
    layout: MdLayout,
    op: MdOp,
    count: u64,
    shift: usize,
) -> anyhow::Result<Option<PhaseResult>> {
    let owner = (comm.rank() + shift) % comm.size();
    let size = layout.file_size();
    let mut names = Names::new(layout, owner);
    let mut buf = p.pattern.buffer(size);
    let mut expected = p.pattern.buffer(size);
    let mut st = RankStats::new(&p.stop);

    comm.barrier();
    let start = Instant::now();
    st.timed(0..count, |i| {
        let path = names.at(i);
        match op {
            MdOp::Stat => {
                let s = storage.stat(path)?;
                anyhow::ensure!(
                    s.size == size as u64,
                    "stat {path}: size {} but {size} bytes were written",
                    s.size
                );
                Ok(())
            }
            MdOp::Read => {
                let mut h = storage.open(path, false)?;
                h.read_at(0, &mut buf)?;
                h.close()?;
                Pattern::verify(&buf, &mut expected, file_id(owner, i), 0, path)
                    .map_err(anyhow::Error::msg)
            }
            MdOp::Delete => storage.delete(path),
        }
    });
    st.elapsed = start.elapsed();
    st.bytes = if op == MdOp::Read {
        st.ops * size as u64
    } else {
        0
    };
    finish(comm, layout.phase_name(Some(op)), Group::Metadata, st)
}
