//! Runs a ParosTrimJump configuration through Stateright's breadth-first checker.
//!
//! The same discipline as `crate::check` (FelixHeadTrim), and the same report types: a claim
//! rests on a run that visited the whole bounded state space (bounded by guards, never by a
//! timeout), or on a discovery; a twin is searched with one thread and stops at the first
//! discovery of its invariant; a trace is searched again with a depth cut until it is a shortest
//! one.

use std::collections::BTreeSet;
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use stateright::{Checker, HasDiscoveries, Model, Path};

use super::config::ParosConfig;
use super::properties;
use super::spec::{Action, ParosTrimJump, State};
use crate::check::{Outcome, Progress, Report, TwinRun, PROGRESS_INTERVAL};
use crate::trace::TraceStep;

/// How often a running search is polled for completion.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// Checks a configuration to completion with `threads` threads, stopping at the first broken
/// invariant (whose shortest trace is then searched with one thread), calling `progress` about
/// every `PROGRESS_INTERVAL`.
pub fn check_with_progress(
    config: &'static ParosConfig,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Report {
    assert!(threads >= 1, "a search needs at least one thread");
    let started = Instant::now();
    let mut checker = ParosTrimJump::new(config)
        .checker()
        .threads(threads)
        .finish_when(HasDiscoveries::AnyFailures)
        .spawn_bfs();
    let handles = checker.handles();
    let mut last_report = Instant::now();
    while !handles.iter().all(|handle| handle.is_finished()) {
        std::thread::sleep(POLL_INTERVAL);
        if last_report.elapsed() >= PROGRESS_INTERVAL {
            last_report = Instant::now();
            progress(Progress {
                unique_states: checker.unique_state_count(),
                max_depth: checker.max_depth(),
                seconds: started.elapsed().as_secs_f64(),
            });
        }
    }
    for handle in handles {
        if let Err(panic) = handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let discovered: BTreeSet<&'static str> = checker.discoveries().keys().copied().collect();
    let broken = properties::INVARIANTS
        .iter()
        .copied()
        .find(|name| discovered.contains(name));
    let (sometimes_reached, sometimes_missed): (Vec<&'static str>, Vec<&'static str>) =
        properties::SOMETIMES
            .iter()
            .copied()
            .partition(|name| discovered.contains(name));
    let mut report = Report {
        config: config.name,
        broker_symmetry: false,
        outcome: Outcome::Pass,
        invariant: None,
        unique_states: checker.unique_state_count(),
        total_states: checker.state_count(),
        max_depth: checker.max_depth(),
        seconds,
        trace: Vec::new(),
        sometimes_reached,
        sometimes_missed,
    };
    if let Some(invariant) = broken {
        report.outcome = Outcome::Violated;
        report.invariant = Some(invariant);
        report.trace = shortest_counterexample(config, invariant);
    }
    report
}

/// `check_with_progress` without progress.
pub fn check(config: &'static ParosConfig, threads: usize) -> Report {
    check_with_progress(config, threads, &mut |_| {})
}

/// Runs one twin as CI does: one thread, breadth-first, stopping at the first discovery of its
/// invariant; every invariant discovered on the way is searched for its shortest trace, and only
/// those that break at the smallest depth are reported as found.
pub fn run_twin(config: &'static ParosConfig) -> TwinRun {
    let expected = config
        .expected_violation()
        .unwrap_or_else(|| panic!("{} is not a twin", config.name));
    let started = Instant::now();
    let checker = ParosTrimJump::new(config)
        .checker()
        .threads(1)
        .finish_when(HasDiscoveries::AnyOf(BTreeSet::from([expected])))
        .spawn_bfs()
        .join();
    let seconds = started.elapsed().as_secs_f64();
    let discovered: BTreeSet<&'static str> = checker.discoveries().keys().copied().collect();
    let traces: Vec<(&'static str, Vec<TraceStep>)> = properties::INVARIANTS
        .iter()
        .copied()
        .filter(|name| discovered.contains(name))
        .map(|name| (name, shortest_counterexample(config, name)))
        .collect();
    let shortest = traces.iter().map(|(_, trace)| trace.len()).min();
    let found: Vec<&'static str> = traces
        .iter()
        .filter(|(_, trace)| Some(trace.len()) == shortest)
        .map(|(name, _)| *name)
        .collect();
    let trace = traces
        .into_iter()
        .find(|(name, _)| *name == expected)
        .map(|(_, trace)| trace)
        .unwrap_or_default();
    TwinRun {
        config: config.name,
        expected,
        found,
        unique_states: checker.unique_state_count(),
        seconds,
        trace,
    }
}

/// The shortest trace to a state breaking `invariant`, or empty if no reachable state breaks it
/// (see `crate::check::shortest_counterexample` for why the search is repeated).
pub fn shortest_counterexample(
    config: &'static ParosConfig,
    invariant: &'static str,
) -> Vec<TraceStep> {
    let mut best = None;
    let mut depth_limit: Option<NonZeroUsize> = None;
    loop {
        let mut builder = ParosTrimJump::new(config)
            .checker()
            .threads(1)
            .finish_when(HasDiscoveries::AnyOf(BTreeSet::from([invariant])));
        if let Some(limit) = depth_limit {
            builder = builder.target_max_depth(limit.get());
        }
        let checker = builder.spawn_bfs().join();
        match checker.discovery(invariant) {
            None => break,
            Some(path) => {
                let states = path.clone().into_states().len();
                best = Some(path);
                match NonZeroUsize::new(states) {
                    Some(limit) if states > 1 => depth_limit = Some(limit),
                    _ => break,
                }
            }
        }
    }
    best.map(|path| steps(config, path)).unwrap_or_default()
}

/// The steps of a path: `Init` with every variable, then each action with what it changed.
pub fn steps(config: &ParosConfig, path: Path<State, Action>) -> Vec<TraceStep> {
    crate::trace::steps_of(path, |state: &State| state.variables(config))
}
