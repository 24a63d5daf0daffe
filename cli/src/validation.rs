//! `--validate` output shared by `felix sweep` and `felix replay`: the counts of trace
//! validation (`felix-validate`) from a run's (or a sweep's summed) validation tally.

use felix_audits::{Counts, Validated};
use std::collections::BTreeMap;

/// One line: validated steps, stutters, matched steps and holder requests in all; then, per
/// model that validated any step (in name order), its steps, matched model actions by name, and
/// the abstraction rules by name (steps not checked, and details hidden in checked steps), from
/// the validation tally (`felix_audits::Validated`; all zero when no run was validated).
pub fn summary_line(coverage: &Counts) -> String {
    let none = Validated::default();
    let validated = coverage.validated().unwrap_or(&none);
    let listed = |counts: &BTreeMap<String, u64>| -> String {
        if counts.is_empty() {
            return "none".to_string();
        }
        let entries: Vec<String> = (counts.iter())
            .map(|(name, count)| format!("{name}={count}"))
            .collect();
        entries.join(" ")
    };
    let mut line = format!(
        "  validated: {} steps, {} stuttering, {} matched to model actions; {} holder requests held to Active(h)",
        validated.steps, validated.stutters, validated.matched, validated.holder_requests,
    );
    for (model, tally) in &validated.models {
        if tally.steps == 0 {
            continue;
        }
        line.push_str(&format!(
            "\n  validated by {model}: {} steps, {} stuttering, {} matched; actions: {}; abstracted: {}",
            tally.steps,
            tally.stutters,
            tally.matched,
            listed(&tally.actions),
            listed(&tally.abstracted),
        ));
    }
    line
}

/// A step's chain of actions with repeats folded: `Replicate(·, 2) x3, TrimAppend(h, 0, 5)`.
pub fn compact_actions(actions: &[String]) -> String {
    let mut parts: Vec<(String, usize)> = Vec::new();
    for action in actions {
        match parts.last_mut() {
            Some((last, count)) if last == action => *count += 1,
            _ => parts.push((action.clone(), 1)),
        }
    }
    parts
        .into_iter()
        .map(|(action, count)| {
            if count == 1 {
                action
            } else {
                format!("{action} x{count}")
            }
        })
        .collect::<Vec<String>>()
        .join(", ")
}

/// The readable trace of lines `first..last`, each followed by the model actions of the steps
/// that ended on it (`  = model: node N: actions`).
pub fn interleaved(
    lines: &[felix_sim::render::trace::TraceLine],
    steps: &[felix_validate::MatchedStep],
    first: usize,
    last: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut next = steps.partition_point(|step| (step.line as usize) < first);
    for (index, line) in lines.iter().enumerate().take(last).skip(first) {
        out.push(felix_sim::render::describe::trace_line(line));
        while let Some(step) = steps.get(next).filter(|step| step.line as usize == index) {
            out.push(format!(
                "             = model: node {}: {}",
                step.node,
                compact_actions(&step.actions)
            ));
            next += 1;
        }
    }
    out
}
