//! One node's disk: the core's in-memory store plus sync latency and crash draws.
//!
//! The broker returns `Persist` ops; the world applies them here in order (buffered in the
//! store), starts a sync that completes after a drawn latency, and holds every message that
//! followed a persist until a sync covering it completes (persist before send). A crash keeps
//! what was synced and, by the draw, maybe a prefix of the unsynced ops and a torn last append;
//! `recover` reads back what survived.

use crate::queue::Time;
use crate::rng::Stream;
use felix_core::storage::{LogStore, MemoryStore, Recovered, SegmentLayout, StorageOp, StoreError};

/// What a crash did to the unsynced ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashLoss {
    pub unsynced: usize,
    pub kept: usize,
    pub torn: bool,
}

pub struct Disk {
    store: MemoryStore,
    /// Ops applied since the store was opened or recovered, numbered from 1.
    applied: u64,
    /// Every op up to this number is durable.
    synced: u64,
    /// The op number the sync in flight covers, if any.
    syncing: Option<u64>,
}

impl Disk {
    pub fn new(layout: SegmentLayout) -> Disk {
        Disk {
            store: MemoryStore::new(layout),
            applied: 0,
            synced: 0,
            syncing: None,
        }
    }

    /// Applies one op (buffered). Returns its number; it is durable once `synced() >= number`.
    pub fn apply(&mut self, op: &StorageOp) -> Result<u64, StoreError> {
        self.store.apply(op)?;
        self.applied += 1;
        Ok(self.applied)
    }

    /// Starts a sync of everything applied, unless one is in flight or nothing is pending.
    /// Returns true when the caller must schedule its completion.
    pub fn start_sync(&mut self) -> bool {
        if self.syncing.is_some() || self.synced == self.applied {
            return false;
        }
        self.syncing = Some(self.applied);
        true
    }

    /// The sync in flight completed: everything applied so far is durable.
    pub fn finish_sync(&mut self) -> Result<(), StoreError> {
        assert!(
            self.syncing.is_some(),
            "a sync completed that was never started"
        );
        self.store.sync()?;
        self.syncing = None;
        self.synced = self.applied;
        Ok(())
    }

    pub fn synced(&self) -> u64 {
        self.synced
    }

    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// Draws a sync latency.
    pub fn latency(stream: &mut Stream, low: Time, high: Time) -> Time {
        stream.range(low, high)
    }

    /// Crashes the disk: keeps synced ops, and (if `keep_chance` wins) a drawn prefix of the
    /// unsynced ones, maybe with a torn last append.
    pub fn crash(
        &mut self,
        stream: &mut Stream,
        keep_per_million: u32,
        torn_per_million: u32,
    ) -> Result<CrashLoss, StoreError> {
        let unsynced = self.store.unsynced_ops();
        let kept = if unsynced > 0 && stream.chance(keep_per_million) {
            stream.index(unsynced + 1)
        } else {
            0
        };
        let torn = kept < unsynced && stream.chance(torn_per_million);
        let keep_entries_of_next = if torn { stream.index(4) } else { 0 };
        self.store.crash(kept, keep_entries_of_next)?;
        self.syncing = None;
        Ok(CrashLoss {
            unsynced,
            kept,
            torn,
        })
    }

    /// Reads back what survived and restarts the op numbering.
    pub fn recover(&mut self) -> Result<Recovered, StoreError> {
        let recovered = self.store.recover()?;
        self.applied = 0;
        self.synced = 0;
        self.syncing = None;
        Ok(recovered)
    }

    pub fn store(&self) -> &MemoryStore {
        &self.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Component;
    use felix_core::record::{Command, Entry};

    fn append(offset: u64) -> StorageOp {
        StorageOp::Append(vec![Entry {
            offset,
            term: 1,
            command: Command::Noop,
        }])
    }

    /// What a sync covered survives a crash; what came after it is lost when the draw keeps
    /// nothing; a sync starts only when something is pending and never twice at once.
    #[test]
    fn crash_keeps_synced_and_loses_unsynced() {
        let mut disk = Disk::new(SegmentLayout {
            records_per_segment: 2,
        });
        let mut stream = Stream::new(1, Component::Disk);
        assert!(!disk.start_sync(), "nothing to sync yet");
        assert_eq!(disk.apply(&append(1)), Ok(1));
        assert!(disk.start_sync());
        assert!(!disk.start_sync(), "one sync at a time");
        assert_eq!(disk.finish_sync(), Ok(()));
        assert_eq!(disk.synced(), 1);
        assert_eq!(disk.apply(&append(2)), Ok(2));
        assert_eq!(disk.apply(&append(3)), Ok(3));
        let loss = disk.crash(&mut stream, 0, 0).unwrap_or(CrashLoss {
            unsynced: 0,
            kept: 9,
            torn: true,
        });
        assert_eq!(
            loss,
            CrashLoss {
                unsynced: 2,
                kept: 0,
                torn: false
            }
        );
        let recovered = disk.recover().map(|recovered| recovered.entries.len());
        assert_eq!(recovered, Ok(1));
        assert_eq!((disk.applied(), disk.synced()), (0, 0));
    }

    /// With keeping certain, a crash keeps a drawn prefix of the unsynced ops, never more.
    #[test]
    fn crash_may_keep_a_prefix() {
        for seed in 0..20 {
            let mut disk = Disk::new(SegmentLayout {
                records_per_segment: 2,
            });
            let mut stream = Stream::new(seed, Component::Disk);
            for offset in 1..=4 {
                assert!(disk.apply(&append(offset)).is_ok());
            }
            let loss = disk.crash(&mut stream, 1_000_000, 0).unwrap_or(CrashLoss {
                unsynced: 0,
                kept: 9,
                torn: true,
            });
            assert_eq!(loss.unsynced, 4);
            assert!(loss.kept <= 4);
            let held = disk
                .recover()
                .map(|recovered| recovered.entries.len())
                .unwrap_or(99);
            assert_eq!(held, loss.kept, "seed {seed}");
        }
    }
}
