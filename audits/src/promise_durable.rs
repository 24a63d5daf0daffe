//! PromiseDurable: a message that carries a term or a vote leaves a node only once the promise it
//! carries is durable there.
//!
//! Read from two events the driver records from what it does itself, not from the node's word:
//! `DurablePromise { node, term, vote }` (what the node's store holds durably, as a sync completes
//! or a restart recovers it) and `PromiseSent { node, to, term, vote }` (a message carrying `term`,
//! granting its vote to `vote` if it does, left the node). A sent promise holds when the node's
//! durable promise before it covers it:
//! - its term: the durable term is at least `term` (a node that forgets a term it told others can
//!   vote again in it);
//! - its vote for `candidate` in `term`: the durable term is above `term` (the node can never vote
//!   in `term` again), or it is `term` and the durable vote is `candidate`.
//!
//! A node with no durable promise recorded yet holds term 0 and no vote. Each broken promise is
//! reported at its `PromiseSent`.
//!
//! A node whose store reported corruption at a restart (`StoreCorrupt`) may have lost the promise
//! it made and the records it acknowledged, so it never rejoins: any later event of that node (a
//! restart, a sample, a vote, a promise sent, a commit) breaks the invariant, reported once per
//! node at the first such event.

use crate::{Violation, PROMISE_DURABLE};
use felix_core::history::Event;
use felix_core::record::{NodeId, Term};
use felix_core::words;
use std::collections::BTreeMap;

/// The violations of PromiseDurable in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut durable: BTreeMap<NodeId, (Term, Option<NodeId>)> = BTreeMap::new();
    // The step at which each node's store reported corruption (None once it was reported).
    let mut lost: BTreeMap<NodeId, Option<usize>> = BTreeMap::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        // A client's `Requested` and `Replied` are left out: a client may still send to a node
        // that is down for good, and a reply the node sent before its crash may arrive after;
        // neither is the node acting again.
        let client_event = matches!(event, Event::Requested { .. } | Event::Replied { .. });
        if let Some(node) = event.node().filter(|_| !client_event) {
            if let Some(corrupt) = lost.get_mut(&node).and_then(Option::take) {
                violations.push(Violation::new(
                    PROMISE_DURABLE,
                    step,
                    format!(
                        "node {node} acts again after its store reported corruption at {}: a \
                         node that may have lost what it promised never rejoins",
                        crate::step_ref(corrupt)
                    ),
                ));
            }
        }
        match *event {
            Event::StoreCorrupt { node, .. } => {
                lost.entry(node).or_insert(Some(step));
            }
            Event::DurablePromise { node, term, vote } => {
                durable.insert(node, (term, vote));
            }
            Event::PromiseSent {
                node,
                to,
                term,
                vote,
            } => {
                let (durable_term, durable_vote) = durable.get(&node).copied().unwrap_or_default();
                let what = match vote {
                    Some(candidate) => format!("its vote in term {term} for node {candidate}"),
                    None => format!("term {term}"),
                };
                let kept = match vote {
                    Some(candidate) => {
                        durable_term > term
                            || (durable_term == term && durable_vote == Some(candidate))
                    }
                    None => durable_term >= term,
                };
                if !kept {
                    violations.push(Violation::new(
                        PROMISE_DURABLE,
                        step,
                        format!(
                            "node {node} sent node {to} {what} while its store held term \
                             {durable_term} vote {} durably",
                            words::vote(durable_vote)
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn durable(node: NodeId, term: Term, vote: Option<NodeId>) -> Event {
        Event::DurablePromise { node, term, vote }
    }

    fn sent(node: NodeId, to: NodeId, term: Term, vote: Option<NodeId>) -> Event {
        Event::PromiseSent {
            node,
            to,
            term,
            vote,
        }
    }

    /// Promises sent after they are durable hold: a term at or below the durable one, a vote that
    /// is the durable vote of its term, a vote in a term the node has durably left.
    #[test]
    fn durable_promises_hold() {
        let history = vec![
            durable(1, 2, Some(0)),
            sent(1, 0, 2, Some(0)),
            sent(1, 2, 1, None),
            sent(1, 2, 2, None),
            durable(1, 3, None),
            sent(1, 0, 2, Some(2)),
            sent(1, 0, 3, None),
        ];
        assert!(check(&history).is_empty());
    }

    /// A node whose store reported corruption breaks it with its next event of any kind (here a
    /// restart), once; other nodes go on.
    #[test]
    fn a_node_lost_for_good_never_acts_again() {
        let history = vec![
            Event::Crashed { node: 1 },
            Event::StoreCorrupt {
                node: 1,
                reason: "payload checksum mismatch".to_string(),
            },
            durable(0, 2, None),
            Event::Restarted { node: 1 },
            sent(1, 0, 0, None),
        ];
        let violations = check(&history);
        let steps: Vec<usize> = violations.iter().map(|violation| violation.step).collect();
        assert_eq!(steps, vec![3]);
        assert!(violations[0]
            .message
            .contains("after its store reported corruption"));
        assert!(check(&history[..3]).is_empty());
    }

    /// A term above the durable one, a grant before the vote is durable, and a grant for another
    /// candidate than the durable vote each break it, at the send; another node's durable promise
    /// covers nothing.
    #[test]
    fn promises_sent_before_they_are_durable_break_it() {
        let history = vec![
            sent(0, 1, 1, None),
            durable(1, 2, None),
            sent(1, 0, 2, Some(0)),
            durable(1, 2, Some(2)),
            sent(1, 0, 2, Some(0)),
            sent(1, 0, 3, None),
            durable(2, 5, None),
        ];
        let violations = check(&history);
        let steps: Vec<usize> = violations.iter().map(|violation| violation.step).collect();
        assert_eq!(steps, vec![0, 2, 4, 5]);
        assert_eq!(
            violations[1].message,
            "node 1 sent node 0 its vote in term 2 for node 0 while its store held term 2 vote \
             none durably"
        );
        assert_eq!(
            violations[0].message,
            "node 0 sent node 1 term 1 while its store held term 0 vote none durably"
        );
    }
}
