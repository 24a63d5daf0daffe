//! Proves that trace validation bites, once per model, with the validation layer's twins: a rule
//! broken in the core that breaks no audit is caught by validation alone, and with the rule on
//! the same seeds validate clean. (An early floor can show to a client at a follower and then
//! breaks Linearizable too; on such seeds validation must have seen it no later.)
//! - FelixHeadTrim (felixd runs): EarlyFloor (`floor_at_its_trim` off), a node applies the floor
//!   of the trim right after its commit index one walk step early, only when no write lies in
//!   between.
//! - ParosTrimJump (paros runs): EarlyFence (`writer_at_its_fence` off), a node's walk moves the
//!   writer token to the fence right after its commit index one step early; nothing the node
//!   answers changes (the old token is restored before anything reads it).

use felix_core::rules::{Invariant, TwinName};
use felix_sim::RunSpec;

/// Seeds searched for the bite.
const SEEDS: std::ops::Range<u64> = 0..150;

/// Runs `seed` under the EarlyFloor twin with validation on.
fn planted(seed: u64) -> felix_validate::Validated {
    felix_validate::run_validated(&RunSpec::new(seed, Some(TwinName::EarlyFloor)), false)
}

/// Validation catches the early floor on seeds where no audit sees it. Audits may see it on a
/// few seeds, fewer than validation catches alone, and never before validation does: since the
/// old messages and the prober's later kinds redrew runs, seed 85 breaks Linearizable with it
/// (its control run holds).
#[test]
fn only_validation_catches_an_early_floor() {
    let mut caught = Vec::new();
    let mut seen_by_audits = Vec::new();
    for seed in SEEDS {
        let validated = planted(seed);
        let findings = &validated.report.violations;
        let validation_step = findings
            .iter()
            .find(|finding| finding.invariant == Invariant::TraceValidation)
            .and_then(|finding| finding.step);
        let audits: Vec<(&str, Option<u64>)> = findings
            .iter()
            .filter(|finding| finding.invariant != Invariant::TraceValidation)
            .map(|finding| (finding.invariant.name(), finding.step))
            .collect();
        if !audits.is_empty() {
            // An early floor a client can see (a refusal below a floor whose trim is not yet
            // committed, then a read that shows the log before it) breaks Linearizable: the
            // judges see it too. Validation must have seen it no later than they did.
            assert!(
                validation_step.is_some()
                    && audits
                        .iter()
                        .all(|(_, step)| step.is_some() && *step >= validation_step),
                "seed {seed}: an audit saw the early floor before validation did: \
                 validation at {validation_step:?}, audits {audits:?}"
            );
            seen_by_audits.push(seed);
            continue;
        }
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
    // A validation twin: where the early floor shows, most often only validation sees it.
    assert!(
        seen_by_audits.len() < caught.len(),
        "the early floor was seen by an audit on {seen_by_audits:?}, by validation alone only on \
         {caught:?}: it is no longer a validation twin"
    );
    assert!(
        caught.len() >= 5,
        "validation caught the early floor on only {caught:?} of {SEEDS:?}"
    );
    // The same seeds: the plain run (what `felix sweep` runs) passes with the plant, and the
    // validated run passes without it.
    for &seed in caught.iter().take(5) {
        let plain = felix_sim::run(&RunSpec::new(seed, Some(TwinName::EarlyFloor)));
        assert!(
            plain.violations.is_empty(),
            "seed {seed}: the plain run found {:?}",
            plain.violations
        );
        let clean = felix_validate::run_validated(&RunSpec::new(seed, None), false);
        assert!(
            clean.report.violations.is_empty(),
            "seed {seed}: with the rule on: {:?}",
            clean.report.violations
        );
    }
}

/// The first `count` seeds from 0 whose run is a paros run (found at test time: which seeds run
/// paros depends on the swarm).
fn paros_seeds(count: usize) -> Vec<u64> {
    (0..)
        .filter(|&seed| {
            matches!(
                RunSpec::new(seed, None).knobs().workload,
                felix_sim::seeded::knobs::Workload::Paros { .. }
            )
        })
        .take(count)
        .collect()
}

/// Runs `seed` under the EarlyFence twin with validation on.
fn fenced_early(seed: u64) -> felix_validate::Validated {
    felix_validate::run_validated(&RunSpec::new(seed, Some(TwinName::EarlyFence)), false)
}

#[test]
fn only_paros_validation_catches_an_early_fence() {
    let seeds = paros_seeds(60);
    let mut caught = Vec::new();
    for &seed in &seeds {
        let validated = fenced_early(seed);
        assert_eq!(
            validated.validator.counts.model,
            felix_validate::ModelKind::ParosTrimJump
        );
        let audits: Vec<&str> = validated
            .report
            .violations
            .iter()
            .map(|finding| finding.invariant.name())
            .filter(|name| *name != Invariant::TraceValidation.name())
            .collect();
        assert!(
            audits.is_empty(),
            "seed {seed}: the early fence broke an audit ({audits:?}): the bite is no longer quiet"
        );
        if let Some(divergence) = &validated.validator.divergence {
            // The early fence shows as a writer the model's walk has not reached yet.
            assert!(
                divergence.mismatch.reason.contains("writer"),
                "seed {seed}: the divergence is not the early fence: {}",
                divergence.describe()
            );
            caught.push(seed);
        }
    }
    assert!(
        caught.len() >= 5,
        "validation caught the early fence on only {caught:?} of the paros seeds {seeds:?}"
    );
    for &seed in caught.iter().take(5) {
        let plain = felix_sim::run(&RunSpec::new(seed, Some(TwinName::EarlyFence)));
        assert!(
            plain.violations.is_empty(),
            "seed {seed}: the plain run found {:?}",
            plain.violations
        );
        let clean = felix_validate::run_validated(&RunSpec::new(seed, None), false);
        assert!(
            clean.report.violations.is_empty(),
            "seed {seed}: with the rule on: {:?}",
            clean.report.violations
        );
    }
}
