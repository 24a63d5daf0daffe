//! A coverage-guided campaign: the next runs' knobs are chosen by what earlier runs reached.
//!
//! AFL's loop over semantic events instead of edges. Every run reports counters; those that say
//! what the system did (the audits' coverage and the probes, not the faults the harness injected)
//! guide: each counter's value falls in an AFL bucket (1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+),
//! and a run that reaches a (counter, bucket) pair no earlier run reached joins the corpus. New
//! runs are mostly mutants of corpus entries, picked with energy proportional to how rare their
//! pairs are:
//! - **reseed**: the parent's knobs with a new run seed (the same world shape, other timelines:
//!   what reached a rare situation once tends to reach it again);
//! - **a knob or two**: the parent's knobs with one or two knobs redrawn by the default swarm (from
//!   the draw of another seed), or a BUGGIFY activation set taken over;
//! - **crossover**: each knob from one of two corpus entries.
//!
//! and some are plain seeds (exploration never stops). A run after the first batch that reaches a
//! counter no run reached before (a situation's first hit) is followed up at once: its knobs are
//! reseeded `FOLLOW_UPS` times before energy picks parents again, as Antithesis branches from the
//! first run that satisfies a sometimes-assertion. Energy alone spreads such a hit's share over
//! every entry holding a rare bucket (a few percent each), so the step one situation beyond it (a
//! conjunction: a stale writer that resumed past a deletion, then wrote) was rarely tried.
//! Nothing here knows a rule or a twin.
//!
//! With branching on (`Campaign::branching`, `felix sweep --guided --branches`), such a first hit
//! is followed up by `FOLLOW_UPS` continuations instead (`fork`): the run itself, forked at the
//! trace step where it first reached the new counter (found by running it once more,
//! `fork::first_step`), each branch drawing the rest of the run afresh, as Antithesis branches
//! from an interesting moment instead of re-running from time zero. The same trigger, the same
//! number of runs (each continuation counts as one), only where they start differs. A run that is
//! itself a continuation is followed up by reseeds (forks do not nest).
//!
//! Determinism: the campaign draws from its own stream of the start seed; runs are generated a
//! batch at a time from the corpus as it stood before the batch, and results are observed in run
//! index order, so the campaign is a function of (start seed, budget) alone, whatever the number
//! of threads that run a batch. Every run is a `RunSpec` with its knobs in full, so a finding
//! replays with `felix replay --seed S --knobs JSON`.

use crate::env::rng::{Component, Stream};
use crate::seeded::fork::Fork;
use crate::seeded::knobs::Knobs;
use crate::{RunReport, RunSpec};
use felix_audits::coverage::Origin;
use felix_audits::{Counter, Counts};
use felix_core::TwinName;
use serde_json::Value;
use std::collections::BTreeMap;

/// Runs generated at once (and run in parallel) from one state of the corpus.
pub const BATCH: u64 = 32;
/// The chance that a run after the first batch is a plain seed instead of a mutant.
const PLAIN_PER_MILLION: u32 = 250_000;
/// Reseeds owed to a run that reached a counter no earlier run reached (after the first batch):
/// the first hit of a situation is explored from at once (see `Campaign::follow_ups`).
pub const FOLLOW_UPS: u32 = 8;

/// The AFL bucket of a positive count.
pub fn bucket(count: u64) -> u8 {
    match count {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => 3,
        4..=7 => 4,
        8..=15 => 5,
        16..=31 => 6,
        32..=127 => 7,
        _ => 8,
    }
}

/// Whether a counter measures what the system did (the audits' coverage and the probes), not
/// what the harness injected (faults, BUGGIFY firings, messages dropped): only those guide.
pub fn guides(counter: Counter) -> bool {
    match counter.entry().origin {
        Origin::Counter | Origin::Probe => true,
        Origin::Sim => false,
    }
}

/// The (counter, bucket) pairs a run reached, over the counters that guide, in the counters'
/// (name) order.
pub fn features(coverage: &Counts) -> Vec<(Counter, u8)> {
    (coverage.counters())
        .filter(|(counter, count)| *count > 0 && guides(*counter))
        .map(|(counter, count)| (counter, bucket(count)))
        .collect()
}

/// A corpus entry: a run that reached a new pair.
#[derive(Clone, Debug)]
pub struct Entry {
    pub index: u64,
    pub knobs: Knobs,
    pub features: Vec<(Counter, u8)>,
}

/// The campaign's state.
pub struct Campaign {
    start: u64,
    budget: u64,
    twin: Option<TwinName>,
    stream: Stream,
    generated: u64,
    /// How many runs reached each pair.
    hits: BTreeMap<(Counter, u8), u64>,
    corpus: Vec<Entry>,
    /// Counters some run reached (any bucket).
    reached: std::collections::BTreeSet<Counter>,
    /// Corpus entries owed reseeds, oldest first, with how many are left: a situation's first
    /// hit is explored before energy decides (Antithesis's sometimes-assertions branch from the
    /// first run that satisfies one; energy alone spreads a rare hit's share over every entry
    /// that holds some rare bucket, and a conjunction one step beyond it is then rarely tried).
    follow_ups: std::collections::VecDeque<(usize, u32)>,
    /// Branch first hits instead of reseeding them (`branching`).
    branching: bool,
    /// First hits owed continuations, oldest first (with branching on).
    forks: std::collections::VecDeque<Pending>,
    /// Runs made only to find a fork's step (`fork::first_step`), outside the budget.
    locates: u64,
}

/// A first hit owed continuations: the run (its seed and knobs), the counters it reached first,
/// where it first reached one (found when the first continuation is generated) and how many
/// branches are still owed.
struct Pending {
    seed: u64,
    knobs: Knobs,
    counters: Vec<Counter>,
    step: Option<u64>,
    next_branch: u32,
}

impl Campaign {
    /// A campaign of `budget` runs from `start`, every run with `twin`'s rule off if given (and
    /// the default swarm's knobs: a campaign is never biased).
    pub fn new(start: u64, budget: u64, twin: Option<TwinName>) -> Campaign {
        Campaign {
            start,
            budget,
            twin,
            stream: Stream::new(start, Component::Campaign),
            generated: 0,
            hits: BTreeMap::new(),
            corpus: Vec::new(),
            reached: std::collections::BTreeSet::new(),
            follow_ups: std::collections::VecDeque::new(),
            branching: false,
            forks: std::collections::VecDeque::new(),
            locates: 0,
        }
    }

    /// The campaign with branching on: a first hit is followed up by continuations forked where
    /// it happened instead of reseeds from time zero.
    pub fn branching(mut self) -> Campaign {
        self.branching = true;
        self
    }

    /// Runs made only to find where a run first reached a counter (outside the budget).
    pub fn locates(&self) -> u64 {
        self.locates
    }

    pub fn corpus(&self) -> &[Entry] {
        &self.corpus
    }

    /// Pairs reached so far.
    pub fn pairs(&self) -> usize {
        self.hits.len()
    }
    /// The corpus entries still owed reseeds, oldest first, with how many are left: what
    /// `next_batch` serves before energy decides.
    pub fn follow_ups(&self) -> &std::collections::VecDeque<(usize, u32)> {
        &self.follow_ups
    }

    /// The next batch of runs (empty when the budget is spent). Index `i` of the campaign is
    /// `generated_before + i`.
    pub fn next_batch(&mut self) -> Vec<RunSpec> {
        let count = BATCH.min(self.budget - self.generated);
        let mut batch = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let index = self.generated;
            self.generated += 1;
            let plain =
                self.corpus.is_empty() || index < BATCH || self.stream.chance(PLAIN_PER_MILLION);
            let mut spec = RunSpec::new(self.start.wrapping_add(index), self.twin);
            spec.unbiased = true;
            if !plain {
                if let Some((seed, knobs, fork)) = self.continuation() {
                    spec.seed = seed;
                    spec.knobs = Some(knobs);
                    spec.fork = Some(fork);
                    batch.push(spec);
                    continue;
                }
                let (seed, knobs) = match self.follow_ups.front_mut() {
                    Some((entry, left)) => {
                        let knobs = self.corpus[*entry].knobs.clone();
                        *left -= 1;
                        if *left == 0 {
                            self.follow_ups.pop_front();
                        }
                        (self.stream.next_u64(), knobs)
                    }
                    None => self.mutant(),
                };
                spec.seed = seed;
                spec.knobs = Some(knobs);
            }
            batch.push(spec);
        }
        batch
    }

    /// Observes the report of run `index` (call in index order).
    pub fn observe(&mut self, index: u64, report: &RunReport) {
        let features = features(&report.coverage);
        let mut new = false;
        for feature in &features {
            let hits = self.hits.entry(*feature).or_insert(0);
            if *hits == 0 {
                new = true;
            }
            *hits += 1;
        }
        // A counter reached for the first time after the first batch (which reaches the common
        // ones): the situation is rare, and runs with the same world shape reach it again.
        let reached_before = self.reached.clone();
        let first_hit = features
            .iter()
            .filter(|(counter, _)| self.reached.insert(*counter))
            .count()
            > 0;
        if first_hit && index >= BATCH {
            if self.branching && report.fork.is_none() {
                let counters = (features.iter())
                    .filter(|(counter, _)| !reached_before.contains(counter))
                    .map(|(counter, _)| *counter)
                    .collect();
                self.forks.push_back(Pending {
                    seed: report.seed,
                    knobs: report.knobs.clone(),
                    counters,
                    step: None,
                    next_branch: 0,
                });
            } else {
                self.follow_ups.push_back((self.corpus.len(), FOLLOW_UPS));
            }
        }
        if new {
            self.corpus.push(Entry {
                index,
                knobs: report.knobs.clone(),
                features,
            });
        }
    }

    /// The next continuation owed to a first hit, if any: (seed, knobs, fork). The fork's step
    /// is where the run first reached one of its new counters (the earliest), found by running
    /// it once more; a first hit that cannot be placed is dropped.
    fn continuation(&mut self) -> Option<(u64, Knobs, Fork)> {
        loop {
            let pending = self.forks.front_mut()?;
            if pending.step.is_none() {
                let rules = match self.twin {
                    Some(twin) => felix_core::Rules::twin(twin),
                    None => felix_core::Rules::default(),
                };
                self.locates += 1;
                pending.step = (pending.counters.iter())
                    .filter_map(|counter| {
                        crate::seeded::fork::first_step(
                            pending.seed,
                            rules,
                            &pending.knobs,
                            None,
                            *counter,
                        )
                    })
                    .min();
            }
            let Some(step) = pending.step else {
                self.forks.pop_front();
                continue;
            };
            let fork = Fork {
                step,
                branch: pending.next_branch,
            };
            let owed = (pending.seed, pending.knobs.clone(), fork);
            pending.next_branch += 1;
            if pending.next_branch >= FOLLOW_UPS {
                self.forks.pop_front();
            }
            return Some(owed);
        }
    }

    /// An entry's energy: the rarer its pairs, the more (in millionths, at least 1).
    fn energy(&self, entry: &Entry) -> u64 {
        let total: u64 = entry
            .features
            .iter()
            .map(|feature| 1_000_000 / self.hits.get(feature).copied().unwrap_or(1).max(1))
            .sum();
        total.max(1)
    }

    fn pick(&mut self) -> usize {
        let energies: Vec<u64> = self.corpus.iter().map(|entry| self.energy(entry)).collect();
        let total: u64 = energies.iter().sum();
        let mut point = self.stream.range(0, total - 1);
        for (index, energy) in energies.iter().enumerate() {
            if point < *energy {
                return index;
            }
            point -= energy;
        }
        energies.len() - 1
    }

    /// A mutant of a corpus entry: (run seed, knobs).
    fn mutant(&mut self) -> (u64, Knobs) {
        let parent_index = self.pick();
        let parent = self.corpus[parent_index].knobs.clone();
        let seed = self.stream.next_u64();
        let knobs = match self.stream.index(4) {
            0 | 1 => parent,
            2 => {
                let donor = Knobs::draw(self.stream.next_u64(), None);
                let key_count = self.stream.range(1, 2);
                let mut knobs = parent;
                for _ in 0..key_count {
                    knobs = self.splice(&knobs, &donor, None);
                }
                knobs
            }
            _ => {
                let other_index = self.pick();
                let other = self.corpus[other_index].knobs.clone();
                self.splice(&parent, &other, Some(500_000))
            }
        };
        (seed, knobs)
    }

    /// `base` with knobs taken from `donor`: one knob (`per_million` None) or each knob with
    /// that chance. Knobs are the JSON fields (the network's counted one by one); the result is
    /// normalized, and `base` itself when the mix is not valid.
    fn splice(&mut self, base: &Knobs, donor: &Knobs, per_million: Option<u32>) -> Knobs {
        let (Ok(mut value), Ok(donor_value)) =
            (serde_json::to_value(base), serde_json::to_value(donor))
        else {
            return base.clone();
        };
        let mut paths: Vec<(String, Option<String>)> = Vec::new();
        if let Value::Object(map) = &value {
            for (key, field) in map {
                match field {
                    Value::Object(inner) if key == "network" => {
                        for inner_key in inner.keys() {
                            paths.push((key.clone(), Some(inner_key.clone())));
                        }
                    }
                    _ => paths.push((key.clone(), None)),
                }
            }
        }
        if paths.is_empty() {
            return base.clone();
        }
        let chosen: Vec<usize> = match per_million {
            None => vec![self.stream.index(paths.len())],
            Some(chance) => (0..paths.len())
                .filter(|_| self.stream.chance(chance))
                .collect(),
        };
        for index in chosen {
            let (key, inner) = &paths[index];
            let from = match inner {
                Some(inner) => donor_value.get(key).and_then(|v| v.get(inner)),
                None => donor_value.get(key),
            };
            let Some(from) = from.cloned() else { continue };
            let to = match inner {
                Some(inner) => value.get_mut(key).and_then(|v| v.get_mut(inner)),
                None => value.get_mut(key),
            };
            if let Some(to) = to {
                *to = from;
            }
        }
        match serde_json::from_value::<Knobs>(value) {
            Ok(mut knobs) => {
                knobs.normalize();
                if knobs.validate().is_ok() {
                    knobs
                } else {
                    base.clone()
                }
            }
            Err(_) => base.clone(),
        }
    }
}
