//! What the host records for the PromiseDurable judge's acknowledgements: the log its store holds
//! durably and the acknowledgements of appended records its node's messages carry as they leave.
//!
//! Both are read from what the host itself does, as `promises.rs` does for terms and votes: the
//! durable log follows the disk (the log ops a sync covers, or what a restart recovered), and an
//! acknowledgement is judged when the host puts it on the network, whatever held it before. What
//! the acknowledgement describes is the node's log when it made it: the term of the record at its
//! offset, read from the broker right after the step that made it (a later step may have replaced
//! that record by the time a sync releases the message).
//!
//! To keep the history short, the durable log is recorded as it changes, one `DurableLog` per run
//! of one term (`LogTerms::steps_to`), and an acknowledgement once per offset and term: a repeat in
//! the term of the last one recorded, of an offset not above it, is covered by it (within one term
//! the node's durable log keeps what it matched of its leader's log; a restart records anew).

use crate::log_terms::LogTerms;
use felix_core::broker::{AppendResult, Broker, Message, Output};
use felix_core::history::Event;
use felix_core::storage::{Recovered, StorageOp};
use felix_core::{NodeId, Offset, Term};
use std::collections::VecDeque;

/// What a storage op does to the terms of the log.
#[derive(Clone, Debug)]
pub(super) enum Change {
    /// Records `(offset, term)` appended after the end.
    Append(Vec<(Offset, Term)>),
    /// Every record at or above `from` dropped.
    Truncate { from: Offset },
    /// A trim-point jump past `last`, the sealed base, a record of `term`.
    Jump { last: Offset, term: Term },
}

/// One node's durable log and the acknowledgements it has sent, as the host sees them.
#[derive(Clone, Debug, Default)]
pub struct Acks {
    /// The log changes applied to the disk and not yet covered by a sync, by op number.
    pub(super) unsynced: VecDeque<(u64, Change)>,
    /// The terms of what the disk holds durably.
    pub(super) durable: LogTerms,
    /// The durable log as the history last described it.
    recorded: LogTerms,
    /// The durable log changed since it was last recorded.
    changed: bool,
    /// For each acknowledgement made and not left yet, in the order made (the order the outbox
    /// lets them out): the term of the record it matched, as the node's log held it.
    made: VecDeque<Option<Term>>,
    /// The last acknowledgement recorded: its term and offset.
    sent: Option<(Term, Offset)>,
}

impl Acks {
    /// The disk took op `number` (not yet durable).
    pub fn applied(&mut self, number: u64, op: &StorageOp) {
        let change = match op {
            StorageOp::Append(entries) => Change::Append(
                entries
                    .iter()
                    .map(|entry| (entry.offset, entry.term))
                    .collect(),
            ),
            StorageOp::TruncateSuffix { from } => Change::Truncate { from: *from },
            StorageOp::TrimmedTo { point, state } => Change::Jump {
                last: point - 1,
                term: state.base_term,
            },
            StorageOp::HardState(_) | StorageOp::Compact { .. } => return,
        };
        self.unsynced.push_back((number, change));
    }

    /// The disk is durable through op `through`.
    pub fn synced(&mut self, through: u64) {
        while self
            .unsynced
            .front()
            .is_some_and(|&(number, _)| number <= through)
        {
            if let Some((_, change)) = self.unsynced.pop_front() {
                apply(&mut self.durable, change);
                self.changed = true;
            }
        }
    }

    /// The node restarted from a store that recovered `recovered` (what a crash kept is durable
    /// now); op numbers restart at 1, and acknowledgements are recorded anew.
    pub fn recovered(&mut self, recovered: &Recovered) {
        self.unsynced.clear();
        self.restarted();
        let base = recovered.start - 1;
        let base_term = recovered
            .sealed
            .as_ref()
            .map_or(0, |sealed| sealed.base_term);
        apply(
            &mut self.durable,
            Change::Jump {
                last: base,
                term: base_term,
            },
        );
        // What the store holds from `start` on is exactly its entries.
        self.durable.cut(base);
        let entries = recovered.entries.iter();
        apply(
            &mut self.durable,
            Change::Append(entries.map(|entry| (entry.offset, entry.term)).collect()),
        );
        self.changed = true;
    }

    /// The node starts (fresh or restarted) or crashed: no acknowledgement it made is waiting.
    pub fn restarted(&mut self) {
        self.made.clear();
        self.sent = None;
    }

    /// The durable log's changes since the last ones recorded, as events.
    pub fn durable_changed(&mut self, node: NodeId, events: &mut Vec<Event>) {
        if !self.changed {
            return;
        }
        self.changed = false;
        for (last, term) in self.recorded.steps_to(&self.durable) {
            self.recorded.end_at(last, term);
            events.push(Event::DurableLog { node, last, term });
        }
        assert_eq!(self.recorded, self.durable, "the events describe the disk");
    }

    /// `broker` just took a step whose outputs are `outputs`: notes the acknowledgements it made,
    /// with the term of the record each matched in its log now.
    pub fn made(&mut self, broker: &Broker, outputs: &[Output]) {
        for output in outputs {
            if let Output::Send { message, .. } = output {
                if let Some(matched) = accepted(message) {
                    self.made.push_back(broker.journal().term_at(matched));
                }
            }
        }
    }

    /// `message` leaves `node` for `to`: the acknowledgement it carries as an event, when no
    /// earlier record covers it.
    pub fn leaving(&mut self, node: NodeId, to: NodeId, message: &Message) -> Option<Event> {
        let matched = accepted(message)?;
        let matched_term = self
            .made
            .pop_front()
            .expect("an acknowledgement leaves after it was made");
        let term = message.term()?;
        let covered = self
            .sent
            .is_some_and(|(sent_term, sent)| sent_term == term && matched <= sent);
        if matched == 0 || covered {
            return None;
        }
        self.sent = Some((term, matched));
        Some(Event::AckSent {
            node,
            to,
            term,
            matched,
            matched_term,
        })
    }
}

/// The offset an acknowledgement of appended records matches, if `message` is one.
fn accepted(message: &Message) -> Option<Offset> {
    match message {
        Message::AppendReply {
            result: AppendResult::Accepted { matched },
            ..
        } => Some(*matched),
        _ => None,
    }
}

/// Applies one log change to `terms`.
pub(super) fn apply(terms: &mut LogTerms, change: Change) {
    match change {
        Change::Append(records) => {
            for (offset, term) in records {
                assert_eq!(offset, terms.last() + 1, "appends are contiguous");
                terms.extend(offset, term);
            }
        }
        Change::Truncate { from } => terms.cut(from - 1),
        // A jump replaces the records below the point by the sealed base, a record of `term` at
        // `last`; a log that already holds that record keeps it and what follows it. (The terms
        // below `last` stay as they were known: those records are folded now, and an
        // acknowledgement of one names no term.)
        Change::Jump { last, term } => {
            if terms.term_at(last) != Some(term) {
                terms.end_at(last, term);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::noops;
    use felix_core::storage::HardState;

    fn append(offsets: std::ops::RangeInclusive<Offset>, term: Term) -> StorageOp {
        StorageOp::Append(noops(offsets, term))
    }

    fn recorded(acks: &mut Acks) -> Vec<(Offset, Term)> {
        let mut events = Vec::new();
        acks.durable_changed(1, &mut events);
        events
            .into_iter()
            .map(|event| match event {
                Event::DurableLog { last, term, .. } => (last, term),
                other => panic!("only durable logs, not {other:?}"),
            })
            .collect()
    }

    /// The durable log is recorded once a sync covers its ops, once per change: a synced
    /// truncation and the new leader's records as a cut and a run; a restart records what it
    /// recovered where it differs.
    #[test]
    fn the_durable_log_follows_the_syncs() {
        let mut acks = Acks::default();
        acks.applied(1, &append(1..=3, 1));
        acks.applied(2, &StorageOp::HardState(HardState::default()));
        acks.applied(3, &StorageOp::TruncateSuffix { from: 2 });
        acks.applied(4, &append(2..=2, 2));
        assert!(recorded(&mut acks).is_empty());
        acks.synced(2);
        assert_eq!(recorded(&mut acks), vec![(3, 1)]);
        assert!(recorded(&mut acks).is_empty());
        acks.synced(3);
        assert_eq!(recorded(&mut acks), vec![(1, 1)]);
        acks.synced(4);
        assert_eq!(recorded(&mut acks), vec![(2, 2)]);
        acks.applied(5, &append(3..=4, 2));
        // A crash kept the unsynced 3 and lost 4.
        let recovered = Recovered {
            hard_state: HardState::default(),
            sealed: None,
            start: 1,
            entries: [noops(1..=1, 1), noops(2..=3, 2)].concat(),
            tail_cut: None,
        };
        acks.recovered(&recovered);
        assert_eq!(recorded(&mut acks), vec![(3, 2)]);
        acks.synced(5);
        assert!(recorded(&mut acks).is_empty(), "the lost op is forgotten");
        // A jump whose base matches the record held keeps the log; one whose base is of another
        // term replaces it there; one past the end extends the log to the base.
        let jump = |point, base_term| StorageOp::TrimmedTo {
            point,
            state: felix_core::storage::SealedState {
                base_offset: point - 1,
                base_term,
                ..Default::default()
            },
        };
        acks.applied(1, &jump(3, 2));
        acks.applied(2, &jump(4, 3));
        acks.applied(3, &jump(8, 4));
        acks.synced(1);
        assert!(recorded(&mut acks).is_empty());
        acks.synced(2);
        assert_eq!(recorded(&mut acks), vec![(2, 2), (3, 3)]);
        acks.synced(3);
        assert_eq!(recorded(&mut acks), vec![(7, 4)]);
    }

    /// An acknowledgement is recorded with the term it was made with, once per offset and term:
    /// a lower or equal offset in the recorded term is covered, a higher offset or another term
    /// is not; offset 0 and other messages are never recorded; a restart records anew.
    #[test]
    fn an_acknowledgement_is_recorded_once() {
        let mut acks = Acks::default();
        let reply = |term, matched| Message::AppendReply {
            term,
            result: AppendResult::Accepted { matched },
        };
        let sent = |term, matched, matched_term| {
            Some(Event::AckSent {
                node: 1,
                to: 0,
                term,
                matched,
                matched_term,
            })
        };
        acks.made
            .extend([Some(0), Some(2), Some(2), Some(2), None, Some(3), Some(3)]);
        assert_eq!(acks.leaving(1, 0, &reply(2, 0)), None);
        assert_eq!(acks.leaving(1, 0, &reply(2, 4)), sent(2, 4, Some(2)));
        assert_eq!(acks.leaving(1, 0, &reply(2, 4)), None);
        assert_eq!(acks.leaving(1, 0, &reply(2, 3)), None);
        assert_eq!(acks.leaving(1, 0, &reply(2, 5)), sent(2, 5, None));
        let rejected = Message::AppendReply {
            term: 3,
            result: AppendResult::Rejected { next: 2 },
        };
        assert_eq!(acks.leaving(1, 0, &rejected), None);
        assert_eq!(acks.leaving(1, 0, &reply(3, 2)), sent(3, 2, Some(3)));
        acks.restarted();
        assert!(acks.made.is_empty());
        acks.made.push_back(Some(3));
        assert_eq!(acks.leaving(1, 0, &reply(3, 2)), sent(3, 2, Some(3)));
    }
}
