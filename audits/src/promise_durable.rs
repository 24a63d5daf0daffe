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
//! The other promise a follower sends is an acknowledgement of appended records: "my log matches
//! yours through `matched`", on which its leader counts the records as held there. Read from two
//! more events the driver records: `DurableLog { node, last, term }` (the durable log now ends at
//! `last`, a record of `term`; the audit keeps the terms of each node's durable log offset by
//! offset, `log_terms::LogTerms`) and `AckSent { node, to, term, matched, matched_term }` (the
//! acknowledgement left the node; `matched_term` is the term of the record at `matched` in the log
//! it acknowledged). An acknowledgement holds when the node's durable log before it holds the
//! records it describes:
//! - its length: the durable log reaches `matched` (a node that loses records it acknowledged lets
//!   its leader count them committed on a copy a crash then erases);
//! - its records: the durable record at `matched` has term `matched_term`. A log holds the same
//!   records as another through an offset where both hold a record of one term, so this also
//!   catches a follower whose synced old suffix still reaches `matched` while the records it
//!   acknowledged (a new leader's, replacing that suffix) are not durable yet. `matched_term`
//!   `None` (a record the node held only folded, committed) is judged by the length alone.
//!
//! An acknowledgement made in a term the node has durably left when it leaves is not judged: it
//! waited for a sync that also made durable the node's move to a later term and the records a
//! leader of that term sent, which may replace the ones it acknowledged (a sync covers every op
//! applied before it starts). That is no broken promise: the node held the records when it made
//! the acknowledgement and kept them until a later leader replaced them, and a later leader can
//! replace records only where no majority held them before voting (a node votes on the log it
//! holds, and the crash that could lose them would lose the held acknowledgement too). The node
//! never sends an acknowledgement in its current term from such a sync, so one sent before its
//! records are durable is always judged.
//!
//! A node with no durable log recorded yet holds an empty one. An acknowledgement of offset 0
//! promises nothing and is not recorded. Each broken acknowledgement is reported at its
//! `AckSent`.
//!
//! A node whose store reported corruption at a restart (`StoreCorrupt`) may have lost the promise
//! it made and the records it acknowledged, so it never rejoins: any later event of that node (a
//! restart, a sample, a vote, a promise sent, a commit) breaks the invariant, reported once per
//! node at the first such event.

use crate::log_terms::LogTerms;
use crate::{Violation, PROMISE_DURABLE};
use felix_core::history::Event;
use felix_core::record::{NodeId, Offset, Term};
use felix_core::words;
use std::collections::BTreeMap;

/// The violations of PromiseDurable in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut durable: BTreeMap<NodeId, (Term, Option<NodeId>)> = BTreeMap::new();
    let mut logs: BTreeMap<NodeId, LogTerms> = BTreeMap::new();
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
            Event::DurableLog { node, last, term } => {
                logs.entry(node).or_default().end_at(last, term);
            }
            Event::AckSent {
                node,
                to,
                term,
                matched,
                matched_term,
            } => {
                let empty = LogTerms::default();
                let log = logs.get(&node).unwrap_or(&empty);
                let (durable_term, _) = durable.get(&node).copied().unwrap_or_default();
                let ack = Ack {
                    node,
                    to,
                    term,
                    matched,
                    matched_term,
                };
                if let Some(broken) = ack_broken(&ack, log, durable_term) {
                    violations.push(Violation::new(PROMISE_DURABLE, step, broken));
                }
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

/// An acknowledgement of appended records, as `Event::AckSent` records it.
struct Ack {
    node: NodeId,
    to: NodeId,
    term: Term,
    matched: Offset,
    matched_term: Option<Term>,
}

/// Why `ack` is not covered by the durable log `log` of its node, whose durable term is
/// `durable_term`, in words; `None` when it is.
fn ack_broken(ack: &Ack, log: &LogTerms, durable_term: Term) -> Option<String> {
    let Ack {
        node,
        to,
        term,
        matched,
        matched_term,
    } = *ack;
    if matched == 0 || durable_term > term {
        return None;
    }
    let sent = format!(
        "node {node} sent node {to} an AppendReply accepting its log through offset {matched} in \
         term {term}"
    );
    if log.last() < matched {
        return Some(format!(
            "{sent} while its store held its log through offset {} durably",
            log.last()
        ));
    }
    let durable_term = log.term_at(matched);
    match matched_term {
        Some(acknowledged) if durable_term != Some(acknowledged) => Some(format!(
            "{sent}, a record of term {acknowledged} there, while the record its store held \
             durably at offset {matched} is of term {}: records it replaced",
            durable_term.unwrap_or(0)
        )),
        _ => None,
    }
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

    fn durable_log(node: NodeId, last: Offset, term: Term) -> Event {
        Event::DurableLog { node, last, term }
    }

    fn ack(node: NodeId, matched: Offset, matched_term: Option<Term>) -> Event {
        Event::AckSent {
            node,
            to: 0,
            term: 2,
            matched,
            matched_term,
        }
    }

    /// Acknowledgements the durable log covers hold: at or below its end with the durable term
    /// there, of a folded record (no term) within it, of offset 0, and of a new leader's records
    /// once the truncation of the old suffix and the new records are durable. So does one that
    /// leaves once the node durably left its term (3 above 2) for a leader whose records replaced
    /// the acknowledged ones.
    #[test]
    fn acknowledgements_of_durable_records_hold() {
        let history = vec![
            ack(1, 0, Some(0)),
            durable_log(1, 3, 1),
            durable_log(1, 10, 1),
            ack(1, 10, Some(1)),
            ack(1, 2, None),
            durable_log(1, 4, 1),
            durable_log(1, 6, 2),
            ack(1, 6, Some(2)),
            ack(1, 4, Some(1)),
            durable(1, 3, None),
            durable_log(1, 5, 3),
            ack(1, 6, Some(2)),
        ];
        assert!(check(&history).is_empty());
    }

    /// An acknowledgement past the durable end, one whose durable record is of another term (a
    /// synced old suffix still reaching it while the new leader's records are not durable), and
    /// one covered only by another node's durable log each break it, at the acknowledgement (a
    /// durable term equal to the acknowledgement's excuses nothing).
    #[test]
    fn acknowledgements_before_their_records_are_durable_break_it() {
        let history = vec![
            durable_log(1, 10, 1),
            ack(1, 11, Some(1)),
            ack(1, 6, Some(2)),
            durable_log(1, 4, 1),
            ack(1, 6, Some(2)),
            durable_log(1, 6, 2),
            ack(1, 6, Some(2)),
            ack(2, 3, None),
            durable(2, 2, None),
            ack(2, 3, None),
        ];
        let violations = check(&history);
        let steps: Vec<usize> = violations.iter().map(|violation| violation.step).collect();
        assert_eq!(steps, vec![1, 2, 4, 7, 9]);
        assert_eq!(
            violations[0].message,
            "node 1 sent node 0 an AppendReply accepting its log through offset 11 in term 2 \
             while its store held its log through offset 10 durably"
        );
        assert_eq!(
            violations[1].message,
            "node 1 sent node 0 an AppendReply accepting its log through offset 6 in term 2, a \
             record of term 2 there, while the record its store held durably at offset 6 is of \
             term 1: records it replaced"
        );
        assert!(violations[2].message.contains("through offset 4 durably"));
        assert!(violations[3].message.contains("through offset 0 durably"));
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
