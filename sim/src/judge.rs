//! Judging a run: the one place a finished run becomes findings.
//!
//! Every runner (sweep, replay, twins, the guided campaign, shrink, trace validation) judges a
//! run here, so a finding is the same whoever ran it: the audits' violations in step order, a
//! panic first (the audits judged a history cut short by it, which is the news), a step trace
//! validation could not match in step order among them, and a run cut by its event budget last.

use crate::world::Ran;
use crate::{stopwatch, Finding};
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

/// Judges `ran` with every audit, its panic, its budget and its observer's finding.
pub fn judge(ran: &Ran) -> Judged {
    judge_by(ran, None)
}

/// `judge`, with only `only`'s audit when given (the shrinker's tries ask only whether the run
/// still breaks its invariant; the other audits, the history checker above all, would cost every
/// try without changing the answer). Panics, budgets and the observer are judged either way.
pub fn judge_by(ran: &Ran, only: Option<Invariant>) -> Judged {
    let report = stopwatch::time(stopwatch::Section::Audits, || match only {
        None => felix_audits::audit(&ran.recorder.history),
        Some(invariant) => felix_audits::audit_one(&ran.recorder.history, invariant),
    });
    let mut broken: BTreeMap<Invariant, usize> = BTreeMap::new();
    for violation in &report.violations {
        let first = broken.entry(violation.invariant).or_insert(violation.step);
        *first = (*first).min(violation.step);
    }
    let mut findings: Vec<Finding> = report
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
    if let Some(message) = &ran.panicked {
        findings.insert(
            0,
            Finding {
                invariant: Invariant::Panic,
                step: last,
                clients: Vec::new(),
                detail: message.clone(),
            },
        );
    }
    if let Some(reason) = &ran.exhausted {
        findings.push(Finding {
            invariant: Invariant::EventBudget,
            step: last,
            clients: Vec::new(),
            detail: reason.clone(),
        });
    }
    if let Some(finding) = ran
        .observer
        .as_ref()
        .and_then(|observer| observer.finding())
    {
        // In step order among the others, so that an earlier divergence is the first finding a
        // reader (and `felix replay`'s window) sees.
        let at = findings.partition_point(|other| {
            other.step.is_some() && finding.step.is_some() && other.step <= finding.step
        });
        findings.insert(at, finding);
    }
    Judged {
        findings,
        broken,
        coverage: report.coverage,
    }
}
