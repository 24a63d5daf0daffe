//! CommittedDurable: a record is first taken as committed only when a majority of the voters hold
//! it durably (Raft's commit rule, judged at the decision rather than by its consequences).
//!
//! A leader counts a record committed when a majority of the voters hold it: itself, through the
//! end of its own durable log, and each follower through the offset it acknowledged, which it sends
//! only once those records are durable (PromiseDurable judges that send). When the count is wrong
//! (an acknowledgement counted that did not describe the leader's records, a durable end taken too
//! far, a quorum one short), nothing else need go wrong at once: the record is lost only if the
//! nodes that really hold it then crash or lose an election before it spreads, and the other judges
//! see the loss only then (AckedWritesKept, CommittedPrefixAgreement). This judge sees the wrong
//! count itself, at the first `Committed` event of the offset.
//!
//! Read from two events the driver records: `DurableLog { node, last, term }` (what each node's
//! store holds durably, kept offset by offset as `log_terms::LogTerms`, as PromiseDurable keeps it)
//! and `Committed { node, entry }`. At the first `Committed` of an offset in the history (any
//! node's: the leader's, in a correct run, since followers learn what is committed from it), the
//! voters whose durable log holds a record of the entry's term at its offset must be a majority of
//! the voters. A term stands for the record (one leader per term writes it), as in PromiseDurable.
//!
//! Why the first commit only: the records at and below an offset that some node has committed may
//! later be folded by a trim-point jump into a sealed base, whose durable log keeps only the base's
//! term; a later commit of the offset (a follower catching up, a node re-learning it after a
//! restart) is judged by CommittedPrefixAgreement, which compares the records themselves. A jump
//! past an offset needs some node to have committed it first, so no voter's log is a jump's
//! approximation at the first commit.
//!
//! Why it holds in a correct run: a record committed in term T is held by every later leader (the
//! election restriction), so no node that acknowledged it drops it before the leader counts the
//! acknowledgement, and what was durable stays durable (a crash loses only unsynced ops; a damaged
//! sector is the disk's fault, not a change of what the node made durable).
//!
//! The voters are not in the history: the caller names how many there are (nodes `0..voters`;
//! non-voting replicas are numbered after them), as the simulator's judge does from the run's
//! knobs.

use crate::log_terms::LogTerms;
use crate::{Violation, COMMITTED_DURABLE};
use felix_core::history::Event;
use felix_core::record::{NodeId, Offset};
use std::collections::BTreeMap;

/// The violations of CommittedDurable in `history`, for a cluster whose voters are nodes
/// `0..voters` (the simulator's numbering).
pub fn check(history: &[Event], voters: NodeId) -> Vec<Violation> {
    check_among(history, &(0..voters).collect::<Vec<_>>())
}

/// The violations of CommittedDurable in `history`, for a cluster whose voters are `voters` (the
/// real node's ids start at 1).
pub fn check_among(history: &[Event], voters: &[NodeId]) -> Vec<Violation> {
    let mut logs: BTreeMap<NodeId, LogTerms> = BTreeMap::new();
    // The highest offset any node has committed so far: every offset at or below it was judged.
    let mut judged: Offset = 0;
    let mut violations = Vec::new();
    let majority = voters.len() / 2 + 1;
    let count = voters.len();
    for (step, event) in history.iter().enumerate() {
        match event {
            Event::DurableLog { node, last, term } => {
                logs.entry(*node).or_default().end_at(*last, *term);
            }
            Event::Committed { node, entry } if entry.offset > judged => {
                judged = entry.offset;
                let holders: Vec<NodeId> = (voters.iter().copied())
                    .filter(|voter| {
                        logs.get(voter)
                            .is_some_and(|log| log.term_at(entry.offset) == Some(entry.term))
                    })
                    .collect();
                if holders.len() < majority {
                    let held = match holders.as_slice() {
                        [] => "no voter".to_string(),
                        nodes => format!(
                            "only {}",
                            nodes
                                .iter()
                                .map(|node| format!("node {node}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    };
                    violations.push(Violation::new(
                        COMMITTED_DURABLE,
                        step,
                        format!(
                            "node {node} took offset {} (term {}) as committed while {held} of \
                             the {count} voters held it durably (a majority is {majority})",
                            entry.offset, entry.term
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
    use crate::test_support::{committed, noop};

    fn durable(node: NodeId, last: Offset, term: u64) -> Event {
        Event::DurableLog { node, last, term }
    }

    /// A first commit held durably by two of three voters holds; by one it breaks, once, at that
    /// commit, naming the one holder.
    #[test]
    fn a_first_commit_needs_a_durable_majority() {
        let held = vec![durable(0, 1, 1), durable(2, 1, 1), committed(0, noop(1, 1))];
        assert_eq!(check(&held, 3), Vec::new());
        let short = vec![
            durable(0, 2, 1),
            durable(1, 1, 1),
            committed(0, noop(1, 1)),
            committed(0, noop(2, 1)),
            committed(1, noop(2, 1)),
        ];
        let found = check(&short, 3);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].invariant, found[0].step), (COMMITTED_DURABLE, 3));
        assert!(
            found[0].message.contains("only node 0 of the 3 voters"),
            "{}",
            found[0].message
        );
    }

    /// A record of another term at the offset is not the committed record; a non-voting replica
    /// (numbered after the voters) does not count; a log cut back no longer holds what it cut.
    #[test]
    fn only_voters_holding_the_same_record_count() {
        let other_term = vec![durable(0, 1, 2), durable(1, 1, 1), committed(0, noop(1, 2))];
        assert_eq!(check(&other_term, 3).len(), 1);
        let replica = vec![durable(0, 1, 1), durable(3, 1, 1), committed(0, noop(1, 1))];
        assert_eq!(check(&replica, 3).len(), 1);
        let cut = vec![
            durable(0, 2, 1),
            durable(1, 2, 1),
            durable(1, 1, 1),
            committed(0, noop(2, 1)),
        ];
        assert_eq!(check(&cut, 3).len(), 1);
    }

    /// Only an offset's first commit is judged: a later node committing it (after the voters'
    /// durable logs moved on, a jump's sealed base say) is CommittedPrefixAgreement's business.
    #[test]
    fn a_later_commit_of_a_judged_offset_is_not_judged_again() {
        let history = vec![
            durable(0, 1, 1),
            durable(1, 1, 1),
            committed(0, noop(1, 1)),
            durable(1, 1, 3),
            durable(0, 1, 3),
            committed(2, noop(1, 1)),
        ];
        assert_eq!(check(&history, 3), Vec::new());
    }
}
