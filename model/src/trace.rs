//! Counterexample traces: one line per step, the action, then the variables it changed.
//!
//! A trace is what a user reads when a configuration breaks an invariant, so it is rendered in the
//! TLA+ spec's vocabulary (its variable and action names), so that a trace printed here reads like
//! the one TLC prints for the same configuration.

use serde::Serialize;
use stateright::Path;

use crate::spec::{Rendered, Spec, SpecConfig};

/// One step of a trace: the action taken (`Init` for the first state) and every variable whose
/// value it changed, rendered in TLA+ notation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    /// The action, as in the spec: `Name(arguments)`, or `Init`.
    pub action: String,
    /// `(variable, new value)` for every variable the action changed, in the spec's order; for
    /// a function-valued variable, one entry per changed component (`log[2]`).
    pub changed: Vec<(String, String)>,
}

/// Builds the steps of a path: `Init` with every variable, then each action with what it changed.
pub fn steps<S: Spec>(config: &SpecConfig<S>, path: Path<S::State, S::Action>) -> Vec<TraceStep> {
    let variables = |state: &S::State| S::variables(config, state);
    let pairs = path.into_vec();
    let mut steps = Vec::with_capacity(pairs.len());
    let mut previous: Option<Vec<(&'static str, Rendered)>> = None;
    let mut pending_action: Option<S::Action> = None;
    for (state, action) in pairs {
        let variables = variables(&state);
        let step = match (&previous, &pending_action) {
            (None, _) => TraceStep {
                action: "Init".to_string(),
                changed: variables
                    .iter()
                    .map(|(name, value)| (name.to_string(), value.to_string()))
                    .collect(),
            },
            (Some(before), Some(taken)) => TraceStep {
                action: taken.to_string(),
                changed: changed_variables(before, &variables),
            },
            (Some(_), None) => unreachable!("every state but the first follows an action"),
        };
        steps.push(step);
        previous = Some(variables);
        pending_action = action;
    }
    steps
}

/// The variables (or, for functions, the components) whose rendered value differs between two
/// states, in the spec's order.
fn changed_variables(
    before: &[(&'static str, Rendered)],
    after: &[(&'static str, Rendered)],
) -> Vec<(String, String)> {
    assert_eq!(
        before.len(),
        after.len(),
        "a state always renders every variable"
    );
    let mut changed = Vec::new();
    for ((name, old), (_, new)) in before.iter().zip(after) {
        match (old, new) {
            (Rendered::Function(old), Rendered::Function(new)) if old.len() == new.len() => {
                for (index, (old, new)) in old.iter().zip(new).enumerate() {
                    if old != new {
                        changed.push((format!("{name}[{}]", index + 1), new.clone()));
                    }
                }
            }
            _ if old != new => changed.push((name.to_string(), new.to_string())),
            _ => {}
        }
    }
    changed
}

/// Renders a trace for a terminal: one numbered line per step, the action, then `var' = value`
/// for each variable it changed (the initial state lists every variable).
pub fn render(steps: &[TraceStep]) -> String {
    let mut text = String::new();
    for (index, step) in steps.iter().enumerate() {
        let changes: Vec<String> = step
            .changed
            .iter()
            .map(|(name, value)| {
                if index == 0 {
                    format!("{name} = {value}")
                } else {
                    format!("{name}' = {value}")
                }
            })
            .collect();
        let changes = if changes.is_empty() {
            "(no variable changed)".to_string()
        } else {
            changes.join(", ")
        };
        text.push_str(&format!("{index:>3}. {}: {changes}\n", step.action));
    }
    text
}
