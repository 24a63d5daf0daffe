//! A lean breadth-first search for configurations too big for Stateright's checker memory.
//!
//! Stateright's BFS keeps, for every pending state, the whole path of action indices that led to
//! it, and a concurrent map entry per visited state: about 250 bytes per state at the frontier of
//! the everything-together configuration, which does not fit in 24 GiB. This search runs the
//! same `Model` (same `init_states`, `actions`, `next_state` and properties) but keeps only a
//! 64-bit fingerprint per visited state and the states of two levels, so it is what `felix check
//! --compact` uses to check that configuration to completion. Like TLC and Stateright it
//! identifies states by fingerprint, so a fingerprint collision could hide a state (the odds are
//! about n^2 / 2^65: a fraction of a percent at 10^8 states). It does not record paths: a
//! violation is reported by name, and its trace is then searched by `check::shortest_counterexample`.
//! Its counts equal Stateright's for every configuration (a test holds it to that).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::time::Instant;

use stateright::{Expectation, Model};

use crate::check::Progress;
use crate::spec::{FelixHeadTrim, State};

/// What a compact search found.
#[derive(Clone, Debug)]
pub struct CompactReport {
    /// Distinct states (fingerprints) visited.
    pub unique_states: usize,
    /// States generated, repeats included (comparable with TLC's "states generated").
    pub total_states: usize,
    /// Number of BFS levels, the initial state being level 1.
    pub max_depth: usize,
    /// The first invariant found broken (the search stops at the end of that level), if any.
    pub violated: Option<&'static str>,
    /// `sometimes` properties reached.
    pub sometimes_reached: Vec<&'static str>,
    /// Wall time.
    pub seconds: f64,
}

/// A fast 64-bit hash (multiply-rotate over 8-byte words) for fingerprints; the state's `Hash`
/// feeds it one byte string.
#[derive(Default)]
struct Fingerprinter {
    hash: u64,
}

impl Hasher for Fingerprinter {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.hash = (self.hash.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.hash = (self.hash.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
        self.hash ^= bytes.len() as u64;
    }

    fn finish(&self) -> u64 {
        // A final avalanche so that nearby states spread over the table.
        let mut x = self.hash;
        x ^= x >> 33;
        x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        x ^= x >> 33;
        x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        x ^ (x >> 33)
    }
}

fn fingerprint(state: &State) -> u64 {
    let mut hasher = Fingerprinter::default();
    state.hash(&mut hasher);
    hasher.finish()
}

/// The visited set's hasher: fingerprints are already hashes.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 fingerprints are hashed");
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Visited = HashSet<u64, BuildHasherDefault<Identity>>;

/// States of a level expanded together before their successors are deduplicated.
const BATCH_STATES_MAX: usize = 1 << 17;

/// The successors of a slice of states, and the invariants any of them breaks.
struct Expansion {
    successors: Vec<(u64, State)>,
    generated: usize,
}

fn expand(model: &FelixHeadTrim, states: &[State]) -> Expansion {
    let mut successors = Vec::new();
    let mut actions = Vec::new();
    let mut generated = 0;
    for state in states {
        model.actions(state, &mut actions);
        for action in actions.drain(..) {
            if let Some(next) = model.next_state(state, action) {
                generated += 1;
                successors.push((fingerprint(&next), next));
            }
        }
    }
    Expansion {
        successors,
        generated,
    }
}

/// Searches `model` breadth-first to completion (or to the end of the level where an invariant
/// first breaks), expanding each level on `threads` threads.
pub fn search(
    model: &FelixHeadTrim,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> CompactReport {
    assert!(threads >= 1, "a search needs at least one thread");
    let started = Instant::now();
    let properties = model.properties();
    let mut sometimes_reached: Vec<&'static str> = Vec::new();
    let mut violated: Option<&'static str> = None;
    let mut visited = Visited::default();
    let mut level: Vec<State> = Vec::new();
    let mut total_states = 0;
    let check = |state: &State,
                 sometimes_reached: &mut Vec<&'static str>,
                 violated: &mut Option<&'static str>| {
        for property in &properties {
            match property.expectation {
                Expectation::Always => {
                    if violated.is_none() && !(property.condition)(model, state) {
                        *violated = Some(property.name);
                    }
                }
                Expectation::Sometimes => {
                    if !sometimes_reached.contains(&property.name)
                        && (property.condition)(model, state)
                    {
                        sometimes_reached.push(property.name);
                    }
                }
                Expectation::Eventually => {
                    unreachable!("the model has no eventually property")
                }
            }
        }
    };
    for state in model.init_states() {
        total_states += 1;
        if visited.insert(fingerprint(&state)) {
            check(&state, &mut sometimes_reached, &mut violated);
            level.push(state);
        }
    }
    let mut max_depth = usize::from(!level.is_empty());
    let mut last_report = Instant::now();
    while !level.is_empty() && violated.is_none() {
        let mut next_level = Vec::new();
        // A level is expanded in batches so that the successors waiting for deduplication (about
        // five per state) stay a bounded buffer, not a copy of the next level.
        for batch in level.chunks(BATCH_STATES_MAX) {
            let chunk = batch.len().div_ceil(threads).max(1);
            let expansions: Vec<Expansion> = std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .chunks(chunk)
                    .map(|states| scope.spawn(move || expand(model, states)))
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| match handle.join() {
                        Ok(expansion) => expansion,
                        Err(panic) => std::panic::resume_unwind(panic),
                    })
                    .collect()
            });
            for expansion in expansions {
                total_states += expansion.generated;
                for (print, state) in expansion.successors {
                    if visited.insert(print) {
                        check(&state, &mut sometimes_reached, &mut violated);
                        next_level.push(state);
                    }
                }
            }
            if last_report.elapsed() >= crate::check::PROGRESS_INTERVAL {
                last_report = Instant::now();
                progress(Progress {
                    unique_states: visited.len(),
                    max_depth: max_depth + 1,
                    seconds: started.elapsed().as_secs_f64(),
                });
            }
        }
        level = next_level;
        if !level.is_empty() {
            max_depth += 1;
        }
    }
    let order: Vec<&'static str> = properties.iter().map(|p| p.name).collect();
    sometimes_reached.sort_by_key(|name| order.iter().position(|n| n == name));
    CompactReport {
        unique_states: visited.len(),
        total_states,
        max_depth,
        violated,
        sometimes_reached,
        seconds: started.elapsed().as_secs_f64(),
    }
}
