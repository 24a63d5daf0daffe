//! What the host records for the PromiseDurable judge: the promise its store holds durably and the
//! promises its node's messages carry as they leave.
//!
//! Both are read from what the host itself does, never from the outbox's bookkeeping, so a send
//! that the outbox (or the broker) lets out too early is seen: the durable promise follows the
//! disk (a `HardState` op counts once a sync covers its number, or once a restart recovered it),
//! and a message is judged when the host puts it on the network, whatever held it before.
//!
//! To keep the history short, a promise is recorded once per node: a message whose term is not
//! above the highest term already recorded for the node, or that repeats the last grant recorded,
//! is covered by the earlier record (a store's durable promise never goes back, so a promise that
//! was durable when first sent still is).

use felix_core::broker::Message;
use felix_core::history::Event;
use felix_core::storage::{HardState, StorageOp};
use felix_core::{NodeId, Term};
use std::collections::VecDeque;

/// One node's durable promise and the promises it has sent, as the host sees them.
#[derive(Clone, Debug, Default)]
pub struct Promises {
    /// The promises applied to the disk and not yet covered by a sync, by op number.
    pub(super) unsynced: VecDeque<(u64, HardState)>,
    /// What the disk holds durably.
    pub(super) durable: HardState,
    /// The durable promise last recorded in the history.
    recorded: HardState,
    /// The highest term a recorded sent message carried.
    sent_term: Term,
    /// The last vote grant recorded: its term and candidate.
    sent_grant: Option<(Term, NodeId)>,
}

impl Promises {
    /// The disk took op `number` (not yet durable).
    pub fn applied(&mut self, number: u64, op: &StorageOp) {
        if let StorageOp::HardState(hard_state) = op {
            self.unsynced.push_back((number, *hard_state));
        }
    }

    /// The disk is durable through op `through`.
    pub fn synced(&mut self, through: u64) {
        while let Some(&(number, hard_state)) = self.unsynced.front() {
            if number > through {
                break;
            }
            self.durable = hard_state;
            self.unsynced.pop_front();
        }
    }

    /// The node restarted from a store that recovered `hard_state` (what a crash kept is durable
    /// now); op numbers restart at 1.
    pub fn recovered(&mut self, hard_state: HardState) {
        self.unsynced.clear();
        self.durable = hard_state;
    }

    /// The durable promise as an event, when it changed since the last one recorded.
    pub fn durable_changed(&mut self, node: NodeId) -> Option<Event> {
        if self.durable == self.recorded {
            return None;
        }
        self.recorded = self.durable;
        Some(Event::DurablePromise {
            node,
            term: self.durable.term,
            vote: self.durable.vote,
        })
    }

    /// `message` leaves `node` for `to`: the promise it carries as an event, when no earlier record
    /// covers it.
    pub fn leaving(&mut self, node: NodeId, to: NodeId, message: &Message) -> Option<Event> {
        let term = message.term()?;
        let grant = match message {
            Message::Vote {
                term,
                granted: true,
            } => Some((*term, to)),
            _ => None,
        };
        let new_term = term > self.sent_term;
        let new_grant = grant.is_some() && grant != self.sent_grant;
        if !new_term && !new_grant {
            return None;
        }
        self.sent_term = self.sent_term.max(term);
        if grant.is_some() {
            self.sent_grant = grant;
        }
        Some(Event::PromiseSent {
            node,
            to,
            term,
            vote: grant.map(|(_, candidate)| candidate),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn promise(term: Term, vote: Option<NodeId>) -> StorageOp {
        StorageOp::HardState(HardState { term, vote })
    }

    /// A promise becomes durable when a sync covers its op, and is recorded once.
    #[test]
    fn a_promise_is_durable_once_a_sync_covers_it() {
        let mut promises = Promises::default();
        promises.applied(1, &promise(1, Some(0)));
        promises.applied(2, &StorageOp::TruncateSuffix { from: 3 });
        promises.applied(3, &promise(2, None));
        assert_eq!(promises.durable_changed(0), None);
        promises.synced(2);
        assert_eq!(
            promises.durable_changed(0),
            Some(Event::DurablePromise {
                node: 0,
                term: 1,
                vote: Some(0)
            })
        );
        assert_eq!(promises.durable_changed(0), None);
        promises.recovered(HardState {
            term: 2,
            vote: None,
        });
        promises.synced(3);
        assert_eq!(
            promises.durable_changed(0),
            Some(Event::DurablePromise {
                node: 0,
                term: 2,
                vote: None
            })
        );
    }

    /// A message is recorded when its term is new or it grants a vote not yet recorded; a
    /// message without a term, a repeat and a refusal in a known term are not.
    #[test]
    fn a_sent_promise_is_recorded_once() {
        let mut promises = Promises::default();
        let vote = |term, granted| Message::Vote { term, granted };
        let sent = |to, term, vote| {
            Some(Event::PromiseSent {
                node: 1,
                to,
                term,
                vote,
            })
        };
        assert_eq!(promises.leaving(1, 0, &vote(2, true)), sent(0, 2, Some(0)));
        assert_eq!(promises.leaving(1, 0, &vote(2, true)), None);
        assert_eq!(promises.leaving(1, 2, &vote(2, false)), None);
        assert_eq!(promises.leaving(1, 2, &vote(2, true)), sent(2, 2, Some(2)));
        assert_eq!(promises.leaving(1, 2, &vote(3, false)), sent(2, 3, None));
        let probe = Message::ReadProbe { term: 1, round: 1 };
        assert_eq!(promises.leaving(1, 0, &probe), None);
        let trimmed = Message::ReadIndex {
            ask: felix_core::broker::Ask {
                incarnation: 1,
                number: 1,
            },
        };
        assert_eq!(promises.leaving(1, 0, &trimmed), None);
    }
}
