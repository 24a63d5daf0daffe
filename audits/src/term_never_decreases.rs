//! TermNeverDecreases: a node's term (its promise) and vote never go back, jumps and restarts
//! included.
//!
//! A promise `(term, vote)` *goes back* from `before` to `after` when `after.term < before.term`,
//! or when the terms are equal, `before` had voted, and `after`'s vote differs (a vote may only
//! change when the term rises; a first vote within a term is not going back).
//!
//! Two promises are tracked per node:
//! - the *durable* one, from `PromiseChanged` (recorded after the promise was persisted). Each
//!   `PromiseChanged` must not go back from the previous durable promise, across crashes: a
//!   restart must come back with the promise it persisted, and a TrimmedTo jump must not touch it.
//! - the *in-memory* one, from sampled `NodeState`s. Each must not go back from the previous
//!   sample of the same life (samples are reset by `Crashed`, since an unpersisted promise may
//!   be lost), nor from the durable promise (memory is never behind the disk).

use crate::{Violation, TERM_NEVER_DECREASES};
use felix_core::history::Event;
use felix_core::record::{NodeId, Term};
use felix_core::words;
use std::collections::BTreeMap;

type Promise = (Term, Option<NodeId>);

fn goes_back(before: Promise, after: Promise) -> bool {
    after.0 < before.0 || (after.0 == before.0 && before.1.is_some() && after.1 != before.1)
}

#[derive(Default)]
struct NodePromises {
    durable: Option<Promise>,
    sampled: Option<Promise>,
}

/// The violations of TermNeverDecreases in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut nodes: BTreeMap<NodeId, NodePromises> = BTreeMap::new();
    let mut violations = Vec::new();
    let mut report = |step: usize, node: NodeId, what: &str, before: Promise, after: Promise| {
        violations.push(Violation::new(
            TERM_NEVER_DECREASES,
            step,
            format!(
                "node {node}'s {what} went back from term {} vote {} to term {} vote {}",
                before.0,
                words::vote(before.1),
                after.0,
                words::vote(after.1)
            ),
        ));
    };
    for (step, event) in history.iter().enumerate() {
        match event {
            Event::PromiseChanged { node, term, vote } => {
                let promises = nodes.entry(*node).or_default();
                let after = (*term, *vote);
                if let Some(before) = promises.durable {
                    if goes_back(before, after) {
                        report(step, *node, "persisted promise", before, after);
                    }
                }
                promises.durable = Some(after);
            }
            Event::NodeState {
                node, term, vote, ..
            } => {
                let promises = nodes.entry(*node).or_default();
                let after = (*term, *vote);
                if let Some(before) = promises.sampled {
                    if goes_back(before, after) {
                        report(step, *node, "promise in memory", before, after);
                    }
                }
                if let Some(before) = promises.durable {
                    if goes_back(before, after) {
                        report(
                            step,
                            *node,
                            "promise in memory (behind its disk)",
                            before,
                            after,
                        );
                    }
                }
                promises.sampled = Some(after);
            }
            Event::Crashed { node } => {
                nodes.entry(*node).or_default().sampled = None;
            }
            _ => {}
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::state;

    fn promise(node: NodeId, term: Term, vote: Option<NodeId>) -> Event {
        Event::PromiseChanged { node, term, vote }
    }

    fn sampled(node: NodeId, term: Term, vote: Option<NodeId>) -> Event {
        let mut event = state(node, term, false, 0, 0);
        if let Event::NodeState { vote: slot, .. } = &mut event {
            *slot = vote;
        }
        event
    }

    /// Terms rising, a first vote within a term, a term jump and a restart with the same promise
    /// all hold; an unpersisted in-memory term lost in a crash is not a violation either.
    #[test]
    fn rising_promises_hold() {
        let history = vec![
            promise(0, 1, None),
            promise(0, 1, Some(2)),
            sampled(0, 1, Some(2)),
            promise(0, 5, Some(0)),
            sampled(0, 6, None),
            Event::Crashed { node: 0 },
            Event::Restarted { node: 0 },
            sampled(0, 5, Some(0)),
            promise(1, 3, Some(1)),
            sampled(1, 3, Some(1)),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// A jump that resets the term, and a vote changed within a term, break it.
    #[test]
    fn term_reset_and_vote_change_break_it() {
        let history = vec![
            promise(0, 4, Some(1)),
            sampled(0, 4, Some(1)),
            Event::Jumped {
                node: 0,
                point: 10,
                replica: false,
            },
            sampled(0, 0, None),
            promise(1, 2, Some(1)),
            promise(1, 2, Some(2)),
        ];
        let violations = check(&history);
        let steps: Vec<usize> = violations.iter().map(|violation| violation.step).collect();
        assert_eq!(steps, vec![3, 3, 5], "{violations:?}");
        assert!(violations
            .iter()
            .all(|violation| violation.invariant == TERM_NEVER_DECREASES));
        assert!(violations[2].message.contains("node 1's persisted promise"));
    }

    /// A restart that comes back with a lower promise than it persisted breaks it.
    #[test]
    fn restart_with_lower_promise_breaks_it() {
        let history = vec![
            promise(2, 7, Some(2)),
            Event::Crashed { node: 2 },
            Event::Restarted { node: 2 },
            sampled(2, 6, Some(2)),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].step, 3);
    }
}
