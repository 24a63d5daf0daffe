//! Shrinking a failing seed: the smallest run that still breaks the same invariant.
//!
//! Choice-sequence reduction (Hypothesis' internal shrinking): the failing run is replayed with
//! every draw of its streams recorded (`tape`), then edited copies of that recording are replayed
//! (a value that no longer fits its draw, or a draw past the end, is the simplest value, so every
//! try is a run the world could have made). A try is kept when the run still breaks the same
//! invariant under the same twin (no panic, no budget cut) and its recording is smaller: fewer
//! choices, then lexicographically lower. The passes, in rounds from coarse spans of choices to
//! single choices, repeated until a whole cycle of rounds changes nothing or the budget of tries
//! runs out:
//! 1. knobs (`knobs::GROUPS`): fewer nodes and clients, no network faults, fault kinds off, ...;
//! 2. truncate each component's choices (what lies after the violation never mattered);
//! 3. set spans of choices to the simplest values, then delete spans (ddmin-style, halving sizes);
//! 4. lower single choices (to 0, then halfway).
//!
//! Everything is deterministic: the same seed, twin and budget give the same result. `script`
//! turns the shrunk run into a scenario file.

pub mod knobs;
mod minimize;
mod packets;
pub mod schedule;
pub mod script;

use crate::env::tape::{self, Choices, Schedule, Tape};
use crate::render::trace::Recorder;
use crate::seeded::fork::Fork;
use crate::seeded::knobs::Knobs;
use crate::{judge, seeded::world, Finding};
use felix_core::rules::{Invariant, Layer};
use felix_core::{Rules, TwinName};
use std::collections::BTreeMap;

/// One run of the world under a tape, judged.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub knobs: Knobs,
    /// The choices the run used (its normalized recording).
    pub choices: Choices,
    pub events: u64,
    pub violations: Vec<Finding>,
    /// Per invariant the run breaks, the history index of its first violation.
    pub broken: BTreeMap<Invariant, usize>,
    /// The history the audits judged (for rendering a scenario).
    pub history: Vec<felix_core::history::Event>,
    /// The trace lines, when asked for.
    pub trace_lines: Option<Vec<crate::render::trace::TraceLine>>,
    /// What each node's host was given, interleaved with the trace lines (with the trace only).
    pub schedule: Vec<tape::Step>,
}

impl Attempt {
    /// Breaks `invariant`, with no panic and no budget cut.
    pub fn breaks(&self, invariant: Invariant) -> bool {
        breaks(&self.violations, invariant)
    }

    /// The history index of the first violation of `invariant`, when the run `breaks` it.
    pub fn broken_at(&self, invariant: Invariant) -> Option<usize> {
        broken_at(&self.violations, &self.broken, invariant)
    }

    /// The shortlex size of the recording: the count of choices, then the values in order.
    pub fn size(&self) -> (usize, Vec<u64>) {
        size_of(&self.choices)
    }
}

/// The findings name `invariant`, and no panic or budget cut.
fn breaks(findings: &[Finding], invariant: Invariant) -> bool {
    findings.iter().any(|f| f.invariant == invariant)
        && !findings
            .iter()
            .any(|f| matches!(f.invariant, Invariant::Panic | Invariant::EventBudget))
}

/// The history index of the first violation of `invariant`, when the findings `breaks` it.
fn broken_at(
    findings: &[Finding],
    broken: &BTreeMap<Invariant, usize>,
    invariant: Invariant,
) -> Option<usize> {
    if !breaks(findings, invariant) {
        return None;
    }
    broken.get(&invariant).copied()
}

fn size_of(choices: &Choices) -> (usize, Vec<u64>) {
    let values: Vec<u64> = choices.values().flatten().copied().collect();
    (values.len(), values)
}

/// Where a run is cut (`World::cut`): after the event that records history event `history`, after
/// `events` events, or after the first event that leaves more than `draws` draws on its tape,
/// whichever comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub history: usize,
    pub events: u64,
    pub draws: usize,
}

impl Cut {
    /// Right after history event `history` (the violation): the run judged only up to there.
    pub fn at(history: usize) -> Cut {
        Cut {
            history,
            events: u64::MAX,
            draws: usize::MAX,
        }
    }
}

/// What every run of one shrink shares: the seed, the rules (the twin's), the label the trace
/// names them by, and the fork when the run is a continuation (`felix shrink --fork`: its streams
/// re-keyed after the fork's step while recording; a replayed tape hands back the same draws).
#[derive(Clone, Debug)]
pub struct Base {
    pub seed: u64,
    pub rules: Rules,
    pub label: String,
    pub fork: Option<Fork>,
}

impl Base {
    /// `twin`'s run of `seed` (its rules, named after it), or that run's continuation `fork`.
    pub fn twin(seed: u64, twin: TwinName, fork: Option<Fork>) -> Base {
        Base {
            seed,
            rules: Rules::twin(twin),
            label: twin.name().to_string(),
            fork,
        }
    }
}

/// Runs the base's seed with `knobs`, recording (`replay` None) or replaying a tape, to its end
/// or to `cut`.
pub fn attempt(
    base: &Base,
    knobs: &Knobs,
    replay: Option<Choices>,
    keep_trace: bool,
    cut: Option<Cut>,
) -> Attempt {
    attempt_for(base, knobs, replay, keep_trace, cut, None)
}

/// `attempt`, judged by `only`'s audit alone when given (`judge::judge_by`): a shrinking try asks
/// only whether its run still breaks the invariant being shrunk.
pub fn attempt_for(
    base: &Base,
    knobs: &Knobs,
    replay: Option<Choices>,
    keep_trace: bool,
    cut: Option<Cut>,
    only: Option<Invariant>,
) -> Attempt {
    let tape = Tape::new(replay);
    // The schedule is recorded with the trace (the final replay), never on every try.
    let schedule = keep_trace.then(Schedule::default);
    let ran = run_taped(base, knobs, &tape, schedule.clone(), keep_trace, cut);
    let choices = tape.used();
    let schedule = schedule
        .map(|schedule| schedule.steps())
        .unwrap_or_default();
    let judged = judge::judge_by(&ran, only);
    let mut recorder: Recorder = ran.recorder;
    let trace_lines = recorder.take_lines();
    Attempt {
        knobs: knobs.clone(),
        choices,
        events: ran.events,
        violations: judged.findings,
        broken: judged.broken,
        history: recorder.history,
        trace_lines,
        schedule,
    }
}

/// The base's seed under `knobs`, every draw through `tape`, to its end or to `cut`, recording
/// `schedule` and the trace lines when asked.
fn run_taped(
    base: &Base,
    knobs: &Knobs,
    tape: &Tape,
    schedule: Option<Schedule>,
    keep_trace: bool,
    cut: Option<Cut>,
) -> world::Ran {
    let setup = world::Setup {
        label: Some(base.label.clone()),
        tape: Some(tape.clone()),
        schedule,
        fork: base.fork,
        ..world::Setup::new(base.seed, base.rules, knobs.clone(), keep_trace)
    };
    world::run(setup, |world| {
        if let Some(cut) = cut {
            world.cut(cut.history, cut.events, cut.draws);
        }
    })
}

/// A try: its run to the try's cut on a marking tape, judged by `only`'s audit, kept whole so that
/// the same run cut right after its violation is read off it (`cut_at`) instead of run again.
pub struct Probe {
    ran: world::Ran,
    tape: Tape,
    judged: judge::Judged,
}

impl Probe {
    pub fn run(base: &Base, knobs: &Knobs, choices: Choices, cut: Cut, only: Invariant) -> Probe {
        let tape = Tape::marking(Some(choices));
        let ran = run_taped(base, knobs, &tape, None, false, Some(cut));
        let judged = judge::judge_by(&ran, Some(only));
        Probe { ran, tape, judged }
    }

    pub fn broken_at(&self, invariant: Invariant) -> Option<usize> {
        broken_at(&self.judged.findings, &self.judged.broken, invariant)
    }

    /// The run `attempt_for(.., Some(Cut::at(at)), Some(only))` makes, without running it: the
    /// same run up to the end of the first event that leaves more than `at` history events (a run
    /// is the same, event for event, up to its cut), its recording and history cut there
    /// (`Tape::cut_at`), and that history judged again. `None` when the run never got past `at`.
    pub fn cut_at(mut self, knobs: &Knobs, at: usize, only: Invariant) -> Option<Attempt> {
        let (mark, choices) = self.tape.cut_at(at)?;
        self.ran.recorder.truncate_history(mark.history);
        self.ran.events = mark.events;
        let judged = judge::judge_by(&self.ran, Some(only));
        Some(Attempt {
            knobs: knobs.clone(),
            choices,
            events: mark.events,
            violations: judged.findings,
            broken: judged.broken,
            history: std::mem::take(&mut self.ran.recorder.history),
            trace_lines: None,
            schedule: Vec::new(),
        })
    }
}

/// Why shrinking stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A full round of passes changed nothing: the run is as small as these passes make it.
    Fixpoint,
    /// The budget of tries ran out first: partially shrunk.
    Budget,
}

/// What shrinking produced.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub seed: u64,
    pub twin: TwinName,
    /// The continuation shrunk, when the seed's run was one (`Target::fork`).
    pub fork: Option<Fork>,
    pub invariant: Invariant,
    /// The seed's run, to its end.
    pub original: Attempt,
    /// The events of the seed's run up to its violation (where the shrinker cuts every run).
    pub original_to_violation: u64,
    /// The shrunk run, cut right after its violation, with its trace and schedule.
    pub shrunk: Attempt,
    /// Candidates tried (the original's recording and its replays included): the budget's unit.
    pub tries: u64,
    /// Runs of the world (one per try: a candidate that breaks is cut at its violation by reading
    /// off its run, `Probe::cut_at`; the seed's runs and the final replay besides).
    pub runs: u64,
    /// Tries that were kept.
    pub improvements: u64,
    pub stop: Stop,
    /// Runs the shrinker passed on its way, largest first (the seed's run cut at its violation,
    /// then kept ones, thinned to at most `PASSED_MAX`): the scenario's fallbacks when the shrunk
    /// run translates to no reproducing script (`script::scenario`).
    pub passed: Vec<Kept>,
}

/// A run the shrinker kept: its knobs, its recording, and the history index of its violation
/// (where it is cut).
#[derive(Clone, Debug)]
pub struct Kept {
    pub knobs: Knobs,
    pub choices: Choices,
    pub at: usize,
}

impl Kept {
    /// The run again, cut right after its violation, with its trace and schedule.
    pub fn replay(&self, base: &Base) -> Attempt {
        attempt(
            base,
            &self.knobs,
            Some(self.choices.clone()),
            true,
            Some(Cut::at(self.at)),
        )
    }
}

/// Why a seed cannot be shrunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShrinkError {
    /// The seed does not break the twin's invariant.
    Passes { invariant: Invariant },
    /// Recording the run changed it (a bug in the tape).
    Flaky,
}

impl std::fmt::Display for ShrinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShrinkError::Passes { invariant } => {
                write!(f, "the seed does not break {invariant}: nothing to shrink")
            }
            ShrinkError::Flaky => write!(f, "the recorded run differs from the plain run"),
        }
    }
}

/// A try's cut beyond the best run's violation: a candidate may break up to half as far again into
/// the history (plus this), else it is not worth its run.
pub const HISTORY_SLACK: usize = 64;
/// The first rounds' spans: a component's length over this (`shrink`'s coarse-to-fine rounds).
const CHUNKS_FIRST: usize = 8;
/// Past this many spans per component, spans are single choices (`usize::MAX` chunks), and a
/// round also lowers single choices.
const CHUNKS_MAX: usize = 2_048;
/// The most runs `Shrunk::passed` keeps (thinned evenly past it).
const PASSED_MAX: usize = 64;
/// A try's cut in events: twice the best run's events to its violation, plus this (a try that
/// livelocks stops here instead of at the world's event budget, `world::events_max`).
const EVENTS_SLACK: u64 = 2_000;

struct Shrinker<'a> {
    base: Base,
    /// The runs `best` was before (`Shrunk::passed`).
    passed: Vec<Kept>,
    invariant: Invariant,
    /// The smallest run so far, cut right after its violation.
    best: Attempt,
    /// The history index of `best`'s violation.
    best_at: usize,
    tries: u64,
    /// Runs of the world.
    runs: u64,
    improvements: u64,
    budget: u64,
    progress: &'a mut dyn FnMut(&str),
}

impl Shrinker<'_> {
    fn out_of_budget(&self) -> bool {
        self.tries >= self.budget
    }

    /// Where a try is cut: far enough past the best run's violation for a candidate that breaks
    /// somewhat later, near enough that a try which does not break (or livelocks) stays cheap.
    /// And once the try has drawn more choices than the best run did to its violation: a run that
    /// breaks only after that is never kept (a kept run draws at most as many, `try_candidate`),
    /// and one that breaks before is the same run up to there. So the draws bound changes no
    /// try's verdict. (Hypothesis abandons a test case that draws past its buffer, an overrun,
    /// for the same reason.)
    fn limit(&self) -> Cut {
        Cut {
            history: self.best_at + self.best_at / 2 + HISTORY_SLACK,
            events: 2 * self.best.events + EVENTS_SLACK,
            draws: self.best.choices.values().map(Vec::len).sum(),
        }
    }

    /// Runs a candidate; keeps it when it still fails and is smaller (or, for `knobs_changed`,
    /// simpler knobs). Returns whether it was kept. A kept run is the candidate cut right after
    /// its violation: its recording holds only the choices drawn up to there, so sizes compare
    /// what each run needed to break.
    fn try_candidate(&mut self, knobs: &Knobs, choices: Choices, knobs_changed: bool) -> bool {
        if self.out_of_budget() {
            return false;
        }
        if !knobs_changed && size_of(&choices) >= self.best.size() {
            return false;
        }
        self.tries += 1;
        self.runs += 1;
        let probe = Probe::run(&self.base, knobs, choices, self.limit(), self.invariant);
        let Some(at) = probe.broken_at(self.invariant) else {
            return false;
        };
        // The run cut right after the violation: the probe ran on to its cut and drew choices the
        // violation never needed.
        let Some(candidate) = probe.cut_at(knobs, at, self.invariant) else {
            return false;
        };
        if candidate.broken_at(self.invariant) != Some(at) {
            // The same run cut earlier must break at the same step (else the tape is flaky).
            return false;
        }
        // Simpler knobs are kept when the run drew no more choices to its violation: a knob
        // change that makes the run longer would undo what the choice passes cut.
        let smaller = if knobs_changed {
            candidate.size().0 <= self.best.size().0
        } else {
            candidate.size() < self.best.size()
        };
        if smaller {
            self.improvements += 1;
            (self.progress)(&format!(
                "shrink: try {}: kept, {} events to the violation, {} choices",
                self.tries,
                candidate.events,
                candidate.size().0
            ));
            self.passed.push(Kept {
                knobs: self.best.knobs.clone(),
                choices: self.best.choices.clone(),
                at: self.best_at,
            });
            if self.passed.len() > PASSED_MAX {
                // Thinned evenly, the seed's own run kept: a fallback wants runs of every size.
                let mut index = 0;
                self.passed.retain(|_| {
                    index += 1;
                    index % 2 == 1
                });
            }
            self.best = candidate;
            self.best_at = at;
            return true;
        }
        false
    }

    /// Runs `round` (one try of a pass's candidates, in order, `true` at the first kept) again
    /// after each success, until a round keeps nothing or the budget runs out: whether any round
    /// kept one.
    fn until_stuck(&mut self, mut round: impl FnMut(&mut Self) -> bool) -> bool {
        let mut changed = false;
        while round(self) {
            changed = true;
            if self.out_of_budget() {
                break;
            }
        }
        changed
    }

    fn knobs_pass(&mut self) -> bool {
        let mut changed = false;
        for (_, group) in knobs::GROUPS {
            // A group may apply again after a success (halving the safety phase).
            changed |= self.until_stuck(|shrinker| {
                group(&shrinker.best.knobs).iter().any(|candidate| {
                    shrinker.try_candidate(candidate, shrinker.best.choices.clone(), true)
                })
            });
        }
        changed
    }

    fn components(&self) -> Vec<crate::env::rng::Component> {
        self.best.choices.keys().copied().collect()
    }

    /// The best run's choices of `component` (none if it drew none).
    fn choices_of(&self, component: crate::env::rng::Component) -> Vec<u64> {
        self.best
            .choices
            .get(&component)
            .cloned()
            .unwrap_or_default()
    }

    /// Cuts each component's choices to the shortest prefix (halving) that still fails.
    fn truncate_pass(&mut self) -> bool {
        let mut changed = false;
        for component in self.components() {
            changed |= self.until_stuck(|shrinker| {
                let len = shrinker.best.choices.get(&component).map_or(0, Vec::len);
                if len == 0 {
                    return false;
                }
                [0, len / 2, len * 3 / 4, len - 1].into_iter().any(|keep| {
                    let mut choices = shrinker.best.choices.clone();
                    if let Some(values) = choices.get_mut(&component) {
                        values.truncate(keep);
                    }
                    let knobs = shrinker.best.knobs.clone();
                    shrinker.try_candidate(&knobs, choices, false)
                })
            });
        }
        changed
    }

    /// Spans of choices set to zero (`delete` false) or deleted, halving span sizes down to a
    /// component's length over `chunks` (at least one choice), starting below its length over
    /// `coarser` (the band the round before took) when given.
    fn spans_pass(&mut self, delete: bool, chunks: usize, coarser: Option<usize>) -> bool {
        let mut changed = false;
        for component in self.components() {
            let len = self.best.choices.get(&component).map_or(0, Vec::len);
            let smallest = (len / chunks).max(1);
            let mut size = len / 2;
            if let Some(coarser) = coarser {
                let done = (len / coarser).max(1);
                while size >= done && size >= 1 {
                    size /= 2;
                }
            }
            while size >= smallest && size >= 1 && !self.out_of_budget() {
                let mut start = 0;
                loop {
                    let values = self.choices_of(component);
                    if start >= values.len() || self.out_of_budget() {
                        break;
                    }
                    let end = (start + size).min(values.len());
                    let mut edited = values.clone();
                    if delete {
                        edited.drain(start..end);
                    } else {
                        if edited[start..end].iter().all(|value| *value == 0) {
                            start = end;
                            continue;
                        }
                        edited[start..end].iter_mut().for_each(|value| *value = 0);
                    }
                    let mut choices = self.best.choices.clone();
                    choices.insert(component, edited);
                    let knobs = self.best.knobs.clone();
                    if self.try_candidate(&knobs, choices, false) {
                        changed = true;
                        // Deleted: the next span now starts here; zeroed: move on.
                        if !delete {
                            start = end;
                        }
                    } else {
                        start = end;
                    }
                }
                size /= 2;
            }
        }
        changed
    }

    /// The passes, round after round, until a whole cycle of rounds (coarse to single choices)
    /// changes nothing or the budget runs out.
    fn rounds(&mut self) -> Stop {
        let mut round = 0;
        // Coarse to fine: each round takes one band of span sizes, below a component's length
        // over the last round's `chunks` down to its length over this round's (fourfold more),
        // so the knob pass runs again between bands on a smaller run, and no round spends the
        // budget trying again the sizes the one before it tried. After the band of single
        // choices (with the lowering of each), a cycle that changed anything starts over at the
        // coarsest band.
        let mut coarser: Option<usize> = None;
        let mut chunks = CHUNKS_FIRST;
        let mut cycle_changed = false;
        // The run the knob and truncate passes last ran on: on the same run they would try the
        // same candidates and fail again (every try is deterministic).
        let mut passes_ran_on: Option<(Knobs, Choices)> = None;
        loop {
            round += 1;
            let finest = chunks > CHUNKS_MAX;
            let spans = if finest { usize::MAX } else { chunks };
            let mut changed = false;
            let run = (self.best.knobs.clone(), self.best.choices.clone());
            if passes_ran_on.as_ref() != Some(&run) {
                passes_ran_on = Some(run);
                changed |= self.knobs_pass();
                changed |= self.truncate_pass();
            }
            changed |= self.spans_pass(false, spans, coarser);
            changed |= self.spans_pass(true, spans, coarser);
            if finest {
                changed |= self.lower_pass();
            }
            (self.progress)(&format!(
                "shrink: round {round} done: {} tries, {} events, {} choices",
                self.tries,
                self.best.events,
                self.best.size().0
            ));
            if self.out_of_budget() {
                break Stop::Budget;
            }
            cycle_changed |= changed;
            if finest {
                if !cycle_changed {
                    break Stop::Fixpoint;
                }
                cycle_changed = false;
                coarser = None;
                chunks = CHUNKS_FIRST;
            } else {
                coarser = Some(chunks);
                chunks = chunks.saturating_mul(4);
            }
        }
    }

    /// Each non-zero choice lowered to 0, else to half its value.
    fn lower_pass(&mut self) -> bool {
        let mut changed = false;
        for component in self.components() {
            let mut position = 0;
            loop {
                let values = self.choices_of(component);
                if position >= values.len() || self.out_of_budget() {
                    break;
                }
                let value = values[position];
                for lower in [0, value / 2] {
                    if lower >= value {
                        continue;
                    }
                    let mut edited = values.clone();
                    edited[position] = lower;
                    let mut choices = self.best.choices.clone();
                    choices.insert(component, edited);
                    let knobs = self.best.knobs.clone();
                    if self.try_candidate(&knobs, choices, false) {
                        changed = true;
                        break;
                    }
                }
                position += 1;
            }
        }
        changed
    }
}

/// What to shrink: a seed under a twin, with the knobs its run had (the seed's biased draw, the
/// default swarm's with `--unbiased`, or given ones), and the finding to keep.
#[derive(Clone, Debug)]
pub struct Target {
    pub seed: u64,
    pub twin: TwinName,
    pub knobs: Knobs,
    /// The invariant to keep broken; `None`: the twin's named invariant if the run breaks it,
    /// else the run's first finding.
    pub invariant: Option<Invariant>,
    /// The continuation to shrink (`felix replay --fork STEP:BRANCH`'s run), if any.
    pub fork: Option<Fork>,
}

impl Target {
    /// The seed under `twin` with the twin's biased knobs, keeping the twin's invariant (or the
    /// first finding): what `felix shrink --seed S --twin T` shrinks.
    pub fn new(seed: u64, twin: TwinName) -> Target {
        Target {
            seed,
            twin,
            knobs: Knobs::draw(seed, Some(twin)),
            invariant: None,
            fork: None,
        }
    }

    /// The invariant to keep for a run with these findings: the asked one if it broke it, else
    /// (none asked) the twin's if it broke it, else the first finding that is not a panic or a
    /// budget cut.
    /// A kept invariant that is not the twin's is said in the progress.
    fn keep(
        &self,
        original: &Attempt,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Invariant, ShrinkError> {
        let named = self.twin.must_break(Layer::Sim);
        let kept = match self.invariant {
            Some(asked) if original.breaks(asked) => asked,
            Some(asked) => return Err(ShrinkError::Passes { invariant: asked }),
            None if original.breaks(named) => named,
            None => original
                .violations
                .iter()
                .map(|finding| finding.invariant)
                .find(|&invariant| original.breaks(invariant))
                .ok_or(ShrinkError::Passes { invariant: named })?,
        };
        if kept != named {
            let why = match self.invariant {
                Some(_) => "asked",
                None => "its first finding",
            };
            progress(&format!(
                "shrink: seed {} twin {} breaks {kept}, not (only) the twin's {named}: keeping {kept} ({why})",
                self.seed, self.twin
            ));
        }
        Ok(kept)
    }
}

/// Shrinks the target's run with at most `budget` tries, reporting progress lines to `progress`.
pub fn shrink(
    target: &Target,
    budget: u64,
    progress: &mut dyn FnMut(&str),
) -> Result<Shrunk, ShrinkError> {
    let (seed, twin, knobs) = (target.seed, target.twin, &target.knobs);
    let base = Base::twin(seed, twin, target.fork);
    let original = attempt(&base, knobs, None, false, None);
    let invariant = target.keep(&original, progress)?;
    let Some(at) = original.broken_at(invariant) else {
        return Err(ShrinkError::Passes { invariant });
    };
    // The recording must replay to the same run (else every try is noise), and the run cut right
    // after its violation must still break there: what follows the violation never mattered.
    let again = attempt(&base, knobs, Some(original.choices.clone()), false, None);
    if again.choices != original.choices || again.events != original.events {
        return Err(ShrinkError::Flaky);
    }
    let cut = attempt(
        &base,
        knobs,
        Some(original.choices.clone()),
        false,
        Some(Cut::at(at)),
    );
    if cut.broken_at(invariant) != Some(at) {
        return Err(ShrinkError::Flaky);
    }
    progress(&format!(
        "shrink: seed {seed} twin {twin}: {} events ({} to the violation), {} choices ({} to the violation), breaks {invariant}",
        original.events,
        cut.events,
        original.size().0,
        cut.size().0,
    ));
    let original_to_violation = cut.events;
    let mut shrinker = Shrinker {
        base,
        passed: Vec::new(),
        invariant,
        best: cut,
        best_at: at,
        tries: 3,
        runs: 3,
        improvements: 0,
        budget: budget.max(3),
        progress,
    };
    let stop = shrinker.rounds();
    let best = shrinker.best.clone();
    // The final run once more, cut at its violation, with its trace and schedule kept for the
    // scenario.
    let shrunk = attempt(
        &shrinker.base,
        &best.knobs,
        Some(best.choices.clone()),
        true,
        Some(Cut::at(shrinker.best_at)),
    );
    if shrunk.broken_at(invariant) != Some(shrinker.best_at) {
        return Err(ShrinkError::Flaky);
    }
    Ok(Shrunk {
        seed,
        twin,
        fork: target.fork,
        invariant,
        original,
        original_to_violation,
        shrunk,
        tries: shrinker.tries,
        runs: shrinker.runs + 1,
        improvements: shrinker.improvements,
        stop,
        passed: shrinker.passed,
    })
}
