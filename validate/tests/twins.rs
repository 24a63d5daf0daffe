//! Proves that validation is consistent with the twins: it never changes a run (same trace hash)
//! nor a twin's verdict (a run that breaks the twin's invariant still does), it never fires on a
//! control run (the twin's knobs, every rule on), and the twins whose broken rule the model can
//! see (a deletion past the floor, a floor before its commit, a term a jump lowered) diverge.

use felix_core::Twin;
use felix_sim::RunSpec;

const SEEDS: std::ops::Range<u64> = 0..24;

/// The twins whose broken rule shows in the projected broker state.
const SEEN_BY_THE_MODEL: [Twin; 5] = [
    Twin::Retention,
    Twin::CompactActive,
    Twin::FloorPastCommit,
    Twin::JumpResetsTerm,
    Twin::VisibleTrims,
];

fn has(report: &felix_sim::RunReport, invariant: &str) -> bool {
    report
        .violations
        .iter()
        .any(|finding| finding.invariant == invariant)
}

#[test]
fn validation_keeps_every_twin_verdict_and_sees_the_broker_twins() {
    for twin in Twin::ALL {
        let mut diverged = 0;
        for seed in SEEDS {
            let spec = RunSpec::new(seed, Some(twin));
            let plain = felix_sim::run(&spec);
            let validated = felix_validate::run_validated(&spec, false).report;
            assert_eq!(plain.trace_hash, validated.trace_hash, "{twin} seed {seed}");
            assert_eq!(
                has(&plain, twin.invariant().name()),
                has(&validated, twin.invariant().name()),
                "{twin} seed {seed}: validation changed the twin's verdict"
            );
            if has(&validated, felix_validate::TRACE_VALIDATION) {
                diverged += 1;
            }
            let mut control = spec.clone();
            control.control = true;
            let control = felix_validate::run_validated(&control, false).report;
            assert!(
                !has(&control, felix_validate::TRACE_VALIDATION),
                "{twin} seed {seed}: the control run diverged: {:?}",
                control.violations
            );
        }
        if SEEN_BY_THE_MODEL.contains(&twin) {
            assert!(diverged > 0, "{twin}: no divergence on seeds {SEEDS:?}");
        }
    }
}
