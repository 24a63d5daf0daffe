//! The configuration registry: names, lookups, and every twin exactly one switch from its base.

use felix_model::head_trim::config;
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::paros::spec::ParosTrimJump;
use felix_model::spec::Expectation;
use felix_model::spec::Spec;

use super::support;

#[test]
fn every_twin_is_one_switch_from_its_passing_base() {
    // Proves each twin has a passing base configuration with the same bounds and differs from it
    // in exactly one switch, the one the twin is named after, and the passing configurations are
    // exactly those with no switch on.
    let twins: Vec<_> = FelixHeadTrim::twins().collect();
    assert_eq!(
        twins.len(),
        10,
        "HiddenTrims, Untagged, NoopSkip, Retention, ReadFromEarliest, TailFromRefusal, \
         CompactActive, TagAtFloor, VisibleTrims, LocalReads"
    );
    support::assert_twins_are_one_switch_from_their_base::<FelixHeadTrim>();
}

#[test]
fn names_resolve_with_and_without_the_prefix() {
    // Proves `felix check HiddenTrims` and `felix check FelixHeadTrimHiddenTrims` name the same
    // configuration, `Main` names the main one, an unknown name resolves to nothing, and no two
    // configurations share a name.
    support::assert_names_resolve::<FelixHeadTrim>();
    assert_eq!(
        FelixHeadTrim::lookup("Main"),
        Some(FelixHeadTrim::main_config())
    );
}

#[test]
fn the_registries_hold_exactly_the_shared_twin_names() {
    // Proves each spec's twins are exactly the twins `felix-names` puts in that layer, each
    // registered under its own name, with the invariant `felix-names` says it breaks there
    // (cli/tests/it/twin_names.rs ties the same names to the core's twins and the .cfg files).

    use felix_names::{Layer, TwinName};
    let head_trim: Vec<TwinName> = FelixHeadTrim::twins()
        .map(|c| c.twin.expect("a twin"))
        .collect();
    let mut shared: Vec<TwinName> = TwinName::in_layer(Layer::HeadTrim).collect();
    let mut sorted = head_trim.clone();
    sorted.sort_unstable();
    shared.sort_unstable();
    assert_eq!(sorted, shared);
    for twin in FelixHeadTrim::twins() {
        let name = twin.twin.expect("a twin");
        assert_eq!(twin.short_name(), name.name());
        assert_eq!(
            twin.expectation,
            Expectation::Violates(name.expected(Layer::HeadTrim).expect("in the layer"))
        );
    }
    let paros_twins: Vec<TwinName> = ParosTrimJump::twins()
        .map(|c| c.twin.expect("a twin"))
        .collect();
    assert_eq!(
        paros_twins,
        TwinName::in_layer(Layer::Paros).collect::<Vec<_>>()
    );
    for twin in ParosTrimJump::twins() {
        let name = twin.twin.expect("a twin");
        assert_eq!(twin.short_name(), name.name());
        assert_eq!(
            twin.expectation,
            Expectation::Violates(name.expected(Layer::Paros).expect("in the layer"))
        );
    }
    assert!(config::CONFIGS
        .iter()
        .all(|c| c.twin.is_some() == c.expected_violation().is_some()));
}
