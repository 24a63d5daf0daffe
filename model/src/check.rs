//! Runs a configuration of any spec (`crate::spec::Spec`) through Stateright's breadth-first
//! checker or the compact search, and reports the outcome; one runner for both specs,
//! monomorphized per spec.
//!
//! Every claim made here rests on a run that visited the whole bounded state space (the model is
//! bounded by guards in its actions, never by a timeout or a target count), or on a discovery.
//! Stateright overwrites a discovery each time a later state breaks the same property, and stops
//! only at the end of a block of states, so the first trace it returns may be one step longer than
//! needed; `shortest_counterexample` re-runs the search with a depth cut until the trace is the
//! shortest one (breadth-first with one thread visits states in order of depth).

use std::collections::BTreeSet;
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

/// How often a running search is polled for completion.
const POLL_INTERVAL: Duration = Duration::from_millis(5);
/// How often a running search reports progress.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

use serde::Serialize;
use stateright::{Checker, HasDiscoveries, Path};

use crate::spec::{Spec, SpecConfig};
use crate::trace::{self, TraceStep};
use felix_names::Invariant;

/// Whether every invariant held over the whole bounded state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every `always` property held in every reachable state.
    Pass,
    /// An `always` property broke; the report carries the shortest counterexample.
    Violated,
}

/// What one run of one configuration found (`felix check --json` writes it field by field).
#[derive(Clone, Debug)]
pub struct Report {
    /// The configuration's full name, as its `.cfg` file.
    pub config: &'static str,
    /// Whether states were searched up to broker permutations (counts then differ from TLC's).
    pub broker_symmetry: bool,
    /// Pass or violated.
    pub outcome: Outcome,
    /// The violated invariant, if any.
    pub invariant: Option<Invariant>,
    /// Distinct states generated (comparable with TLC's "distinct states found").
    pub unique_states: usize,
    /// States generated including repeats.
    pub total_states: usize,
    /// Length of the longest path explored, in states (the initial state has depth 1).
    pub max_depth: usize,
    /// Wall time of the search (a benchmark figure, never asserted on).
    pub seconds: f64,
    /// The shortest counterexample when violated, else empty.
    pub trace: Vec<TraceStep>,
    /// `sometimes` properties reached during the run.
    pub sometimes_reached: Vec<&'static str>,
    /// `sometimes` properties never reached (a sign of a vacuous check on a passing run).
    pub sometimes_missed: Vec<&'static str>,
}

impl Report {
    /// States per second over the search.
    pub fn states_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.unique_states as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// A snapshot of a running search, for progress lines.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Distinct states so far.
    pub unique_states: usize,
    /// Depth reached so far.
    pub max_depth: usize,
    /// Seconds since the search started.
    pub seconds: f64,
}

/// Checks a configuration to completion with `threads` threads, stopping at the first broken
/// invariant; a violation is then searched again with one thread for its shortest trace.
pub fn check<S: Spec>(config: &'static SpecConfig<S>, threads: usize) -> Report {
    check_with_progress(config, threads, false, &mut |_| {})
}

/// `check`, calling `progress` about every `PROGRESS_INTERVAL` while the search runs. With
/// `broker_symmetry`, one state per orbit under broker permutations is searched
/// (`FelixHeadTrim::with_broker_symmetry`: sound, but the count is not TLC's); a violation's
/// trace is still searched without it, so it names the real brokers.
pub fn check_with_progress<S: Spec>(
    config: &'static SpecConfig<S>,
    threads: usize,
    broker_symmetry: bool,
    progress: &mut dyn FnMut(Progress),
) -> Report {
    assert!(threads >= 1, "a search needs at least one thread");
    let model = S::model(config, broker_symmetry);
    let started = Instant::now();
    let mut checker = model
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
    let broken = first_broken_invariant::<S>(&discovered);
    let (sometimes_reached, sometimes_missed) = sometimes_split::<S>(&discovered);
    let mut report = Report {
        config: config.name,
        broker_symmetry,
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

/// `check_with_progress` on the lean search of `compact` (fingerprints only, no paths), for
/// configurations whose state space does not fit Stateright's checker in memory. Same model,
/// same counts; a violation's trace is then searched with Stateright.
pub fn check_compact<S: Spec>(
    config: &'static SpecConfig<S>,
    threads: usize,
    broker_symmetry: bool,
    progress: &mut dyn FnMut(Progress),
) -> Report {
    let model = S::model(config, broker_symmetry);
    let found = crate::compact::search(&model, threads, progress);
    let reached: BTreeSet<&'static str> = found.sometimes_reached.iter().copied().collect();
    let (sometimes_reached, sometimes_missed) = sometimes_split::<S>(&reached);
    let mut report = Report {
        config: config.name,
        broker_symmetry,
        outcome: Outcome::Pass,
        invariant: None,
        unique_states: found.unique_states,
        total_states: found.total_states,
        max_depth: found.max_depth,
        seconds: found.seconds,
        trace: Vec::new(),
        sometimes_reached,
        sometimes_missed,
    };
    if let Some(invariant) = found.violated.map(invariant_named) {
        report.outcome = Outcome::Violated;
        report.invariant = Some(invariant);
        report.trace = shortest_counterexample(config, invariant);
    }
    report
}

/// A twin's run, searched as CI does: breadth-first, one thread, stopping at the first discovery
/// of the twin's named invariant.
#[derive(Clone, Debug)]
pub struct TwinRun {
    /// The twin's configuration name.
    pub config: &'static str,
    /// The invariant this twin must break.
    pub expected: Invariant,
    /// The invariants that break first: those whose shortest counterexample is no longer than the
    /// shortest one of any invariant, in the model's order. TLC with one worker stops at the first
    /// of them it meets, so a twin is held to being alone in this list.
    pub found: Vec<Invariant>,
    /// Distinct states generated before the search stopped.
    pub unique_states: usize,
    /// Wall time of the search.
    pub seconds: f64,
    /// The shortest counterexample of the expected invariant, if it was found.
    pub trace: Vec<TraceStep>,
    /// Invariants this twin breaks in the same state as its named one
    /// (`felix_names::TwinName::breaks_beside`): found beside it, they do not fail the twin.
    pub beside: Vec<Invariant>,
}

impl TwinRun {
    /// A twin is held to exactly its named invariant: it breaks, and nothing else breaks as early
    /// but what `beside` names.
    pub fn ok(&self) -> bool {
        self.found.contains(&self.expected)
            && self
                .found
                .iter()
                .all(|invariant| *invariant == self.expected || self.beside.contains(invariant))
    }
}

/// Runs one twin: one thread, breadth-first, `finish_when(AnyOf({expected}))`; every invariant
/// discovered on the way is then searched for its shortest counterexample, and only those that
/// break at the smallest depth are reported as found.
pub fn run_twin<S: Spec>(config: &'static SpecConfig<S>) -> TwinRun {
    let expected = config
        .expected_violation()
        .unwrap_or_else(|| panic!("{} is not a twin", config.name));
    let started = Instant::now();
    let checker = S::model(config, false)
        .checker()
        .threads(1)
        .finish_when(HasDiscoveries::AnyOf(BTreeSet::from([expected.name()])))
        .spawn_bfs()
        .join();
    let seconds = started.elapsed().as_secs_f64();
    let discovered: BTreeSet<&'static str> = checker.discoveries().keys().copied().collect();
    let traces: Vec<(Invariant, Vec<TraceStep>)> = S::invariants()
        .filter(|invariant| discovered.contains(invariant.name()))
        .map(|invariant| (invariant, shortest_counterexample(config, invariant)))
        .collect();
    let shortest = traces.iter().map(|(_, trace)| trace.len()).min();
    let found: Vec<Invariant> = traces
        .iter()
        .filter(|(_, trace)| Some(trace.len()) == shortest)
        .map(|(invariant, _)| *invariant)
        .collect();
    let trace = traces
        .into_iter()
        .find(|(invariant, _)| *invariant == expected)
        .map(|(_, trace)| trace)
        .unwrap_or_default();
    TwinRun {
        config: config.name,
        expected,
        found,
        unique_states: checker.unique_state_count(),
        seconds,
        trace,
        beside: config
            .twin
            .map_or(&[][..], |twin| twin.breaks_beside(S::LAYER))
            .to_vec(),
    }
}

/// The shortest trace to a state breaking `invariant`, or empty if no reachable state breaks it.
///
/// Breadth-first with one thread checks states in order of depth, but Stateright keeps the last
/// discovery of a block of states; so the search is repeated with states at or past the depth of
/// the trace found left unchecked, until no shorter trace appears.
pub fn shortest_counterexample<S: Spec>(
    config: &'static SpecConfig<S>,
    invariant: Invariant,
) -> Vec<TraceStep> {
    shortest_path(config, invariant)
        .map(|path| trace::steps(config, path))
        .unwrap_or_default()
}

/// The actions of the shortest path to a state breaking `invariant` (the path
/// `shortest_counterexample` renders), or None if no reachable state breaks it: what the
/// conformance runner (`felix-validate`) replays on the core.
pub fn shortest_counterexample_actions<S: Spec>(
    config: &'static SpecConfig<S>,
    invariant: Invariant,
) -> Option<Vec<S::Action>> {
    shortest_path(config, invariant).map(|path| path.into_actions())
}

/// The shortest path to a state breaking `invariant`, searched as `shortest_counterexample` says.
fn shortest_path<S: Spec>(
    config: &'static SpecConfig<S>,
    invariant: Invariant,
) -> Option<Path<S::State, S::Action>> {
    let invariant = invariant.name();
    let mut best = None;
    let mut depth_limit: Option<NonZeroUsize> = None;
    loop {
        let mut builder = S::model(config, false)
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
                    // Only states of depth < `states` are checked in the next round.
                    Some(limit) if states > 1 => depth_limit = Some(limit),
                    _ => break,
                }
            }
        }
    }
    best
}

/// The first `always` property (in the model's order) that has a discovery.
fn first_broken_invariant<S: Spec>(discovered: &BTreeSet<&'static str>) -> Option<Invariant> {
    S::invariants().find(|invariant| discovered.contains(invariant.name()))
}

/// The invariant whose `always` property is named `name` (the checkers name properties by their
/// names, and only an invariant's can break), so any other name is a bug.
fn invariant_named(name: &'static str) -> Invariant {
    Invariant::parse(name).unwrap_or_else(|| panic!("{name} is not an invariant"))
}

/// Splits the `sometimes` properties into reached and missed.
fn sometimes_split<S: Spec>(
    discovered: &BTreeSet<&'static str>,
) -> (Vec<&'static str>, Vec<&'static str>) {
    S::coverage().partition(|name| discovered.contains(name))
}

/// Serves Stateright's Explorer for a configuration on `address`; blocks until interrupted.
/// Panics if the address cannot be bound (callers check it first).
pub fn serve_explorer<S: Spec>(config: &'static SpecConfig<S>, address: &str) {
    S::model(config, false).checker().serve(address);
}
