//! Durable storage: the segmented log store and its contract.
//!
//! The state machines (journal, broker) never touch storage directly. They emit `StorageOp`s; the
//! driver applies them, in order, to a `LogStore` (the in-memory store in the simulator, the
//! file-backed store in a real server), syncs, and reports completion. After a crash the driver
//! calls `LogStore::recover` and rebuilds the node from what survived.
//!
//! Contract of every `LogStore` (checked by the shared proptests against a trivial model):
//! - `apply` buffers an op; nothing is durable until `sync` returns `Ok`.
//! - After `sync` returns `Ok`, every op applied before it survives any crash.
//! - A crash may lose any suffix of the ops applied since the last sync, and may leave the last
//!   record torn; recovery cuts a torn tail and never invents or reorders records.
//! - `Compact` and `TrimmedTo` are atomic: the sealed state and the deletion land together or
//!   not at all.
//! - Corruption anywhere but the torn tail is reported as `StoreError::Corrupt`, never dropped.

use crate::record::{Entry, Headers, NodeId, Offset, Term, Token};
use serde::{Deserialize, Serialize};

/// The journal state that deleted records folded to, sealed durably in the same write that drops
/// them, so a restarted node folds the retained log from the same state as one that never
/// restarted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealedState {
    /// The writer token in force after the last deleted record.
    pub writer: Token,
    /// The floor in force.
    pub floor: Offset,
    /// The headers of the trim that set the floor (None when no trim set it).
    pub floor_tag: Option<Headers>,
    /// Offset of the trim record that set the floor (None when no trim set it).
    pub floor_trim: Option<Offset>,
    /// The last deleted offset and its term: the base for log matching.
    pub base_offset: Offset,
    pub base_term: Term,
}

/// The durable promise: term and vote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HardState {
    pub term: Term,
    pub vote: Option<NodeId>,
}

/// One durable operation. Applied in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StorageOp {
    /// Append contiguous entries right after the current last entry.
    Append(Vec<Entry>),
    /// Drop every entry at or above `from` (a conflicting, uncommitted suffix).
    TruncateSuffix { from: Offset },
    /// Persist the promise.
    HardState(HardState),
    /// Delete whole segments entirely below `below` and seal `sealed`, atomically.
    Compact { below: Offset, sealed: SealedState },
    /// The trim-point jump: drop everything below `point`, seal `state`, atomically.
    TrimmedTo { point: Offset, state: SealedState },
}

/// How offsets map to segments: segment `k` holds offsets `k * records + 1 ..= (k + 1) * records`.
/// Fixed-count segments keep the journal's "whole segments only" rule and every store's file layout
/// computable from an offset alone; the journal and the stores share this one definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentLayout {
    pub records_per_segment: u64,
}

impl SegmentLayout {
    /// The first offset of the segment that holds `offset` (offset >= 1).
    pub fn base_of(self, offset: Offset) -> Offset {
        assert!(self.records_per_segment > 0);
        assert!(offset >= 1);
        (offset - 1) / self.records_per_segment * self.records_per_segment + 1
    }

    /// The last offset of the segment that holds `offset`.
    pub fn last_of(self, offset: Offset) -> Offset {
        self.base_of(offset) + self.records_per_segment - 1
    }
}

impl Default for SegmentLayout {
    fn default() -> SegmentLayout {
        SegmentLayout { records_per_segment: 4 }
    }
}
