//! Continuations: a run forked at a trace step, its future drawn afresh.
//!
//! A world at trace step K is a pure function of its seed, rules and knobs, so a continuation
//! needs no snapshot: the world re-runs the deterministic prefix and, before the first event that
//! begins once line K is written, re-keys every stream that draws the future (network, disk,
//! storage faults, the fault plan, the workload, each node's timeouts, the BUGGIFY gate) from a
//! key derived from (seed, K, branch). Lines 0..=K are the parent's, line for line; what follows
//! is a timeline of its own. A continuation is named by (seed, fork step, branch), written
//! `STEP:BRANCH` after `--fork`, and replays exactly (`felix replay --seed S --fork STEP:BRANCH`).
//!
//! Where forks come from: a guided campaign with branching on (`guided::Campaign::branching`)
//! forks a run at the step where it first reached a counter no earlier run reached
//! (`first_step`), instead of reseeding its knobs from time zero.
//!
//! A snapshot (a `Clone` of the world) would save the prefix's re-run; the world holds the core's
//! brokers, hosts and clients, which are not `Clone`, and the prefix costs at most one run.

use crate::seeded::knobs::Knobs;
use crate::seeded::world;
use felix_audits::splitmix::splitmix64;
use felix_audits::Counter;
use felix_core::Rules;

/// Where a continuation leaves its parent, and which of its siblings it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fork {
    /// The parent's trace step after which the streams are re-keyed (the step is the parent's).
    pub step: u64,
    /// Which continuation of that step (each draws its own future).
    pub branch: u32,
}

/// The most branches a fork may name (a bound, and a guard against a typo taken for a branch).
pub const BRANCH_MAX: u32 = 1_000_000;

impl Fork {
    /// Parses `STEP:BRANCH` (both whole numbers, the branch at most `BRANCH_MAX`).
    pub fn parse(text: &str) -> Result<Fork, String> {
        let shape = || format!("{text:?}: not a fork (STEP:BRANCH, e.g. 1200:3)");
        let (step, branch) = text.trim().split_once(':').ok_or_else(shape)?;
        let step = step.trim().parse::<u64>().map_err(|_| shape())?;
        let branch = branch.trim().parse::<u32>().map_err(|_| shape())?;
        if branch > BRANCH_MAX {
            return Err(format!(
                "{text:?}: branch {branch} is over the most, {BRANCH_MAX}"
            ));
        }
        Ok(Fork { step, branch })
    }

    /// The key every re-keyed stream of the continuation is split from: a function of the
    /// parent's seed, the step and the branch alone (SplitMix64's finalizer over each).
    pub fn key(&self, seed: u64) -> u64 {
        let mut key = splitmix64(seed ^ 0x666f_726b_0000_0000);
        key = splitmix64(key ^ self.step);
        splitmix64(key ^ u64::from(self.branch))
    }
}

impl std::fmt::Display for Fork {
    /// `STEP:BRANCH`, as `--fork` takes it.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}:{}", self.step, self.branch)
    }
}

/// The counters that `first_step` can place: the audits' coverage and the probes, both pure
/// functions of a history prefix whose counts never fall as the prefix grows.
fn count_of(history: &[felix_core::history::Event], counter: Counter) -> u64 {
    if let Some((_, count)) =
        (felix_audits::probes::probes(history).iter()).find(|(probe, _)| *probe == counter)
    {
        return *count;
    }
    (felix_audits::coverage::coverage(history).named().iter())
        .find(|(named, _)| *named == counter)
        .map_or(0, |(_, count)| *count)
}

/// The trace step of the history event at which `counter` first rose in the run of (seed,
/// rules, knobs, fork), or `None` if it never did: the run again, then a binary search over its
/// history's prefixes (the counts never fall as a prefix grows).
pub fn first_step(
    seed: u64,
    rules: Rules,
    knobs: &Knobs,
    fork: Option<Fork>,
    counter: Counter,
) -> Option<u64> {
    let setup = world::Setup {
        fork,
        ..world::Setup::new(seed, rules, knobs.clone(), false)
    };
    let ran = world::run(setup, |_| {});
    let history = &ran.recorder.history;
    if count_of(history, counter) == 0 {
        return None;
    }
    // The shortest prefix with a positive count: `low` prefixes have none, `high` do.
    let (mut low, mut high) = (0usize, history.len());
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if count_of(&history[..middle], counter) > 0 {
            high = middle;
        } else {
            low = middle;
        }
    }
    ran.recorder.history_steps.get(high - 1).copied()
}
