//! The configuration registry: names, lookups, and every twin exactly one switch from its base.

use felix_model::head_trim::config;
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::paros::spec::ParosTrimJump;
use felix_model::spec::Expectation;
use felix_model::spec::{RuleSwitches, Spec};

#[test]
fn every_twin_is_one_switch_from_its_passing_base() {
    // Proves each twin has a passing base configuration with the same bounds and differs from it
    // in exactly one switch, and that the switch is the one the twin is named after.
    let twins: Vec<_> = FelixHeadTrim::twins().collect();
    assert_eq!(
        twins.len(),
        10,
        "HiddenTrims, Untagged, NoopSkip, Retention, ReadFromEarliest, TailFromRefusal, \
         CompactActive, TagAtFloor, VisibleTrims, LocalReads"
    );
    for twin in twins {
        let base_name = twin.base.expect("a twin names its base");
        let base = FelixHeadTrim::lookup(base_name).expect("the base is registered");
        assert_eq!(base.expectation, Expectation::Pass, "{}", twin.name);
        assert_eq!(base.bounds, twin.bounds, "{}", twin.name);
        assert!(
            base.switches.rules_off().is_empty(),
            "{base_name} has a rule off"
        );
        assert_eq!(
            twin.switches.rules_off(),
            vec![twin.short_name()],
            "{}",
            twin.name
        );
    }
}

#[test]
fn names_resolve_with_and_without_the_prefix() {
    // Proves `felix check HiddenTrims` and `felix check FelixHeadTrimHiddenTrims` name the same
    // configuration, `Main` names the main one, and an unknown name resolves to nothing.
    for config in FelixHeadTrim::configs().iter() {
        assert_eq!(FelixHeadTrim::lookup(config.name), Some(config));
        assert_eq!(FelixHeadTrim::lookup(config.short_name()), Some(config));
    }
    assert_eq!(
        FelixHeadTrim::lookup("Main"),
        Some(FelixHeadTrim::main_config())
    );
    assert_eq!(FelixHeadTrim::main_config().name, "FelixHeadTrim");
    assert_eq!(FelixHeadTrim::lookup("NoSuchConfig"), None);
    assert_eq!(FelixHeadTrim::lookup(""), None);
}

#[test]
fn names_are_unique() {
    // Proves no two configurations share a name (a lookup would silently pick the first).
    let names = FelixHeadTrim::names();
    let unique: std::collections::BTreeSet<_> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
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
