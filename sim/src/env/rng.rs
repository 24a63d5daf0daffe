//! The only randomness of a run: one ChaCha key derived from the seed, split into one stream per
//! component.
//!
//! Every component (network, disk, each node's timeouts, workload, faults, clocks, knobs) draws
//! from its own ChaCha stream of the same key, so adding a draw in one component never shifts the
//! draws of another: a change to the network model leaves the knobs and the workload of a seed
//! alone. Nothing else in a run may be random.

use crate::env::tape::Tape;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The components that draw randomness, each on its own stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    /// The swarm knobs of the run (sizes, rates, timings, workload).
    Knobs,
    /// Message delivery: drops, delays, duplicates.
    Network,
    /// Sync latencies and what a crash keeps of unsynced writes.
    Disk,
    /// The fault plan: partitions, clogging, crashes, pauses, lease moves.
    Faults,
    /// Per-node clock skew and drift.
    Clocks,
    /// What the clients ask for and when.
    Workload,
    /// One node's election timeouts.
    Timeouts(u32),
    /// The firing gate of the run's BUGGIFY sites (`buggify`).
    Buggify,
    /// A guided campaign's own choices (`guided`), drawn from its start seed.
    Campaign,
    /// The storage faults at restarts: which, and where in the bytes (`damage`).
    Storage,
}

impl Component {
    /// The ChaCha stream number of this component. Distinct for distinct components.
    fn stream(self) -> u64 {
        match self {
            Component::Knobs => 1,
            Component::Network => 2,
            Component::Disk => 3,
            Component::Faults => 4,
            Component::Clocks => 5,
            Component::Workload => 6,
            Component::Buggify => 7,
            Component::Campaign => 8,
            Component::Storage => 9,
            Component::Timeouts(node) => 1_000 + u64::from(node),
        }
    }
}

/// A component's random stream.
#[derive(Clone, Debug)]
pub struct Stream {
    rng: ChaCha8Rng,
    component: Component,
    /// The world's tape, when it has one: every draw then goes through it (recorded, or replayed
    /// for the shrinker). Plain runs pay one branch.
    tape: Option<Tape>,
}

impl Stream {
    /// The stream of `component` under `seed`. The same pair always gives the same draws.
    pub fn new(seed: u64, component: Component) -> Stream {
        Stream::taped(seed, component, None)
    }

    /// The stream of `component`, its draws recorded on (or replayed from) `tape` if given.
    pub fn taped(seed: u64, component: Component, tape: Option<&Tape>) -> Stream {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(component.stream());
        Stream {
            rng,
            component,
            tape: tape.cloned(),
        }
    }

    /// Re-keys the stream: its future draws come from `key` (same component, same tape), as a
    /// continuation's streams do after its fork (`fork`).
    pub fn rekey(&mut self, key: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(key);
        rng.set_stream(self.component.stream());
        self.rng = rng;
    }

    /// A uniform draw in `low..=high` (inclusive; `low <= high`).
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        assert!(low <= high, "empty range {low}..={high}");
        match &self.tape {
            None => self.rng.random_range(low..=high),
            Some(tape) => {
                let rng = &mut self.rng;
                low + tape.draw(self.component, high - low, || {
                    rng.random_range(low..=high) - low
                })
            }
        }
    }

    /// True with probability `per_million / 1_000_000`. Integer rates keep knobs exact in traces.
    pub fn chance(&mut self, per_million: u32) -> bool {
        assert!(per_million <= 1_000_000);
        match &self.tape {
            None => per_million > 0 && self.rng.random_range(0..1_000_000u32) < per_million,
            // A certain outcome is no choice: it is neither recorded nor replayed.
            Some(_) if per_million == 0 => false,
            Some(_) if per_million == 1_000_000 => {
                // Still advance the generator, so a recorded run draws what a plain run draws.
                let _ = self.rng.random_range(0..1_000_000u32);
                true
            }
            Some(tape) => {
                let rng = &mut self.rng;
                tape.draw(self.component, 1, || {
                    u64::from(rng.random_range(0..1_000_000u32) < per_million)
                }) == 1
            }
        }
    }

    /// An index into a non-empty collection of `len` items.
    pub fn index(&mut self, len: usize) -> usize {
        assert!(len > 0);
        match &self.tape {
            None => self.rng.random_range(0..len),
            Some(tape) => {
                let rng = &mut self.rng;
                tape.draw(self.component, len as u64 - 1, || {
                    rng.random_range(0..len) as u64
                }) as usize
            }
        }
    }

    /// A raw 64-bit draw (for digests and bodies).
    pub fn next_u64(&mut self) -> u64 {
        match &self.tape {
            None => self.rng.random(),
            Some(tape) => {
                let rng = &mut self.rng;
                tape.draw(self.component, u64::MAX, || rng.random())
            }
        }
    }
}
