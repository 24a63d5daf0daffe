//! Proves that trace validation bites: a divergence planted in the core that breaks no audit
//! (`felix_core::journal::bite`: a node applies the floor of the trim right after its commit
//! index one walk step early, only when no write lies in between) is caught by validation alone.
//! Without the plant, the same seeds validate clean.

use felix_core::journal::bite;
use felix_sim::RunSpec;

/// Seeds searched for the bite.
const SEEDS: std::ops::Range<u64> = 0..150;

/// Runs `seed` with the early floor planted (on this thread only) and validation on.
fn planted(seed: u64) -> felix_validate::Validated {
    bite::set_early_floor(true);
    let validated = felix_validate::run_validated(&RunSpec::new(seed, None), false);
    bite::set_early_floor(false);
    validated
}

#[test]
fn only_validation_catches_an_early_floor() {
    let mut caught = Vec::new();
    for seed in SEEDS {
        let validated = planted(seed);
        let audits: Vec<&str> = validated
            .report
            .violations
            .iter()
            .map(|finding| finding.invariant.as_str())
            .filter(|name| *name != felix_validate::TRACE_VALIDATION)
            .collect();
        assert!(
            audits.is_empty(),
            "seed {seed}: the planted early floor broke an audit ({audits:?}): the bite is no longer quiet"
        );
        if let Some(divergence) = &validated.validator.divergence {
            // The early floor shows as a floor the walk does not give, or as a compaction up to
            // it that the model's floor forbids.
            let reason = &divergence.mismatch.reason;
            assert!(
                reason.contains("floor") || reason.contains("Compact"),
                "seed {seed}: the divergence is not the early floor: {}",
                divergence.describe()
            );
            caught.push(seed);
        }
    }
    assert!(
        caught.len() >= 5,
        "validation caught the early floor on only {caught:?} of {SEEDS:?}"
    );
    // The same seeds: the plain run (what `felix sweep` runs) passes with the plant, and the
    // validated run passes without it.
    for &seed in caught.iter().take(5) {
        bite::set_early_floor(true);
        let plain = felix_sim::run(&RunSpec::new(seed, None));
        bite::set_early_floor(false);
        assert!(
            plain.violations.is_empty(),
            "seed {seed}: the plain run found {:?}",
            plain.violations
        );
        let clean = felix_validate::run_validated(&RunSpec::new(seed, None), false);
        assert!(
            clean.report.violations.is_empty(),
            "seed {seed}: without the plant: {:?}",
            clean.report.violations
        );
    }
}
