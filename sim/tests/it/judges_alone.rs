//! Each judge added for what nobody named has a planted bug that only it catches: its twin, run
//! with the default swarm (no per-twin bias, as `felix twins --sim --unbiased` hunts), breaks the
//! judge's invariant within a few hundred seeds, and on the seeds where it does no other judge
//! finds anything (so with that judge off the bug would go unnoticed there); the control run of
//! each such seed (the same knobs, every rule on) holds every invariant. Where a twin's bug also
//! damages what another judge watches (two leaders of one term then overwrite each other's
//! records), the test says so, and counts only the seeds its judge caught alone.

use felix_core::rules::{Invariant, Layer, TwinName};
use felix_sim::{run, RunSpec};
use std::collections::BTreeSet;

/// The invariants a seed broke with `twin` off (`control`: every rule on), with the earliest
/// finding's invariant.
fn findings(twin: TwinName, seed: u64, control: bool) -> (BTreeSet<Invariant>, Option<Invariant>) {
    let mut spec = RunSpec::new(seed, Some(twin));
    spec.unbiased = true;
    spec.control = control;
    let report = run(&spec);
    let first = report
        .violations
        .iter()
        .min_by_key(|finding| finding.step)
        .map(|finding| finding.invariant);
    let broken = report.violations.iter().map(|f| f.invariant).collect();
    (broken, first)
}

/// What a hunt for one twin found: the seeds its judge alone caught, and the seeds where another
/// judge saw the damage too (with the first judge to see it and every invariant broken there).
#[derive(Debug, Default)]
struct Hunt {
    alone: Vec<u64>,
    shared: Vec<(u64, Option<Invariant>, BTreeSet<Invariant>)>,
}

/// Hunts `twin` over `seeds` until its judge caught it alone on `wanted` seeds. On every seed
/// where the judge caught it, alone or not, the control run holds.
fn hunt(twin: TwinName, seeds: std::ops::Range<u64>, wanted: usize) -> Hunt {
    let judge = twin.must_break(Layer::Sim);
    let mut hunt = Hunt::default();
    for seed in seeds {
        if hunt.alone.len() == wanted {
            break;
        }
        let (broken, first) = findings(twin, seed, false);
        if !broken.contains(&judge) {
            continue;
        }
        let (control, _) = findings(twin, seed, true);
        assert!(
            control.is_empty(),
            "seed {seed}: the control run of {twin} fails: {control:?}"
        );
        if broken.len() == 1 {
            hunt.alone.push(seed);
        } else {
            hunt.shared.push((seed, first, broken));
        }
    }
    hunt
}

#[test]
fn vote_before_persist_is_caught_by_promise_durable_alone() {
    // Every vote granted in a run's first election goes out ahead of its persist.
    assert_eq!(
        TwinName::VoteBeforePersist.must_break(Layer::Sim),
        Invariant::PromiseDurable
    );
    let hunt = hunt(TwinName::VoteBeforePersist, 0..5, 5);
    assert!(hunt.alone.len() >= 3, "{hunt:?}");
    assert!(hunt.shared.is_empty(), "{hunt:?}");
}

#[test]
fn unconfirmed_reads_are_caught_by_linearizable_alone() {
    // A deposed leader must serve a read that misses its successor's acknowledged write: seeds 144
    // and 183 of 0..300, each alone (measured with `felix replay --twin UnconfirmedReads
    // --unbiased`, every finding of the trace counted; the swarm moves these seeds).
    assert_eq!(
        TwinName::UnconfirmedReads.must_break(Layer::Sim),
        Invariant::Linearizable
    );
    let hunt = hunt(TwinName::UnconfirmedReads, 0..1000, 2);
    assert_eq!(hunt.alone.len(), 2, "{hunt:?}");
    assert!(hunt.shared.is_empty(), "{hunt:?}");
}

#[test]
fn stale_votes_are_caught_by_election_safety_mostly_alone() {
    // Two leaders of one term. Of seeds 0..400 (measured as above), 16 break ElectionSafety (the
    // first at seed 3), 11 of them alone. On four the two leaders go on to overwrite each other's
    // records (CommittedPrefixAgreement): on three after ElectionSafety saw the second leader, on
    // seed 272 before it. Seed 108 also runs out of its event budget. Since old messages can be
    // captured and delivered seconds late, a stale vote can also elect a leader that is alone in
    // its term but lacks a committed record: seed 206 breaks CommittedPrefixAgreement,
    // AckedWritesKept and Linearizable, and never ElectionSafety. The hunt ends at the third seed
    // ElectionSafety catches alone: 3, 68 and 109.
    assert_eq!(
        TwinName::StaleVotes.must_break(Layer::Sim),
        Invariant::ElectionSafety
    );
    let hunt = hunt(TwinName::StaleVotes, 0..1000, 3);
    assert_eq!(hunt.alone.len(), 3, "{hunt:?}");
}

#[test]
fn a_stale_suffix_is_caught_by_log_terms_monotone_alone() {
    // A jump that keeps a deposed leader's suffix above a newer base: the next append from the
    // leader repairs it, so no answer and no end-state judge ever sees it. Rare under the default
    // swarm: seed 584 is the only one of 0..1500, measured as above (also the run where bug 08 of
    // docs/dev/bugbench.md, the same slip, was caught); the hunt starts at 500 to keep the test
    // short, and moves with the swarm like every seed here.
    assert_eq!(
        TwinName::StaleSuffix.must_break(Layer::Sim),
        Invariant::LogTermsMonotone
    );
    let hunt = hunt(TwinName::StaleSuffix, 500..1000, 1);
    assert_eq!(hunt.alone.len(), 1, "{hunt:?}");
    assert!(hunt.shared.is_empty(), "{hunt:?}");
}
