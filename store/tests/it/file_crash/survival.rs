//! Synced records survive, torn tails are cut, damage in the middle is corrupt, the sealed floor
//! never regresses, a jump into a segment survives its interrupted rewrite.

use super::*;

#[test]
fn every_synced_record_survives_a_crash_and_unsynced_ones_may_go() {
    // Proves records synced in batches all survive a crash that keeps no unsynced op, the promise
    // too, and that the store then continues at the right offset.
    let dir = store_dir();
    let mut store = open(dir.path());
    store.recover().expect("fresh");
    for batch in 0..5 {
        store
            .apply(&append(batch * 3 + 1, batch * 3 + 3, 1))
            .expect("append");
        store.sync().expect("sync");
    }
    let promise = HardState {
        term: 3,
        vote: Some(1),
    };
    store
        .apply(&StorageOp::HardState(promise))
        .expect("promise");
    store.sync().expect("sync");
    store.apply(&append(16, 20, 1)).expect("unsynced append");
    store.crash(0, 0).expect("crash");
    let recovered = store.recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), (1..=15).collect::<Vec<_>>());
    assert_eq!(recovered.hard_state, promise);
    // The crash tore the first frame of the lost append: recovery cut it and said where.
    let cut = recovered.tail_cut.expect("the torn frame was cut");
    assert_eq!(cut.path, segment_path(dir.path(), 13));
    store.apply(&append(16, 17, 2)).expect("continues at 16");
    store.sync().expect("sync");
    drop(store);
    let recovered = open(dir.path()).recover().expect("reopen");
    assert_eq!(recovered.next(), 18);
    assert_eq!(recovered.entries.last(), Some(&entry(17, 2)));
}

#[test]
fn torn_append_is_cut_and_reported() {
    // Proves a crash in the middle of a write (two whole frames, then half a frame) leaves the
    // whole frames, cuts the half one, and says where in `tail_cut`.
    let dir = store_dir();
    filled(dir.path(), 5);
    let mut store = open(dir.path());
    store.recover().expect("recover");
    store.apply(&append(6, 9, 1)).expect("append");
    store.crash(0, 2).expect("crash mid-write");
    let torn_len = fs::metadata(segment_path(dir.path(), 5))
        .expect("stat")
        .len();
    let recovered = store.recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), (1..=7).collect::<Vec<_>>());
    let cut = recovered.tail_cut.expect("a torn tail was cut");
    assert_eq!(cut.path, segment_path(dir.path(), 5));
    assert!(cut.bytes_dropped > 0);
    // The cut accounts for every byte: the file ends where it says, the rest was dropped.
    assert_eq!(cut.position + cut.bytes_dropped, torn_len);
    let cut_len = fs::metadata(&cut.path).expect("stat").len();
    assert_eq!(cut_len, cut.position);
    let text = cut.to_string();
    assert!(
        text.starts_with(&format!(
            "cut a torn tail of {} bytes at byte {} of {}",
            cut.bytes_dropped,
            cut.position,
            cut.path.display()
        )),
        "{text}"
    );
    // Once cut, the tail is clean: the next recovery has nothing to cut.
    let again = open(dir.path()).recover().expect("reopen");
    assert_eq!(again.tail_cut, None);
    assert_eq!(again.next(), 8);
}

#[test]
fn truncated_file_and_appended_garbage_are_cut_as_a_torn_tail() {
    // Proves a last segment cut in the middle of a record, or followed by garbage, recovers to the
    // whole records before the damage, and the store keeps working after.
    let dir = store_dir();
    filled(dir.path(), 7);
    let last = segment_path(dir.path(), 5);
    let bytes = fs::read(&last).expect("read");
    fs::write(&last, &bytes[..bytes.len() - 3]).expect("truncate mid-record");
    let mut store = open(dir.path());
    let recovered = store.recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), (1..=6).collect::<Vec<_>>());
    assert!(recovered.tail_cut.is_some());
    store.apply(&append(7, 8, 2)).expect("append");
    store.sync().expect("sync");
    drop(store);

    let mut garbage = fs::read(&last).expect("read");
    garbage.extend_from_slice(&[0u8; 17]);
    garbage.extend_from_slice(b"not a frame at all, just bytes");
    fs::write(&last, &garbage).expect("append garbage");
    let recovered = open(dir.path()).recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), (1..=8).collect::<Vec<_>>());
    assert_eq!(recovered.entries.last(), Some(&entry(8, 2)));
    assert!(recovered.tail_cut.is_some());
}

#[test]
fn flipped_byte_in_the_middle_is_corrupt_naming_the_file() {
    // Proves a flipped byte in a non-last segment, or in a record of the last segment that other
    // records follow, is a Corrupt error naming that file and the bad record's byte position,
    // never a silent cut.
    let dir = store_dir();
    filled(dir.path(), 10);
    let first = segment_path(dir.path(), 1);
    let pristine = fs::read(&first).expect("read");
    for index in [0, 5, 13, pristine.len() / 2, pristine.len() - 1] {
        let mut flipped = pristine.clone();
        flipped[index] ^= 0x40;
        fs::write(&first, &flipped).expect("flip");
        match open(dir.path()).recover() {
            Err(StoreError::Corrupt { path, position, .. }) => {
                assert_eq!(path, first);
                assert!(position <= index as u64);
            }
            other => panic!("flip at {index} gave {other:?}"),
        }
    }
    fs::write(&first, &pristine).expect("restore");

    let last = segment_path(dir.path(), 9);
    let mut flipped = fs::read(&last).expect("read");
    flipped[14] ^= 0x01;
    fs::write(&last, &flipped).expect("flip");
    let error = open(dir.path()).recover().expect_err("corrupt");
    assert!(matches!(&error, StoreError::Corrupt { path, position: 0, .. } if *path == last));
    assert!(error.to_string().contains(&segment::file_name(9)));
}

#[test]
fn torn_frame_in_a_middle_segment_is_corrupt() {
    // Proves a short (torn-looking) frame is only forgiven at the tail of the last segment: in an
    // earlier segment it is corruption.
    let dir = store_dir();
    filled(dir.path(), 10);
    let middle = segment_path(dir.path(), 5);
    let bytes = fs::read(&middle).expect("read");
    fs::write(&middle, &bytes[..bytes.len() - 4]).expect("cut");
    let error = open(dir.path()).recover().expect_err("corrupt");
    assert!(matches!(error, StoreError::Corrupt { path, .. } if path == middle));
}

#[test]
fn missing_segment_is_a_gap_not_a_shorter_log() {
    // Proves a deleted middle segment file is reported as corruption (a gap), never read as a log
    // that ends early.
    let dir = store_dir();
    filled(dir.path(), 12);
    fs::remove_file(segment_path(dir.path(), 5)).expect("remove");
    let error = open(dir.path()).recover().expect_err("gap");
    assert!(
        matches!(&error, StoreError::Corrupt { path, .. } if *path == segment_path(dir.path(), 9))
    );
}

#[test]
fn records_that_do_not_start_the_log_or_fit_their_file_are_corrupt() {
    // Proves recovery checks where the log starts and which file holds what: after a compaction
    // to 5, a missing first segment file (records resume at 9) is corruption at the file that
    // holds them, not a log that starts later; and records 5..=8 in a file named for segment 9
    // do not belong there, even where they would continue the log.
    let dir = store_dir();
    filled(dir.path(), 12);
    let mut store = open(dir.path());
    store.recover().expect("recover");
    store
        .apply(&StorageOp::Compact {
            below: 5,
            sealed: sealed(5),
        })
        .expect("compact");
    store.sync().expect("sync");
    drop(store);
    let files = snapshot(dir.path());
    fs::remove_file(segment_path(dir.path(), 5)).expect("remove the first file");
    let (path, reason) = expect_corrupt(dir.path(), "missing first segment");
    assert_eq!(path, segment_path(dir.path(), 9));
    assert!(reason.contains("the log starts at 5"), "{reason}");

    restore(dir.path(), &files);
    fs::remove_file(segment_path(dir.path(), 9)).expect("remove");
    fs::rename(segment_path(dir.path(), 5), segment_path(dir.path(), 9)).expect("misname");
    let (path, reason) = expect_corrupt(dir.path(), "records in another segment's file");
    assert_eq!(path, segment_path(dir.path(), 9));
    assert!(
        reason.contains("does not belong in this segment"),
        "{reason}"
    );
}

#[test]
fn sealed_floor_never_regresses_and_interrupted_deletion_is_finished() {
    // Proves a synced compaction's sealed state and first offset survive, and that segment files
    // the compaction had not deleted yet when it crashed (sealed file written, deletion lost) are
    // deleted by recovery instead of coming back.
    let dir = store_dir();
    filled(dir.path(), 14);
    let doomed: Vec<(PathBuf, Vec<u8>)> = [1, 5]
        .iter()
        .map(|base| {
            let path = segment_path(dir.path(), *base);
            let bytes = fs::read(&path).expect("read");
            (path, bytes)
        })
        .collect();
    let mut store = open(dir.path());
    store.recover().expect("recover");
    store
        .apply(&StorageOp::Compact {
            below: 10,
            sealed: sealed(10),
        })
        .expect("compact");
    store.sync().expect("sync");
    drop(store);
    for (path, bytes) in &doomed {
        assert!(!path.exists());
        fs::write(path, bytes).expect("resurrect as if the deletion never landed");
    }
    let recovered = open(dir.path()).recover().expect("recover");
    assert_eq!(recovered.start, 9);
    assert_eq!(recovered.sealed, Some(sealed(10)));
    assert_eq!(offsets(&recovered.entries), (9..=14).collect::<Vec<_>>());
    for (path, _) in &doomed {
        assert!(!path.exists(), "recovery finishes the deletion");
    }

    // Many crashes with every possible number of kept ops: the floor read back never goes down.
    let mut floor_seen = 10;
    let mut store = open(dir.path());
    store.recover().expect("recover");
    for round in 0..6u64 {
        let next = store.next();
        store.apply(&append(next, next + 5, 1)).expect("append");
        let floor = floor_seen + 3 + round;
        store
            .apply(&StorageOp::Compact {
                below: floor,
                sealed: sealed(floor),
            })
            .expect("compact");
        let next = store.next();
        store.apply(&append(next, next + 1, 1)).expect("append");
        store.crash((round % 4) as usize, 1).expect("crash");
        let recovered = store.recover().expect("recover");
        let floor_read = recovered.sealed.as_ref().map_or(0, |state| state.floor);
        assert!(
            floor_read >= floor_seen,
            "floor went from {floor_seen} to {floor_read}"
        );
        assert!(recovered.start <= floor_read);
        floor_seen = floor_read;
    }
}

#[test]
fn jump_into_a_segment_rewrites_it_and_survives_an_interrupted_rewrite() {
    // Proves a TrimmedTo jump into the middle of a held segment keeps exactly the records at and
    // above the point, and that if the rewrite of that segment is lost (old file back), recovery
    // drops the records below the point again.
    let dir = store_dir();
    filled(dir.path(), 11);
    let holder = segment_path(dir.path(), 9);
    let before = fs::read(&holder).expect("read");
    let mut store = open(dir.path());
    store.recover().expect("recover");
    store
        .apply(&StorageOp::TrimmedTo {
            point: 10,
            state: sealed(10),
        })
        .expect("jump");
    store.sync().expect("sync");
    assert_eq!((store.start(), store.next()), (10, 12));
    drop(store);
    let recovered = open(dir.path()).recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), vec![10, 11]);
    fs::write(&holder, &before).expect("the rewrite never landed");
    let mut store = open(dir.path());
    let recovered = store.recover().expect("recover");
    assert_eq!(recovered.start, 10);
    assert_eq!(offsets(&recovered.entries), vec![10, 11]);
    store
        .apply(&append(12, 13, 2))
        .expect("append after the jump");
    store.sync().expect("sync");
    drop(store);
    let recovered = open(dir.path()).recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), vec![10, 11, 12, 13]);

    // A jump past everything held leaves an empty log that continues at the point.
    let mut store = open(dir.path());
    store.recover().expect("recover");
    store
        .apply(&StorageOp::TrimmedTo {
            point: 30,
            state: sealed(30),
        })
        .expect("jump");
    store.sync().expect("sync");
    drop(store);
    let recovered = open(dir.path()).recover().expect("recover");
    assert_eq!((recovered.start, recovered.entries.len()), (30, 0));
}

#[test]
fn records_kept_by_a_jump_into_a_segment_are_cut_where_they_start() {
    // After a jump into the middle of a segment the kept records sit at new byte positions in the
    // rewritten file: a later suffix truncation and a second jump inside that file must cut at
    // those positions, not the old ones (a wrong cut leaves a torn or foreign frame behind).
    let dir = store_dir();
    filled(dir.path(), 8);
    let mut store = open(dir.path());
    store.recover().expect("recover");
    store
        .apply(&StorageOp::TrimmedTo {
            point: 6,
            state: sealed(6),
        })
        .expect("jump into segment 5..=8");
    store
        .apply(&StorageOp::TruncateSuffix { from: 8 })
        .expect("truncate inside the rewritten segment");
    store.sync().expect("sync");
    assert_eq!((store.start(), store.next()), (6, 8));
    drop(store);
    let mut store = open(dir.path());
    let recovered = store.recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), vec![6, 7]);
    assert_eq!(
        recovered.tail_cut, None,
        "the truncation cut between frames"
    );
    store.apply(&append(8, 8, 2)).expect("append after the cut");
    store
        .apply(&StorageOp::TrimmedTo {
            point: 7,
            state: sealed(7),
        })
        .expect("a second jump inside the same file");
    store.sync().expect("sync");
    drop(store);
    let recovered = open(dir.path()).recover().expect("recover");
    assert_eq!(offsets(&recovered.entries), vec![7, 8]);
    assert_eq!(recovered.entries[0], entry(7, 1));
    assert_eq!(recovered.entries[1], entry(8, 2));
    assert_eq!(recovered.tail_cut, None);
}
