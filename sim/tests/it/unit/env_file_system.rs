//! The unit tests of `felix_sim::env::file_system` (sim/src/env/file_system.rs).

use felix_sim::env::rng::Stream;
use felix_store::inspect::StoreFiles;
use felix_store::FileSystem;
use std::path::{Path, PathBuf};

use felix_sim::env::file_system::*;
use felix_sim::env::rng::Component;

fn path(name: &str) -> PathBuf {
    Path::new("/n").join(name)
}

/// A file system with the directory `/n` made.
fn fs() -> SimFs {
    let mut fs = SimFs::new();
    assert!(fs.create_dir_all(Path::new("/n")).is_ok());
    fs
}

/// Creates `name` holding `bytes`, fsynced (its data, not its directory entry).
fn written(fs: &mut SimFs, name: &str, bytes: &[u8]) -> Handle {
    let mut handle = fs.create(&path(name)).expect("create");
    assert!(fs.write_at(&mut handle, 0, bytes).is_ok());
    assert!(fs.sync_all(&mut handle).is_ok());
    handle
}

fn names(fs: &SimFs) -> Vec<String> {
    fs.names(Path::new("/n")).unwrap_or_default()
}

/// A file fsynced and named by a fsynced directory survives every power loss whole.
#[test]
fn durable_data_under_a_durable_entry_survives() {
    for seed in 0..50 {
        let mut fs = fs();
        let mut stream = Stream::new(seed, Component::Disk);
        written(&mut fs, "a", b"hello");
        assert!(fs.sync_dir(Path::new("/n")).is_ok());
        let loss = fs.lose_power(Some(&mut stream));
        assert!(!loss.dropped(), "seed {seed}: {loss:?}");
        assert_eq!(fs.contents(&path("a")), Some(&b"hello"[..]), "seed {seed}");
    }
}

/// A file whose directory entry was never fsynced vanishes when the power loss keeps no entry
/// change, however durable its data was.
#[test]
fn a_file_without_a_durable_entry_vanishes() {
    let mut fs = fs();
    written(&mut fs, "a", b"hello");
    let loss = fs.lose_power(None);
    assert_eq!(loss.entry_changes_lost, 1);
    assert!(loss.dropped());
    assert_eq!(fs.contents(&path("a")), None);
    assert!(names(&fs).is_empty());
}

/// Entry changes since the last directory fsync survive as a prefix, in order: of two files
/// created one after the other, the second never survives without the first, and over many
/// draws every prefix turns up.
#[test]
fn entry_changes_survive_as_a_prefix() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let mut fs = fs();
        let mut stream = Stream::new(seed, Component::Disk);
        written(&mut fs, "a", b"1");
        written(&mut fs, "b", b"2");
        let loss = fs.lose_power(Some(&mut stream));
        let survivors = names(&fs);
        assert_eq!(loss.entry_changes_lost, 2 - survivors.len(), "seed {seed}");
        assert!(
            survivors.is_empty() || survivors == ["a"] || survivors == ["a", "b"],
            "seed {seed}: {survivors:?}"
        );
        seen.insert(survivors);
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
}

/// Writes since a file's last fsync survive as a prefix, the last one kept maybe torn (a prefix
/// of its bytes): what comes back is always the durable content extended by a prefix of the
/// appended bytes, and over many draws none, part and all of them turn up.
#[test]
fn unsynced_writes_survive_as_a_torn_prefix() {
    let (mut none, mut torn, mut all) = (0, 0, 0);
    for seed in 0..200 {
        let mut fs = fs();
        let mut handle = written(&mut fs, "a", b"base");
        assert!(fs.sync_dir(Path::new("/n")).is_ok());
        assert!(fs.write_at(&mut handle, 4, b"-one").is_ok());
        assert!(fs.write_at(&mut handle, 8, b"-two").is_ok());
        let mut stream = Stream::new(seed, Component::Disk);
        let loss = fs.lose_power(Some(&mut stream));
        let bytes = fs.contents(&path("a")).unwrap_or_default().to_vec();
        assert!(
            b"base-one-two".starts_with(&bytes),
            "seed {seed}: {bytes:?}"
        );
        assert!(bytes.len() >= 4, "seed {seed}: the durable content is kept");
        match bytes.len() {
            4 => none += 1,
            12 => all += 1,
            _ => torn += usize::from(loss.torn || loss.writes_lost > 0),
        }
        assert_eq!(loss.writes_lost == 0, bytes.len() == 12, "seed {seed}");
    }
    assert!(none > 0 && torn > 0 && all > 0, "{none} {torn} {all}");
}

/// After a power loss everything kept is durable: a second power loss drops nothing.
#[test]
fn what_survived_is_durable() {
    for seed in 0..20 {
        let mut fs = fs();
        let mut handle = written(&mut fs, "a", b"x");
        assert!(fs.write_at(&mut handle, 1, b"yz").is_ok());
        let mut stream = Stream::new(seed, Component::Disk);
        fs.lose_power(Some(&mut stream));
        let before = fs.contents(&path("a")).map(<[u8]>::to_vec);
        assert_eq!(fs.unsynced(), 0);
        let again = fs.lose_power(Some(&mut stream));
        assert!(!again.dropped(), "seed {seed}");
        assert_eq!(fs.contents(&path("a")).map(<[u8]>::to_vec), before);
    }
}

/// A rename over an existing file that was not made durable is undone by a power loss that
/// keeps no entry change: the old file comes back with its old bytes (an atomic replacement
/// gives the old or the new file, never neither).
#[test]
fn an_unsynced_rename_is_undone() {
    let mut fs = fs();
    written(&mut fs, "promise", b"old");
    assert!(fs.sync_dir(Path::new("/n")).is_ok());
    written(&mut fs, "promise.tmp", b"new");
    assert!(fs.rename(&path("promise.tmp"), &path("promise")).is_ok());
    assert_eq!(fs.contents(&path("promise")), Some(&b"new"[..]));
    fs.lose_power(None);
    assert_eq!(fs.contents(&path("promise")), Some(&b"old"[..]));
    assert_eq!(names(&fs), ["promise"]);
}

/// A removal that was not made durable is undone by a power loss: the file comes back with its
/// durable bytes. Once the directory is fsynced, the removal holds.
#[test]
fn an_unsynced_removal_is_undone() {
    let mut fs = fs();
    written(&mut fs, "seg", b"records");
    assert!(fs.sync_dir(Path::new("/n")).is_ok());
    assert!(fs.remove(&path("seg")).is_ok());
    assert_eq!(fs.contents(&path("seg")), None);
    fs.lose_power(None);
    assert_eq!(fs.contents(&path("seg")), Some(&b"records"[..]));
    assert!(fs.remove(&path("seg")).is_ok());
    assert!(fs.sync_dir(Path::new("/n")).is_ok());
    fs.lose_power(None);
    assert_eq!(fs.contents(&path("seg")), None);
}

/// A truncating create and a cut (`set_len`) are writes like any other: undone by a power loss
/// that keeps no write, kept by a fsync.
#[test]
fn cuts_are_writes() {
    let mut fs = fs();
    let mut handle = written(&mut fs, "a", b"abcdef");
    assert!(fs.sync_dir(Path::new("/n")).is_ok());
    assert!(fs.set_len(&mut handle, 2).is_ok());
    fs.lose_power(None);
    assert_eq!(fs.contents(&path("a")), Some(&b"abcdef"[..]));
    let mut handle = fs.create(&path("a")).expect("create over it");
    assert_eq!(fs.contents(&path("a")), Some(&b""[..]));
    fs.lose_power(None);
    assert_eq!(fs.contents(&path("a")), Some(&b"abcdef"[..]));
    assert!(fs.set_len(&mut handle, 3).is_ok());
    assert!(fs.sync_data(&mut handle).is_ok());
    fs.lose_power(None);
    assert_eq!(fs.contents(&path("a")), Some(&b"abc"[..]));
}

/// Operations on what is not there fail as the real file system does (not found), and a power
/// loss is a function of the stream: the same draws give the same files.
#[test]
fn missing_files_fail_and_power_loss_is_deterministic() {
    let mut fs = fs();
    assert!(fs.open(&path("nothing")).is_err());
    assert!(fs.remove(&path("nothing")).is_err());
    assert!(fs.rename(&path("nothing"), &path("else")).is_err());
    assert!(fs.read(&path("nothing")).is_err());
    assert!(fs.create(Path::new("/elsewhere/a")).is_err());
    assert!(fs.sync_dir(Path::new("/elsewhere")).is_err());
    let run = |seed| {
        let mut fs = SimFs::new();
        assert!(fs.create_dir_all(Path::new("/n")).is_ok());
        for name in ["a", "b", "c"] {
            let mut handle = fs.create(&path(name)).expect("create");
            assert!(fs.write_at(&mut handle, 0, b"0123456789").is_ok());
        }
        let mut stream = Stream::new(seed, Component::Disk);
        let loss = fs.lose_power(Some(&mut stream));
        let files: Vec<(String, Vec<u8>)> = names(&fs)
            .into_iter()
            .map(|name| {
                let bytes = fs.contents(&path(&name)).unwrap_or_default().to_vec();
                (name, bytes)
            })
            .collect();
        (loss, files)
    };
    for seed in 0..10 {
        assert_eq!(run(seed), run(seed), "seed {seed}");
    }
}

/// The real file store on this file system keeps its contract through power losses: every op
/// synced survives, and what comes back is a prefix of what was applied (here appends across
/// segments, a truncation and a promise; unsynced ops partly written by the store's crash hook
/// before the power goes).
#[test]
fn the_file_store_keeps_what_it_synced() {
    use felix_core::record::{Command, Entry};
    use felix_core::storage::{HardState, LogStore, SegmentLayout, StorageOp};
    use felix_store::FileStore;
    let layout = SegmentLayout {
        records_per_segment: 2,
    };
    let append = |from: u64, to: u64, term: u64| {
        StorageOp::Append(
            (from..=to)
                .map(|offset| Entry {
                    offset,
                    term,
                    command: Command::Noop,
                })
                .collect(),
        )
    };
    let mut dropped = 0;
    for seed in 0..100 {
        let mut stream = Stream::new(seed, Component::Disk);
        let mut store = FileStore::open_in(SimFs::new(), "/n", layout).expect("open");
        assert!(store.recover().is_ok());
        let synced = [
            append(1, 3, 1),
            StorageOp::HardState(HardState {
                term: 2,
                vote: Some(1),
            }),
            append(4, 5, 2),
        ];
        for op in &synced {
            assert!(store.apply(op).is_ok());
        }
        assert!(store.sync().is_ok());
        for op in [StorageOp::TruncateSuffix { from: 5 }, append(5, 7, 3)] {
            assert!(store.apply(&op).is_ok());
        }
        let keep = stream.index(3);
        assert!(store.crash(keep, stream.index(3)).is_ok());
        let loss = store.files_mut().lose_power(Some(&mut stream));
        dropped += usize::from(loss.dropped());
        let recovered = store
            .recover()
            .expect("the store recovers after a power loss");
        assert_eq!(recovered.hard_state.term, 2, "seed {seed}");
        let next = recovered.next();
        assert!((5..=8).contains(&next), "seed {seed}: next {next}");
        let terms: Vec<u64> = recovered.entries.iter().map(|entry| entry.term).collect();
        assert_eq!(&terms[..4], [1, 1, 1, 2], "seed {seed}: the synced records");
    }
    assert!(dropped > 0, "some power loss dropped a write");
}
