//! `felix store check|dump` as a user runs them: what they print about a store directory, the
//! damage they name (file and byte), their exit codes, and that they never change the directory.

use super::support::felix;
use felix_core::record::{Command as Record, Entry, Headers, Offset};
use felix_core::storage::{HardState, LogStore, SealedState, SegmentLayout, StorageOp};
use felix_store::segment;
use felix_store::FileStore;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const LAYOUT: SegmentLayout = SegmentLayout {
    records_per_segment: 4,
};

fn path_arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

fn entry(offset: Offset, command: Record) -> Entry {
    Entry {
        offset,
        term: 2,
        command,
    }
}

fn write(offset: Offset) -> Entry {
    entry(
        offset,
        Record::Write {
            body: format!("record {offset}").into_bytes(),
            headers: Headers::with_epoch(2),
        },
    )
}

/// A store holding offsets 1..=10 (a trim at 6), term 3 with a vote for node 2, synced and closed.
fn store(dir: &Path) {
    let mut store = FileStore::open(dir, LAYOUT).expect("open");
    store.recover().expect("create");
    store
        .apply(&StorageOp::HardState(HardState {
            term: 3,
            vote: Some(2),
        }))
        .expect("promise");
    let mut entries: Vec<Entry> = (1..=10).map(write).collect();
    entries[5] = entry(
        6,
        Record::Trim {
            floor: 5,
            headers: Headers::with_epoch(2),
            fence: None,
        },
    );
    store.apply(&StorageOp::Append(entries)).expect("append");
    store.sync().expect("sync");
}

/// Every entry of `dir` with its bytes, to prove a command left the directory as it was.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(dir)
        .expect("list")
        .map(|item| {
            let path = item.expect("item").path();
            let bytes = fs::read(&path).unwrap_or_default();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn check_prints_what_a_clean_store_holds() {
    // Proves `check` on a cleanly closed store exits 0 and prints the promise, the layout, the
    // log's offsets, the trims, the segments and no repair, without touching a byte.
    let dir = tempfile::tempdir().expect("tempdir");
    store(dir.path());
    let before = snapshot(dir.path());
    let (code, stdout, stderr) = felix(&["store", "check", path_arg(dir.path())]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    for line in [
        "layout: 4 records per segment",
        "promise: term 3, voted for n2",
        "sealed: none",
        "log: offsets 1..=10 (10 records), next append at 11",
        "trims in the log: 6 (floor 5)",
        "segments: 3",
        "seg-00000000000000000009.log: offsets 9..=10 (2 records",
        "repairs: none",
        "torn tail: none",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn check_lists_the_repairs_recovery_would_make_and_makes_none() {
    // Proves a torn tail (file and byte), a leftover temp file and a segment an interrupted
    // compaction left behind are listed as repairs, the store still opens (exit 0), and the
    // directory is byte for byte what it was: the recovery ran in memory only.
    let dir = tempfile::tempdir().expect("tempdir");
    store(dir.path());
    let first = dir.path().join(segment::file_name(1));
    let first_bytes = fs::read(&first).expect("read");
    let mut store = FileStore::open(dir.path(), LAYOUT).expect("open");
    store.recover().expect("recover");
    store
        .apply(&StorageOp::Compact {
            below: 5,
            sealed: SealedState {
                floor: 5,
                base_offset: 4,
                base_term: 2,
                ..SealedState::default()
            },
        })
        .expect("compact");
    store.sync().expect("sync");
    drop(store);
    fs::write(&first, &first_bytes).expect("the deletion never landed");
    let last = dir.path().join(segment::file_name(9));
    let mut torn = fs::read(&last).expect("read");
    let intact = torn.len();
    torn.extend_from_slice(&[7u8; 9]);
    fs::write(&last, &torn).expect("torn tail");
    fs::write(dir.path().join("promise.tmp"), b"half").expect("temp");
    let before = snapshot(dir.path());

    let (code, stdout, stderr) = felix(&["store", "check", path_arg(dir.path())]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("sealed: base 4@2, floor 5"), "{stdout}");
    assert!(stdout.contains("floor (sealed): 5"), "{stdout}");
    assert!(stdout.contains("log: offsets 5..=10"), "{stdout}");
    assert!(stdout.contains("repairs recovery would make"), "{stdout}");
    assert!(stdout.contains("promise.tmp"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "remove {}: below the first held offset",
            first.display()
        )),
        "{stdout}"
    );
    let torn_line = format!(
        "torn tail: cut a torn tail of 9 bytes at byte {intact} of {}",
        last.display()
    );
    assert!(
        stdout.contains(&torn_line),
        "missing {torn_line:?} in\n{stdout}"
    );
    assert_eq!(snapshot(dir.path()), before, "check changed the directory");
}

#[test]
fn check_names_the_damage_and_exits_1() {
    // Proves a flipped byte in a middle segment, a deleted promise beside a log, a deleted last
    // segment and a FIFO in place of a segment each exit 1 with the file (and byte) named, never
    // a hang or a panic.
    let dir = tempfile::tempdir().expect("tempdir");
    store(dir.path());
    let middle = dir.path().join(segment::file_name(5));
    let pristine = fs::read(&middle).expect("read");
    let mut flipped = pristine.clone();
    flipped[30] ^= 0x20;
    fs::write(&middle, &flipped).expect("flip");
    let (code, stdout, stderr) = felix(&["store", "check", path_arg(dir.path())]);
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("DAMAGED: corrupt store file"), "{stdout}");
    assert!(
        stdout.contains(&format!("file {} at byte 0", middle.display())),
        "{stdout}"
    );
    assert!(stdout.contains("seg-00000000000000000005.log"), "{stdout}");
    fs::write(&middle, &pristine).expect("restore");

    let promise = dir.path().join("promise");
    let promise_bytes = fs::read(&promise).expect("read");
    fs::remove_file(&promise).expect("remove");
    let (code, stdout, _) = felix(&["store", "check", path_arg(dir.path())]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains(&promise.display().to_string()), "{stdout}");
    assert!(stdout.contains("must not rejoin"), "{stdout}");
    fs::write(&promise, &promise_bytes).expect("restore");

    let last = dir.path().join(segment::file_name(9));
    let last_bytes = fs::read(&last).expect("read");
    fs::remove_file(&last).expect("remove");
    let (code, stdout, _) = felix(&["store", "check", path_arg(dir.path())]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("offset 9 was synced"), "{stdout}");

    let status = Command::new("mkfifo")
        .arg(&last)
        .status()
        .expect("run mkfifo");
    assert!(status.success());
    let (code, stdout, _) = felix(&["store", "dump", "--json", path_arg(dir.path())]);
    assert_eq!(code, 1, "{stdout}");
    let damage: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(damage["status"], "damaged");
    assert_eq!(damage["path"], last.display().to_string());
    assert!(
        damage["error"]
            .as_str()
            .is_some_and(|error| error.contains("a FIFO")),
        "{damage}"
    );
    fs::remove_file(&last).expect("remove fifo");
    fs::write(&last, &last_bytes).expect("restore");
    let (code, _, _) = felix(&["store", "check", path_arg(dir.path())]);
    assert_eq!(code, 0);
}

#[test]
fn bad_directories_are_bad_usage() {
    // Proves a missing directory, a file given as the directory and a directory holding no store
    // exit 2 with a message, and an unknown action is a usage error too.
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nothing-here");
    let (code, _, stderr) = felix(&["store", "check", path_arg(&missing)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("No such file"), "{stderr}");
    let file = dir.path().join("a-file");
    fs::write(&file, b"x").expect("write");
    let (code, _, stderr) = felix(&["store", "dump", path_arg(&file)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a directory"), "{stderr}");
    let empty = tempfile::tempdir().expect("tempdir");
    let (code, _, stderr) = felix(&["store", "check", path_arg(empty.path())]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("holds no store"), "{stderr}");
    assert_eq!(fs::read_dir(empty.path()).expect("list").count(), 0);
    let (code, _, _) = felix(&["store", "repair", path_arg(empty.path())]);
    assert_eq!(code, 2);
}

#[test]
fn dump_prints_every_record_from_an_offset_in_text_and_json() {
    // Proves `dump --from 8` lists records 8..=10 in the trace's words, and `--json` prints a
    // summary object and then one object per record.
    let dir = tempfile::tempdir().expect("tempdir");
    store(dir.path());
    let (code, stdout, stderr) = felix(&["store", "dump", path_arg(dir.path()), "--from", "8"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("records from 8:"), "{stdout}");
    assert!(
        stdout.contains("  8@2 write \"record 8\" {epoch=2}"),
        "{stdout}"
    );
    assert!(stdout.contains("  10@2 write \"record 10\""), "{stdout}");
    assert!(!stdout.contains("  7@2"), "{stdout}");

    let (code, stdout, _) = felix(&["store", "dump", "--json", path_arg(dir.path())]);
    assert_eq!(code, 0);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 11, "{stdout}");
    assert_eq!(lines[0]["kind"], "store");
    assert_eq!(lines[0]["term"], 3);
    assert_eq!(lines[0]["vote"], 2);
    assert_eq!(lines[0]["start"], 1);
    assert_eq!(lines[0]["next"], 11);
    assert_eq!(lines[0]["trims"], serde_json::json!([6]));
    assert_eq!(lines[6]["kind"], "record");
    assert_eq!(lines[6]["offset"], 6);
    assert_eq!(lines[6]["text"], "6@2 trim floor=5 {epoch=2}");
}

#[test]
fn dump_into_a_closed_pipe_exits_0() {
    // Proves `felix store dump DIR | head` (a reader that has gone before the first line) ends
    // quietly with exit 0: no broken-pipe panic (exit 101).
    let dir = tempfile::tempdir().expect("tempdir");
    store(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_felix"))
        .args(["store", "dump", path_arg(dir.path())])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn felix");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait for felix");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
