//! The configuration registry: names, lookups, and every twin exactly one switch from its base.

use felix_model::config::{self, Expectation};

#[test]
fn every_twin_is_one_switch_from_its_passing_base() {
    // Proves each twin has a passing base configuration with the same bounds and differs from it
    // in exactly one switch, and that the switch is the one the twin is named after.
    let twins: Vec<_> = config::twins().collect();
    assert_eq!(
        twins.len(),
        10,
        "HiddenTrims, Untagged, NoopSkip, Retention, ReadFromEarliest, TailFromRefusal, \
         CompactActive, TagAtFloor, VisibleTrims, LocalReads"
    );
    for twin in twins {
        let base_name = twin.base.expect("a twin names its base");
        let base = config::lookup(base_name).expect("the base is registered");
        assert_eq!(base.expectation, Expectation::Pass, "{}", twin.name);
        assert_eq!(base.bounds, twin.bounds, "{}", twin.name);
        assert!(
            base.switches.names_on().is_empty(),
            "{base_name} has a switch on"
        );
        assert_eq!(
            twin.switches.names_on(),
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
    for config in config::CONFIGS.iter() {
        assert_eq!(config::lookup(config.name), Some(config));
        assert_eq!(config::lookup(config.short_name()), Some(config));
    }
    assert_eq!(config::lookup("Main"), Some(config::main_config()));
    assert_eq!(config::main_config().name, "FelixHeadTrim");
    assert_eq!(config::lookup("NoSuchConfig"), None);
    assert_eq!(config::lookup(""), None);
}

#[test]
fn names_are_unique() {
    // Proves no two configurations share a name (a lookup would silently pick the first).
    let names = config::names();
    let unique: std::collections::BTreeSet<_> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
}
