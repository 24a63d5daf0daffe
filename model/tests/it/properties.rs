//! Property names: unique, and the lists the runner reports from match the model's properties.

use felix_model::spec::Spec;
use felix_names::Invariant;
use std::collections::BTreeSet;

use felix_model::head_trim::spec::FelixHeadTrim;
use stateright::{Expectation, Model};

#[test]
fn property_names_are_unique() {
    // Proves no two properties share a name (Stateright does not check this for a raw Model, and a
    // duplicate would let one property's discovery stand for another's).
    let names: Vec<&str> = FelixHeadTrim::every_property()
        .iter()
        .map(|p| p.name)
        .collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "duplicate property names in {names:?}"
    );
}

#[test]
fn invariant_and_sometimes_lists_match_the_properties() {
    // Proves the runner's lists (used to name what broke) are exactly the model's `always` and
    // `sometimes` properties, in the model's order, for every configuration.
    for config in FelixHeadTrim::configs().iter() {
        let model = FelixHeadTrim::new(config);
        let always: Vec<&str> = model
            .properties()
            .iter()
            .filter(|p| p.expectation == Expectation::Always)
            .map(|p| p.name)
            .collect();
        let sometimes: Vec<&str> = model
            .properties()
            .iter()
            .filter(|p| p.expectation == Expectation::Sometimes)
            .map(|p| p.name)
            .collect();
        let invariants: Vec<&str> = FelixHeadTrim::invariants().map(Invariant::name).collect();
        let coverage: Vec<&str> = FelixHeadTrim::coverage().collect();
        assert_eq!(always, invariants, "{}", config.name);
        assert_eq!(sometimes, coverage, "{}", config.name);
    }
}

#[test]
fn every_safety_invariant_has_a_twin() {
    // Proves every twin names one of the model's invariants, and every invariant but TypeOK (a
    // typing invariant, no rule of the design) and ElectionSafety has a twin that breaks it.
    // ElectionSafety is stated so the model holds every layer's names, but no switch of the
    // design turns its rule (votes) off yet: until a planted bug does, the
    // audit's synthetic histories are what keeps it able to fail.
    let expected: BTreeSet<Invariant> = FelixHeadTrim::twins()
        .filter_map(|twin| twin.expected_violation())
        .collect();
    let invariants: BTreeSet<Invariant> = FelixHeadTrim::invariants()
        .filter(|invariant| !matches!(invariant, Invariant::TypeOk | Invariant::ElectionSafety))
        .collect();
    assert_eq!(expected, invariants);
}
