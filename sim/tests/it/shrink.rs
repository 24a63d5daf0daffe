//! Proves the shrinker's pipeline pieces the twins' test (`shrink_unbiased`, which shrinks every
//! simulator twin the scripted driver can judge from its first unbiased failing seed) does not:
//! shrinking a seed of a twin's biased canary (the seeds `felix twins --sim` finds, replayed
//! without `--unbiased`) is deterministic, byte for byte, and a seed that does not break the twin's
//! invariant is refused. The helpers that check a shrunk scenario live here.
//!
//! No seed is pinned: which run a seed produces moves whenever the swarm changes, so the seeds are
//! found here, deterministically, as `felix twins --sim` finds them.

use felix_core::rules::{Layer, TwinName};
use felix_sim::script;
use felix_sim::search::shrink::{self, script as shrink_script};

/// Seeds scanned for failing ones (each a plain run, milliseconds).
const SCAN: u64 = 1_000;
/// Failing seeds found (the first of the canary) to pick the earliest-breaking one from.
const POOL: usize = 6;
/// Tries per shrink: the test proves the pipeline; `felix shrink` runs its larger default.
const BUDGET: u64 = 200;

/// Of the first `POOL` seeds of `twin`'s canary (knobs biased towards it) that break its
/// invariant, the one that breaks it earliest in its history (the least to shrink and to
/// translate: a shrinker starts best from the smallest counterexample at hand), ties by seed.
fn earliest_failing_seed(twin: TwinName) -> u64 {
    (0..SCAN)
        .filter_map(|seed| {
            felix_sim::run(&felix_sim::RunSpec::new(seed, Some(twin)))
                .violations
                .iter()
                .filter(|finding| finding.invariant == twin.must_break(Layer::Sim))
                .map(|finding| (finding.step.unwrap_or(u64::MAX), seed))
                .min()
        })
        .take(POOL)
        .min()
        .map(|(_, seed)| seed)
        .unwrap_or_else(|| panic!("{twin}: no failing seed in 0..{SCAN}"))
}

pub(crate) fn commands(path: &str, text: &str) -> usize {
    let names = script::verbs::verb_names();
    script::parse::parse(path, text, &names)
        .expect("a scenario parses")
        .blocks
        .len()
}

/// What one twin's shrink gave (printed with `--nocapture`, for a report of the shrinker's
/// figures).
pub(crate) struct Figures {
    pub seed: u64,
    pub events_before: u64,
    pub events_after: u64,
    pub tries: u64,
    pub commands: usize,
    pub hand: usize,
}

/// The scenario shrunk from `target` (its knobs: biased, unbiased or given) within `budget` tries,
/// checked: `Ok` when it passes as written, its control's audit is `ok`, its twin's names the
/// invariant, and it is within twice the hand-written scenario's `hand` commands; `Err(why)`
/// otherwise.
pub(crate) fn shrunk_scenario_of(
    target: &shrink::Target,
    budget: u64,
    hand: usize,
) -> Result<Figures, String> {
    let (twin, seed) = (target.twin, target.seed);
    let shrunk = shrink::shrink(target, budget, &mut |_| {}).map_err(|error| error.to_string())?;
    if !shrunk.shrunk.breaks(twin.must_break(Layer::Sim)) {
        return Err("the shrunk run does not break the invariant".to_string());
    }
    let scenario = shrink_script::scenario(&shrunk, "Shrunk in a test.\n").map_err(|failed| {
        format!(
            "no scenario reproduces ({} verbs translated)",
            failed.verbs.len()
        )
    })?;
    let outcome = script::run_text("shrunk.txt", &scenario.text).map_err(|e| format!("{e:?}"))?;
    if !outcome.passed() {
        return Err(format!("the scenario does not pass: {}", outcome.diff()));
    }
    let audits: Vec<&script::BlockOutcome> = outcome
        .blocks
        .iter()
        .filter(|block| block.command == "audit")
        .collect();
    if audits.len() != 2 || audits[0].actual != ["ok"] {
        return Err(format!("the control does not pass: {audits:?}"));
    }
    let prefix = format!("{}:", twin.must_break(Layer::Sim));
    if !audits[1]
        .actual
        .iter()
        .any(|line| line.starts_with(&prefix))
    {
        return Err(format!("the twin's audit: {:?}", audits[1].actual));
    }
    let ours = commands("shrunk.txt", &scenario.text);
    if ours > 2 * hand {
        return Err(format!("{ours} commands, hand-written {hand}"));
    }
    Ok(Figures {
        seed,
        events_before: shrunk.original.events,
        events_after: shrunk.shrunk.events,
        tries: shrunk.tries,
        commands: ours,
        hand,
    })
}

/// The same seed, twin and budget give the same scenario, byte for byte.
#[test]
fn shrinking_is_deterministic() {
    let twin = TwinName::FloorPastCommit;
    let seed = earliest_failing_seed(twin);
    let run = || {
        let shrunk = shrink::shrink(&shrink::Target::new(seed, twin), BUDGET, &mut |_| {}).unwrap();
        let scenario = shrink_script::scenario(&shrunk, "Shrunk.\n").unwrap();
        (shrunk.tries, shrunk.shrunk.choices.clone(), scenario.text)
    };
    assert_eq!(run(), run());
}

/// A seed that does not break the twin's invariant is refused, not shrunk into another bug.
#[test]
fn a_passing_seed_is_refused() {
    let passing = (0..50)
        .find(|seed| {
            !felix_sim::run(&felix_sim::RunSpec::new(
                *seed,
                Some(TwinName::CompactActive),
            ))
            .violations
            .iter()
            .any(|finding| finding.invariant == TwinName::CompactActive.must_break(Layer::Sim))
        })
        .expect("some seed passes");
    assert!(matches!(
        shrink::shrink(
            &shrink::Target::new(passing, TwinName::CompactActive),
            BUDGET,
            &mut |_| {}
        ),
        Err(shrink::ShrinkError::Passes { .. })
    ));
}
