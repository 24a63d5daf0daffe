//! The client protocol: what a writer or reader asks a broker and what it is answered.
//!
//! Expected conditions are typed variants (`OffsetMismatch`, `FenceMismatch`, `CursorTooOld`,
//! `NotHeld`, `NotLeader`, `NoReadIndex`, `TruncateRefused`); a malformed request is `Invalid`
//! with a reason.
//! Nothing a client can send makes a broker panic.

use crate::record::{Headers, NodeId, Offset, Token};
use serde::{Deserialize, Serialize};

/// Who asked: a client identity (holder, owner, reader, folder) chosen by the driver.
pub type ClientId = u32;

/// A client's own sequence number for matching a reply to its request.
pub type RequestId = u64;

/// Where a read starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadFrom {
    /// From this offset. Below the node's readable start it is refused with `CursorTooOld`.
    Offset(Offset),
    /// From wherever the node can serve: resolves to the floor, never refused, never tagged.
    Earliest,
}

/// A request to a broker (or, for reads, a replica).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Append a write, conditional on the tail and/or the writer fence when given.
    Append {
        expected_tail: Option<Offset>,
        fence: Option<Token>,
        #[serde(with = "crate::body_json")]
        body: Vec<u8>,
        headers: Headers,
    },
    /// Append a trim asking for `floor`, under the same conditions. A floor at or below the current
    /// floor is a no-op that writes nothing but still checks tail and fence.
    Trim {
        expected_tail: Option<Offset>,
        fence: Option<Token>,
        floor: Offset,
        headers: Headers,
    },
    /// Append a fence record (paros' SetLeader { new, old }); `old` must be the token in force.
    Fence { new: Token, old: Token },
    /// Read committed records from `from`, skipping bookkeeping records, at most `max_records`.
    Read { from: ReadFrom, max_records: u32 },
}

/// A committed write as a reader sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadRecord {
    pub offset: Offset,
    #[serde(with = "crate::body_json")]
    pub body: Vec<u8>,
    pub headers: Headers,
}

/// A malformed request: the caller's bug, answered, never a panic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum InvalidRequest {
    /// A trim may ask for a floor at most its own offset.
    FloorAboveOffset { floor: Offset, offset: Offset },
    /// A read that starts past the committed tail.
    ReadPastTail { from: Offset, tail: Offset },
    /// Headers with an empty key, or too large.
    MalformedHeaders { reason: String },
    /// A body or request above the size limit.
    TooLarge { bytes: u64, limit: u64 },
}

/// A broker's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reply {
    /// The record landed at `offset`, is committed on a majority and durable there; `tail` is the
    /// next free offset after it.
    Appended { offset: Offset, tail: Offset },
    /// A trim at or below the current floor: nothing written; the tail (checked) is `tail`.
    TrimNoop { tail: Offset },
    /// `expected_tail` was not the tail. Nothing written. A holder must NOT adopt `tail`.
    OffsetMismatch { tail: Offset },
    /// The fence token was not the one in force. Nothing written.
    FenceMismatch { current: Token },
    /// A committed trim whose fence was stale when the walk reached it: refused in place, the slot
    /// spent, the floor unmoved.
    TruncateRefused { current: Token },
    /// Committed writes from the requested offset; `next` is where the next read should start.
    Records {
        records: Vec<ReadRecord>,
        next: Offset,
    },
    /// The read started below where this node can serve. `tag` is the headers of the trim that set
    /// the floor; absent when no trim set it (retention) or when the rules hide it.
    CursorTooOld { floor: Offset, tag: Option<Headers> },
    /// This node jumped over the range and does not hold it: ask another node.
    NotHeld { from: Offset },
    /// Not the leader; try `hint`.
    NotLeader { hint: Option<NodeId> },
    /// The node could not learn a read index (no leader known, the leader's confirmation round did
    /// not complete in time, its term's noop never committed, or too many reads were waiting):
    /// nothing was served. Retriable, like `NotLeader`: try again, at `hint` if given.
    NoReadIndex { hint: Option<NodeId> },
    /// A malformed request.
    Invalid(InvalidRequest),
}
