//! Copy scaling (seed 004): 1..N parallel workers, each moving one large
//! object of random, incompressible data in (PUT, or a file write for
//! posix) or out (GET, verified), and the aggregate throughput against the
//! worker count. Optionally drops the page cache before the reads (when
//! permitted), and records the non-loopback NIC byte counters of
//! `/proc/net/dev` around each phase (what the seed measured for remote
//! endpoints; near zero for local backends). Under mpirun the worker
//! counts are totals: the workers are spread over the process ranks, and
//! each node's first rank drops its page cache and reads its counters.

use super::timed;
use crate::comm::{Comm, ReduceOp};
use crate::harness::node;
use crate::harness::objects::{pattern_len, Objects};
use crate::harness::ranks::{share, timed_phase};
use crate::harness::row::{rate, MIB};
use crate::harness::{Benchmark, Row, Target};
use crate::latency::Latency;
use crate::pattern::Pattern;
use serde_json::{json, Value};
use std::io::Write;
use std::ops::Range;

#[derive(Debug, Clone)]
pub struct CopyParams {
    pub workers: Vec<usize>,
    pub object_size: u64,
    pub drop_caches: bool,
}

impl Default for CopyParams {
    fn default() -> Self {
        CopyParams {
            workers: vec![1, 2, 4],
            object_size: 32 << 20,
            drop_caches: false,
        }
    }
}

impl CopyParams {
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            !self.workers.is_empty() && self.workers.iter().all(|&w| (1..=1024).contains(&w)),
            "--workers must list counts between 1 and 1024"
        );
        anyhow::ensure!(
            (1..=1 << 40).contains(&self.object_size),
            "--obj-size must be between 1 byte and 1 TiB"
        );
        Ok(())
    }
}

pub struct Copy {
    pub params: CopyParams,
}

impl Benchmark for Copy {
    fn name(&self) -> &'static str {
        "copy"
    }

    fn params(&self) -> Value {
        let p = &self.params;
        json!({"workers": p.workers, "object_size": p.object_size, "drop_caches": p.drop_caches})
    }

    fn run(&self, t: &Target, out: &mut dyn Write) -> anyhow::Result<Vec<Row>> {
        let p = &self.params;
        p.validate()?;
        let pattern = Pattern::new(t.opts.seed, pattern_len(p.object_size));
        writeln!(
            out,
            "copy on {}: one {} B object per worker",
            t.backend, p.object_size
        )?;
        writeln!(
            out,
            "{:>8} {:>12} {:>12}",
            "workers", "put MiB/s", "get MiB/s"
        )?;
        let rows = Objects::with(t, |objects| {
            t.opts.each_process(|comm| {
                let leader = node::leader(comm);
                let mut rows = Vec::new();
                for &n in &p.workers {
                    let key = |w: u64| format!("copy{n}/worker{w}");
                    let mine = share(n as u64, comm.rank(), comm.size());
                    let phase = Phase {
                        comm,
                        t,
                        leader,
                        workers: n,
                        object_size: p.object_size,
                        mine: mine.clone(),
                    };
                    let put =
                        phase.run("put", |w, _| objects.put(&pattern, &key(w), p.object_size))?;
                    let dropped = p.drop_caches && drop_page_caches(comm, leader);
                    let get = phase
                        .run("get", |w, scratch| {
                            objects
                                .get(&pattern, &key(w), 0, p.object_size, scratch)
                                .map(|_| ())
                        })?
                        .with("page_cache_dropped", dropped);
                    rows.push(put);
                    rows.push(get);
                    for w in mine {
                        objects.delete(&key(w))?;
                    }
                }
                Ok(rows)
            })
        })?;
        for r in rows.chunks(2) {
            writeln!(
                out,
                "{:>8} {:>12.1} {:>12.1}",
                r[0].extra["workers"].as_u64().unwrap_or(0),
                r[0].value,
                r[1].value
            )?;
        }
        Ok(rows)
    }
}

/// One put or get round of `workers` workers, spread over the process
/// ranks: this one runs the workers in `mine`, one thread each.
struct Phase<'a> {
    comm: &'a dyn Comm,
    t: &'a Target<'a>,
    /// Whether this rank reads its node's NIC counters.
    leader: bool,
    workers: usize,
    object_size: u64,
    mine: Range<u64>,
}

impl Phase<'_> {
    /// Every worker runs `op(worker)` once, all at the same time.
    fn run(
        &self,
        name: &str,
        op: impl Fn(u64, &mut Vec<u8>) -> anyhow::Result<()> + Sync,
    ) -> anyhow::Result<Row> {
        self.t.opts.stop.check()?;
        let what = format!("copy {name} with {} workers", self.workers);
        // Counters: NIC rx and tx bytes, nodes that have NIC counters.
        let m = timed_phase(self.comm, &what, (3, 1), |rec| {
            let nic0 = self.leader.then(nic_bytes).flatten();
            let lats: Vec<anyhow::Result<Latency>> = std::thread::scope(|s| {
                let hs: Vec<_> = self
                    .mine
                    .clone()
                    .map(|w| {
                        let op = &op;
                        s.spawn(move || {
                            let mut lat = Latency::new();
                            timed(&mut lat, || op(w, &mut Vec::new()))?;
                            Ok(lat)
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("copy worker"))
                    .collect()
            });
            for l in lats {
                rec.latencies[0].merge(&l?);
            }
            if let (Some(a), Some(b)) = (nic0, self.leader.then(nic_bytes).flatten()) {
                rec.counters = vec![b.0.saturating_sub(a.0), b.1.saturating_sub(a.1), 1];
            }
            Ok(())
        })?;
        let (n, secs) = (self.workers as u64, m.seconds());
        let bytes = n * self.object_size;
        let mut row = self
            .t
            .row("copy", name, "MiB/s")
            .measured(n, bytes, secs, &m.latencies[0])
            .value(rate(bytes as f64 / MIB, secs))
            .with("workers", n)
            .with("object_size", self.object_size);
        if m.counters[2] > 0 {
            row = row
                .with("nic_rx_bytes", m.counters[0])
                .with("nic_tx_bytes", m.counters[1]);
        }
        Ok(row)
    }
}

/// Drops the page cache of every node (its leader does); whether every
/// node's drop was permitted.
fn drop_page_caches(comm: &dyn Comm, leader: bool) -> bool {
    let ok = !leader || drop_page_cache();
    comm.allreduce_u64(ok as u64, ReduceOp::Min) == 1
}

/// Drops the page cache (as the seed's Listing 1); false when not permitted.
fn drop_page_cache() -> bool {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "1").is_ok()
}

/// Received and transmitted bytes of every non-loopback interface.
pub fn nic_bytes() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/net/dev").ok()?;
    Some(parse_net_dev(&text))
}

/// `/proc/net/dev`: `iface: rx_bytes rx_packets ... (8 rx fields) tx_bytes ...`.
pub fn parse_net_dev(text: &str) -> (u64, u64) {
    let mut rx = 0;
    let mut tx = 0;
    for line in text.lines().skip(2) {
        let Some((iface, rest)) = line.split_once(':') else {
            continue;
        };
        if iface.trim() == "lo" {
            continue;
        }
        let f: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if f.len() >= 9 {
            rx += f[0];
            tx += f[8];
        }
    }
    (rx, tx)
}

#[cfg(test)]
mod tests {
    #[test]
    fn net_dev_sums_non_loopback() {
        let text = "Inter-|   Receive                                                |  Transmit\n \
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    \
lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n  \
eth0: 5000 10 0 0 0 0 0 0 7000 12 0 0 0 0 0 0\n  \
eth1: 1 1 0 0 0 0 0 0 2 1 0 0 0 0 0 0\n";
        assert_eq!(super::parse_net_dev(text), (5001, 7002));
    }
}
