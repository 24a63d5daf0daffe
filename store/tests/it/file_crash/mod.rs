//! Crash and damage tests for the file-backed store: synced records survive, the sealed floor never
//! regresses (interrupted deletions are finished by recovery), a torn tail is cut and reported,
//! damage anywhere else is a `Corrupt` error naming the file and byte, and no file name, content
//! or file type panics or hangs recovery: a missing promise or meta beside a log, a deleted or
//! emptied last segment, offsets too large to compute with and non-regular files are all errors.

use felix_core::codec::{encode_meta, encode_sealed};
use felix_core::record::{Command, Entry, Headers, Offset};
use felix_core::storage::{
    HardState, LogStore, Recovered, SealedState, SegmentLayout, StorageOp, StoreError, StoreMeta,
};
use felix_store::{segment, FileStore, Repair};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

mod damage;
mod inspect;
mod survival;

const LAYOUT: SegmentLayout = SegmentLayout {
    records_per_segment: 4,
};

fn entry(offset: Offset, term: u64) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Write {
            body: format!("record {offset}").into_bytes(),
            headers: Headers::with_epoch(term),
        },
    }
}

fn append(first: Offset, last: Offset, term: u64) -> StorageOp {
    StorageOp::Append((first..=last).map(|offset| entry(offset, term)).collect())
}

fn sealed(floor: Offset) -> SealedState {
    SealedState {
        floor,
        floor_tag: Some(Headers::with_epoch(floor)),
        floor_trim: Some(floor),
        base_offset: floor - 1,
        base_term: 1,
        ..SealedState::default()
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

fn open(dir: &Path) -> FileStore {
    FileStore::open(dir, LAYOUT).expect("open")
}

/// A store over `dir` holding offsets 1..=`last` (term 1), synced, closed.
fn filled(dir: &Path, last: Offset) {
    let mut store = open(dir);
    store.recover().expect("fresh");
    store.apply(&append(1, last, 1)).expect("append");
    store.sync().expect("sync");
}

fn offsets(entries: &[Entry]) -> Vec<Offset> {
    entries.iter().map(|entry| entry.offset).collect()
}

fn segment_path(dir: &Path, base: Offset) -> PathBuf {
    dir.join(segment::file_name(base))
}

/// How one recovery of a damaged directory ended.
#[derive(Debug)]
enum Guarded {
    Returned(Result<Recovered, StoreError>),
    Panicked,
    Hung,
}

/// Recovers `dir` on its own thread, so that a panic is caught and a hang is seen (a watchdog
/// far above any recovery's time, never a timing assertion).
fn recover_guarded(dir: &Path) -> Guarded {
    let dir = dir.to_path_buf();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = std::panic::catch_unwind(|| {
            FileStore::open(&dir, LAYOUT).and_then(|mut store| store.recover())
        });
        let _ = sender.send(outcome);
    });
    match receiver.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(outcome)) => Guarded::Returned(outcome),
        Ok(Err(_)) => Guarded::Panicked,
        Err(_) => Guarded::Hung,
    }
}

/// The corrupt error of a guarded recovery, or a panic naming what it got instead.
fn expect_corrupt(dir: &Path, what: &str) -> (PathBuf, String) {
    match recover_guarded(dir) {
        Guarded::Returned(Err(StoreError::Corrupt { path, reason, .. })) => (path, reason),
        other => panic!("{what}: expected a Corrupt error, got {other:?}"),
    }
}

/// Every entry in `dir` as (path, bytes), to put back after a damage.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(dir)
        .expect("list")
        .map(|item| {
            let path = item.expect("item").path();
            let bytes = fs::read(&path).expect("read");
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Makes `dir` hold exactly `files` again, whatever recovery or a damage left there.
fn restore(dir: &Path, files: &[(PathBuf, Vec<u8>)]) {
    for item in fs::read_dir(dir).expect("list") {
        let path = item.expect("item").path();
        let metadata = fs::symlink_metadata(&path).expect("stat");
        if metadata.is_dir() {
            fs::remove_dir_all(&path).expect("remove dir");
        } else {
            fs::remove_file(&path).expect("remove");
        }
    }
    for (path, bytes) in files {
        fs::write(path, bytes).expect("write");
    }
}

/// The ways a file system entry can stand where the store keeps a regular file.
#[derive(Clone, Copy, Debug)]
enum Intruder {
    Fifo,
    Directory,
    SymlinkLoop,
    SymlinkToCopy,
}

const INTRUDERS: [Intruder; 4] = [
    Intruder::Fifo,
    Intruder::Directory,
    Intruder::SymlinkLoop,
    Intruder::SymlinkToCopy,
];

/// Replaces `path` (which may be missing) with `intruder`.
fn intrude(path: &Path, intruder: Intruder) {
    let copy = fs::read(path).ok();
    if fs::symlink_metadata(path).is_ok() {
        fs::remove_file(path).expect("remove");
    }
    match intruder {
        Intruder::Fifo => {
            let status = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .expect("run mkfifo");
            assert!(status.success(), "mkfifo {}", path.display());
        }
        Intruder::Directory => fs::create_dir(path).expect("mkdir"),
        Intruder::SymlinkLoop => std::os::unix::fs::symlink(path, path).expect("symlink loop"),
        Intruder::SymlinkToCopy => {
            let elsewhere = path.with_extension("elsewhere");
            fs::write(&elsewhere, copy.unwrap_or_default()).expect("copy");
            std::os::unix::fs::symlink(&elsewhere, path).expect("symlink");
        }
    }
}
