//! The configuration registry: names, lookups, and every twin exactly one switch from its base.

use felix_model::head_trim::config;
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::paros::spec::ParosTrimJump;
use felix_model::spec::Spec;
use felix_names::{Layer, TwinName};

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

    support::assert_twins_are_the_layers::<FelixHeadTrim>();
    support::assert_twins_are_the_layers::<ParosTrimJump>();
    // ParosTrimJump registers its twins in `felix-names`' order, too.
    let paros_twins: Vec<_> = ParosTrimJump::twins().map(|c| c.twin).collect();
    let layer: Vec<_> = TwinName::in_layer(Layer::Paros).map(Some).collect();
    assert_eq!(paros_twins, layer);
    assert!(config::CONFIGS
        .iter()
        .all(|c| c.twin.is_some() == c.expected_violation().is_some()));
}
