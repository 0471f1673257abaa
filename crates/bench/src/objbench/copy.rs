//! Copy scaling (seed 004): 1..N parallel workers, each moving one large
//! object of random, incompressible data in (PUT, or a file write for
//! posix) or out (GET, verified), and the aggregate throughput against the
//! worker count. Optionally drops the page cache before the reads (when
//! permitted), and records the non-loopback NIC byte counters of
//! `/proc/net/dev` around each phase (what the seed measured for remote
//! endpoints; near zero for local backends).

use crate::harness::objects::{pattern_len, Objects};
use crate::harness::row::{rate, MIB};
use crate::harness::{Benchmark, Row, Target};
use crate::latency::Latency;
use crate::pattern::Pattern;
use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;

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
        let objects = Objects::open(t)?;
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
        let mut rows = Vec::new();
        let result = (|| -> anyhow::Result<()> {
            for &n in &p.workers {
                let key = |w: usize| format!("copy{n}/worker{w}");
                let put = phase(t, n, p, "put", |w, _| {
                    objects.put(&pattern, &key(w), p.object_size)
                })?;
                let dropped = p.drop_caches && drop_page_cache();
                let get = phase(t, n, p, "get", |w, scratch| {
                    objects
                        .get(&pattern, &key(w), 0, p.object_size, scratch)
                        .map(|_| ())
                })?
                .with("page_cache_dropped", dropped);
                writeln!(out, "{n:>8} {:>12.1} {:>12.1}", put.value, get.value)?;
                rows.push(put);
                rows.push(get);
                for w in 0..n {
                    objects.delete(&key(w))?;
                }
            }
            Ok(())
        })();
        let cleaned = if t.opts.keep {
            Ok(())
        } else {
            objects.remove_all()
        };
        result?;
        cleaned?;
        Ok(rows)
    }
}

/// `n` workers run `op(worker)` once each, at the same time.
fn phase(
    t: &Target,
    n: usize,
    p: &CopyParams,
    name: &str,
    op: impl Fn(usize, &mut Vec<u8>) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<Row> {
    t.opts.stop.check()?;
    let nic0 = nic_bytes();
    let start = Instant::now();
    let lats: Vec<anyhow::Result<Latency>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .map(|w| {
                let op = &op;
                s.spawn(move || {
                    let mut lat = Latency::new();
                    let t0 = Instant::now();
                    op(w, &mut Vec::new())?;
                    lat.record(t0.elapsed());
                    Ok(lat)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("copy worker"))
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let nic1 = nic_bytes();
    let mut lat = Latency::new();
    for l in lats {
        lat.merge(&l?);
    }
    let bytes = n as u64 * p.object_size;
    let mut row = t
        .row("copy", name, "MiB/s")
        .measured(n as u64, bytes, secs, &lat)
        .value(rate(bytes as f64 / MIB, secs))
        .with("workers", n)
        .with("object_size", p.object_size);
    if let (Some(a), Some(b)) = (nic0, nic1) {
        row = row
            .with("nic_rx_bytes", b.0.saturating_sub(a.0))
            .with("nic_tx_bytes", b.1.saturating_sub(a.1));
    }
    Ok(row)
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
