//! One node's disk: the core's in-memory store plus sync latency and crash draws.
//!
//! The broker returns `Persist` ops; its host applies them here in order (buffered in the
//! store) and starts a sync that completes after a drawn latency; the host's `Outbox`, not the
//! disk, holds every message that followed a persist until a sync covering it completes (persist
//! before send). A sync covers
//! exactly the ops applied before it started: ops that arrive while it is in flight wait here and
//! reach the store (and the next sync) when it completes, as writes issued after an fsync are not
//! covered by it. A crash keeps what was synced and, by the draw, maybe a prefix of the unsynced
//! ops in the store and a torn last append; ops still waiting here are lost. `recover` reads back
//! what survived; `recover_bytes` reads it back as a file store would, through the file store's
//! own recovery (`felix_store::inspect`) of the bytes it would hold, damaged or unreadable as the
//! storage faults draw (`damage.rs`).
//!
//! On the seeds of knob `file_store` the disk is the real `FileStore` over a simulated file
//! system (`file_system.rs`) instead: the same ops, syncs and sync latency, but a crash is a power
//! loss of that file system (after the store's crash hook wrote a drawn prefix of the unsynced ops
//! into it) and a restart is the store's own recovery of what the power loss left.

use crate::env::damage::Damage;
use crate::env::file_system::{PowerLoss, SimFs, Slip};
use crate::env::queue::Time;
use crate::env::rng::Stream;
use felix_core::storage::{LogStore, MemoryStore, Recovered, SegmentLayout, StorageOp, StoreError};
use felix_core::NodeId;
use felix_store::image::{image, MemoryFiles};
use felix_store::inspect::inspect;
use felix_store::FileStore;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// A storage fault drawn for one read-back (`Disk::recover_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageFault {
    /// The bytes come back damaged.
    Damage(Damage),
    /// Reading one file fails.
    ReadError,
}

/// What a read-back of the disk's bytes found.
#[derive(Debug)]
pub struct ReadBack {
    /// What the fault did to the bytes, in words (`None`: nothing was changed).
    pub damage: Option<String>,
    /// What the file store's recovery read back, or why it could not.
    pub recovered: Result<Recovered, StoreError>,
}

/// What a crash did to the unsynced ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashLoss {
    pub unsynced: usize,
    pub kept: usize,
    pub torn: bool,
    /// What the power loss dropped of the file system's writes (file-store disks only).
    pub power_loss: Option<PowerLoss>,
}

/// One node's disk at the end of a run: what it held durably (a crash then would keep exactly
/// this), for `felix replay --store-dir`.
#[derive(Clone, Debug)]
pub struct NodeDisk {
    pub node: NodeId,
    pub layout: SegmentLayout,
    /// Whether the node was up when the run ended (a crashed node's disk is what it kept).
    pub up: bool,
    pub durable: Result<Recovered, StoreError>,
}

impl NodeDisk {
    /// What `host`'s disk holds durably now.
    pub fn of(node: NodeId, layout: SegmentLayout, host: &crate::env::host::Host) -> NodeDisk {
        NodeDisk {
            node,
            layout,
            up: host.is_up(),
            durable: host.disk.durable(),
        }
    }
}

/// The store a disk keeps its ops in.
enum Store {
    /// The core's in-memory store, which models what a crash loses itself.
    Memory(MemoryStore),
    /// The real file store over a simulated file system, in the directory it holds.
    File(Box<FileStore<SimFs>>),
}

impl Store {
    fn log_store(&mut self) -> &mut dyn LogStore {
        match self {
            Store::Memory(store) => store,
            Store::File(store) => store.as_mut(),
        }
    }

    fn unsynced_ops(&self) -> usize {
        match self {
            Store::Memory(store) => store.unsynced_ops(),
            Store::File(store) => store.unsynced_ops(),
        }
    }
}

pub struct Disk {
    layout: SegmentLayout,
    store: Store,
    /// Ops applied since the store was opened or recovered, numbered from 1.
    applied: u64,
    /// Every op up to this number is durable.
    synced: u64,
    /// The op number the sync in flight covers, if any.
    syncing: Option<u64>,
    /// Ops applied while a sync was in flight, not yet handed to the store.
    waiting: VecDeque<StorageOp>,
}

impl Disk {
    pub fn new(layout: SegmentLayout) -> Disk {
        Disk::with_store(layout, Store::Memory(MemoryStore::new(layout)))
    }

    /// A disk that is the real file store in directory `dir` of a new simulated file system.
    pub fn file(layout: SegmentLayout, dir: PathBuf) -> Disk {
        let mut store = match FileStore::open_in(SimFs::new(), dir, layout) {
            Ok(store) => store,
            Err(error) => panic!("the file store refused a new file system: {error}"),
        };
        if let Err(error) = store.recover() {
            panic!("the file store refused to create its directory: {error}");
        }
        Disk::with_store(layout, Store::File(Box::new(store)))
    }

    fn with_store(layout: SegmentLayout, store: Store) -> Disk {
        Disk {
            layout,
            store,
            applied: 0,
            synced: 0,
            syncing: None,
            waiting: VecDeque::new(),
        }
    }

    /// Applies one op (buffered). Returns its number; it is durable once `synced() >= number`.
    /// While a sync is in flight the op waits and reaches the store when the sync completes.
    pub fn apply(&mut self, op: &StorageOp) -> Result<u64, StoreError> {
        if self.syncing.is_some() {
            self.waiting.push_back(op.clone());
        } else {
            self.store.log_store().apply(op)?;
        }
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

    /// The sync in flight completed: every op applied before it started is durable. The ops that
    /// waited meanwhile go to the store now (unsynced).
    pub fn finish_sync(&mut self) -> Result<(), StoreError> {
        let Some(covered) = self.syncing.take() else {
            panic!("a sync completed that was never started");
        };
        self.store.log_store().sync()?;
        assert!(covered >= self.synced);
        self.synced = covered;
        while let Some(op) = self.waiting.pop_front() {
            self.store.log_store().apply(&op)?;
        }
        assert_eq!(self.store.unsynced_ops() as u64, self.applied - self.synced);
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
        let lost_waiting = self.waiting.len();
        self.waiting.clear();
        let in_store = self.store.unsynced_ops();
        let unsynced = in_store + lost_waiting;
        let kept = if in_store > 0 && stream.chance(keep_per_million) {
            stream.index(in_store + 1)
        } else {
            0
        };
        let torn = kept < in_store && stream.chance(torn_per_million);
        let keep_entries_of_next = if torn { stream.index(4) } else { 0 };
        let power_loss = self.crash_store(kept, keep_entries_of_next, Some(stream))?;
        Ok(CrashLoss {
            unsynced,
            kept,
            torn,
            power_loss,
        })
    }

    /// Plants `slip` in the file system of a file-store disk (tests only: `World::plant_slip`).
    pub fn plant_slip(&mut self, slip: Slip) {
        if let Store::File(store) = &mut self.store {
            store.files_mut().slip = Some(slip);
        }
    }

    /// Whether this disk is the real file store (knob `file_store`).
    pub fn is_file_store(&self) -> bool {
        matches!(self.store, Store::File(_))
    }

    /// Crashes the disk keeping what was synced plus the first `kept` unsynced ops in the store
    /// and `keep_entries_of_next` entries of the one after (a torn append); the rest is lost.
    pub fn crash_keeping(
        &mut self,
        kept: usize,
        keep_entries_of_next: usize,
    ) -> Result<(), StoreError> {
        self.crash_store(kept, keep_entries_of_next, None)
            .map(|_| ())
    }

    /// `crash_keeping`; on a file store the ops kept are only written, not synced, and the power
    /// loss that follows keeps what `stream` draws of them (None: nothing).
    fn crash_store(
        &mut self,
        kept: usize,
        keep_entries_of_next: usize,
        stream: Option<&mut Stream>,
    ) -> Result<Option<PowerLoss>, StoreError> {
        self.waiting.clear();
        self.store.log_store().crash(kept, keep_entries_of_next)?;
        self.syncing = None;
        Ok(match &mut self.store {
            Store::Memory(_) => None,
            Store::File(store) => Some(store.files_mut().lose_power(stream)),
        })
    }

    /// Ops applied and not yet durable (in the store or waiting for the sync in flight).
    pub fn unsynced_ops(&self) -> usize {
        (self.applied - self.synced) as usize
    }

    /// Reads back what survived and restarts the op numbering.
    pub fn recover(&mut self) -> Result<Recovered, StoreError> {
        let recovered = self.store.log_store().recover()?;
        self.applied = 0;
        self.synced = 0;
        self.syncing = None;
        Ok(recovered)
    }

    /// Reads back what survived as a file store in directory `dir` would: renders it as the bytes
    /// that store would hold (`felix_store::image`), applies `fault` (drawing where from `stream`),
    /// and reads the bytes back with the file store's recovery (`felix_store::inspect`). On success
    /// the disk holds what was read back, and the op numbering restarts; otherwise it keeps what it
    /// held (a failed read may be tried again).
    pub fn recover_bytes(
        &mut self,
        dir: &Path,
        fault: Option<StorageFault>,
        stream: &mut Stream,
    ) -> Result<ReadBack, StoreError> {
        let held = self.recover()?;
        let mut image = image(self.layout, &held);
        let damage = match fault {
            Some(StorageFault::Damage(kind)) => {
                crate::env::damage::damage(&mut image, kind, stream)
            }
            _ => None,
        };
        let unreadable = match fault {
            Some(StorageFault::ReadError) => {
                let names: Vec<&String> = image.files.keys().collect();
                Some(names[stream.index(names.len())].clone())
            }
            _ => None,
        };
        let files = MemoryFiles {
            files: image.files,
            unreadable,
        };
        let recovered = inspect(&files, dir, Some(self.layout)).map(|found| found.recovered);
        if let Ok(recovered) = &recovered {
            self.store = Store::Memory(MemoryStore::restored(self.layout, recovered));
        }
        Ok(ReadBack { damage, recovered })
    }

    /// What this disk holds durably now (what a crash keeping no unsynced op would leave),
    /// without touching it: ops waiting behind a sync in flight and unsynced ops are not in it.
    pub fn durable(&self) -> Result<Recovered, StoreError> {
        match &self.store {
            Store::Memory(store) => store.clone().recover(),
            Store::File(store) => {
                // A power loss keeping nothing unsynced, on a copy, read back by a second store.
                let mut files = store.files().clone();
                files.lose_power(None);
                FileStore::open_in(files, store.dir(), self.layout)?.recover()
            }
        }
    }

    /// The in-memory store, None on a file-store disk.
    pub fn store(&self) -> Option<&MemoryStore> {
        match &self.store {
            Store::Memory(store) => Some(store),
            Store::File(_) => None,
        }
    }
}
