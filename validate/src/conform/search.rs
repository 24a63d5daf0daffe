//! The shortest counterexample the core can follow: a breadth-first search over the model that
//! takes only the steps the core can take (`Spec::takes`), stopping at the first state that breaks
//! the named invariant. Where the model's own shortest counterexample has a step the core cannot
//! take (a Retain of the segment holding a log's last record, a write fenced by a stale token),
//! this finds the shortest one without it, or says that none exists within `STATES_MAX` states.

use super::spec::Spec;
use felix_core::rules::Invariant;
use stateright::Model;
use std::collections::{HashMap, VecDeque};

/// The most states the search visits.
pub const STATES_MAX: usize = 10_000_000;

/// What the search found.
#[derive(Clone, Debug)]
pub enum Found<A> {
    /// The shortest path the core can follow to a state breaking the invariant.
    Path(Vec<A>),
    /// Every state the core can reach (this many) keeps the invariant.
    None(usize),
    /// More than `STATES_MAX` states, none breaking it.
    TooMany,
}

/// The shortest path from `Init`, of steps `spec` says the core can take, to a state where the
/// `always` property `invariant` does not hold.
pub fn shortest_followable<S: Spec>(spec: S, invariant: Invariant) -> Found<S::Action> {
    shortest(spec, invariant, usize::MAX, true)
}

/// `shortest_followable`, for paths of at most `steps_max` steps: the search expands no state
/// that far from `Init`, and `Found::None` counts the states within reach.
pub fn shortest_followable_within<S: Spec>(
    spec: S,
    invariant: Invariant,
    steps_max: usize,
) -> Found<S::Action> {
    shortest(spec, invariant, steps_max, true)
}

/// The model's own shortest counterexample: the same search, every step the model enables taken.
pub fn shortest_in_model<S: Spec>(spec: S, invariant: Invariant) -> Found<S::Action> {
    shortest(spec, invariant, usize::MAX, false)
}

/// The breadth-first search of all three: `core_only`, only the steps `spec` says the core can
/// take (`Spec::core_actions`); else every action the model enables.
fn shortest<S: Spec>(
    spec: S,
    invariant: Invariant,
    steps_max: usize,
    core_only: bool,
) -> Found<S::Action> {
    let model = spec.model();
    let Some(property) = model
        .properties()
        .into_iter()
        .find(|property| property.name == invariant.name())
    else {
        return Found::None(0);
    };
    let holds = property.condition;
    let mut index: HashMap<S::State, u32> = HashMap::new();
    let mut parents: Vec<Option<(u32, S::Action)>> = Vec::new();
    let mut queue: VecDeque<(u32, usize, S::State)> = VecDeque::new();
    for state in model.init_states() {
        if !holds(&model, &state) {
            return Found::Path(Vec::new());
        }
        index.insert(state.clone(), parents.len() as u32);
        parents.push(None);
        queue.push_back((parents.len() as u32 - 1, 0, state));
    }
    let mut actions = Vec::new();
    while let Some((at, depth, state)) = queue.pop_front() {
        if parents.len() > STATES_MAX {
            return Found::TooMany;
        }
        if depth >= steps_max {
            continue;
        }
        if core_only {
            spec.core_actions(&model, &state, &mut actions);
        } else {
            actions.clear();
            model.actions(&state, &mut actions);
        }
        for action in &actions {
            let Some(next) = model.next_state(&state, *action) else {
                continue;
            };
            if index.contains_key(&next) {
                continue;
            }
            let id = parents.len() as u32;
            parents.push(Some((at, *action)));
            if !holds(&model, &next) {
                let mut path = Vec::new();
                let mut cursor = id;
                while let Some((parent, action)) = parents[cursor as usize] {
                    path.push(action);
                    cursor = parent;
                }
                path.reverse();
                return Found::Path(path);
            }
            index.insert(next.clone(), id);
            queue.push_back((id, depth + 1, next));
        }
    }
    Found::None(parents.len())
}

/// Whether the core can take every step of `path` from `Init`.
pub fn followable<S: Spec>(spec: S, path: &[S::Action]) -> bool {
    let model = spec.model();
    let Some(mut state) = model.init_states().into_iter().next() else {
        return false;
    };
    for action in path {
        if spec.takes(&state, action).is_err() {
            return false;
        }
        match model.next_state(&state, *action) {
            Some(next) => state = next,
            None => return false,
        }
    }
    true
}
