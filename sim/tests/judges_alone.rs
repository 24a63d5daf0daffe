//! Each judge added for what nobody named has a planted bug that only it catches: its twin, run
//! with the default swarm (no per-twin bias, as `felix twins --sim --unbiased` hunts), breaks the
//! judge's invariant within a few seeds, and on every seed where it does no other judge finds
//! anything (so with that judge off the bug would go unnoticed there); the control run of each
//! such seed (the same knobs, every rule on) holds every invariant.

use felix_core::rules::{Invariant, TwinName};
use felix_sim::{run, RunSpec};
use std::collections::BTreeSet;

/// The invariants each seed of `seeds` broke, with `twin` off (`control`: every rule on).
fn findings(twin: TwinName, seed: u64, control: bool) -> BTreeSet<Invariant> {
    let mut spec = RunSpec::new(seed, Some(twin));
    spec.unbiased = true;
    spec.control = control;
    run(&spec)
        .violations
        .iter()
        .map(|finding| finding.invariant)
        .collect()
}

/// Hunts `twin` over `seeds` until it broke `judge` on `wanted` seeds, each checked to break
/// nothing else and to hold in its control run. Returns those seeds.
fn caught_alone(
    twin: TwinName,
    judge: Invariant,
    seeds: std::ops::Range<u64>,
    wanted: usize,
) -> Vec<u64> {
    let mut caught = Vec::new();
    for seed in seeds {
        if caught.len() == wanted {
            break;
        }
        let broken = findings(twin, seed, false);
        if !broken.contains(&judge) {
            continue;
        }
        assert_eq!(
            broken,
            BTreeSet::from([judge]),
            "seed {seed}: {twin} is caught by another judge too"
        );
        assert!(
            findings(twin, seed, true).is_empty(),
            "seed {seed}: the control run of {twin} fails"
        );
        caught.push(seed);
    }
    caught
}

#[test]
fn vote_before_persist_is_caught_by_promise_durable_alone() {
    assert_eq!(
        TwinName::VoteBeforePersist.must_break(felix_core::rules::Layer::Sim),
        Invariant::PromiseDurable
    );
    // Every vote granted in the first election goes out ahead of its persist.
    let caught = caught_alone(
        TwinName::VoteBeforePersist,
        Invariant::PromiseDurable,
        0..5,
        5,
    );
    assert!(caught.len() >= 3, "caught on seeds {caught:?} of 0..5");
}

#[test]
fn unconfirmed_reads_are_caught_by_linearizable_alone() {
    assert_eq!(
        TwinName::UnconfirmedReads.must_break(felix_core::rules::Layer::Sim),
        Invariant::Linearizable
    );
    // A deposed leader must serve a read that misses a successor's acknowledged write: about one
    // seed in fifty (70, 129, 144, 178, 183 and 248 of 0..300 when written).
    let caught = caught_alone(
        TwinName::UnconfirmedReads,
        Invariant::Linearizable,
        0..1000,
        2,
    );
    assert_eq!(caught.len(), 2, "caught alone on {caught:?} of 0..1000");
}
