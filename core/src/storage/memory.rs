//! The in-memory store: the simulator's disk, and its hot path.
//!
//! It holds the applied view directly (entries in a `VecDeque`, no encoding) and keeps an *undo log*
//! of the ops applied since the last sync, so that `crash` can roll back exactly what a crash may
//! lose. `apply` costs the clone of the entries and one undo record; `sync` forgets the undo log;
//! a crash undoes, newest first, every op it does not keep (and cuts a torn append to the entries
//! that made it). Entries are never encoded: a torn record in memory is simply a record that is
//! not there, which is what recovery of a torn tail yields on disk.

use super::bounds::Bounds;
use super::{
    HardState, LogStore, Recovered, SealedState, SegmentLayout, StorageOp, StoreError,
    UNSYNCED_OPS_MAX,
};
use crate::record::{Entry, Offset};
use std::collections::VecDeque;

/// How to take back one unsynced op.
#[derive(Clone, Debug)]
enum Undo {
    /// Pop this many entries from the back.
    Append { count: usize },
    /// Push these entries back at the end.
    TruncateSuffix { removed: Vec<Entry> },
    /// Restore the previous promise.
    HardState { previous: HardState },
    /// Restore the bounds, the sealed state and the entries dropped from the front (and, for a
    /// jump past the tail, nothing at the back: `previous` restores `next`).
    DropFront {
        previous: Bounds,
        previous_sealed: Option<SealedState>,
        removed: Vec<Entry>,
    },
}

/// The in-memory `LogStore`. See the module docs. A clone is an independent disk (what
/// `recover` on the clone reads back is what this one holds durably now).
#[derive(Clone, Debug)]
pub struct MemoryStore {
    layout: SegmentLayout,
    bounds: Bounds,
    entries: VecDeque<Entry>,
    hard_state: HardState,
    sealed: Option<SealedState>,
    undo: Vec<Undo>,
    /// Set by `crash`, cleared by `recover`: applying to a crashed store is a caller bug.
    crashed: bool,
}

impl MemoryStore {
    /// An empty store (a fresh disk).
    pub fn new(layout: SegmentLayout) -> MemoryStore {
        assert!(layout.records_per_segment > 0);
        MemoryStore {
            layout,
            bounds: Bounds::empty(),
            entries: VecDeque::new(),
            hard_state: HardState::default(),
            sealed: None,
            undo: Vec::new(),
            crashed: false,
        }
    }

    /// A store that holds exactly `recovered`, durably (what a disk read back after a restart:
    /// the simulator's disk after it read its bytes back through `inspect`).
    pub fn restored(layout: SegmentLayout, recovered: &Recovered) -> MemoryStore {
        assert!(layout.records_per_segment > 0);
        MemoryStore {
            layout,
            bounds: Bounds {
                start: recovered.start,
                next: recovered.next(),
            },
            entries: recovered.entries.iter().cloned().collect(),
            hard_state: recovered.hard_state,
            sealed: recovered.sealed.clone(),
            undo: Vec::new(),
            crashed: false,
        }
    }

    /// The entry at `offset` in the applied view, if held.
    pub fn entry(&self, offset: Offset) -> Option<&Entry> {
        if offset < self.bounds.start || offset >= self.bounds.next {
            return None;
        }
        let entry = &self.entries[(offset - self.bounds.start) as usize];
        assert_eq!(entry.offset, offset);
        Some(entry)
    }

    /// Every entry held (applied view), in offset order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.entries.iter()
    }

    /// The promise (applied view).
    pub fn hard_state(&self) -> HardState {
        self.hard_state
    }

    /// The sealed state (applied view).
    pub fn sealed(&self) -> Option<&SealedState> {
        self.sealed.as_ref()
    }

    fn check_invariants(&self) {
        assert_eq!(
            self.bounds.next - self.bounds.start,
            self.entries.len() as u64
        );
        if let Some(front) = self.entries.front() {
            assert_eq!(front.offset, self.bounds.start);
        }
    }

    fn undo_one(&mut self, undo: Undo, keep_entries: usize) {
        match undo {
            Undo::Append { count } => {
                let drop = count - keep_entries.min(count);
                for _ in 0..drop {
                    let entry = self.entries.pop_back();
                    assert!(entry.is_some());
                }
                self.bounds.next -= drop as u64;
            }
            Undo::TruncateSuffix { removed } => {
                self.bounds.next += removed.len() as u64;
                self.entries.extend(removed);
            }
            Undo::HardState { previous } => self.hard_state = previous,
            Undo::DropFront {
                previous,
                previous_sealed,
                removed,
            } => {
                // Entries kept by a jump past the tail were none; the front comes back in order.
                for entry in removed.into_iter().rev() {
                    self.entries.push_front(entry);
                }
                self.bounds = previous;
                self.sealed = previous_sealed;
            }
        }
        self.check_invariants();
    }
}

impl LogStore for MemoryStore {
    fn apply(&mut self, op: &StorageOp) -> Result<(), StoreError> {
        if self.crashed {
            return Err(StoreError::Invalid {
                reason: "apply after a crash without recover".to_string(),
            });
        }
        if self.undo.len() >= UNSYNCED_OPS_MAX {
            return Err(StoreError::Invalid {
                reason: format!("more than {UNSYNCED_OPS_MAX} ops applied without a sync"),
            });
        }
        let after = self.bounds.step(self.layout, op)?;
        let undo = match op {
            StorageOp::Append(entries) => {
                self.entries.extend(entries.iter().cloned());
                Undo::Append {
                    count: entries.len(),
                }
            }
            StorageOp::TruncateSuffix { .. } => {
                let keep = (after.next - self.bounds.start) as usize;
                let removed: Vec<Entry> = self.entries.drain(keep..).collect();
                Undo::TruncateSuffix { removed }
            }
            StorageOp::HardState(hard_state) => {
                let previous = self.hard_state;
                self.hard_state = *hard_state;
                Undo::HardState { previous }
            }
            StorageOp::Compact { sealed, .. } | StorageOp::TrimmedTo { state: sealed, .. } => {
                let held = self.entries.len();
                let drop = ((after.start - self.bounds.start) as usize).min(held);
                let removed: Vec<Entry> = self.entries.drain(..drop).collect();
                let previous_sealed = self.sealed.replace(sealed.clone());
                Undo::DropFront {
                    previous: self.bounds,
                    previous_sealed,
                    removed,
                }
            }
        };
        self.bounds = after;
        self.undo.push(undo);
        self.check_invariants();
        Ok(())
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        if self.crashed {
            return Err(StoreError::Invalid {
                reason: "sync after a crash without recover".to_string(),
            });
        }
        self.undo.clear();
        Ok(())
    }

    fn recover(&mut self) -> Result<Recovered, StoreError> {
        // Recovering a live store reads back what is durable: the applied view minus the unsynced
        // ops, exactly what a crash keeping nothing leaves.
        if !self.crashed {
            self.crash(0, 0)?;
        }
        self.crashed = false;
        assert!(self.undo.is_empty());
        Ok(Recovered {
            hard_state: self.hard_state,
            sealed: self.sealed.clone(),
            start: self.bounds.start,
            entries: self.entries.iter().cloned().collect(),
            tail_cut: None,
        })
    }

    fn crash(
        &mut self,
        keep_unsynced_ops: usize,
        keep_entries_of_next: usize,
    ) -> Result<(), StoreError> {
        while self.undo.len() > keep_unsynced_ops {
            let index = self.undo.len() - 1;
            let undo = self.undo.pop();
            let keep_entries = if index == keep_unsynced_ops {
                keep_entries_of_next
            } else {
                0
            };
            if let Some(undo) = undo {
                self.undo_one(undo, keep_entries);
            }
        }
        self.undo.clear();
        self.crashed = true;
        Ok(())
    }

    fn unsynced_ops(&self) -> usize {
        self.undo.len()
    }

    fn start(&self) -> Offset {
        self.bounds.start
    }

    fn next(&self) -> Offset {
        self.bounds.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Command;

    fn entry(offset: Offset, term: u64) -> Entry {
        Entry {
            offset,
            term,
            command: Command::Noop,
        }
    }

    fn append(offsets: std::ops::RangeInclusive<Offset>, term: u64) -> StorageOp {
        StorageOp::Append(offsets.map(|offset| entry(offset, term)).collect())
    }

    #[test]
    fn crash_keeps_synced_and_a_prefix_of_unsynced() {
        // Proves a crash keeps every synced op, the chosen number of unsynced ops, and only the
        // first entries of a torn append.
        let mut store = MemoryStore::new(SegmentLayout::default());
        store.recover().expect("fresh");
        store.apply(&append(1..=3, 1)).expect("append");
        store.sync().expect("sync");
        store.apply(&append(4..=5, 1)).expect("append");
        store
            .apply(&StorageOp::TruncateSuffix { from: 5 })
            .expect("truncate");
        store.apply(&append(5..=8, 2)).expect("append");
        store.crash(2, 1).expect("crash");
        let recovered = store.recover().expect("recover");
        let offsets: Vec<(Offset, u64)> = recovered
            .entries
            .iter()
            .map(|entry| (entry.offset, entry.term))
            .collect();
        assert_eq!(offsets, vec![(1, 1), (2, 1), (3, 1), (4, 1), (5, 2)]);
        assert_eq!(recovered.start, 1);
        assert_eq!(store.next(), 6);
    }

    #[test]
    fn crash_undoes_compaction_and_jump() {
        // Proves an unsynced Compact and TrimmedTo roll back completely (entries, bounds and the
        // sealed state), and a synced one stays.
        let mut store = MemoryStore::new(SegmentLayout::default());
        store.recover().expect("fresh");
        store.apply(&append(1..=10, 1)).expect("append");
        let sealed = SealedState {
            floor: 5,
            base_offset: 4,
            base_term: 1,
            ..SealedState::default()
        };
        store
            .apply(&StorageOp::Compact {
                below: 6,
                sealed: sealed.clone(),
            })
            .expect("compact");
        assert_eq!(store.start(), 5);
        store.sync().expect("sync");
        let jump = SealedState {
            floor: 20,
            base_offset: 19,
            base_term: 3,
            ..SealedState::default()
        };
        store
            .apply(&StorageOp::TrimmedTo {
                point: 20,
                state: jump,
            })
            .expect("jump");
        assert_eq!((store.start(), store.next()), (20, 20));
        store.crash(0, 0).expect("crash");
        let recovered = store.recover().expect("recover");
        assert_eq!(recovered.start, 5);
        assert_eq!(recovered.next(), 11);
        assert_eq!(recovered.sealed, Some(sealed));
    }

    #[test]
    fn accessors_read_the_applied_view_at_its_bounds() {
        // Proves `entry` answers exactly for the held offsets `start .. next` (None just below the
        // start and at `next`, the right record at both ends after a compaction moved the start),
        // and that `entries`, `hard_state` and `sealed` show the applied, unsynced view.
        let mut store = MemoryStore::new(SegmentLayout::default());
        store.recover().expect("fresh");
        assert_eq!(store.entry(1), None);
        store.apply(&append(1..=10, 1)).expect("append");
        let sealed = SealedState {
            floor: 5,
            base_offset: 4,
            base_term: 1,
            ..SealedState::default()
        };
        store
            .apply(&StorageOp::Compact {
                below: 6,
                sealed: sealed.clone(),
            })
            .expect("compact");
        let promise = HardState {
            term: 3,
            vote: Some(1),
        };
        store
            .apply(&StorageOp::HardState(promise))
            .expect("promise");
        assert_eq!(store.entry(4), None, "below the start");
        assert_eq!(store.entry(5).map(|entry| entry.offset), Some(5));
        assert_eq!(store.entry(10).map(|entry| entry.offset), Some(10));
        assert_eq!(store.entry(11), None, "at next");
        let offsets: Vec<Offset> = store.entries().map(|entry| entry.offset).collect();
        assert_eq!(offsets, (5..=10).collect::<Vec<Offset>>());
        assert_eq!(store.hard_state(), promise);
        assert_eq!(store.sealed(), Some(&sealed));
    }

    #[test]
    fn contract_breaking_ops_are_refused_and_change_nothing() {
        // Proves a gap in an append, a truncation below the start, a compaction past the tail and
        // a record too large to encode are typed `Invalid` errors that leave the store as it was.
        let mut store = MemoryStore::new(SegmentLayout::default());
        store.recover().expect("fresh");
        store.apply(&append(1..=4, 1)).expect("append");
        let gap = store.apply(&append(6..=6, 1));
        assert!(matches!(gap, Err(StoreError::Invalid { .. })));
        store
            .apply(&StorageOp::Compact {
                below: 5,
                sealed: SealedState::default(),
            })
            .expect("compact");
        let below = store.apply(&StorageOp::TruncateSuffix { from: 2 });
        assert!(matches!(below, Err(StoreError::Invalid { .. })));
        let past = store.apply(&StorageOp::Compact {
            below: 9,
            sealed: SealedState::default(),
        });
        assert!(matches!(past, Err(StoreError::Invalid { .. })));
        let huge = store.apply(&StorageOp::Append(vec![Entry {
            offset: 5,
            term: 1,
            command: Command::Write {
                body: vec![0; crate::codec::PAYLOAD_BYTES_MAX],
                headers: Default::default(),
            },
        }]));
        assert!(matches!(huge, Err(StoreError::Invalid { .. })));
        assert_eq!((store.start(), store.next()), (5, 5));
        assert_eq!(store.unsynced_ops(), 2);
    }
}
