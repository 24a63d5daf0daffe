//! The shrinker's reading of a breaking try's cut run off the try (`Probe::cut_at`) against the
//! run it stands for: the same tape replayed and cut there (`attempt_for` with `Cut::at`).
//!
//! The unit tests of `felix_sim::search::shrink` (sim/src/search/shrink/mod.rs).

use felix_core::rules::{Invariant, Layer};
use felix_core::TwinName;
use felix_sim::env::tape::Choices;
use felix_sim::seeded::knobs::Knobs;

use felix_sim::search::shrink::*;

/// CompactActive's unbiased seed 0 (it breaks FloorRecordKept early in its run): its shrink's
/// base, knobs and invariant.
fn compact_active_seed_0() -> (Base, Knobs, Invariant) {
    let twin = TwinName::CompactActive;
    let base = Base::twin(0, twin, None);
    (base, Knobs::draw(0, None), twin.must_break(Layer::Sim))
}

/// `compact_active_seed_0`, with the seed's run (recorded, uncut) and the history index of its
/// violation.
fn compact_active_seed_0_run() -> (Base, Knobs, Invariant, Attempt, usize) {
    let (base, knobs, invariant) = compact_active_seed_0();
    let original = attempt(&base, &knobs, None, false, None);
    let at = original
        .broken_at(invariant)
        .expect("CompactActive's unbiased seed 0 breaks its invariant");
    (base, knobs, invariant, original, at)
}

/// A try as the shrinker makes it (the seed's recording replayed, cut half as far again past its
/// violation) read off at several history indices, the violation's among them, is exactly the
/// same recording replayed and cut at each: its knobs, choices, events, findings, first
/// violations and history.
#[test]
fn a_try_read_off_at_a_cut_is_the_run_cut_there() {
    let (base, knobs, invariant, original, at) = compact_active_seed_0_run();
    let limit = Cut {
        history: at + at / 2 + HISTORY_SLACK,
        events: u64::MAX,
        draws: usize::MAX,
    };
    for cut in [0, 1, at / 3, at / 2, at] {
        let probe = Probe::run(&base, &knobs, original.choices.clone(), limit, invariant);
        assert_eq!(probe.broken_at(invariant), Some(at));
        let read_off = probe
            .cut_at(&knobs, cut, invariant)
            .expect("the try ran past the cut");
        let run_again = attempt_for(
            &base,
            &knobs,
            Some(original.choices.clone()),
            false,
            Some(Cut::at(cut)),
            Some(invariant),
        );
        assert_eq!(
            format!("{read_off:?}"),
            format!("{run_again:?}"),
            "cut at history event {cut}"
        );
    }
}

/// A try that never got past the index asked for has no run to read off there.
#[test]
fn a_try_cut_before_the_index_has_nothing_to_read_off() {
    let (base, knobs, invariant) = compact_active_seed_0();
    let short = Cut {
        history: 10,
        events: u64::MAX,
        draws: usize::MAX,
    };
    let probe = Probe::run(&base, &knobs, Choices::new(), short, invariant);
    assert!(probe.cut_at(&knobs, 10_000, invariant).is_none());
}

/// A try cut once it holds more draws than its own run drew to its violation (the bound the
/// shrinker sets at the best run's draws, `Cut::draws`) breaks at the same step, reads off the
/// same run there, and stops soon after (it holds no run a hundred history events further on);
/// cut at half those draws, the same try stops before its violation and breaks nothing.
#[test]
fn a_try_cut_at_its_own_draws_keeps_its_violation_and_stops_there() {
    let (base, knobs, invariant, original, at) = compact_active_seed_0_run();
    let uncut = Cut {
        history: usize::MAX,
        events: u64::MAX,
        draws: usize::MAX,
    };
    let whole = Probe::run(&base, &knobs, original.choices.clone(), uncut, invariant);
    let to_violation = whole.cut_at(&knobs, at, invariant).expect("the violation");
    let draws = to_violation.size().0;
    let bound = Cut { draws, ..uncut };
    let probe = Probe::run(&base, &knobs, original.choices.clone(), bound, invariant);
    assert_eq!(probe.broken_at(invariant), Some(at));
    let read_off = probe
        .cut_at(&knobs, at, invariant)
        .expect("the try ran past its violation");
    assert_eq!(format!("{read_off:?}"), format!("{to_violation:?}"));
    let probe = Probe::run(&base, &knobs, original.choices.clone(), bound, invariant);
    assert!(probe.cut_at(&knobs, at + 100, invariant).is_none());
    let half = Cut {
        draws: draws / 2,
        ..uncut
    };
    let probe = Probe::run(&base, &knobs, original.choices.clone(), half, invariant);
    assert_eq!(probe.broken_at(invariant), None);
}
