//! felix-sim: the deterministic simulator that runs the real Felix core.
//!
//! One run is one seed: a single-threaded event loop on simulated time (`env::queue`), with every
//! random choice drawn from one ChaCha key split into a stream per component (`env::rng`). The
//! seed draws the knobs of its world (`seeded::knobs`, swarm testing); the world
//! (`seeded::world`) runs the core's brokers and replicas over a faulty network (`env::network`)
//! and disks that lose what was not synced (`env::disk`), the lease service (`env::lease`) and
//! clocks that lie (`env::clock`), and records everything (`render::trace`). The audits
//! (`felix-audits`) then judge the history (`judge`).
//!
//! The wings, a folder each: `env` (the environment), `seeded` (the seeded world and its
//! choices), `script` (the scripted driver), `render` (what a run looks like) and `search` (the
//! parallel runner, the guided campaign, the shrinker).
//!
//! Entry point: `run(&RunSpec) -> RunReport`.

pub mod env;
pub mod judge;
pub mod render;
pub mod script;
pub mod search;
pub mod seeded;

use env::{disk, queue};
use render::{describe, story, trace, why};
use seeded::{fork, knobs, world};

use felix_audits::Counts;
use felix_core::api::ClientId;
use felix_core::rules::{Invariant, Rules, TwinName};
use knobs::Knobs;
use queue::Time;
use std::fmt::Write as _;

/// What to run: one seed, maybe with one rule off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    pub seed: u64,
    pub twin: Option<TwinName>,
    /// Keep every trace line (for `--trace`, determinism checks and the failing-run summary).
    pub keep_trace: bool,
    /// A control run: the knobs `twin` would draw (its bias included), with every rule on. A twin
    /// whose catching seed also fails its control run was not caught by its own rule.
    pub control: bool,
    /// Draw the default swarm's knobs even with a twin (no per-twin bias): the measure of how
    /// well the harness finds a bug nobody named (`felix twins --sim --unbiased`).
    pub unbiased: bool,
    /// Run with exactly these knobs instead of the seed's draw (a guided sweep's mutated knobs,
    /// printed in full so that `felix replay --seed S --knobs JSON` reruns it).
    pub knobs: Option<Knobs>,
    /// Hand back each node's durable disk at the end (`RunReport::disks`); changes no run.
    pub keep_disks: bool,
    /// A continuation of this run: its streams re-keyed after the fork's step (`fork`).
    pub fork: Option<fork::Fork>,
}

impl RunSpec {
    pub fn new(seed: u64, twin: Option<TwinName>) -> RunSpec {
        RunSpec {
            seed,
            twin,
            keep_trace: false,
            control: false,
            unbiased: false,
            knobs: None,
            keep_disks: false,
            fork: None,
        }
    }

    /// The knobs of this run: the given ones, or the seed's draw (biased towards the twin
    /// unless `unbiased`).
    pub fn knobs(&self) -> Knobs {
        match &self.knobs {
            Some(knobs) => knobs.clone(),
            None if self.unbiased => Knobs::draw(self.seed, None),
            None => Knobs::draw(self.seed, self.twin),
        }
    }
}

/// One broken invariant, as the report names it: an audit's violation, a panic, a run that hit
/// its event budget, or a step trace validation could not match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub invariant: Invariant,
    /// The trace step (line number) of the event at which it was detected; `None` when the run
    /// recorded nothing (a world that panicked while it was built).
    pub step: Option<u64>,
    /// The clients the finding names (a "why" keeps their events, not the other clients').
    pub clients: Vec<ClientId>,
    /// What happened, in a sentence.
    pub detail: String,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub seed: u64,
    pub twin: Option<TwinName>,
    /// A control run (see `RunSpec::control`).
    pub control: bool,
    pub knobs: Knobs,
    /// The fork this run continues, if it is a continuation (`RunSpec::fork`).
    pub fork: Option<fork::Fork>,
    pub trace_hash: u64,
    /// Trace lines (history and simulator events).
    pub steps: u64,
    /// Events the loop processed (deliveries, ticks, syncs, ...).
    pub events: u64,
    pub simulated_micros: Time,
    pub violations: Vec<Finding>,
    /// The audits' coverage counters and probes (every one, zeros included) and the
    /// simulator's counters (those it counted); trace validation adds its counts by name.
    pub coverage: Counts,
    pub trace_lines: Option<Vec<trace::TraceLine>>,
    /// Each node's durable disk at the end, in node order, when `RunSpec::keep_disks` asked.
    pub disks: Vec<disk::NodeDisk>,
}

/// Trace lines shown before a violation in the summary, unless the caller asks for more.
pub const CONTEXT_LINES: usize = 24;

/// How much of the run a failing summary shows before the violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// This many lines before the violation's step.
    Before(usize),
    /// Every line from the start of the run.
    All,
}
/// Violations listed in the summary (the first is the one explained).
const VIOLATIONS_SHOWN_MAX: usize = 6;

impl RunReport {
    /// The report of `spec` before anything ran: its identity and knobs, no events, no
    /// findings, no coverage (a run that panicked before it could report fills in the panic).
    pub fn unrun(spec: &RunSpec) -> RunReport {
        RunReport {
            seed: spec.seed,
            twin: spec.twin,
            control: spec.control,
            knobs: spec.knobs(),
            fork: spec.fork,
            trace_hash: 0,
            steps: 0,
            events: 0,
            simulated_micros: 0,
            violations: Vec::new(),
            coverage: Counts::default(),
            trace_lines: None,
            disks: Vec::new(),
        }
    }

    /// A human summary: the knobs, the outcome, and for a failure the violation, its step, the
    /// events it depends on ("why") and the `CONTEXT_LINES` events leading to it.
    pub fn summary(&self) -> String {
        self.summary_with(Window::Before(CONTEXT_LINES))
    }

    /// `summary` with the window before the violation chosen by the caller.
    pub fn summary_with(&self, window: Window) -> String {
        self.summary_why(window, why::WHY_LINES_MAX)
    }

    /// `summary_with`, the why listing at most `why_max` events.
    pub fn summary_why(&self, window: Window, why_max: usize) -> String {
        let mut text = String::new();
        let control = if self.control {
            " (control: every rule on)"
        } else {
            ""
        };
        let twin = self
            .twin
            .map(|twin| format!(" twin {twin}{control}"))
            .unwrap_or_default();
        let fork = self
            .fork
            .map(|fork| format!(" fork {fork}"))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "seed {}{fork}{twin}: {}",
            self.seed,
            self.knobs.describe()
        );
        let _ = writeln!(
            text,
            "  {} events, {} trace lines, {:.3} s simulated, trace hash {:016x}",
            self.events,
            self.steps,
            self.simulated_micros as f64 / 1e6,
            self.trace_hash
        );
        let coverage: Vec<String> = (self.coverage.entries().iter())
            .map(|(key, count)| format!("{key}={count}"))
            .collect();
        let _ = writeln!(text, "  coverage: {}", coverage.join(" "));
        if self.violations.is_empty() {
            let _ = writeln!(text, "  ok: every invariant held");
            return text;
        }
        for finding in self.violations.iter().take(VIOLATIONS_SHOWN_MAX) {
            let step = finding
                .step
                .map(|step| format!(" at step {step}"))
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "  VIOLATION {}{step}: {}",
                finding.invariant, finding.detail
            );
        }
        if self.violations.len() > VIOLATIONS_SHOWN_MAX {
            let _ = writeln!(
                text,
                "  ... and {} more violations",
                self.violations.len() - VIOLATIONS_SHOWN_MAX
            );
        }
        if let (Some(first), Some(lines)) = (self.violations.first(), &self.trace_lines) {
            if let Some(step) = first.step {
                let step = (step as usize).min(lines.len().saturating_sub(1));
                let named = why::Named::of(&first.detail, first.step, &first.clients);
                let (why, how) = match why::causal(&named, lines, step, why_max) {
                    Some(why) => (why, "by what it names"),
                    None => (
                        why::lines(first.invariant, &first.clients, lines, step, why_max),
                        "by kind",
                    ),
                };
                let story = story::story(lines, &why, &named.steps);
                if !story.is_empty() {
                    let _ = writeln!(text, "  in short, who did what in the why:");
                    for line in story {
                        let _ = writeln!(text, "    {line}");
                    }
                }
                let _ = writeln!(
                    text,
                    "  why: the events {} depends on, {how} ({} of them, the latest {why_max} at most):",
                    first.invariant,
                    why.len(),
                );
                for index in why {
                    let _ = writeln!(text, "  {}", describe::trace_line(&lines[index]));
                }
                let from = match window {
                    Window::Before(count) => step.saturating_sub(count),
                    Window::All => 0,
                };
                let _ = writeln!(
                    text,
                    "  events leading to {} (steps {from}..={step}):",
                    first.invariant
                );
                for line in lines.iter().take(step + 1).skip(from) {
                    let _ = writeln!(text, "  {}", describe::trace_line(line));
                }
            }
        }
        text
    }
}

/// Runs one seed to the end and judges it with every audit. A panic inside the run (a core
/// assert, a simulator bug) is reported as a `Panic` finding of that seed, so one bad seed never
/// takes a sweep down.
pub fn run(spec: &RunSpec) -> RunReport {
    run_observed(spec, None).0
}

/// `run` with an observer called after every handled event (trace validation); the observer is
/// handed back with the report, and its finding (`Observer::finding`) is judged with the rest.
/// The run is the same, event for event, as without it.
pub fn run_observed(
    spec: &RunSpec,
    observer: Option<Box<dyn world::Observer>>,
) -> (RunReport, Option<Box<dyn world::Observer>>) {
    let knobs = spec.knobs();
    let (rules, label) = match spec.twin {
        Some(twin) if spec.control => (
            Rules::default(),
            Some(format!("{twin} control (every rule on)")),
        ),
        Some(twin) => (Rules::twin(twin), Some(twin.name().to_string())),
        None => (Rules::default(), None),
    };
    let setup = world::Setup {
        label,
        fork: spec.fork,
        ..world::Setup::new(spec.seed, rules, knobs.clone(), spec.keep_trace)
    };
    let mut ran = world::run(setup, |world| {
        if let Some(observer) = observer {
            world.set_observer(observer);
        }
        if spec.keep_disks {
            world.keep_disks();
        }
    });
    let judged = judge::judge(&ran);
    let mut coverage = Counts::default();
    for (counter, count) in judged.coverage.named() {
        coverage.set(counter, count);
    }
    for (probe, count) in felix_audits::probes::probes(&ran.recorder.history) {
        coverage.set(probe, count);
    }
    coverage.sum(&ran.counters);
    let report = RunReport {
        seed: spec.seed,
        twin: spec.twin,
        control: spec.control,
        knobs,
        fork: spec.fork,
        trace_hash: ran.recorder.hash(),
        steps: ran.recorder.steps(),
        events: ran.events,
        simulated_micros: ran.simulated_micros,
        violations: judged.findings,
        coverage,
        trace_lines: ran.recorder.take_lines(),
        disks: std::mem::take(&mut ran.disks),
    };
    (report, ran.observer.take())
}
