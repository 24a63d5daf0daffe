//! Pinned distinct-state counts of the passing configurations small enough for a test.
//!
//! Each count is the regression guard of the model and the number TLC must print as "distinct
//! states found" for the same `.cfg` (docs/formal/README.md keeps both side by side). Runs to
//! completion, so every invariant is also checked over the whole bounded state space.

use felix_model::check::{self, Outcome};
use felix_model::config;

fn assert_passes_with(name: &str, unique_states: usize, total_states: usize) {
    let config = config::lookup(name).expect("registered");
    let report = check::check(config, 1);
    assert_eq!(
        report.outcome,
        Outcome::Pass,
        "{name}: {:?}",
        report.invariant
    );
    assert_eq!(
        report.unique_states, unique_states,
        "{name}: distinct states"
    );
    assert_eq!(
        report.total_states, total_states,
        "{name}: states generated"
    );
}

#[test]
fn failover_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimFailover passes with 199,031 distinct states (TLC's figure for the spec
    // at commit 183ea60) and 863,935 generated.
    assert_passes_with("Failover", 199_031, 863_935);
}

#[test]
fn crash_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimCrash passes with 160,325 distinct states (TLC's figure for the spec at
    // commit 183ea60) and 591,593 generated.
    assert_passes_with("Crash", 160_325, 591_593);
}

#[test]
fn broker_symmetry_keeps_the_verdicts_and_shrinks_the_space() {
    // Proves the broker-symmetry reduction (used for the everything-together configuration)
    // keeps every verdict: the passing configurations still pass with every `sometimes` reached
    // as without it, with fewer states (pinned), and the twins still break their invariant.
    for (name, unique_states) in [("Failover", 73_648), ("Crash", 72_310)] {
        let config = config::lookup(name).expect("registered");
        let plain = check::check(config, 1);
        let reduced = check::check_with_progress(config, 1, true, &mut |_| {});
        assert_eq!(reduced.outcome, Outcome::Pass, "{name}");
        assert_eq!(reduced.unique_states, unique_states, "{name}");
        assert!(reduced.unique_states < plain.unique_states, "{name}");
        assert_eq!(reduced.sometimes_reached, plain.sometimes_reached, "{name}");
    }
    for twin in config::twins() {
        let report = check::check_with_progress(twin, 1, true, &mut |_| {});
        assert_eq!(report.outcome, Outcome::Violated, "{}", twin.name);
        assert_eq!(report.invariant, twin.expected_violation(), "{}", twin.name);
    }
}

#[test]
fn the_compact_search_counts_exactly_what_stateright_counts() {
    // Proves the lean search behind `felix check --compact` (used for the everything-together
    // configuration) visits the same states and generates the same successors as Stateright's
    // checker, with and without the broker-symmetry reduction, and reaches the same verdicts.
    for name in ["Failover", "Crash"] {
        let config = config::lookup(name).expect("registered");
        for symmetry in [false, true] {
            let stateright = check::check_with_progress(config, 1, symmetry, &mut |_| {});
            let compact = check::check_compact(config, 2, symmetry, &mut |_| {});
            assert_eq!(compact.outcome, Outcome::Pass, "{name}");
            assert_eq!(
                compact.unique_states, stateright.unique_states,
                "{name} {symmetry}"
            );
            assert_eq!(
                compact.total_states, stateright.total_states,
                "{name} {symmetry}"
            );
            assert_eq!(
                compact.sometimes_reached, stateright.sometimes_reached,
                "{name}"
            );
        }
    }
    for twin in config::twins() {
        let compact = check::check_compact(twin, 1, false, &mut |_| {});
        assert_eq!(
            compact.invariant,
            twin.expected_violation(),
            "{}",
            twin.name
        );
        assert!(compact.trace.len() >= 2, "{}", twin.name);
    }
}

#[test]
fn promotions_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimPromotions passes with 766,673 distinct states (TLC's figure for the
    // spec at commit 183ea60) and 3,927,398 generated (the lean search is used here to keep
    // `cargo test --release` short; Stateright's checker gives the same figures).
    let config = config::lookup("Promotions").expect("registered");
    let report = check::check_compact(config, 2, false, &mut |_| {});
    assert_eq!(report.outcome, Outcome::Pass);
    assert_eq!(report.unique_states, 766_673);
    assert_eq!(report.total_states, 3_927_398);
    assert!(
        report.sometimes_missed.is_empty(),
        "{:?}",
        report.sometimes_missed
    );
}

#[test]
fn main_count_is_pinned_and_equals_tlc() {
    // Proves the main configuration FelixHeadTrim passes with 1,856,537 distinct states (TLC's
    // figure for the spec at commit 183ea60) and 9,245,329 generated, every `sometimes` reached.
    let config = config::lookup("FelixHeadTrim").expect("registered");
    let report = check::check_compact(config, 2, false, &mut |_| {});
    assert_eq!(report.outcome, Outcome::Pass);
    assert_eq!(report.unique_states, 1_856_537);
    assert_eq!(report.total_states, 9_245_329);
    assert!(
        report.sometimes_missed.is_empty(),
        "{:?}",
        report.sometimes_missed
    );
}
