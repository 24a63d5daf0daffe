//! The `LogStore` contract, checked on both stores against a trivial model (a `Vec` of entries, a
//! first offset, a promise and a sealed state) over random op sequences: appends (some with a gap),
//! suffix truncations (some below the start), promises, compactions (some past the tail), jumps,
//! syncs, crashes keeping a random prefix of the unsynced ops (with a torn append), and reopens.
//! After every op the store must accept exactly what the model accepts and agree on its bounds;
//! after every crash or reopen it must read back exactly what the model says survived.

use felix_core::record::{Command, Entry, Headers, Offset, Token};
use felix_core::storage::{
    HardState, LogStore, MemoryStore, SealedState, SegmentLayout, StorageOp, StoreError,
};
use felix_store::FileStore;
use proptest::prelude::*;

/// The trivial model: what the contract says the store holds.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Model {
    start: Offset,
    entries: Vec<Entry>,
    hard_state: HardState,
    sealed: Option<SealedState>,
}

impl Model {
    fn new() -> Model {
        Model {
            start: 1,
            entries: Vec::new(),
            hard_state: HardState::default(),
            sealed: None,
        }
    }

    fn next(&self) -> Offset {
        self.start + self.entries.len() as u64
    }

    /// Applies `op` if the contract allows it; returns whether it did.
    fn apply(&mut self, layout: SegmentLayout, op: &StorageOp) -> bool {
        match op {
            StorageOp::Append(entries) => {
                let next = self.next();
                let contiguous = entries
                    .iter()
                    .enumerate()
                    .all(|(index, entry)| entry.offset == next + index as u64);
                if contiguous {
                    self.entries.extend(entries.iter().cloned());
                }
                contiguous
            }
            StorageOp::TruncateSuffix { from } => {
                if *from < self.start {
                    return false;
                }
                self.entries.retain(|entry| entry.offset < *from);
                true
            }
            StorageOp::HardState(hard_state) => {
                self.hard_state = *hard_state;
                true
            }
            StorageOp::Compact { below, sealed } => {
                // The first offset kept is the first one whose segment is not entirely below.
                let mut start = self.start;
                while layout.last_of(start) < *below {
                    start += 1;
                }
                if start > self.next() {
                    return false;
                }
                self.entries.retain(|entry| entry.offset >= start);
                self.start = start;
                self.sealed = Some(sealed.clone());
                true
            }
            StorageOp::TrimmedTo { point, state } => {
                if *point == 0 {
                    return false;
                }
                self.entries.retain(|entry| entry.offset >= *point);
                self.start = self.start.max(*point);
                self.sealed = Some(state.clone());
                true
            }
        }
    }
}

/// One step of a random run, relative to the model's applied view so that most are valid.
#[derive(Clone, Debug)]
enum Action {
    Append { count: u64, gap: bool, kind: u8 },
    Truncate { back: u64 },
    Promise { term: u64, vote: Option<u32> },
    Compact { ahead: u64 },
    Jump { ahead: u64 },
    Sync,
    Crash { keep: usize, partial: usize },
    Reopen,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        8 => (1u64..6, prop::bool::weighted(0.05), any::<u8>())
            .prop_map(|(count, gap, kind)| Action::Append { count, gap, kind }),
        2 => (0u64..8).prop_map(|back| Action::Truncate { back }),
        1 => (0u64..10, prop::option::of(0u32..3))
            .prop_map(|(term, vote)| Action::Promise { term, vote }),
        2 => (0u64..14).prop_map(|ahead| Action::Compact { ahead }),
        1 => (0u64..14).prop_map(|ahead| Action::Jump { ahead }),
        4 => Just(Action::Sync),
        2 => (0usize..5, 0usize..4).prop_map(|(keep, partial)| Action::Crash { keep, partial }),
        1 => Just(Action::Reopen),
    ]
}

fn command(kind: u8, offset: Offset) -> Command {
    match kind % 4 {
        0 => Command::Noop,
        1 => Command::Write {
            body: vec![kind; (offset % 7) as usize],
            headers: Headers::with_epoch(u64::from(kind)),
        },
        2 => Command::Trim {
            floor: offset / 2,
            headers: Headers::with_epoch(offset),
            fence: if kind % 8 == 2 {
                None
            } else {
                Some(Token(u64::from(kind)))
            },
        },
        _ => Command::Fence {
            new: Token(offset),
            old: Token(offset - 1),
        },
    }
}

fn sealed(floor: Offset, term: u64) -> SealedState {
    SealedState {
        writer: Token(term),
        floor,
        floor_tag: if floor.is_multiple_of(2) {
            Some(Headers::with_epoch(floor))
        } else {
            None
        },
        floor_trim: Some(floor),
        base_offset: floor.saturating_sub(1),
        base_term: term,
    }
}

/// Checks that what the store read back is exactly the model.
fn same(recovered: &felix_core::storage::Recovered, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(recovered.start, model.start);
    prop_assert_eq!(&recovered.entries, &model.entries);
    prop_assert_eq!(recovered.hard_state, model.hard_state);
    prop_assert_eq!(&recovered.sealed, &model.sealed);
    Ok(())
}

/// Runs `actions` against a store and the model. `reopen` makes a fresh handle on the same disk.
fn run<S: LogStore>(
    layout: SegmentLayout,
    tears_frames: bool,
    actions: &[Action],
    mut reopen: impl FnMut() -> S,
) -> Result<(), TestCaseError> {
    let mut store = reopen();
    same(
        &store.recover().expect("recover a fresh store"),
        &Model::new(),
    )?;
    let mut applied = Model::new();
    let mut durable = Model::new();
    let mut unsynced: Vec<StorageOp> = Vec::new();
    let mut term = 1u64;
    for action in actions {
        let op = match action {
            Action::Append { count, gap, kind } => {
                term += u64::from(*kind % 5 == 0);
                let first = applied.next() + u64::from(*gap);
                Some(StorageOp::Append(
                    (first..first + count)
                        .map(|offset| Entry {
                            offset,
                            term,
                            command: command(*kind, offset),
                        })
                        .collect(),
                ))
            }
            Action::Truncate { back } => Some(StorageOp::TruncateSuffix {
                from: applied.next().saturating_sub(*back).max(1),
            }),
            Action::Promise { term, vote } => Some(StorageOp::HardState(HardState {
                term: *term,
                vote: *vote,
            })),
            Action::Compact { ahead } => Some(StorageOp::Compact {
                below: applied.start + ahead,
                sealed: sealed(applied.start + ahead, term),
            }),
            Action::Jump { ahead } => Some(StorageOp::TrimmedTo {
                point: applied.start + ahead,
                state: sealed(applied.start + ahead, term),
            }),
            Action::Sync => {
                store.sync().expect("sync");
                durable = applied.clone();
                unsynced.clear();
                None
            }
            Action::Crash { keep, partial } => {
                let survived = crashed(
                    &mut store,
                    layout,
                    tears_frames,
                    &durable,
                    &unsynced,
                    *keep,
                    *partial,
                )?;
                applied = survived.clone();
                durable = survived;
                unsynced.clear();
                None
            }
            Action::Reopen => {
                drop(store);
                store = reopen();
                same(&store.recover().expect("recover after reopen"), &durable)?;
                applied = durable.clone();
                unsynced.clear();
                None
            }
        };
        if let Some(op) = op {
            let accepted = applied.apply(layout, &op);
            match store.apply(&op) {
                Ok(()) => {
                    prop_assert!(accepted, "store accepted {:?} the model refuses", op);
                    unsynced.push(op);
                }
                Err(StoreError::Invalid { .. }) => {
                    prop_assert!(!accepted, "store refused {:?} the model accepts", op)
                }
                Err(error) => return Err(TestCaseError::fail(format!("{op:?}: {error}"))),
            }
        }
        prop_assert_eq!(store.start(), applied.start);
        prop_assert_eq!(store.next(), applied.next());
    }
    store.sync().expect("final sync");
    drop(store);
    let mut store = reopen();
    same(&store.recover().expect("final recover"), &applied)?;
    Ok(())
}

/// A crash keeping the first `keep` unsynced ops and `partial` records of the next append: the
/// store recovers exactly what survived (its durable state and those ops), and says it cut a
/// torn frame exactly when it writes frames and the crash cut an append short. What survived.
fn crashed<S: LogStore>(
    store: &mut S,
    layout: SegmentLayout,
    tears_frames: bool,
    durable: &Model,
    unsynced: &[StorageOp],
    keep: usize,
    partial: usize,
) -> Result<Model, TestCaseError> {
    let mut survived = durable.clone();
    for op in unsynced.iter().take(keep) {
        prop_assert!(survived.apply(layout, op));
    }
    if let Some(StorageOp::Append(entries)) = unsynced.get(keep) {
        let kept = entries[..partial.min(entries.len())].to_vec();
        prop_assert!(survived.apply(layout, &StorageOp::Append(kept)));
    }
    prop_assert_eq!(store.unsynced_ops(), unsynced.len());
    let torn = matches!(
        unsynced.get(keep),
        Some(StorageOp::Append(entries)) if partial < entries.len()
    );
    store.crash(keep, partial).expect("crash");
    let recovered = store.recover().expect("recover after crash");
    same(&recovered, &survived)?;
    prop_assert_eq!(recovered.tail_cut.is_some(), tears_frames && torn);
    Ok(survived)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn memory_store_meets_the_contract(
        actions in prop::collection::vec(action(), 1..80),
        records_per_segment in 1u64..6,
    ) {
        // Proves the in-memory store accepts, refuses, keeps and loses exactly what the contract
        // (the model) says, across crashes that keep a random prefix of unsynced ops. Its "disk"
        // survives a reopen, so one shared store stands for the disk and recover is the reopen.
        let layout = SegmentLayout { records_per_segment };
        let disk = std::rc::Rc::new(std::cell::RefCell::new(Some(MemoryStore::new(layout))));
        let handle = SharedMemory { disk };
        run(layout, false, &actions, || handle.clone())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn file_store_meets_the_contract(
        actions in prop::collection::vec(action(), 1..50),
        records_per_segment in 1u64..6,
    ) {
        // Proves the file-backed store meets the same contract on a real directory: crashes write a
        // prefix of the unsynced ops (and a torn frame) without fsync, reopens drop the handle.
        let layout = SegmentLayout { records_per_segment };
        let dir = store_dir();
        let path = dir.path().join("store");
        run(layout, true, &actions, || FileStore::open(&path, layout).expect("open"))?;
    }
}

/// A fresh directory for a store, on tmpfs (`/dev/shm`) when the machine has one. These tests model
/// crashes and power loss themselves (the `crash` hook, directory snapshots), so a real disk's
/// fsync adds no checking, only seconds of I/O wait per test file on a busy disk.
fn store_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory")
}

/// A handle on one in-memory store that outlives "reopens" (the simulator's disk outlives a node).
#[derive(Clone)]
struct SharedMemory {
    disk: std::rc::Rc<std::cell::RefCell<Option<MemoryStore>>>,
}

impl SharedMemory {
    fn with<T>(&self, action: impl FnOnce(&mut MemoryStore) -> T) -> T {
        let mut disk = self.disk.borrow_mut();
        action(disk.as_mut().expect("the disk is there"))
    }
}

impl LogStore for SharedMemory {
    fn apply(&mut self, op: &StorageOp) -> Result<(), StoreError> {
        self.with(|store| store.apply(op))
    }
    fn sync(&mut self) -> Result<(), StoreError> {
        self.with(|store| store.sync())
    }
    fn recover(&mut self) -> Result<felix_core::storage::Recovered, StoreError> {
        self.with(|store| store.recover())
    }
    fn crash(&mut self, keep: usize, partial: usize) -> Result<(), StoreError> {
        self.with(|store| store.crash(keep, partial))
    }
    fn unsynced_ops(&self) -> usize {
        self.with(|store| store.unsynced_ops())
    }
    fn start(&self) -> Offset {
        self.with(|store| store.start())
    }
    fn next(&self) -> Offset {
        self.with(|store| store.next())
    }
}
