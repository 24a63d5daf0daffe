//! Proves that `shrink` turns a failing seed into a scenario that breaks the twin's invariant in
//! the scripted driver and passes with the rule on, no longer than twice the hand-written
//! `scenarios/twins/<Twin>.txt`, for every twin of the simulator (`Twin::ALL`) but those listed in
//! `NOT_YET`, and that shrinking is deterministic.

use felix_core::Twin;
use felix_sim::script;
use felix_sim::shrink::{self, script as shrink_script};

/// (twin, seed, budget). The seeds are PINNED, picked by one criterion: among the first failing
/// seeds of `felix sweep --twin T --seeds 0..300`, in order, the first whose shrink with this
/// budget reproduces as a script (`felix shrink --seed S --twin T --budget B` writes a scenario).
/// Budgets are small (the test proves the pipeline; `felix shrink` runs the full default). A
/// change to the world that moves runs (the swarm, the phases) may need them re-picked by the
/// same criterion. The first seven reproduce with the coarse translation (`stabilize` between
/// verbs); the others need the run's schedule (`shrink::schedule`: deliveries, ticks, syncs).
const COVERED: [(Twin, u64, u64); 10] = [
    (Twin::HiddenTrims, 60, 3),
    (Twin::Untagged, 60, 3),
    (Twin::ReadFromEarliest, 40, 3),
    (Twin::TailFromRefusal, 0, 3),
    (Twin::CompactActive, 0, 3),
    (Twin::FloorPastCommit, 8, 3),
    (Twin::Retention, 40, 3),
    (Twin::NoopSkip, 20, 50),
    (Twin::AckBeforeSync, 112, 50),
    (Twin::LocalReads, 36, 50),
];

/// Twins whose failing seeds (the first eight of `felix sweep --twin T --seeds 0..300`, budget
/// 50) shrink but do not reproduce as a script yet, even from their schedule: not tested here,
/// listed so that the coverage test below names every twin (see the report of issue 17).
/// VisibleTrims: its pinned seed (12) stopped reproducing when the client backoff and the quiesce
/// moved runs; to be re-picked by the criterion above.
const NOT_YET: [Twin; 3] = [
    Twin::JumpResetsTerm,
    Twin::UnfencedTruncate,
    Twin::VisibleTrims,
];

/// The budget of the determinism test.
const BUDGET: u64 = 3;

/// Every simulator twin is either covered by a pinned seed or listed as not yet reproducing.
#[test]
fn every_twin_is_covered_or_listed() {
    for twin in Twin::ALL {
        let covered = COVERED.iter().any(|(covered, _, _)| *covered == twin);
        assert!(
            covered != NOT_YET.contains(&twin),
            "{twin} must be in exactly one of COVERED and NOT_YET"
        );
    }
}

fn commands(path: &str, text: &str) -> usize {
    let names = script::verbs::verb_names();
    script::parse::parse(path, text, &names)
        .expect("a scenario parses")
        .blocks
        .len()
}

#[test]
fn shrunk_scenarios_break_the_twins_invariant_and_pass_with_the_rule_on() {
    for (twin, seed, budget) in COVERED {
        let shrunk = shrink::shrink(seed, twin, budget, &mut |_| {}).expect("the seed fails");
        assert!(shrunk.shrunk.breaks(twin.invariant().name()));
        let scenario = shrink_script::scenario(&shrunk, "Shrunk in a test.\n")
            .unwrap_or_else(|failed| panic!("{twin}: no scenario from {:?}", failed.verbs));
        let outcome = script::run_text("shrunk.txt", &scenario.text).expect("it parses");
        assert!(outcome.passed(), "{twin}: {}", outcome.diff());
        let audits: Vec<&script::BlockOutcome> = outcome
            .blocks
            .iter()
            .filter(|block| block.command == "audit")
            .collect();
        assert_eq!(audits.len(), 2, "{twin}: one audit per half");
        assert_eq!(audits[0].actual, ["ok"], "{twin}: the control passes");
        let prefix = format!("{}:", twin.invariant());
        assert!(
            audits[1]
                .actual
                .iter()
                .any(|line| line.starts_with(&prefix)),
            "{twin}: {:?}",
            audits[1].actual
        );
        let path = format!(
            "{}/../scenarios/twins/{twin}.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        let hand = std::fs::read_to_string(&path).expect("the hand-written scenario");
        let (ours, theirs) = (
            commands("shrunk.txt", &scenario.text),
            commands(&path, &hand),
        );
        assert!(
            ours <= 2 * theirs,
            "{twin}: {ours} commands, hand-written {theirs}"
        );
    }
}

/// The same seed, twin and budget give the same scenario, byte for byte.
#[test]
fn shrinking_is_deterministic() {
    let run = || {
        let shrunk = shrink::shrink(8, Twin::FloorPastCommit, BUDGET, &mut |_| {}).unwrap();
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
            !felix_sim::run(&felix_sim::RunSpec::new(*seed, Some(Twin::CompactActive)))
                .violations
                .iter()
                .any(|finding| finding.invariant == Twin::CompactActive.invariant())
        })
        .expect("some seed passes");
    assert!(matches!(
        shrink::shrink(passing, Twin::CompactActive, BUDGET, &mut |_| {}),
        Err(shrink::ShrinkError::Passes { .. })
    ));
}
