//! ParosTrimJump: the registry mirrors `docs/formal/ParosTrimJump*.cfg`, every twin is one switch
//! from its base and breaks exactly its named invariant, and the passing counts are pinned (each
//! the number TLC prints as "distinct states found" for the same `.cfg`).

use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::spec::Spec;
use felix_names::Invariant;
use std::collections::BTreeSet;

use felix_model::check;
use felix_model::check::Outcome;
use felix_model::paros::config::ParosConfig;
use felix_model::paros::spec::ParosTrimJump;
use stateright::Model;

use super::support;

fn lookup(name: &str) -> &'static ParosConfig {
    ParosTrimJump::lookup(name).unwrap_or_else(|| panic!("{name} is registered"))
}

#[test]
fn the_registry_is_exactly_the_cfg_files() {
    // Proves every ParosTrimJump*.cfg has a registry entry with every CONSTANT and switch set to
    // the file's value, every entry has a file, and every file checks every invariant
    // (`support::assert_registry_is_the_cfg_files`).
    support::assert_registry_is_the_cfg_files::<ParosTrimJump>();
}

#[test]
fn every_twin_is_one_switch_from_its_passing_base() {
    // Proves each twin has a passing base with the same bounds and no switch on, and differs from
    // it in exactly the switch it is named after; the passing configurations have no switch on.
    assert_eq!(
        ParosTrimJump::twins().count(),
        4,
        "JumpResetsTerm, UnfencedTruncate, FloorPastCommit, AckBeforeSync"
    );
    support::assert_twins_are_one_switch_from_their_base::<ParosTrimJump>();
}

#[test]
fn names_resolve_with_and_without_the_prefix() {
    // Proves `felix check JumpResetsTerm` and the full name name the same configuration, no two
    // configurations share a name, and no short name is also a FelixHeadTrim name.
    support::assert_names_resolve::<ParosTrimJump>();
    for config in ParosTrimJump::configs() {
        if config.name != ParosTrimJump::NAME {
            assert!(FelixHeadTrim::lookup(config.short_name()).is_none());
        }
    }
}

#[test]
fn property_names_are_unique_and_match_the_lists() {
    // Proves no two properties share a name, and the runner's lists are exactly the model's
    // `always` and `sometimes` properties in the model's order.
    let model = ParosTrimJump::new(ParosTrimJump::main_config());
    let all = model.properties();
    let names: BTreeSet<&str> = all.iter().map(|p| p.name).collect();
    assert_eq!(names.len(), all.len());
    let always: Vec<&str> = all
        .iter()
        .filter(|p| p.expectation == stateright::Expectation::Always)
        .map(|p| p.name)
        .collect();
    let sometimes: Vec<&str> = all
        .iter()
        .filter(|p| p.expectation == stateright::Expectation::Sometimes)
        .map(|p| p.name)
        .collect();
    let invariants: Vec<&str> = ParosTrimJump::invariants().map(Invariant::name).collect();
    assert_eq!(always, invariants);
    assert_eq!(sometimes, ParosTrimJump::coverage().collect::<Vec<_>>());
    assert_eq!(ParosTrimJump::every_property().len(), 9);
}

#[test]
fn every_twin_breaks_exactly_its_named_invariant() {
    // Proves each twin, searched as CI does (breadth-first, one thread, stop at the first
    // discovery of its invariant), breaks its named invariant and no other at the same depth
    // (AckBeforeSync also breaks CommittedPrefixAgreement in the same state, and only it: see
    // `TwinName::breaks_beside`), with the shortest trace TLC prints with one worker (same number
    // of steps).
    let tlc_steps = [
        ("JumpResetsTerm", 6),
        ("UnfencedTruncate", 4),
        ("FloorPastCommit", 3),
        ("AckBeforeSync", 5),
    ];
    for (name, steps) in tlc_steps {
        let twin = lookup(name);
        let run = check::run_twin(twin);
        assert!(
            run.ok(),
            "{name} must break exactly {}, found {:?}",
            run.expected,
            run.found
        );
        assert_eq!(run.trace[0].action, "Init");
        assert_eq!(run.trace.len() - 1, steps, "{name}");
        let beside: &[Invariant] = if name == "AckBeforeSync" {
            &[Invariant::CommittedPrefixAgreement]
        } else {
            &[]
        };
        assert_eq!(run.beside, beside, "{name}");
    }
}

#[test]
fn the_passing_counts_are_pinned_and_equal_tlc() {
    // Proves ParosTrimJump, ParosTrimJumpReplica and ParosTrimJumpCrashes pass with the distinct
    // states pinned in docs/formal/README.md (112,584, 23,307 and 48,786, TLC's figures too),
    // that together they
    // reach every `sometimes`, and that the main one reaches a jump, a refused truncate and a
    // NotHeld range, the replica one a replica's jump.
    let mut reached = BTreeSet::new();
    for (name, total) in [
        ("ParosTrimJump", 364_829),
        ("ParosTrimJumpReplica", 91_684),
        ("ParosTrimJumpCrashes", 126_821),
    ] {
        let unique = felix_model::pinned::distinct_states(name).expect("a pinned count");
        let report = check::check(lookup(name), 1);
        assert_eq!(
            report.outcome,
            Outcome::Pass,
            "{name}: {:?}",
            report.invariant
        );
        assert_eq!(report.unique_states, unique, "{name}: distinct states");
        assert_eq!(report.total_states, total, "{name}: states generated");
        reached.extend(report.sometimes_reached);
    }
    assert_eq!(reached, ParosTrimJump::coverage().collect());
}

#[test]
fn the_compact_search_runs_the_second_spec_too() {
    // Proves the one runner serves both specs: the lean search behind `felix check --compact`
    // counts ParosTrimJumpReplica's states and successors as Stateright's checker does, reaches
    // the same `sometimes`, and stops every twin at its named invariant with a trace.
    let config = lookup("ParosTrimJumpReplica");
    let stateright = check::check(config, 1);
    let compact = check::check_compact(config, 2, false, &mut |_| {});
    assert_eq!(compact.outcome, Outcome::Pass);
    assert_eq!(compact.unique_states, stateright.unique_states);
    assert_eq!(compact.total_states, stateright.total_states);
    assert_eq!(compact.sometimes_reached, stateright.sometimes_reached);
    support::assert_compact_stops_every_twin::<ParosTrimJump>();
}
