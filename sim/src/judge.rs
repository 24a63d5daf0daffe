//! Judging a run: the one place a finished run becomes findings.
//!
//! Every runner (sweep, replay, twins, the guided campaign, shrink, trace validation) judges a
//! run here, so a finding is the same whoever ran it: the audits' violations in step order, a
//! panic first (the audits judged a history cut short by it, which is the news), a step trace
//! validation could not match in step order among them, and a run cut by its event budget last.

use crate::seeded::buggify::Site;
use crate::seeded::knobs::Knobs;
use crate::seeded::world::Ran;
use crate::{env::stopwatch, Finding};
use felix_audits::progress::Bounds;
use felix_audits::Coverage;
use felix_core::rules::Invariant;
use std::collections::BTreeMap;

/// What a run was judged to be.
#[derive(Clone, Debug)]
pub struct Judged {
    pub findings: Vec<Finding>,
    /// Per invariant the audits found broken, the history index of its first violation (where
    /// the shrinker cuts a run).
    pub broken: BTreeMap<Invariant, usize>,
    /// The audits' coverage counters.
    pub coverage: Coverage,
}

/// The most a SlowSync firing stretches one sync (`world/buggify.rs` draws the factor in 10..50).
const SLOW_SYNC_FACTOR_MAX: u64 = 50;

/// The Progress judge's bounds for a run with `knobs` (`felix_audits::progress::Bounds`, whose
/// docs give the formulas): one durable round trip is `2 * delay_max + sync_max`, a tick is
/// stretched by the slowest clock's drift, a client's retry is its timeout plus its gap.
pub fn progress_bounds(knobs: &Knobs) -> Bounds {
    let drift = knobs.clock_drift_max_ppm.clamp(0, 500_000) as u64;
    let stretch = |micros: u64| micros * 1_000_000 / (1_000_000 - drift);
    Bounds {
        round_trip_micros: 2 * knobs.network.delay_max_micros + knobs.sync_max_micros,
        tick_micros: stretch(knobs.tick_micros),
        election_ticks: knobs.election_ticks_max,
        election_spread_ticks: knobs.election_ticks_max - knobs.election_ticks_min,
        heartbeat_ticks: knobs.heartbeat_ticks,
        batch_records: knobs.append_entries_max,
        client_retry_micros: stretch(knobs.client_timeout_micros + knobs.client_gap_micros),
        nodes: u64::from(knobs.brokers + knobs.replicas),
        stalled_sync_micros: match knobs.buggify.contains(&Site::SlowSync) {
            true => SLOW_SYNC_FACTOR_MAX * knobs.sync_max_micros,
            false => knobs.sync_max_micros,
        },
        read_wait_ticks: crate::env::node::config(0, knobs, felix_core::Rules::default())
            .read_wait_ticks_max,
    }
}

/// Adds, in step order, the violations of the judges that need more than a history (`audit`
/// does not run them), those of `only` when given: Progress (each event's time and the bounds of
/// the run's knobs) and CommittedDurable (the run's voters).
fn judge_beyond_history(
    ran: &Ran,
    only: Option<Invariant>,
    violations: &mut Vec<felix_audits::Violation>,
) {
    let wanted = |invariant: Invariant| only.is_none_or(|only| only == invariant);
    let recorder = &ran.recorder;
    let before = violations.len();
    if let Some(bounds) = ran.progress.filter(|_| wanted(Invariant::Progress)) {
        let times = &recorder.history_times;
        violations.extend(felix_audits::progress::check(
            &recorder.history,
            times,
            bounds,
        ));
    }
    if let Some(voters) = ran.voters.filter(|_| wanted(Invariant::CommittedDurable)) {
        violations.extend(felix_audits::committed_durable::check(
            &recorder.history,
            voters,
        ));
    }
    if violations.len() > before {
        violations.sort_by_key(|violation| violation.step);
    }
}

/// Judges `ran` with every audit, its panic, its budget and its observer's finding.
pub fn judge(ran: &Ran) -> Judged {
    judge_by(ran, None)
}

/// `judge`, with only `only`'s audit when given (the shrinker's tries ask only whether the run
/// still breaks its invariant; the other audits, the history checker above all, would cost every
/// try without changing the answer). Panics, budgets and the observer are judged either way.
pub fn judge_by(ran: &Ran, only: Option<Invariant>) -> Judged {
    let mut report = stopwatch::time(stopwatch::Section::Audits, || match only {
        None => felix_audits::audit(&ran.recorder.history),
        Some(invariant) => felix_audits::audit_one(&ran.recorder.history, invariant),
    });
    judge_beyond_history(ran, only, &mut report.violations);
    let mut broken: BTreeMap<Invariant, usize> = BTreeMap::new();
    for violation in &report.violations {
        let first = broken.entry(violation.invariant).or_insert(violation.step);
        *first = (*first).min(violation.step);
    }
    let findings: Vec<Finding> = report
        .violations
        .iter()
        .map(|violation| Finding {
            invariant: violation.invariant,
            step: ran.recorder.history_steps.get(violation.step).copied(),
            clients: violation.clients.clone(),
            // The events the message names, as trace steps: the same numbers as `step`.
            detail: violation.render(&|index| {
                let step = ran.recorder.history_steps.get(index).copied();
                step.unwrap_or(index as u64)
            }),
        })
        .collect();
    // The step of the run's last event: where a panic or a budget stopped it.
    let last = ran.recorder.steps().checked_sub(1);
    let stopped = |invariant: Invariant, detail: &String| Finding {
        invariant,
        step: last,
        clients: Vec::new(),
        detail: detail.clone(),
    };
    let findings = in_order(
        findings,
        ran.panicked
            .as_ref()
            .map(|message| stopped(Invariant::Panic, message)),
        ran.observer
            .as_ref()
            .and_then(|observer| observer.finding()),
        ran.exhausted
            .as_ref()
            .map(|reason| stopped(Invariant::EventBudget, reason)),
    );
    Judged {
        findings,
        broken,
        coverage: report.coverage,
    }
}

/// A run's findings in the order the module doc gives: its panic first, then the audits'
/// violations (in step order, as `audits` gives them) with the observer's finding among them in
/// step order (an earlier divergence is the first finding a reader, and `felix replay`'s window,
/// sees), and its budget last.
pub fn in_order(
    violations: Vec<Finding>,
    panic: Option<Finding>,
    observed: Option<Finding>,
    budget: Option<Finding>,
) -> Vec<Finding> {
    let mut findings = violations;
    if let Some(finding) = observed {
        let at = findings.partition_point(|other| {
            other.step.is_some() && finding.step.is_some() && other.step <= finding.step
        });
        findings.insert(at, finding);
    }
    findings.splice(0..0, panic);
    findings.extend(budget);
    findings
}
