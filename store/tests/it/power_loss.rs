//! What the file store's directory fsyncs protect, shown by a power loss that drops every
//! directory change not yet made durable by one. A new segment file, and a promise or meta file
//! replaced by rename, survive a power loss only once the directory is fsynced after them; the
//! store does that inside `sync`, so everything a `sync` returned for must come back.
//!
//! `PowerLoss` wraps a `FileStore` in a fault-injecting way: at each directory fsync
//! (`FileStore::observe_directory_syncs`) it records the directory as durable; its power loss
//! then deletes every file created since that moment, brings back every file deleted since (with
//! what it held then) and puts back the content each replaced file had then (a rename not made
//! durable is undone), before the store recovers. Proves: synced records, promise and layout
//! survive a power loss, across segment boundaries; a synced truncation stays cut; ops never
//! synced may be lost, and the store still opens.

use felix_core::record::{Command, Entry, Headers, Offset};
use felix_core::storage::{HardState, LogStore, SegmentLayout, StorageOp};
use felix_store::FileStore;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const LAYOUT: SegmentLayout = SegmentLayout {
    records_per_segment: 2,
};

fn entry(offset: Offset) -> Entry {
    entry_of_term(offset, 1)
}

fn entry_of_term(offset: Offset, term: u64) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Write {
            body: offset.to_le_bytes().to_vec(),
            headers: Headers::default(),
        },
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

/// The directory as a power loss would leave it: each file's name and content.
fn listing(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .expect("the store directory is readable")
        .map(|item| {
            let item = item.expect("a directory entry");
            let name = item.file_name().to_string_lossy().into_owned();
            let bytes = fs::read(item.path()).expect("a store file is readable");
            (name, bytes)
        })
        .collect()
}

struct PowerLoss {
    dir: PathBuf,
    store: FileStore,
    /// The directory as of the store's last directory fsync (empty before the first).
    durable: Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
}

impl PowerLoss {
    fn open(dir: &Path) -> PowerLoss {
        let mut store = FileStore::open(dir, LAYOUT).expect("open");
        let durable = Arc::new(Mutex::new(BTreeMap::new()));
        let snapshot = Arc::clone(&durable);
        store.observe_directory_syncs(move |dir| {
            *snapshot.lock().expect("the snapshot lock") = listing(dir);
        });
        store.recover().expect("a new store recovers");
        PowerLoss {
            dir: dir.to_path_buf(),
            store,
            durable,
        }
    }

    fn apply_and_sync(&mut self, op: StorageOp) {
        self.store.apply(&op).expect("the op is valid");
        self.store.sync().expect("sync");
    }

    /// The power goes out: directory changes not made durable are undone (new files vanish,
    /// deleted files come back with what they held when the directory was last fsynced,
    /// replaced files are back to their durable content), then the store is opened again.
    fn power_loss(self) -> FileStore {
        let PowerLoss {
            dir,
            store,
            durable,
            ..
        } = self;
        drop(store);
        let durable = durable.lock().expect("the snapshot lock").clone();
        for (name, _) in listing(&dir) {
            if !durable.contains_key(&name) {
                fs::remove_file(dir.join(&name)).expect("remove an undurable file");
            }
        }
        for (name, bytes) in &durable {
            let path = dir.join(name);
            if !path.exists() {
                fs::write(&path, bytes).expect("bring back a file whose deletion was not durable");
            } else if !name.starts_with("seg-") {
                // Segment files keep their (fsynced) data; only the entry was at stake.
                fs::write(&path, bytes).expect("put back a replaced file");
            }
        }
        FileStore::open(&dir, LAYOUT).expect("open after the power loss")
    }
}

#[test]
fn synced_records_promise_and_layout_survive_a_power_loss_across_segments() {
    let temp = store_dir();
    let mut store = PowerLoss::open(temp.path());
    store.apply_and_sync(StorageOp::HardState(HardState {
        term: 3,
        vote: Some(2),
    }));
    // Five records over three segment files, each synced: each new file is a directory entry.
    for offset in 1..=5 {
        store.apply_and_sync(StorageOp::Append(vec![entry(offset)]));
    }
    let mut reopened = store.power_loss();
    let recovered = reopened
        .recover()
        .expect("a store whose ops were all synced recovers");
    assert_eq!(
        recovered.hard_state,
        HardState {
            term: 3,
            vote: Some(2)
        },
        "the replaced promise survived"
    );
    assert_eq!(recovered.start, 1);
    let offsets: Vec<Offset> = recovered.entries.iter().map(|entry| entry.offset).collect();
    assert_eq!(offsets, vec![1, 2, 3, 4, 5], "every synced record is back");
    assert_eq!(recovered.entries[4], entry(5));
    assert_eq!(recovered.tail_cut, None);
}

#[test]
fn ops_never_synced_may_be_lost_and_the_store_still_opens() {
    let temp = store_dir();
    let mut store = PowerLoss::open(temp.path());
    for offset in 1..=2 {
        store.apply_and_sync(StorageOp::Append(vec![entry(offset)]));
    }
    // Records 3 and 4 open a new segment file, but no sync follows: the power loss drops the
    // file's directory entry (if the store wrote it at all).
    store
        .store
        .apply(&StorageOp::Append(vec![entry(3), entry(4)]))
        .expect("apply");
    let mut reopened = store.power_loss();
    let recovered = reopened.recover().expect("recovers");
    let offsets: Vec<Offset> = recovered.entries.iter().map(|entry| entry.offset).collect();
    assert_eq!(
        offsets,
        vec![1, 2],
        "the synced records, nothing after them"
    );
}

#[test]
fn a_synced_truncation_stays_cut_after_a_power_loss() {
    // Proves what the directory fsync after a suffix truncation protects: the deletion of the
    // segment files above the cut. Without it, a power loss brings the deleted file back, and
    // behind a record of a newer term the log would read on with the stale records of the old
    // one (a log no leader ever wrote). The later append goes into an existing file, so its own
    // sync fsyncs no directory: only the truncation's directory fsync stands between the two.
    let temp = store_dir();
    let mut store = PowerLoss::open(temp.path());
    // Records 1..=6 of term 1 over three segment files (1-2, 3-4, 5-6).
    store.apply_and_sync(StorageOp::Append((1..=6).map(entry).collect()));
    // A new leader's log conflicts from 4 on: 5-6 are deleted, 3-4 is cut back to 3.
    let before_truncation = store.store.directory_syncs();
    store.apply_and_sync(StorageOp::TruncateSuffix { from: 4 });
    assert!(
        store.store.directory_syncs() > before_truncation,
        "deleting a segment file fsyncs the directory"
    );
    let before_append = store.store.directory_syncs();
    store.apply_and_sync(StorageOp::Append(vec![entry_of_term(4, 2)]));
    assert_eq!(
        store.store.directory_syncs(),
        before_append,
        "an append into an existing segment file changes no directory entry"
    );
    let mut reopened = store.power_loss();
    let recovered = reopened.recover().expect("recovers");
    let log: Vec<(Offset, u64)> = recovered
        .entries
        .iter()
        .map(|entry| (entry.offset, entry.term))
        .collect();
    assert_eq!(
        log,
        vec![(1, 1), (2, 1), (3, 1), (4, 2)],
        "the truncated records 5 and 6 of term 1 stay deleted"
    );
}
