//! Durable storage: the segmented log store and its contract.
//!
//! The state machines (journal, broker) never touch storage directly. They emit `StorageOp`s; the
//! driver applies them, in order, to a `LogStore` (the in-memory store here, `MemoryStore`; the
//! file-backed store, which does the IO, is the `felix-store` crate's `FileStore`), syncs, and
//! reports completion. After a crash the driver
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
use std::fmt;
use std::path::PathBuf;

pub mod bounds;
pub mod memory;

pub use memory::MemoryStore;

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

    /// The last offset of the segment that holds `offset`. Panics if that segment reaches past
    /// `Offset::MAX`: offsets read from disk go through `checked_last_of` first.
    pub fn last_of(self, offset: Offset) -> Offset {
        self.checked_last_of(offset)
            .expect("the segment of a live offset ends before Offset::MAX")
    }

    /// The last offset of the segment that holds `offset`, or None when the offset right after
    /// that segment is not representable (only an offset read from a damaged file gets there).
    pub fn checked_last_of(self, offset: Offset) -> Option<Offset> {
        self.base_of(offset)
            .checked_add(self.records_per_segment)
            .map(|next| next - 1)
    }
}

/// The file store's own metadata (the `meta` file): the layout it was written with, and the synced
/// mark, an offset the durable log is known to have reached. Recovery that reads back a log ending
/// below the mark (and starting at or below it) reports the missing records as corruption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreMeta {
    pub records_per_segment: u64,
    /// 0 when nothing was ever synced; otherwise an offset that a synced record held.
    pub synced_mark: Offset,
}

impl Default for SegmentLayout {
    fn default() -> SegmentLayout {
        SegmentLayout {
            records_per_segment: 4,
        }
    }
}

/// The most ops a store buffers between two syncs; one more is refused with `StoreError::Invalid`
/// (a driver that never syncs is a bug, and the undo log / pending queue must stay bounded).
pub const UNSYNCED_OPS_MAX: usize = 1 << 20;

/// The segmented log store: the one durable home of a node's log, promise and sealed state.
///
/// The contract is the one at the top of this module. Offsets: the store holds the contiguous
/// entries `start() .. next()`; an empty log has `start() == next()`. Every op is checked against
/// the *applied* view (ops applied so far, synced or not); an op that breaks the contract (an append
/// that does not continue the log, a truncation below `start`, a compaction above the tail) is
/// refused with `StoreError::Invalid` and changes nothing.
pub trait LogStore {
    /// Buffers one op (see the module contract). Durable only after the next `sync`.
    fn apply(&mut self, op: &StorageOp) -> Result<(), StoreError>;

    /// Makes every op applied so far durable.
    fn sync(&mut self) -> Result<(), StoreError>;

    /// Reads back what is durable (after a crash, or on open). Must be called once before the
    /// first `apply` of a freshly opened or crashed store. Ops applied but not synced are
    /// discarded, as a crash that keeps none of them would.
    fn recover(&mut self) -> Result<Recovered, StoreError>;

    /// Fault injection: a crash now. The first `keep_unsynced_ops` ops applied since the last sync
    /// survive; of the next one, if it is an `Append`, the first `keep_entries_of_next` entries
    /// survive and the one after is torn; everything later is lost. `recover` must follow.
    fn crash(
        &mut self,
        keep_unsynced_ops: usize,
        keep_entries_of_next: usize,
    ) -> Result<(), StoreError>;

    /// How many ops were applied since the last sync (what a crash may lose).
    fn unsynced_ops(&self) -> usize;

    /// The first offset held (applied view); equals `next()` when the log is empty.
    fn start(&self) -> Offset;

    /// The offset the next append must start at (applied view).
    fn next(&self) -> Offset;
}

/// What survived: read back by `LogStore::recover`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    pub hard_state: HardState,
    /// The last sealed state, None when nothing was ever compacted or jumped over.
    pub sealed: Option<SealedState>,
    /// The first offset held; `entries` (if any) begin here, and the next append goes at
    /// `start + entries.len()`.
    pub start: Offset,
    pub entries: Vec<Entry>,
    /// A torn tail that recovery cut, if any (the driver should log it).
    pub tail_cut: Option<TailCut>,
}

impl Recovered {
    /// The offset the next append must start at.
    pub fn next(&self) -> Offset {
        self.start + self.entries.len() as u64
    }
}

/// A torn tail cut by recovery: where, and how many bytes were dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TailCut {
    pub path: PathBuf,
    /// Byte position in `path` where the file now ends.
    pub position: u64,
    pub bytes_dropped: u64,
    pub reason: String,
}

impl fmt::Display for TailCut {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "cut a torn tail of {} bytes at byte {} of {}: {}",
            self.bytes_dropped,
            self.position,
            self.path.display(),
            self.reason
        )
    }
}

/// Why a store operation failed. Every variant is an expected condition with a clear message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The file system refused an operation.
    Io { path: PathBuf, reason: String },
    /// Bytes on disk that no writer produced, somewhere other than a torn tail.
    Corrupt {
        path: PathBuf,
        /// Byte position in `path` of the bad record (0 for a whole-file problem).
        position: u64,
        reason: String,
    },
    /// An op that breaks the store contract (a bug in the caller); nothing was changed.
    Invalid { reason: String },
}

impl fmt::Display for StoreError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Io { path, reason } => {
                write!(formatter, "i/o error on {}: {}", path.display(), reason)
            }
            StoreError::Corrupt {
                path,
                position,
                reason,
            } => write!(
                formatter,
                "corrupt store file {} at byte {}: {}",
                path.display(),
                position,
                reason
            ),
            StoreError::Invalid { reason } => write!(formatter, "invalid storage op: {reason}"),
        }
    }
}

impl std::error::Error for StoreError {}
