//! One IOR engine for ior-easy and ior-hard, parameterised by the layout.

use super::phase::{finish, RankStats};
use super::{Group, Io500Params, PhaseResult};
use crate::comm::Comm;
use crate::pattern::Pattern;
use crate::storage::StorageApi;
use std::time::Instant;

/// Where a rank's segments go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IorLayout {
    /// File per process (`-F`), `-t 2m`: segment s of rank r at s·2 MiB of
    /// `ior-easy/ior_file_easy.%08d`.
    Easy,
    /// One shared file, `-t 47008 -b 47008`: segment s of rank r at
    /// (s·N + r)·47008 of `ior-hard/file`.
    Hard,
}

pub const EASY_TRANSFER: usize = 2 << 20;
pub const HARD_TRANSFER: usize = 47008;
/// The stamp id of the shared ior-hard file (ior-easy uses the owner rank).
const HARD_FILE_ID: u64 = 0x1040_0000_0000_0000;

impl IorLayout {
    pub fn dir(self) -> &'static str {
        match self {
            IorLayout::Easy => "ior-easy",
            IorLayout::Hard => "ior-hard",
        }
    }
    pub fn transfer(self) -> usize {
        match self {
            IorLayout::Easy => EASY_TRANSFER,
            IorLayout::Hard => HARD_TRANSFER,
        }
    }
    fn path(self, owner: usize) -> String {
        match self {
            IorLayout::Easy => format!("ior-easy/ior_file_easy.{owner:08}"),
            IorLayout::Hard => "ior-hard/file".to_string(),
        }
    }
    fn file_id(self, owner: usize) -> u64 {
        match self {
            IorLayout::Easy => owner as u64,
            IorLayout::Hard => HARD_FILE_ID,
        }
    }
    fn offset(self, owner: usize, ranks: usize, segment: u64) -> u64 {
        let t = self.transfer() as u64;
        match self {
            IorLayout::Easy => segment * t,
            IorLayout::Hard => (segment * ranks as u64 + owner as u64) * t,
        }
    }
    fn names(self) -> (&'static str, &'static str) {
        match self {
            IorLayout::Easy => ("ior-easy-write", "ior-easy-read"),
            IorLayout::Hard => ("ior-hard-write", "ior-hard-read"),
        }
    }
    fn shared(self) -> bool {
        self == IorLayout::Hard
    }
}

/// The write phase. Returns the result (rank 0) and the segment count per
/// rank after wear-out, which the read phase reads back.
pub fn write(
    comm: &dyn Comm,
    storage: &dyn StorageApi,
    p: &Io500Params,
    layout: IorLayout,
    cap_segments: u64,
) -> anyhow::Result<(Option<PhaseResult>, u64)> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let path = layout.path(rank);
    let id = layout.file_id(rank);
    let mut buf = p.pattern.buffer(layout.transfer());
    let mut st = RankStats::new(&p.stop);

    comm.barrier();
    let start = Instant::now();
    let deadline = start + p.stonewall;
    // A shared file is created by rank 0 before the others open it (IOR).
    let mut handle = None;
    if !layout.shared() || rank == 0 {
        match storage.create(&path) {
            Ok(h) => handle = Some(h),
            Err(e) => st.fail(e),
        }
    }
    if layout.shared() {
        comm.barrier();
        if rank != 0 {
            match storage.open(&path, true) {
                Ok(h) => handle = Some(h),
                Err(e) => st.fail(e),
            }
        }
    }
    let count = st.stonewalled(comm, start, deadline, cap_segments, |seg| {
        let h = handle.as_mut().expect("open file");
        let off = layout.offset(rank, ranks, seg);
        Pattern::stamp(&mut buf, id, off);
        h.write_at(off, &buf)
    });
    if let Some(h) = handle {
        if let Err(e) = h.close() {
            st.fail(e.context(format!("closing {path}")));
        }
    }
    st.elapsed = start.elapsed();
    st.bytes = st.ops * layout.transfer() as u64;
    let mut res = finish(comm, layout.names().0, Group::Bandwidth, st)?;
    if let Some(r) = res.as_mut() {
        r.check_stonewall(p.stonewall, cap_segments.saturating_mul(ranks as u64));
    }
    Ok((res, count))
}

/// The read phase: rank r reads, and verifies, what rank (r+shift) mod N
/// wrote (IOR `-C -Q shift`), `count` segments.
pub fn read(
    comm: &dyn Comm,
    storage: &dyn StorageApi,
    p: &Io500Params,
    layout: IorLayout,
    count: u64,
    shift: usize,
) -> anyhow::Result<Option<PhaseResult>> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let owner = (rank + shift) % ranks;
    let path = layout.path(owner);
    let id = layout.file_id(owner);
    let mut buf = p.pattern.buffer(layout.transfer());
    let mut expected = p.pattern.buffer(layout.transfer());
    let mut st = RankStats::new(&p.stop);

    comm.barrier();
    let start = Instant::now();
    match storage.open(&path, false) {
        Ok(mut h) => {
            st.timed(0..count, |seg| {
                let off = layout.offset(owner, ranks, seg);
                h.read_at(off, &mut buf)?;
                Pattern::verify(&buf, &mut expected, id, off, &path).map_err(anyhow::Error::msg)
            });
            if let Err(e) = h.close() {
                st.fail(e);
            }
        }
        Err(e) => st.fail(e.context(format!("opening {path} for reading"))),
    }
    st.elapsed = start.elapsed();
    st.bytes = st.ops * layout.transfer() as u64;
    finish(comm, layout.names().1, Group::Bandwidth, st)
}
