//! The chain both checkers build: one node's step (its projection before and after one
//! simulator event) walked as a fixed chain of model actions, each taken through the model's own
//! `next_state` on a window state.
//!
//! What is shared lives here: the chain's shape (a jump, or the leader's appends and commits, a
//! promotion, a step down, a follower's replication, then compaction), a leader's commit cut into
//! windows, one action taken with the actions the model had enabled instead, and the verdict
//! (the node's variables and log compared with where the model's actions ended). What differs
//! (each action's window, and the variables compared) is each spec's `Steps`:
//! `crate::checker` (FelixHeadTrim) and `crate::paros` (ParosTrimJump).

use crate::checker::{Abstraction, Mismatch, Verdict};
use stateright::Model;

/// Why a chain stopped.
pub(crate) enum Failure {
    /// Not a behaviour of the model: the reason and the actions tried.
    Mismatch(String, Vec<String>),
    /// Not checked, by a named rule.
    Abstract(Abstraction),
}

/// A mismatch without tried actions.
pub(crate) fn mismatch<T>(reason: String) -> Result<T, Failure> {
    Err(Failure::Mismatch(reason, Vec::new()))
}

pub(crate) const OUT: Failure = Failure::Abstract(Abstraction::OutOfBounds);
pub(crate) const LONG: Failure = Failure::Abstract(Abstraction::LongWindow);
pub(crate) const LONG_SUFFIX: Failure = Failure::Abstract(Abstraction::LongSuffix);
pub(crate) const UNSEEN: Failure = Failure::Abstract(Abstraction::Unseen);

/// What a chain records as it goes: the actions taken, and the hiding rules it used.
#[derive(Default)]
pub(crate) struct Walk {
    pub taken: Vec<String>,
    pub hidden: Vec<Abstraction>,
}

/// One spec's projected node as the chain walks it: its log and variables, and the window
/// actions that move it.
pub(crate) trait Steps: Clone {
    /// A projected record.
    type Record: PartialEq + Copy;
    /// What the step's request tells the first appended record (its tail condition).
    type Tail: Copy;
    /// A jump the step made, with what it was sent.
    type Jump;
    /// No tail condition.
    const NO_TAIL: Self::Tail;
    /// The most records a leader's commit window holds.
    const WINDOW_RECORDS: u64;
    /// Why a term never goes back, in the spec's words.
    const TERMS_NEVER_LOWER: &'static str;

    fn len(&self) -> u64;
    fn at(&self, offset: u64) -> Self::Record;
    fn record_term(record: &Self::Record) -> u64;
    fn term(&self) -> u64;
    fn leader(&self) -> bool;
    fn commit(&self) -> u64;
    fn start(&self) -> u64;
    /// The node in words, for a mismatch.
    fn describe(&self) -> String;
    /// The variables compared at the chain's end, in the spec's order, as a mismatch prints them.
    fn variables(&self) -> Vec<(&'static str, String)>;

    /// One record the leader appended.
    fn append(
        &mut self,
        node: u32,
        appended: Self::Record,
        tail: Self::Tail,
        walk: &mut Walk,
    ) -> Result<(), Failure>;
    /// The leader's commit rises to `commit`, within one window.
    fn leader_commit(&mut self, node: u32, commit: u64, walk: &mut Walk) -> Result<(), Failure>;
    /// A new leader.
    fn promote(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure>;
    /// A leader learns a higher term.
    fn step_down(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure>;
    /// A follower's step.
    fn replicate_chain(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure>;
    /// The first held offset rises.
    fn compact(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure>;
    /// A jump (and what follows it in the same step).
    fn jump(
        &mut self,
        node: u32,
        after: &Self,
        jump: Self::Jump,
        walk: &mut Walk,
    ) -> Result<(), Failure>;
}

/// Walks one node's step through its model: the verdict, and the hiding rules the step used.
pub(crate) fn check<S: Steps>(
    node: u32,
    before: &S,
    after: &S,
    tail: S::Tail,
    jump: Option<S::Jump>,
) -> (Verdict, Vec<Abstraction>) {
    let mut walk = Walk::default();
    let mut current = before.clone();
    match chain(node, &mut current, after, tail, jump, &mut walk) {
        Ok(()) => {}
        Err(Failure::Abstract(rule)) => return (Verdict::Abstracted(rule), walk.hidden),
        Err(Failure::Mismatch(reason, tried)) => {
            let verdict = Verdict::Diverged(Mismatch {
                reason,
                taken: walk.taken,
                model_state: Some(current.describe()),
                tried,
            });
            return (verdict, walk.hidden);
        }
    }
    let mut differences = Vec::new();
    for ((name, model), (_, core)) in current.variables().into_iter().zip(after.variables()) {
        if model != core {
            differences.push(format!("{name} {model} (model) vs {core}"));
        }
    }
    // Records at or below the commit index before the step are the projection's, kept unchanged
    // by `advance` and by every chain (no action rewrites a committed record): compared above it.
    let committed = before.commit().min(current.len()).min(after.len());
    if let Some(offset) = first_difference(&current, after, committed) {
        differences.push(format!("log differs from offset {offset}"));
    }
    if differences.is_empty() {
        (Verdict::Matched(walk.taken), walk.hidden)
    } else {
        let verdict = Verdict::Diverged(Mismatch {
            reason: format!(
                "the model's actions end elsewhere: {}",
                differences.join(", ")
            ),
            taken: walk.taken,
            model_state: Some(current.describe()),
            tried: Vec::new(),
        });
        (verdict, walk.hidden)
    }
}

/// The first offset above `from` where the logs differ (length included).
pub(crate) fn first_difference<S: Steps>(a: &S, b: &S, from: u64) -> Option<u64> {
    let shared = a.len().min(b.len());
    ((from + 1)..=shared)
        .find(|&offset| a.at(offset) != b.at(offset))
        .or_else(|| (a.len() != b.len()).then_some(shared + 1))
}

/// The chain of one step, fixed by the step (see the module doc).
fn chain<S: Steps>(
    node: u32,
    current: &mut S,
    after: &S,
    tail: S::Tail,
    jump: Option<S::Jump>,
    walk: &mut Walk,
) -> Result<(), Failure> {
    if after.term() < current.term() {
        return mismatch(format!(
            "the term went back from {} to {}: {}",
            current.term(),
            after.term(),
            S::TERMS_NEVER_LOWER
        ));
    }
    if let Some(jump) = jump {
        return current.jump(node, after, jump, walk);
    }
    if current.leader() && after.leader() && current.term() == after.term() {
        leader_steps(node, current, after, tail, walk)?;
    } else if !current.leader() && after.leader() {
        current.promote(node, after, walk)?;
        leader_steps(node, current, after, S::NO_TAIL, walk)?;
    } else {
        if current.leader() {
            current.step_down(node, after, walk)?;
        }
        current.replicate_chain(node, after, walk)?;
    }
    if after.start() != current.start() {
        current.compact(node, after, walk)?;
    }
    Ok(())
}

/// The leader appends, then commits.
fn leader_steps<S: Steps>(
    node: u32,
    current: &mut S,
    after: &S,
    mut tail: S::Tail,
    walk: &mut Walk,
) -> Result<(), Failure> {
    if after.len() < current.len()
        || first_difference(current, after, current.commit())
            .is_some_and(|offset| offset <= current.len())
    {
        return mismatch(
            "a leader's log lost or changed a record in its own term: no model action does that"
                .into(),
        );
    }
    for offset in (current.len() + 1)..=after.len() {
        // The request's tail conditions the first record it appends (a request appends one).
        let first = std::mem::replace(&mut tail, S::NO_TAIL);
        current.append(node, after.at(offset), first, walk)?;
    }
    if after.commit() != current.commit() {
        commit_in_windows(node, current, after.commit(), walk)?;
    }
    Ok(())
}

/// A leader's commit over more records than a window holds: one commit per window, each ending
/// on the window's last record of the leader's term (the only records the model's `CommitIn`
/// commits by counting), then the rest.
fn commit_in_windows<S: Steps>(
    node: u32,
    current: &mut S,
    commit: u64,
    walk: &mut Walk,
) -> Result<(), Failure> {
    while commit > current.commit() + S::WINDOW_RECORDS && commit <= current.len() {
        let before = current.commit();
        let end = ((before + 1)..=(before + S::WINDOW_RECORDS))
            .rev()
            .find(|&offset| S::record_term(&current.at(offset)) == current.term())
            .ok_or(LONG)?;
        current.leader_commit(node, end, walk)?;
        if current.commit() <= before {
            return Err(LONG);
        }
    }
    current.leader_commit(node, commit, walk)
}

/// Runs one action on a window and returns the next state, or the mismatch naming the action
/// and the actions of the same kind the model had enabled there. `model_words` names the model
/// and `window_words` the window's nodes, in a mismatch.
pub(crate) fn take<M: Model>(
    model: &M,
    state: &M::State,
    action: M::Action,
    label: &str,
    model_words: &str,
    window_words: &str,
) -> Result<M::State, Failure>
where
    M::Action: Copy + std::fmt::Display,
{
    if let Some(next) = model.next_state(state, action) {
        return Ok(next);
    }
    let mut enabled = Vec::new();
    model.actions(state, &mut enabled);
    // The nearest actions: the ones of the same kind the model had enabled there.
    let kind = |action: &M::Action| std::mem::discriminant(action);
    let same: Vec<String> = enabled
        .iter()
        .filter(|candidate| kind(candidate) == kind(&action))
        .map(|candidate| candidate.to_string())
        .collect();
    Err(Failure::Mismatch(
        format!("{label} is not enabled in {model_words}"),
        vec![
            format!("{label}: guard false (as {action} in the window, {window_words})"),
            if same.is_empty() {
                "no action of that kind is enabled in the window".to_string()
            } else {
                format!("enabled in the window instead: {}", same.join(", "))
            },
        ],
    ))
}
