//! The swarm's drawing rules: how one knob is drawn, generically, for every knob.
//!
//! Three mechanisms from the swarm-testing literature, none aimed at a particular bug:
//! - **Extremes** (FoundationDB's buggified knobs): with probability `EXTREME_PER_MILLION` a knob
//!   takes one of the two edges of its range instead of a value inside it (tiny segments, slow
//!   disks, short leases, zero or very high rates).
//! - **Feature omission** (Groce et al., "Swarm Testing", ISSTA 2012): a feature is sometimes
//!   switched off for the whole run; some behaviours *suppress* others (frequent restarts heal
//!   what a slow-burn bug needs), and only runs without them can show those bugs.
//! - **Weights** (TigerBeetle's `enum_weights`): a random non-empty subset of the variants of a
//!   choice (fault kinds, client operations) is kept, each with a weight in 1..=100, so each run
//!   exercises few kinds at very different rates.
//!
//! Everything is drawn from the knobs stream, so the seed still decides the whole run.

use crate::env::rng::Stream;

/// The chance that a knob takes an extreme (an edge of its range): one in four.
pub const EXTREME_PER_MILLION: u32 = 250_000;
/// The highest weight `weights` gives a kept variant.
pub const WEIGHT_MAX: u64 = 100;

/// Draws knobs for one run.
pub struct Swarm<'a> {
    stream: &'a mut Stream,
}

impl<'a> Swarm<'a> {
    pub fn new(stream: &'a mut Stream) -> Swarm<'a> {
        Swarm { stream }
    }

    /// The stream itself, for draws that have no range (a choice of shape).
    pub fn stream(&mut self) -> &mut Stream {
        self.stream
    }

    /// Whether this knob takes an extreme; if so, which edge (true: the high one).
    fn extreme(&mut self) -> Option<bool> {
        self.stream
            .chance(EXTREME_PER_MILLION)
            .then(|| self.stream.chance(500_000))
    }

    /// A value in `low..=high` (the usual range), or with probability 1/4 one of `edge_low` and
    /// `edge_high` (the extremes, usually outside the usual range).
    pub fn span(&mut self, low: u64, high: u64, edge_low: u64, edge_high: u64) -> u64 {
        assert!(low <= high && edge_low <= low && high <= edge_high);
        match self.extreme() {
            Some(false) => edge_low,
            Some(true) => edge_high,
            None => self.stream.range(low, high),
        }
    }

    /// One of `values` (uniformly), or with probability 1/4 the first or the last: list the
    /// values from one extreme to the other.
    pub fn pick<T: Copy>(&mut self, values: &[T]) -> T {
        assert!(!values.is_empty());
        match self.extreme() {
            Some(false) => values[0],
            Some(true) => values[values.len() - 1],
            None => values[self.stream.index(values.len())],
        }
    }

    /// A feature switched off for the whole run, with probability 1/4 (feature omission).
    pub fn omitted(&mut self) -> bool {
        self.stream.chance(EXTREME_PER_MILLION)
    }

    /// TigerBeetle-style weights for `variants` choices: a non-empty random subset keeps a weight
    /// in 1..=100 each, every other variant gets 0.
    pub fn weights<const N: usize>(&mut self) -> [u32; N] {
        assert!(N > 0);
        let kept = self.stream.range(1, N as u64) as usize;
        // A uniform subset of `kept` variants: a partial Fisher-Yates shuffle of the indices.
        let mut order: [usize; N] = std::array::from_fn(|index| index);
        for index in 0..kept {
            let other = index + self.stream.index(N - index);
            order.swap(index, other);
        }
        let mut weights = [0u32; N];
        for &variant in &order[..kept] {
            weights[variant] = self.stream.range(1, WEIGHT_MAX) as u32;
        }
        weights
    }
}
