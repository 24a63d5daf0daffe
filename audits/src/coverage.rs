//! Coverage counters: how often the paths the invariants guard were taken, so that a passing
//! sweep is not vacuous. They are not invariants; a sweep reports their totals, and a sweep in
//! which one stays at zero has not exercised that path.

use felix_core::api::Reply;
use felix_core::history::Event;
use serde::Serialize;

/// Counts over one history: the *sometimes* of the invariants (each path a judge guards was taken).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// A stale holder retired on a tagged CursorTooOld (`HolderRetired { by_tag: true }`).
    pub stale_holder_retired_by_tag: u64,
    /// A below-floor broker recovered by jumping to a peer's trim point.
    pub broker_jumped: u64,
    /// A below-floor replica did too.
    pub replica_jumped: u64,
    /// A read below the trim point was refused (`CursorTooOld` reached a client).
    pub read_below_trim_refused: u64,
    /// A folder restored its state from a checkpoint run.
    pub checkpoint_restored: u64,
    /// A jumped node answered a read below its trim point `NotHeld` before its walk reached the
    /// trim that set the sender's floor (the second seed's window; the reader asks another node).
    pub read_not_held: u64,
    /// The history was fully checked for Linearizable (proved or refuted) within its budget.
    pub history_checked: u64,
    /// The history was over the Linearizable checker's budget: neither proved nor refuted.
    pub history_unchecked: u64,
    /// A message carrying a term not sent before by its node left it (PromiseDurable judged it).
    pub promise_sent: u64,
    /// A vote grant left its node (PromiseDurable judged it against the durable vote).
    pub vote_grant_sent: u64,
}

impl Coverage {
    /// Adds another history's counts (for a sweep's totals).
    pub fn add(&mut self, other: &Coverage) {
        self.stale_holder_retired_by_tag += other.stale_holder_retired_by_tag;
        self.broker_jumped += other.broker_jumped;
        self.replica_jumped += other.replica_jumped;
        self.read_below_trim_refused += other.read_below_trim_refused;
        self.checkpoint_restored += other.checkpoint_restored;
        self.read_not_held += other.read_not_held;
        self.history_checked += other.history_checked;
        self.history_unchecked += other.history_unchecked;
        self.promise_sent += other.promise_sent;
        self.vote_grant_sent += other.vote_grant_sent;
    }

    /// Counts one Linearizable verdict as checked or unchecked.
    pub fn count_history_check(&mut self, verdict: &crate::linearizable::Verdict) {
        match verdict {
            crate::linearizable::Verdict::Unchecked { .. } => self.history_unchecked += 1,
            _ => self.history_checked += 1,
        }
    }

    /// The counters by name, in a fixed order (for summaries).
    pub fn named(&self) -> [(&'static str, u64); 10] {
        [
            (
                "stale_holder_retired_by_tag",
                self.stale_holder_retired_by_tag,
            ),
            ("broker_jumped", self.broker_jumped),
            ("replica_jumped", self.replica_jumped),
            ("read_below_trim_refused", self.read_below_trim_refused),
            ("checkpoint_restored", self.checkpoint_restored),
            ("read_not_held", self.read_not_held),
            ("history_checked", self.history_checked),
            ("history_unchecked", self.history_unchecked),
            ("promise_sent", self.promise_sent),
            ("vote_grant_sent", self.vote_grant_sent),
        ]
    }
}

/// Counts the covered paths in `history`.
pub fn coverage(history: &[Event]) -> Coverage {
    let mut counts = Coverage::default();
    for event in history {
        match event {
            Event::HolderRetired { by_tag: true, .. } => counts.stale_holder_retired_by_tag += 1,
            Event::Jumped { replica: false, .. } => counts.broker_jumped += 1,
            Event::Jumped { replica: true, .. } => counts.replica_jumped += 1,
            Event::Replied {
                reply: Reply::CursorTooOld { .. },
                ..
            } => counts.read_below_trim_refused += 1,
            Event::CheckpointRestored { .. } => counts.checkpoint_restored += 1,
            Event::Replied {
                reply: Reply::NotHeld { .. },
                ..
            } => counts.read_not_held += 1,
            Event::PromiseSent { vote: None, .. } => counts.promise_sent += 1,
            Event::PromiseSent { vote: Some(_), .. } => counts.vote_grant_sent += 1,
            _ => {}
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::read_request;

    /// Each counter counts its own event and nothing else.
    #[test]
    fn counts_each_path() {
        let history = vec![
            Event::HolderRetired {
                client: 1,
                epoch: 1,
                newer_epoch: 2,
                by_tag: true,
            },
            Event::HolderRetired {
                client: 1,
                epoch: 1,
                newer_epoch: 2,
                by_tag: false,
            },
            Event::Jumped {
                node: 0,
                point: 5,
                replica: false,
            },
            Event::Jumped {
                node: 3,
                point: 5,
                replica: true,
            },
            Event::Jumped {
                node: 3,
                point: 9,
                replica: true,
            },
            Event::Replied {
                client: 2,
                node: 0,
                request: read_request(1),
                reply: Reply::CursorTooOld {
                    floor: 4,
                    tag: None,
                },
            },
            Event::CheckpointRestored {
                client: 4,
                begin: 4,
                end: 6,
            },
            Event::Replied {
                client: 2,
                node: 1,
                request: read_request(2),
                reply: Reply::NotHeld { from: 2 },
            },
            Event::PromiseSent {
                node: 1,
                to: 0,
                term: 2,
                vote: None,
            },
            Event::PromiseSent {
                node: 1,
                to: 0,
                term: 2,
                vote: Some(0),
            },
            Event::PromiseSent {
                node: 1,
                to: 2,
                term: 3,
                vote: Some(2),
            },
            Event::DurablePromise {
                node: 1,
                term: 3,
                vote: Some(2),
            },
        ];
        let counts = coverage(&history);
        assert_eq!(
            counts.named(),
            [
                ("stale_holder_retired_by_tag", 1),
                ("broker_jumped", 1),
                ("replica_jumped", 2),
                ("read_below_trim_refused", 1),
                ("checkpoint_restored", 1),
                ("read_not_held", 1),
                // Counted by `audit`, which runs the checker; `coverage` alone does not.
                ("history_checked", 0),
                ("history_unchecked", 0),
                ("promise_sent", 1),
                ("vote_grant_sent", 2),
            ]
        );
        let mut total = counts;
        total.add(&counts);
        assert_eq!(total.replica_jumped, 4);
    }
}
