//! Pinned distinct-state counts of the passing configurations small enough for a test.
//!
//! Each count is the regression guard of the model and the number TLC must print as "distinct
//! states found" for the same `.cfg`: both are read from one table, docs/formal/README.md
//! (`felix_model::pinned`), which `scripts/check_tla.sh` also reads. The states generated are
//! Stateright's own figure, pinned here. Runs to completion, so every invariant is also checked
//! over the whole bounded state space.

use felix_model::check::{self, Outcome};
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::pinned;
use felix_model::spec::Spec;

use super::support;

/// The distinct states pinned for the registered configuration `name` (its `.cfg` name is
/// `FelixHeadTrim` followed by `name`, or `FelixHeadTrim` for the main one).
fn pinned(name: &str) -> usize {
    let file = if name == "FelixHeadTrim" {
        name.to_string()
    } else {
        format!("FelixHeadTrim{name}")
    };
    pinned::distinct_states(&file).unwrap_or_else(|| panic!("{file}: no count pinned"))
}

fn assert_passes_with(name: &str, unique_states: usize, total_states: usize) {
    let config = FelixHeadTrim::lookup(name).expect("registered");
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
    // Proves FelixHeadTrimFailover passes with 380,195 distinct states (TLC's figure for the same
    // .cfg) and 1,561,602 generated.
    assert_passes_with("Failover", pinned("Failover"), 1_561_602);
}

#[test]
fn crash_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimCrash passes with 436,287 distinct states (TLC's figure for the same
    // .cfg) and 1,828,946 generated.
    assert_passes_with("Crash", pinned("Crash"), 1_828_946);
}

#[test]
fn broker_symmetry_keeps_the_verdicts_and_shrinks_the_space() {
    // Proves the broker-symmetry reduction (used for the everything-together configuration)
    // keeps every verdict: the passing configurations still pass with every `sometimes` reached
    // as without it, with fewer states (pinned), and the twins still break their invariant.
    for (name, unique_states) in [("Failover", 109_917), ("Crash", 143_785)] {
        let config = FelixHeadTrim::lookup(name).expect("registered");
        let plain = check::check(config, 1);
        let reduced = check::check_with_progress(config, 1, true, &mut |_| {});
        assert_eq!(reduced.outcome, Outcome::Pass, "{name}");
        assert_eq!(reduced.unique_states, unique_states, "{name}");
        assert!(reduced.unique_states < plain.unique_states, "{name}");
        assert_eq!(reduced.sometimes_reached, plain.sometimes_reached, "{name}");
    }
    for twin in FelixHeadTrim::twins() {
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
        let config = FelixHeadTrim::lookup(name).expect("registered");
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
    support::assert_compact_stops_every_twin::<FelixHeadTrim>();
}

/// Checks a configuration with the lean search (same counts as Stateright's checker, a test
/// holds it to that above) and asserts its pinned counts and that every `sometimes` is reached.
fn assert_compact_passes_with(name: &str, unique_states: usize, total_states: usize) {
    let config = FelixHeadTrim::lookup(name).expect("registered");
    let report = check::check_compact(config, 2, false, &mut |_| {});
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
    if config.bounds.holders > 1 && config.bounds.max_trims > 0 {
        assert!(
            report.sometimes_missed.is_empty(),
            "{name}: {:?}",
            report.sometimes_missed
        );
    }
}

#[test]
fn main_count_is_pinned_and_equals_tlc() {
    // Proves the main configuration FelixHeadTrim passes with 1,533,492 distinct states (TLC's
    // figure for the same .cfg) and 8,884,248 generated, every `sometimes` reached.
    assert_compact_passes_with("FelixHeadTrim", pinned("FelixHeadTrim"), 8_884_248);
}

#[test]
fn steady_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimSteady (three trims, one leader) passes with 391,033 distinct states
    // and 2,522,815 generated.
    assert_compact_passes_with("Steady", pinned("Steady"), 2_522_815);
}

#[test]
fn promotions_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimPromotions passes with 400,573 distinct states and 2,248,518 generated.
    assert_compact_passes_with("Promotions", pinned("Promotions"), 2_248_518);
}

#[test]
fn liveness_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimLiveness (the configuration TLC also checks StaleHolderRetires on)
    // passes every invariant with 22,930 distinct states and 127,298 generated.
    assert_compact_passes_with("Liveness", pinned("Liveness"), 127_298);
}

#[test]
fn combined_count_is_pinned_and_equals_tlc() {
    // Proves FelixHeadTrimCombined (two trims, two promotions and a crash together, one holder,
    // one write) passes with 867,859 distinct states and 3,683,158 generated.
    assert_compact_passes_with("Combined", pinned("Combined"), 3_683_158);
}
