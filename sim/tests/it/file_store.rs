//! The real file store in the simulator (knob `file_store`): a store that slips in its use of
//! the file system is caught by a named invariant, and the same seeds pass without the slip.
//!
//! The slip is planted here, in the test (`World::plant_slip`): no run the CLI makes has one.

use felix_audits::Counter;
use felix_core::rules::{Invariant, Rules};
use felix_sim::env::file_system::{Fsync, Slip};
use felix_sim::judge::judge;
use felix_sim::seeded::knobs::Knobs;
use felix_sim::seeded::world::{self, Setup};

/// What the judges found in `seed`'s run with every disk a file store, `slip` planted if given,
/// and how many power losses dropped something.
fn run(seed: u64, slip: Option<Slip>) -> (Vec<Invariant>, u64) {
    let mut knobs = Knobs::draw(seed, None);
    knobs.file_store = true;
    // The writers as they were when these seeds were chosen: one write in flight, no stickiness
    // (with seed 0's drawn `sticky_timeouts` of 8, its run no longer shows the fsync slip).
    knobs.pipeline_depth = 1;
    knobs.sticky_timeouts = 0;
    let setup = Setup::new(seed, Rules::default(), knobs, false);
    let ran = world::run(setup, |world| {
        if let Some(slip) = slip {
            world.plant_slip(slip);
        }
    });
    let dropped = ran.counters.count(Counter::PowerLossDropped);
    let judged = judge(&ran);
    let invariants = judged
        .findings
        .iter()
        .map(|finding| finding.invariant)
        .collect();
    (invariants, dropped)
}

/// The slip: after the two that create the store (its promise and meta files), every other
/// directory fsync is skipped, so some files created, renamed or removed since are not durable
/// when the store believes they are.
fn skip_directory_fsyncs(kind: Fsync, before: u64) -> bool {
    kind == Fsync::Dir && before >= 2 && before.is_multiple_of(2)
}

/// A sweep of a few seeds fails with a named invariant (not a panic, not the event budget) when
/// the store skips directory fsyncs, and the same seeds pass without the slip, their power losses
/// having dropped unsynced writes.
#[test]
fn a_store_that_skips_directory_fsyncs_is_caught() {
    let seeds = 0..12;
    let mut caught = Vec::new();
    let mut dropped = 0;
    for seed in seeds.clone() {
        let (clean, lost) = run(seed, None);
        assert!(
            clean.is_empty(),
            "seed {seed} fails without the slip: {clean:?}"
        );
        dropped += lost;
        let (slipped, _) = run(seed, Some(skip_directory_fsyncs));
        let named: std::collections::BTreeSet<Invariant> = slipped
            .into_iter()
            .filter(|invariant| !matches!(invariant, Invariant::Panic | Invariant::EventBudget))
            .collect();
        if !named.is_empty() {
            caught.push((seed, named));
        }
    }
    assert!(
        dropped > 0,
        "no power loss dropped anything in seeds {seeds:?}"
    );
    assert!(!caught.is_empty(), "no seed of {seeds:?} caught the slip");
    eprintln!("caught: {caught:?}");
}

/// A second slip: every third file fsync after the two that create the store is skipped, so a
/// segment's records or a replaced file's contents that the store believes durable may be lost
/// at a power loss.
fn skip_file_fsyncs(kind: Fsync, before: u64) -> bool {
    kind == Fsync::File && before >= 2 && before.is_multiple_of(3)
}

/// RecoveryFaithful sees a store slip at the restart that shows it, whatever follows: with file
/// fsyncs skipped, every one of the first seeds whose runs it changes is caught by it, and on most
/// of them it is the only judge that objects (the records lost were on too few nodes, or not yet
/// acknowledged, for any judge of the cluster's answers to see; the others that do object are
/// the liveness judges). The same seeds pass without the slip (the test above).
#[test]
fn only_recovery_faithful_sees_a_store_that_skips_file_fsyncs() {
    let mut alone = Vec::new();
    for seed in 0..8 {
        let (found, _) = run(seed, Some(skip_file_fsyncs));
        let found: std::collections::BTreeSet<Invariant> = found.into_iter().collect();
        assert!(
            found.contains(&Invariant::RecoveryFaithful),
            "seed {seed}: the slip is not seen by RecoveryFaithful: {found:?}"
        );
        if found.len() == 1 {
            alone.push(seed);
        }
    }
    assert!(
        alone.len() >= 5,
        "RecoveryFaithful alone caught only seeds {alone:?} of 0..8"
    );
    eprintln!("caught by RecoveryFaithful alone: seeds {alone:?} of 0..8");
}
