//! Reads at a read index in whole runs: what the read path promises, held over whole simulated
//! runs.

use felix_sim::{run, RunSpec};

/// Seed 63706 broke NoReadBelowFloor on main at c11684e: a restarted node served records below a
/// floor acknowledged before the read was sent, from its own state. With reads served at a read
/// index and every rule on, the same seed holds every invariant (the history of the old run is the
/// audits' regression fixture, `audits/tests/it/seed_63706.rs`).
#[test]
fn seed_63706_holds_with_every_rule_on() {
    let report = run(&RunSpec::new(63706, None));
    assert!(
        report.violations.is_empty(),
        "{:?}",
        report
            .violations
            .iter()
            .map(|finding| format!("{}: {}", finding.invariant, finding.detail))
            .collect::<Vec<_>>()
    );
}
