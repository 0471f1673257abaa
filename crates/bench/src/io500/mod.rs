//! The IO500 suite: its phases in the standard order, over one `StorageApi`
//! and one `Comm`.

pub mod find;
pub mod ior;
pub mod mdtest;
pub mod phase;
pub mod score;

use crate::comm::{run_threads, Comm};
use crate::latency::LatencySummary;
use crate::pattern::Pattern;
use crate::stop::Stop;
use crate::storage::StorageApi;
use ior::IorLayout;
use mdtest::{MdLayout, MdOp};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Which IO500 score a phase feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Group {
    Bandwidth,
    Metadata,
    /// Reported, not scored (timestamp).
    None,
}

/// One phase's outcome, over all ranks.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub name: &'static str,
    pub group: Group,
    /// GiB/s or kIOPS (see `unit`).
    pub value: f64,
    pub ops: u64,
    pub bytes: u64,
    /// Phase wall time, barrier to the slowest rank's end.
    pub seconds: f64,
    /// Ops done when the stonewall struck, and when (write phases).
    pub stonewall_ops: u64,
    pub stonewall_seconds: f64,
    pub latency: LatencySummary,
    pub valid: bool,
    /// Why a phase is not valid, and other remarks.
    pub notes: Vec<String>,
    /// find: files matched.
    pub matches: Option<u64>,
}

impl PhaseResult {
    pub fn empty(name: &'static str, group: Group) -> PhaseResult {
        PhaseResult {
            name,
            group,
            value: 0.0,
            ops: 0,
            bytes: 0,
            seconds: 0.0,
            stonewall_ops: 0,
            stonewall_seconds: 0.0,
            latency: LatencySummary::default(),
            valid: true,
            notes: Vec::new(),
            matches: None,
        }
    }

    /// IO500's rule: `GiB/s` when the name starts with 'i', else `kIOPS`.
    pub fn unit(&self) -> &'static str {
        if self.name.starts_with('i') {
            "GiB/s"
        } else {
            "kIOPS"
        }
    }

    pub fn scored(&self) -> bool {
        self.group != Group::None
    }

    /// IO500 marks a write phase that ran shorter than the stonewall invalid;
    /// here that happens when the per-rank cap stopped it.
    pub(crate) fn check_stonewall(&mut self, stonewall: Duration, cap_total: u64) {
        if self.seconds < stonewall.as_secs_f64() {
            self.valid = false;
            self.notes.push(format!(
                "ended after {:.3} s, before the {:.3} s stonewall, at the cap of {cap_total} ops; raise the cap",
                self.seconds,
                stonewall.as_secs_f64()
            ));
        }
    }
}

/// Per-rank limits, so that a run stays bounded in space and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Caps {
    pub ior_easy_bytes_per_rank: u64,
    pub ior_hard_segments_per_rank: u64,
    pub mdtest_easy_files_per_rank: u64,
    pub mdtest_hard_files_per_rank: u64,
}

impl Default for Caps {
    /// Sized so that a 2-core node with 24 GiB runs a 5 s stonewall before
    /// most caps strike, in the proportions of the phases' speeds (IO500's
    /// own limits, `-n 1000000` and 9920000m, are meant to be unreachable).
    /// The suite lowers them when the target file system has less room.
    fn default() -> Self {
        Caps {
            ior_easy_bytes_per_rank: 8 << 30,
            ior_hard_segments_per_rank: 50_000, // 2.2 GiB per rank
            mdtest_easy_files_per_rank: 1_000_000,
            mdtest_hard_files_per_rank: 400_000, // 1.5 GiB per rank
        }
    }
}

/// Caps given by hand: they stand as given, while the others are fitted to
/// the target's free space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CapOverrides {
    pub ior_easy_bytes_per_rank: Option<u64>,
    pub ior_hard_segments_per_rank: Option<u64>,
    pub mdtest_easy_files_per_rank: Option<u64>,
    pub mdtest_hard_files_per_rank: Option<u64>,
}

impl CapOverrides {
    /// Sets the caps given by hand.
    pub fn apply(&self, caps: &mut Caps) {
        let set = |cap: &mut u64, v: Option<u64>| *cap = v.unwrap_or(*cap);
        set(
            &mut caps.ior_easy_bytes_per_rank,
            self.ior_easy_bytes_per_rank,
        );
        set(
            &mut caps.ior_hard_segments_per_rank,
            self.ior_hard_segments_per_rank,
        );
        set(
            &mut caps.mdtest_easy_files_per_rank,
            self.mdtest_easy_files_per_rank,
        );
        set(
            &mut caps.mdtest_hard_files_per_rank,
            self.mdtest_hard_files_per_rank,
        );
    }
}

impl Caps {
    /// Bytes one rank may write at most.
    pub fn bytes_per_rank(&self) -> u64 {
        self.ior_easy_bytes_per_rank
            + self.ior_hard_segments_per_rank * ior::HARD_TRANSFER as u64
            + self.mdtest_hard_files_per_rank * mdtest::HARD_FILE_SIZE as u64
    }

    /// Scales the data caps down so that `ranks` ranks write at most
    /// `budget` bytes. Returns whether anything changed.
    pub fn fit(&mut self, ranks: u64, budget: u64) -> bool {
        let need = self.bytes_per_rank() * ranks.max(1);
        if need <= budget {
            return false;
        }
        let f = budget as f64 / need as f64;
        let scale = |v: u64, min: u64| ((v as f64 * f) as u64).max(min);
        self.ior_easy_bytes_per_rank =
            scale(self.ior_easy_bytes_per_rank, ior::EASY_TRANSFER as u64);
        self.ior_hard_segments_per_rank = scale(self.ior_hard_segments_per_rank, 1);
        self.mdtest_hard_files_per_rank = scale(self.mdtest_hard_files_per_rank, 1);
        true
    }

    /// Files (or S3 objects: one per ior transfer) one rank may create at most.
    pub fn files_per_rank(&self) -> u64 {
        self.ior_easy_bytes_per_rank / ior::EASY_TRANSFER as u64
            + self.ior_hard_segments_per_rank
            + self.mdtest_easy_files_per_rank
            + self.mdtest_hard_files_per_rank
    }

    /// Scales the many-file caps (mdtest, and ior-hard, whose transfers are
    /// objects over S3) so that `ranks` ranks create at most `budget` files;
    /// ior-easy's few large files are left alone. Returns whether anything
    /// changed.
    pub fn fit_files(&mut self, ranks: u64, budget: u64) -> bool {
        let ranks = ranks.max(1);
        let easy = self.ior_easy_bytes_per_rank / ior::EASY_TRANSFER as u64;
        let need = (self.files_per_rank() - easy).saturating_mul(ranks);
        let budget = budget.saturating_sub(easy * ranks);
        if need <= budget {
            return false;
        }
        let f = budget as f64 / need as f64;
        let scale = |v: u64| ((v as f64 * f) as u64).max(1);
        self.ior_hard_segments_per_rank = scale(self.ior_hard_segments_per_rank);
        self.mdtest_easy_files_per_rank = scale(self.mdtest_easy_files_per_rank);
        self.mdtest_hard_files_per_rank = scale(self.mdtest_hard_files_per_rank);
        true
    }
}

/// Called on rank 0 after each phase, before the next starts (tests use it
/// to tamper with the data between write and read).
pub type PhaseHook = Arc<dyn Fn(&str) + Send + Sync>;

/// Everything the phases need besides the storage and the ranks.
#[derive(Clone)]
pub struct Io500Params {
    pub stonewall: Duration,
    pub caps: Caps,
    pub pattern: Pattern,
    /// The file whose mtime is find's `-newer` reference (IO500 puts it in
    /// the result directory, outside the data tree).
    pub timestamp_file: PathBuf,
    pub after_phase: Option<PhaseHook>,
    /// Ends the phases early (Ctrl-C): the run then fails with `Interrupted`.
    pub stop: Stop,
    /// The data is on a file system other nodes may mount (the probe's
    /// answer for the run directory): there a read or stat on the writer's
    /// own node can come from its client cache, and IO500 shifts them to
    /// another node's ranks.
    pub shared_fs: bool,
}

impl Io500Params {
    pub fn new(stonewall: Duration, caps: Caps, seed: u64, timestamp_file: PathBuf) -> Self {
        Io500Params {
            stonewall,
            caps,
            pattern: Pattern::new(seed, ior::EASY_TRANSFER),
            timestamp_file,
            after_phase: None,
            stop: Stop::new(),
            shared_fs: false,
        }
    }
}

/// The phases in IO500's standard order, with the ones of later issues out.
pub const PHASES: &[&str] = &[
    "ior-easy-write",
    "mdtest-easy-write",
    "timestamp",
    "ior-hard-write",
    "mdtest-hard-write",
    "find",
    "ior-easy-read",
    "mdtest-easy-stat",
    "ior-hard-read",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

/// Runs the suite with thread ranks. Returns the phase results in run order.
pub fn run(
    storage: &dyn StorageApi,
    ranks: usize,
    p: &Io500Params,
) -> anyhow::Result<Vec<PhaseResult>> {
    let mut per_rank = run_threads(ranks, |comm| run_rank(comm, storage, p));
    // Rank 0 holds the results; every rank holds the same error.
    per_rank.swap_remove(0)
}

/// One rank's part of the suite. Rank 0 returns the results, the others an
/// empty list; all return the error if any rank failed.
pub fn run_rank(
    comm: &dyn Comm,
    storage: &dyn StorageApi,
    p: &Io500Params,
) -> anyhow::Result<Vec<PhaseResult>> {
    let mut out = Vec::new();
    let mut done = |r: Option<PhaseResult>| {
        if let Some(r) = r {
            if let Some(hook) = &p.after_phase {
                hook(r.name);
            }
            out.push(r);
        }
    };
    let caps = &p.caps;
    let placement = Placement::of(comm);
    let shift = placement.shift;

    // Untimed: the directories of the tree (no-ops for S3).
    if comm.rank() == 0 {
        storage.mkdir(IorLayout::Easy.dir())?;
        storage.mkdir(IorLayout::Hard.dir())?;
    }
    mdtest::make_dirs(comm, storage, MdLayout::Easy)?;
    mdtest::make_dirs(comm, storage, MdLayout::Hard)?;

    let easy_segments = caps.ior_easy_bytes_per_rank / ior::EASY_TRANSFER as u64;
    let (r, ior_easy) = ior::write(comm, storage, p, IorLayout::Easy, easy_segments.max(1))?;
    done(r);
    let (r, md_easy) = mdtest::write(
        comm,
        storage,
        p,
        MdLayout::Easy,
        caps.mdtest_easy_files_per_rank,
    )?;
    done(r);
    let (r, newer) = timestamp(comm, p)?;
    done(r);
    let (r, ior_hard) = ior::write(
        comm,
        storage,
        p,
        IorLayout::Hard,
        caps.ior_hard_segments_per_rank,
    )?;
    done(r);
    let (r, md_hard) = mdtest::write(
        comm,
        storage,
        p,
        MdLayout::Hard,
        caps.mdtest_hard_files_per_rank,
    )?;
    done(r);
    let mut r = find::run(comm, storage, &find::Filter::io500(newer), &p.stop)?;
    if let Some(r) = r.as_mut() {
        check_find(r, comm.size(), md_hard);
    }
    done(r);
    // Reads, stats and deletes act on the files of rank (r + shift) mod N,
    // on another node wherever the ranks allow (IO500's shift by the ranks
    // per node), so no answer can come from the writer's own client cache.
    let mut done = |r: Option<PhaseResult>| done(r.map(|r| placement.judge(r, p.shared_fs)));
    done(ior::read(
        comm,
        storage,
        p,
        IorLayout::Easy,
        ior_easy,
        shift,
    )?);
    done(mdtest::run(
        comm,
        storage,
        p,
        MdLayout::Easy,
        MdOp::Stat,
        md_easy,
        shift,
    )?);
    done(ior::read(
        comm,
        storage,
        p,
        IorLayout::Hard,
        ior_hard,
        shift,
    )?);
    done(mdtest::run(
        comm,
        storage,
        p,
        MdLayout::Hard,
        MdOp::Stat,
        md_hard,
        shift,
    )?);
    done(mdtest::run(
        comm,
        storage,
        p,
        MdLayout::Easy,
        MdOp::Delete,
        md_easy,
        shift,
    )?);
    done(mdtest::run(
        comm,
        storage,
        p,
        MdLayout::Hard,
        MdOp::Read,
        md_hard,
        shift,
    )?);
    done(mdtest::run(
        comm,
        storage,
        p,
        MdLayout::Hard,
        MdOp::Delete,
        md_hard,
        shift,
    )?);
    Ok(out)
}

/// Where the ranks run, and the shift that puts every rank's reads on
/// another node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Reads, stats and deletes go to rank (r + shift) mod N.
    pub shift: usize,
    /// Distinct nodes (host names) among the ranks.
    pub nodes: usize,
    /// Why a reader may share a node with the writer, if it may.
    pub same_node: Option<String>,
}

impl Placement {
    /// Gathers every rank's host name and picks the smallest shift that
    /// moves every rank's reads to another node (IO500 shifts by the ranks
    /// per node); 1 when there is none.
    pub fn of(comm: &dyn Comm) -> Placement {
        let host = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        let hosts = comm.allgather_bytes(host.as_bytes());
        Placement::for_hosts(&hosts)
    }

    pub fn for_hosts(hosts: &[Vec<u8>]) -> Placement {
        let n = hosts.len();
        let mut distinct: Vec<&Vec<u8>> = hosts.iter().collect();
        distinct.sort();
        distinct.dedup();
        let nodes = distinct.len();
        let crosses = |s: usize| (0..n).all(|r| hosts[(r + s) % n] != hosts[r]);
        match (1..n).find(|&s| crosses(s)) {
            Some(shift) => Placement {
                shift,
                nodes,
                same_node: None,
            },
            None if nodes <= 1 => Placement {
                shift: 1,
                nodes,
                same_node: Some(format!(
                    "all {n} ranks ran on one node ({}): a read or stat could be answered from \
                     the writer's own client cache; run ranks on several nodes",
                    String::from_utf8_lossy(hosts.first().map_or(&b"?"[..], |h| &h[..]))
                )),
            },
            None => Placement {
                shift: 1,
                nodes,
                same_node: Some(format!(
                    "no shift of the ranks puts every reader on another node than the writer \
                     ({n} ranks on {nodes} nodes, unevenly): some reads or stats could be \
                     answered from the writer's own client cache; give every node the same \
                     number of ranks"
                )),
            },
        }
    }

    /// Marks a read, stat or delete phase invalid on a shared file system
    /// when a reader may share the writer's node.
    fn judge(&self, mut r: PhaseResult, shared_fs: bool) -> PhaseResult {
        if let Some(why) = &self.same_node {
            if shared_fs {
                r.valid = false;
                r.notes.push(why.clone());
            }
        } else if r.name != "find" {
            r.notes.push(format!(
                "ranks on {} nodes; each rank worked on the files of rank r+{} (another node)",
                self.nodes, self.shift
            ));
        }
        r
    }
}

/// The timestamp phase: rank 0 creates the reference file; its mtime (the
/// file system's clock, as the data files get) goes to every rank.
fn timestamp(
    comm: &dyn Comm,
    p: &Io500Params,
) -> anyhow::Result<(Option<PhaseResult>, SystemTime)> {
    comm.barrier();
    let start = Instant::now();
    let mut ns = 0u64;
    let mut err = None;
    if comm.rank() == 0 {
        let made = std::fs::File::create(&p.timestamp_file)
            .and_then(|f| f.metadata())
            .and_then(|m| m.modified());
        match made {
            Ok(t) => {
                ns = t
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_nanos() as u64
            }
            Err(e) => err = Some(e),
        }
        std::thread::sleep(until_later_files_are_newer(ns));
    }
    let ns = comm.allreduce_max(ns);
    if let Some(e) = err {
        return Err(anyhow::Error::new(e).context(format!(
            "creating the timestamp file {}",
            p.timestamp_file.display()
        )));
    }
    anyhow::ensure!(ns != 0, "the timestamp file could not be created on rank 0");
    let mut r = PhaseResult::empty("timestamp", Group::None);
    r.seconds = start.elapsed().as_secs_f64();
    let newer = SystemTime::UNIX_EPOCH + Duration::from_nanos(ns);
    Ok(((comm.rank() == 0).then_some(r), newer))
}

/// How long to wait after the reference file got mtime `ns`, so that
/// every file written afterwards reads as newer, on any backend. File
/// times come from a clock that ticks every few milliseconds (jiffies:
/// two ticks at HZ=100 are 20 ms), and S3 clients may see only whole
/// seconds (libs3's times are `time_t`; S3's `Last-Modified` header has
/// no fraction): a file from the reference's own second would then not
/// be newer, and find would miss it. So: past the next whole second,
/// plus two ticks.
fn until_later_files_are_newer(ns: u64) -> Duration {
    let reference = SystemTime::UNIX_EPOCH + Duration::from_nanos(ns);
    let next_second = Duration::from_secs(ns / 1_000_000_000 + 1);
    let safe = SystemTime::UNIX_EPOCH + next_second + Duration::from_millis(25);
    safe.duration_since(SystemTime::now().max(reference))
        .unwrap_or_default()
}

/// find must match exactly the mdtest-hard files whose name holds "01"
/// (every other file is older than the timestamp or of another size).
fn check_find(r: &mut PhaseResult, ranks: usize, md_hard: u64) {
    let expected: u64 = (0..ranks)
        .map(|rank| {
            let mut names = mdtest::Names::new(MdLayout::Hard, rank);
            (0..md_hard)
                .filter(|&i| {
                    let p = names.at(i);
                    p[p.rfind('/').map_or(0, |s| s + 1)..].contains("01")
                })
                .count() as u64
        })
        .sum();
    let found = r.matches.unwrap_or(0);
    if found != expected {
        r.valid = false;
        r.notes.push(format!(
            "find matched {found} files, expected {expected} (the mdtest-hard files named *01*)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every later file lands in a later whole second than the reference
    /// (S3 clients may see only seconds), at least two ticks after it.
    #[test]
    fn the_timestamp_wait_crosses_into_the_next_second() {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap();
        for back_ms in [0, 10, 500, 990] {
            let ns = (now - Duration::from_millis(back_ms)).as_nanos() as u64;
            let wait = until_later_files_are_newer(ns);
            let after = SystemTime::now() + wait;
            let after = after.duration_since(SystemTime::UNIX_EPOCH).unwrap();
            assert!(
                after.as_secs() > ns / 1_000_000_000,
                "{back_ms} ms: {wait:?}"
            );
            assert!(
                after.as_nanos() as u64 >= ns + 20_000_000,
                "{back_ms} ms: {wait:?}"
            );
            assert!(
                wait <= Duration::from_millis(1025),
                "{back_ms} ms: {wait:?}"
            );
        }
        // A reference long past needs no wait.
        assert_eq!(until_later_files_are_newer(1_000_000_000), Duration::ZERO);
    }

    #[test]
    fn caps_given_by_hand_stand_after_fitting() {
        let mut c = Caps::default();
        c.fit(2, 1 << 30);
        let fitted = c;
        let by_hand = CapOverrides {
            mdtest_easy_files_per_rank: Some(7),
            ..Default::default()
        };
        by_hand.apply(&mut c);
        assert_eq!(c.mdtest_easy_files_per_rank, 7);
        assert_eq!(c.ior_easy_bytes_per_rank, fitted.ior_easy_bytes_per_rank);
        assert!(c.ior_easy_bytes_per_rank < Caps::default().ior_easy_bytes_per_rank);
    }

    #[test]
    fn caps_shrink_to_the_budget() {
        let mut c = Caps::default();
        assert!(!c.fit(2, u64::MAX));
        assert!(c.fit(2, 1 << 30));
        assert!(c.bytes_per_rank() * 2 <= (1 << 30) + ior::EASY_TRANSFER as u64 * 2);
        assert!(c.ior_easy_bytes_per_rank >= ior::EASY_TRANSFER as u64);

        let mut c = Caps::default();
        assert!(c.fit_files(4, 100_000));
        assert!(c.files_per_rank() * 4 <= 100_000 + 4 * 3);
        assert_eq!(
            c.ior_easy_bytes_per_rank,
            Caps::default().ior_easy_bytes_per_rank
        );
        assert!(c.mdtest_hard_files_per_rank >= 1);
    }
}

#[cfg(test)]
mod placement_tests {
    use super::Placement;

    fn hosts(names: &[&str]) -> Vec<Vec<u8>> {
        names.iter().map(|n| n.as_bytes().to_vec()).collect()
    }

    #[test]
    fn shifts_reads_to_another_node() {
        // mpirun --map-by node: round robin, one is enough.
        let p = Placement::for_hosts(&hosts(&["n1", "n2", "n1", "n2"]));
        assert_eq!((p.shift, p.nodes, p.same_node), (1, 2, None));
        // --map-by slot: blocks of two, IO500's shift by ranks per node.
        let p = Placement::for_hosts(&hosts(&["n1", "n1", "n2", "n2"]));
        assert_eq!((p.shift, p.same_node), (2, None));
        let p = Placement::for_hosts(&hosts(&["n1", "n1", "n1", "n2", "n2", "n2"]));
        assert_eq!(p.shift, 3);
    }

    #[test]
    fn one_node_or_uneven_nodes_say_why() {
        let p = Placement::for_hosts(&hosts(&["n1", "n1"]));
        assert_eq!(p.nodes, 1);
        assert!(p.same_node.unwrap().contains("one node (n1)"));
        let p = Placement::for_hosts(&hosts(&["n1", "n1", "n2"]));
        assert!(p.same_node.unwrap().contains("unevenly"));
        let p = Placement::for_hosts(&hosts(&["n1"]));
        assert!(p.same_node.is_some());
    }
}
