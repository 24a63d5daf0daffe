//! Canaries: every twin must break exactly its named invariant (and keep breaking it).

use felix_model::check;
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::spec::Spec;

#[test]
fn every_twin_breaks_exactly_its_named_invariant() {
    // Proves each twin, searched as CI does (breadth-first, one thread, stop at the first discovery
    // of its invariant), breaks its named invariant and no other, with a non-empty trace that ends
    // in a state breaking it.
    for twin in FelixHeadTrim::twins() {
        let run = check::run_twin(twin);
        assert!(
            run.ok(),
            "{} must break exactly {}, found {:?}",
            twin.name,
            run.expected,
            run.found
        );
        assert!(
            run.trace.len() >= 2,
            "{}: the trace has at least one step",
            twin.name
        );
        assert_eq!(run.trace[0].action, "Init");
    }
}

#[test]
fn every_twin_trace_is_as_short_as_tlcs() {
    // Proves each twin's shortest counterexample has exactly as many steps as the one TLC prints
    // with one worker for the same .cfg (docs/formal/README.md lists them): the two checkers
    // agree on the depth at which each invariant first breaks.
    let tlc_steps = [
        ("HiddenTrims", 9),
        ("Untagged", 9),
        ("NoopSkip", 6),
        ("Retention", 7),
        ("ReadFromEarliest", 9),
        ("TailFromRefusal", 6),
        ("CompactActive", 8),
        ("TagAtFloor", 11),
        ("VisibleTrims", 10),
        ("LocalReads", 7),
    ];
    for (name, steps) in tlc_steps {
        let twin = FelixHeadTrim::lookup(name).expect("registered");
        let run = check::run_twin(twin);
        assert_eq!(run.trace.len() - 1, steps, "{name}");
    }
}
