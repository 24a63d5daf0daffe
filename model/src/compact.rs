//! A lean breadth-first search for configurations too big for Stateright's checker memory.
//!
//! Stateright's BFS keeps, for every pending state, the whole path of action indices that led to
//! it, and a concurrent map entry per visited state: about 250 bytes per state at the frontier of
//! the everything-together configuration, which does not fit in 24 GiB. This search runs the same
//! `Model` (same `init_states`, `actions`, `next_state` and properties) but keeps only a 64-bit
//! fingerprint per visited state and the states of two levels, so it is what `felix check
//! --compact` uses to check that configuration to completion. Like TLC and Stateright it identifies
//! states by fingerprint, so a fingerprint collision could hide a state (the odds are about n^2 /
//! 2^65: a fraction of a percent at 10^8 states). It does not record paths: a violation is reported
//! by name, and its trace is then searched by `check::shortest_counterexample`. Its counts equal
//! Stateright's for every configuration (a test holds it to that).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::time::Instant;

use stateright::{Expectation, Property};

use crate::check::Progress;
use crate::spec::Spec;

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

fn fingerprint<T: Hash>(state: &T) -> u64 {
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

/// Successors with their fingerprints, one bucket per owning shard.
type Buckets<T> = Vec<Vec<(u64, T)>>;

/// States of a level expanded together before their successors are deduplicated.
const BATCH_STATES_MAX: usize = 1 << 17;

/// The shard (one per thread) that owns a fingerprint in the visited set.
fn shard(print: u64, shards: usize) -> usize {
    ((u128::from(print) * shards as u128) >> 64) as usize
}

/// The successors of a slice of states, bucketed by the shard that owns their fingerprint.
struct Expansion<T> {
    buckets: Vec<Vec<(u64, T)>>,
    generated: usize,
}

fn expand<S: Spec>(model: &S, states: &[S::State], shards: usize) -> Expansion<S::State> {
    let mut buckets: Vec<Vec<(u64, S::State)>> = (0..shards).map(|_| Vec::new()).collect();
    let mut actions = Vec::new();
    let mut generated = 0;
    for state in states {
        model.actions(state, &mut actions);
        for action in actions.drain(..) {
            if let Some(next) = model.next_state(state, action) {
                generated += 1;
                let print = fingerprint(&next);
                buckets[shard(print, shards)].push((print, next));
            }
        }
    }
    Expansion { buckets, generated }
}

/// What one shard found among the successors it owns.
struct Admission<T> {
    fresh: Vec<T>,
    sometimes_reached: Vec<&'static str>,
    violated: Option<&'static str>,
}

/// Inserts a shard's successors into its part of the visited set, checking the properties on
/// every state seen for the first time.
fn admit<S: Spec>(
    model: &S,
    properties: &[Property<S>],
    visited: &mut Visited,
    buckets: Vec<Vec<(u64, S::State)>>,
    sometimes_known: &[&'static str],
) -> Admission<S::State> {
    let mut admission = Admission {
        fresh: Vec::new(),
        sometimes_reached: Vec::new(),
        violated: None,
    };
    for bucket in buckets {
        for (print, state) in bucket {
            if visited.insert(print) {
                check(
                    model,
                    properties,
                    &state,
                    sometimes_known,
                    &mut admission.sometimes_reached,
                    &mut admission.violated,
                );
                admission.fresh.push(state);
            }
        }
    }
    admission
}

/// Evaluates every property on a state first seen: the first broken invariant is kept, and
/// `sometimes` properties not yet known are recorded when reached.
fn check<S: Spec>(
    model: &S,
    properties: &[Property<S>],
    state: &S::State,
    sometimes_known: &[&'static str],
    sometimes_reached: &mut Vec<&'static str>,
    violated: &mut Option<&'static str>,
) {
    for property in properties {
        match property.expectation {
            Expectation::Always => {
                if violated.is_none() && !(property.condition)(model, state) {
                    *violated = Some(property.name);
                }
            }
            Expectation::Sometimes => {
                if !sometimes_known.contains(&property.name)
                    && !sometimes_reached.contains(&property.name)
                    && (property.condition)(model, state)
                {
                    sometimes_reached.push(property.name);
                }
            }
            Expectation::Eventually => unreachable!("the model has no eventually property"),
        }
    }
}

/// Expands `batch` on `threads` threads: each shard's buckets (the successors whose fingerprint it
/// owns), in worker order, and how many successors were generated.
fn expand_batch<S: Spec>(
    model: &S,
    batch: &[S::State],
    threads: usize,
) -> (Vec<Buckets<S::State>>, usize) {
    let chunk = batch.len().div_ceil(threads).max(1);
    let expansions: Vec<Expansion<S::State>> = std::thread::scope(|scope| {
        let handles: Vec<_> = batch
            .chunks(chunk)
            .map(|states| scope.spawn(move || expand(model, states, threads)))
            .collect();
        handles.into_iter().map(join).collect()
    });
    let mut per_shard: Vec<Buckets<S::State>> = (0..threads).map(|_| Vec::new()).collect();
    let mut generated = 0;
    for expansion in expansions {
        generated += expansion.generated;
        for (owner, bucket) in expansion.buckets.into_iter().enumerate() {
            per_shard[owner].push(bucket);
        }
    }
    (per_shard, generated)
}

/// Searches `model` breadth-first to completion (or to the end of the level where an invariant
/// first breaks) on `threads` threads: each batch of a level is expanded in parallel, then each
/// thread deduplicates the successors whose fingerprints its shard of the visited set owns.
pub fn search<S: Spec>(
    model: &S,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> CompactReport {
    assert!(threads >= 1, "a search needs at least one thread");
    let started = Instant::now();
    let properties = model.properties();
    let mut sometimes_reached: Vec<&'static str> = Vec::new();
    let mut violated: Option<&'static str> = None;
    let mut visited: Vec<Visited> = (0..threads).map(|_| Visited::default()).collect();
    let mut level: Vec<S::State> = Vec::new();
    let mut total_states = 0;
    for state in model.init_states() {
        total_states += 1;
        let print = fingerprint(&state);
        if visited[shard(print, threads)].insert(print) {
            let known = sometimes_reached.clone();
            check(
                model,
                &properties,
                &state,
                &known,
                &mut sometimes_reached,
                &mut violated,
            );
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
            let (per_shard, generated) = expand_batch(model, batch, threads);
            total_states += generated;
            let known = sometimes_reached.clone();
            let properties = &properties;
            let known = &known;
            let admissions: Vec<Admission<S::State>> = std::thread::scope(|scope| {
                let handles: Vec<_> = visited
                    .iter_mut()
                    .zip(per_shard)
                    .map(|(part, buckets)| {
                        scope.spawn(move || admit(model, properties, part, buckets, known))
                    })
                    .collect();
                handles.into_iter().map(join).collect()
            });
            for admission in admissions {
                next_level.extend(admission.fresh);
                for name in admission.sometimes_reached {
                    if !sometimes_reached.contains(&name) {
                        sometimes_reached.push(name);
                    }
                }
                if violated.is_none() {
                    violated = admission.violated;
                }
            }
            if last_report.elapsed() >= crate::check::PROGRESS_INTERVAL {
                last_report = Instant::now();
                progress(Progress {
                    unique_states: visited.iter().map(HashSet::len).sum(),
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
        unique_states: visited.iter().map(HashSet::len).sum(),
        total_states,
        max_depth,
        violated,
        sometimes_reached,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Joins a scoped worker, passing its panic on.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match handle.join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
