//! Broker-to-broker (and broker-to-replica) messages: Raft-shaped, plus the trim-point jump.
//!
//! `TrimmedTo` deliberately carries no term: a trim point is a fact about the committed log, not a
//! promise, and the receiver never changes its term or vote because of it.
//!
//! The read index (`broker/read_index.rs`) adds two pairs: `ReadIndex` / `ReadIndexReply` (a
//! follower or replica asks the leader for its commit index as of the read) and `ReadProbe` /
//! `ReadProbeAck` (the leader's confirmation round: a majority answering in its term proves no
//! newer leader had committed anything when the read arrived).

use crate::record::{Entry, Offset, Term};
use crate::storage::SealedState;
use serde::{Deserialize, Serialize};

/// One message between nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Message {
    /// A candidate asks for a vote in `term`; its log ends at (`last_offset`, `last_term`).
    RequestVote {
        term: Term,
        last_offset: Offset,
        last_term: Term,
    },
    /// The answer to `RequestVote`, sent after the vote is durable.
    Vote { term: Term, granted: bool },
    /// The leader of `term` replicates `entries` (contiguous from `prev_offset + 1`) and tells its
    /// committed index. Empty `entries` is a heartbeat.
    AppendEntries {
        term: Term,
        prev_offset: Offset,
        prev_term: Term,
        entries: Vec<Entry>,
        committed: Offset,
    },
    /// The answer to `AppendEntries` or `TrimmedTo`, sent after what it acknowledges is durable.
    AppendReply { term: Term, result: AppendResult },
    /// The leader cannot replay below `point` (its first held offset): the receiver jumps there,
    /// adopting `state` (what the records below `point` folded to; `state.base_offset == point - 1`).
    TrimmedTo { point: Offset, state: SealedState },
    /// A follower or replica asks the leader for a read index; `ask` is its own name for the
    /// question, unique across its restarts (carries no term: the answer is a fact about the
    /// leader's log, checked by the leader's own confirmation round).
    ReadIndex { ask: Ask },
    /// The leader's answer to `ReadIndex { ask }`: its commit index as of the question, confirmed
    /// by a majority in its term; `None` when it could not confirm (not leading, too many reads).
    ReadIndexReply { ask: Ask, index: Option<Offset> },
    /// The leader of `term` asks its voters to confirm it still leads; one round covers every read
    /// that arrived before it was sent.
    ReadProbe { term: Term, round: u64 },
    /// A voter's answer to `ReadProbe { round }`, in its own current term.
    ReadProbeAck { term: Term, round: u64 },
}

/// A read-index question's name: the incarnation the driver gave the asking node
/// (`BrokerConfig::incarnation`, never given to it before) and the question's number within it.
/// The number alone restarts at 1 with every restart, so an answer to a question asked before a
/// crash would be taken for a later question's, whose read then could be served stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Ask {
    pub incarnation: u64,
    pub number: u64,
}

/// What a follower or replica says about its log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AppendResult {
    /// The log matches the leader's through `matched` (durable).
    Accepted { matched: Offset },
    /// The log does not match at the leader's `prev_offset`: send from `next`.
    Rejected { next: Offset },
}

impl Message {
    /// The term a message carries, if any (`TrimmedTo` and the read-index question and answer
    /// carry none).
    pub fn term(&self) -> Option<Term> {
        match self {
            Message::RequestVote { term, .. }
            | Message::Vote { term, .. }
            | Message::AppendEntries { term, .. }
            | Message::AppendReply { term, .. }
            | Message::ReadProbe { term, .. }
            | Message::ReadProbeAck { term, .. } => Some(*term),
            Message::TrimmedTo { .. }
            | Message::ReadIndex { .. }
            | Message::ReadIndexReply { .. } => None,
        }
    }
}
