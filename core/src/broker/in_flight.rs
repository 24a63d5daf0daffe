//! Flow control: the appends a leader has in flight to one peer (etcd-io/raft's
//! `MaxInflightMsgs`), bounded by `BrokerConfig::appends_in_flight_max`.
//!
//! A leader replicates optimistically: every `AppendEntries` advances the peer's `next`, so with no
//! bound any number of them can be unanswered. With a bound of `n`, the leader remembers, per peer,
//! the last offset of every `AppendEntries` carrying records that it sent and has had no answer
//! for; while `n` are unanswered it sends that peer no records. Heartbeats (no records) still go,
//! and `TrimmedTo` (no records either) is not counted.
//!
//! How slots come back, with messages lost, duplicated and delayed:
//! - An `Accepted { matched }` answers every append whose last offset is at or below what the
//!   peer is known to match, and frees their slots (etcd's `FreeLE`). A duplicated or delayed
//!   acceptance frees nothing a fresher one did not: an append it does not cover stays counted.
//! - A `Rejected` empties the window: the peer's log did not match where the leader thought it
//!   did, so what was sent past that point is moot, and the leader sends again from the peer's
//!   hint (etcd's probe state). A stale rejection (delayed or duplicated, in the current term) only
//!   makes the leader send again what the peer may already hold.
//! - A lost append or a lost answer never wedges a peer: a heartbeat is sent at the peer's
//!   optimistic `next`, one past every append in flight, so its answer either covers every one of
//!   them (an acceptance through `next - 1`) or is a rejection. Either empties the window, so a
//!   loss costs at most one heartbeat's round trip.
//! - Answers from other terms are ignored, like every `AppendReply` from another term, and a new
//!   leader starts with empty windows (it builds its progress afresh).
//!
//! The bound counts what the leader remembers: after a rejection it forgets what it sent, so for
//! a while the network may hold more appends than the bound, as in etcd. With no bound (`None`,
//! the default) nothing is remembered and the leader pipelines without limit.

use crate::record::Offset;
use std::collections::VecDeque;

/// The appends carrying records a leader sent one peer and has had no answer for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppendsInFlight {
    /// The last offset each append carried, oldest first (strictly increasing).
    lasts: VecDeque<Offset>,
}

impl AppendsInFlight {
    /// How many appends are unanswered.
    pub fn len(&self) -> usize {
        self.lasts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lasts.is_empty()
    }

    /// The last offset of the newest append in flight.
    pub fn newest(&self) -> Option<Offset> {
        self.lasts.back().copied()
    }

    /// Whether the bound is reached: no records go to the peer until an answer frees a slot.
    pub fn full(&self, bound: Option<usize>) -> bool {
        bound.is_some_and(|bound| self.lasts.len() >= bound)
    }

    /// Counts an append carrying records through `last`. With no bound nothing is remembered.
    pub(super) fn sent(&mut self, last: Offset, bound: Option<usize>) {
        let Some(bound) = bound else { return };
        assert!(
            self.lasts.len() < bound,
            "an append beyond the in-flight bound"
        );
        assert!(
            self.lasts.back().is_none_or(|newest| *newest < last),
            "appends in flight carry increasing offsets"
        );
        self.lasts.push_back(last);
    }

    /// The peer matches through `matched`: every append at or below it is answered.
    pub(super) fn accepted(&mut self, matched: Offset) {
        while self.lasts.front().is_some_and(|last| *last <= matched) {
            self.lasts.pop_front();
        }
    }

    /// The peer's log did not match: nothing sent is counted any more.
    pub(super) fn rejected(&mut self) {
        self.lasts.clear();
    }
}
