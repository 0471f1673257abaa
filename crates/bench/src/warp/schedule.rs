//! warp's mixed schedule: 1000 operations in exactly the configured
//! proportions, shuffled with a fixed seed and handed out in order to every
//! thread through one shared cursor, so any prefix of the run follows the
//! mix and a run of N·1000 operations has it exactly.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Get,
    Stat,
    Put,
    Delete,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Get, Op::Put, Op::Delete, Op::Stat];

    pub fn name(self) -> &'static str {
        match self {
            Op::Get => "GET",
            Op::Stat => "STAT",
            Op::Put => "PUT",
            Op::Delete => "DELETE",
        }
    }

    pub fn index(self) -> usize {
        match self {
            Op::Get => 0,
            Op::Put => 1,
            Op::Delete => 2,
            Op::Stat => 3,
        }
    }
}

/// The length of one schedule round, as in warp.
pub const ROUND: usize = 1000;
/// warp's shuffle seed.
const SEED: u64 = 0xabad_1dea;

/// Relative weights of the mixed operations (warp's `--get-distrib` etc.).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    pub get: f64,
    pub stat: f64,
    pub put: f64,
    pub delete: f64,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution {
            get: 45.0,
            stat: 30.0,
            put: 15.0,
            delete: 10.0,
        }
    }
}

impl Distribution {
    pub fn validate(&self) -> anyhow::Result<()> {
        let w = [self.get, self.stat, self.put, self.delete];
        anyhow::ensure!(
            w.iter().all(|x| x.is_finite() && *x >= 0.0) && w.iter().sum::<f64>() > 0.0,
            "the mixed distribution needs non-negative weights with a positive sum"
        );
        // Deletes shrink the pool; puts refill it (warp's rule).
        anyhow::ensure!(
            self.delete <= self.put,
            "--delete-distrib ({}) must not exceed --put-distrib ({}): the object pool would run dry",
            self.delete,
            self.put
        );
        Ok(())
    }

    /// Operations per round, summing to `ROUND` (largest remainders).
    pub fn counts(&self) -> [(Op, usize); 4] {
        let w = [
            (Op::Get, self.get),
            (Op::Stat, self.stat),
            (Op::Put, self.put),
            (Op::Delete, self.delete),
        ];
        let sum: f64 = w.iter().map(|x| x.1).sum();
        let exact: Vec<f64> = w.iter().map(|x| x.1 / sum * ROUND as f64).collect();
        let mut n: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
        let mut order: Vec<usize> = (0..4).collect();
        order.sort_by(|&a, &b| {
            (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor()))
        });
        let missing = ROUND - n.iter().sum::<usize>();
        for &i in order.iter().take(missing) {
            n[i] += 1;
        }
        [
            (Op::Get, n[0]),
            (Op::Stat, n[1]),
            (Op::Put, n[2]),
            (Op::Delete, n[3]),
        ]
    }
}

/// The shuffled round and the shared cursor into it.
pub struct Schedule {
    ops: Vec<Op>,
    cursor: AtomicU64,
    /// Operations handed out at most (`u64::MAX`: only the clock stops).
    limit: u64,
    /// This process's positions in the run's sequence: `first`,
    /// `first + stride`, ... Process ranks interleave, so together they
    /// hand out exactly the first `limit` operations, as one process would.
    first: u64,
    stride: u64,
}

impl Schedule {
    pub fn new(d: &Distribution, limit: u64) -> Schedule {
        Schedule::strided(d, limit, 0, 1)
    }

    /// Rank `rank` of `ranks` processes' part of the run's schedule.
    pub fn strided(d: &Distribution, limit: u64, rank: usize, ranks: usize) -> Schedule {
        let mut ops = Vec::with_capacity(ROUND);
        for (op, n) in d.counts() {
            ops.extend(std::iter::repeat_n(op, n));
        }
        // Fisher-Yates with a fixed seed: the same order every run.
        let mut rng = Rng::new(SEED);
        for i in (1..ops.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            ops.swap(i, j);
        }
        Schedule {
            ops,
            cursor: AtomicU64::new(0),
            limit,
            first: rank as u64,
            stride: ranks.max(1) as u64,
        }
    }

    /// The next operation, `None` once the limit is reached.
    #[inline]
    pub fn next(&self) -> Option<Op> {
        let k = self.cursor.fetch_add(1, Ordering::Relaxed);
        let i = self.first.saturating_add(k.saturating_mul(self.stride));
        (i < self.limit).then(|| self.ops[(i % ROUND as u64) as usize])
    }
}

/// xorshift64*: per-thread randomness for object choice and names.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// `n` random lowercase letters and digits (warp's object names).
    pub fn name(&mut self, n: usize) -> String {
        const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        (0..n)
            .map(|_| A[self.below(A.len() as u64) as usize] as char)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_exact_and_shuffled() {
        let s = Schedule::new(&Distribution::default(), 2 * ROUND as u64);
        let mut n = std::collections::HashMap::new();
        let mut first = Vec::new();
        while let Some(op) = s.next() {
            *n.entry(op).or_insert(0) += 1;
            if first.len() < 20 {
                first.push(op);
            }
        }
        assert_eq!(n[&Op::Get], 900);
        assert_eq!(n[&Op::Stat], 600);
        assert_eq!(n[&Op::Put], 300);
        assert_eq!(n[&Op::Delete], 200);
        assert!(first.windows(2).any(|w| w[0] != w[1]), "shuffled");
    }

    #[test]
    fn interleaved_ranks_hand_out_the_exact_prefix() {
        let d = Distribution::default();
        let one = Schedule::new(&d, 2500);
        let whole: Vec<Op> = std::iter::from_fn(|| one.next()).collect();
        let parts: Vec<Vec<Op>> = (0..3)
            .map(|r| {
                let s = Schedule::strided(&d, 2500, r, 3);
                std::iter::from_fn(|| s.next()).collect()
            })
            .collect();
        assert_eq!(parts.iter().map(Vec::len).sum::<usize>(), 2500);
        let merged: Vec<Op> = (0..2500).map(|i| parts[i % 3][i / 3]).collect();
        assert_eq!(merged, whole);
    }

    #[test]
    fn odd_weights_still_sum_to_a_round() {
        let d = Distribution {
            get: 1.0,
            stat: 1.0,
            put: 1.0,
            delete: 0.0,
        };
        let c = d.counts();
        assert_eq!(c.iter().map(|x| x.1).sum::<usize>(), ROUND);
        assert!(c
            .iter()
            .all(|x| x.1 == 333 || x.1 == 334 || x.0 == Op::Delete));
        assert!(Distribution {
            delete: 20.0,
            ..Default::default()
        }
        .validate()
        .is_err());
    }
}
