//! `--validate` output shared by `felix sweep` and `felix replay`: the counts of trace
//! validation (`felix-validate`) from a run's (or a sweep's summed) coverage counters.

use felix_audits::Counts;

/// The models a run can be held to, as their count keys name them.
const MODELS: [&str; 2] = ["FelixHeadTrim", "ParosTrimJump"];

/// One line: validated steps, stutters, matched steps and holder requests in all; then, per
/// model that validated any step, its steps, matched model actions by name, and the abstraction
/// rules by name (steps not checked, and details hidden in checked steps). Validation names its
/// counts itself (`felix_validate::Counts::coverage`): they are the counts outside the catalog.
pub fn summary_line(coverage: &Counts) -> String {
    let validated = coverage.outside();
    let get = |name: &str| validated.get(name).copied().unwrap_or(0);
    let listed = |prefix: &str| -> String {
        let entries: Vec<String> = validated
            .iter()
            .filter_map(|(name, count)| {
                name.strip_prefix(prefix)
                    .map(|short| format!("{short}={count}"))
            })
            .collect();
        if entries.is_empty() {
            "none".to_string()
        } else {
            entries.join(" ")
        }
    };
    let mut line = format!(
        "  validated: {} steps, {} stuttering, {} matched to model actions; {} holder requests held to Active(h)",
        get("validated_steps"),
        get("validated_stutters"),
        get("validated_matched"),
        get("validated_holder_requests"),
    );
    for model in MODELS {
        let steps = get(&format!("validated_model_{model}_steps"));
        if steps == 0 {
            continue;
        }
        line.push_str(&format!(
            "\n  validated by {model}: {steps} steps, {} stuttering, {} matched; actions: {}; abstracted: {}",
            get(&format!("validated_model_{model}_stutters")),
            get(&format!("validated_model_{model}_matched")),
            listed(&format!("validated_action_{model}_")),
            listed(&format!("validated_abstracted_{model}_")),
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
