//! Engine tests of the reader and the folder: the cursor, the gap below the floor, routing, and
//! folds that restore from, compare with, or ignore a checkpoint run.

use felix_core::api::{ReadFrom, ReadRecord, Reply, Request, RequestId};
use felix_core::client::checkpoint::{encode_run, RunRecord};
use felix_core::client::{Client, Fold, Folder, Reader, Route};
use felix_core::history::Event;
use felix_core::{Headers, Offset};

const CLIENT: u32 = 11;

fn record(offset: Offset, body: Vec<u8>) -> ReadRecord {
    ReadRecord {
        offset,
        body,
        headers: Headers::default(),
    }
}

fn app(offset: Offset) -> ReadRecord {
    record(offset, format!("app {offset}").into_bytes())
}

fn read(from: Offset) -> Request {
    Request::Read {
        from: ReadFrom::Offset(from),
        max_records: 16,
    }
}

fn expect_read(client: &mut impl Client, from: Offset) -> RequestId {
    let (id, request) = client.next_request().expect("a request");
    assert_eq!(request, read(from));
    assert_eq!(client.next_request(), None);
    id
}

/// The checkpoint run of `state` at `begin`, as records (Begin, chunks, End).
fn run_at(begin: Offset, state: Fold) -> Vec<ReadRecord> {
    encode_run(state, 8)
        .iter()
        .enumerate()
        .map(|(index, run_record)| record(begin + index as Offset, run_record.encode()))
        .collect()
}

/// The fold of app writes at `offsets`, from the empty state.
fn fold_of(offsets: &[Offset]) -> Fold {
    let mut fold = Fold::empty();
    for offset in offsets {
        fold.apply(*offset, format!("app {offset}").as_bytes());
    }
    fold
}

/// A reader delivers records and moves its cursor to `next`.
#[test]
fn reader_delivers_and_advances() {
    let mut reader = Reader::new(CLIENT, 1, 16);
    let id = expect_read(&mut reader, 1);
    let step = reader.on_reply(
        id,
        Reply::Records {
            records: vec![app(1), app(3)],
            next: 4,
        },
    );
    assert_eq!(step.delivered, vec![app(1), app(3)]);
    assert!(step.events.is_empty());
    expect_read(&mut reader, 4);
}

/// Below the floor the reader moves to the floor and reports the gap, never silently.
#[test]
fn reader_below_the_floor_reports_a_gap() {
    let mut reader = Reader::new(CLIENT, 2, 16);
    let id = expect_read(&mut reader, 2);
    let step = reader.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 9,
            tag: None,
        },
    );
    assert_eq!(
        step.events,
        vec![Event::Gap {
            client: CLIENT,
            from: 2,
            to: 9
        }]
    );
    assert!(step.delivered.is_empty());
    expect_read(&mut reader, 9);
}

/// NotHeld is not a gap: the reader asks another node for the same range.
#[test]
fn reader_not_held_asks_another_node() {
    let mut reader = Reader::new(CLIENT, 5, 16);
    let id = expect_read(&mut reader, 5);
    let step = reader.on_reply(id, Reply::NotHeld { from: 5 });
    assert_eq!(step.route, Route::AnotherNode);
    assert!(step.events.is_empty());
    let id = expect_read(&mut reader, 5);
    // An unknown outcome just reads again from the same cursor.
    assert!(!reader.on_unknown(id).ignored);
    expect_read(&mut reader, 5);
}

/// The folder folds every application write and emits its digest.
#[test]
fn folder_folds_every_write() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    let step = folder.on_reply(
        id,
        Reply::Records {
            records: vec![app(1), app(2)],
            next: 3,
        },
    );
    assert_eq!(
        step.events,
        vec![
            Event::Folded {
                client: CLIENT,
                offset: 1,
                digest: fold_of(&[1]).digest
            },
            Event::Folded {
                client: CLIENT,
                offset: 2,
                digest: fold_of(&[1, 2]).digest
            },
        ]
    );
    assert_eq!(folder.fold(), Some(fold_of(&[1, 2])));
}

/// A folder below the floor reports the gap and restores from the checkpoint run at the floor, at
/// its End, then folds on: the same digests as a folder that folded everything.
#[test]
fn folder_restores_from_the_run_at_the_floor() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    let step = folder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 5,
            tag: None,
        },
    );
    assert_eq!(
        step.events,
        vec![Event::Gap {
            client: CLIENT,
            from: 1,
            to: 5
        }]
    );
    assert_eq!(folder.fold(), None);
    let id = expect_read(&mut folder, 5);
    let state = fold_of(&[1, 2, 3, 4]);
    let mut records = run_at(5, state);
    records.push(app(9));
    let step = folder.on_reply(id, Reply::Records { records, next: 10 });
    assert_eq!(
        step.events,
        vec![
            Event::CheckpointRestored {
                client: CLIENT,
                begin: 5,
                end: 8
            },
            Event::Folded {
                client: CLIENT,
                offset: 8,
                digest: state.digest
            },
            Event::Folded {
                client: CLIENT,
                offset: 9,
                digest: fold_of(&[1, 2, 3, 4, 9]).digest
            },
        ]
    );
}

/// A run with no End (its owner crashed inside it) is never restored: the folder that lost its
/// base folds on from the empty state, and its digest differs from the true one.
#[test]
fn folder_ignores_a_run_without_end() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    folder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 5,
            tag: None,
        },
    );
    let id = expect_read(&mut folder, 5);
    let mut records = run_at(5, fold_of(&[1, 2, 3, 4]));
    records.pop();
    records.push(app(9));
    let step = folder.on_reply(id, Reply::Records { records, next: 10 });
    assert_eq!(
        step.events,
        vec![Event::Folded {
            client: CLIENT,
            offset: 9,
            digest: fold_of(&[9]).digest
        }]
    );
    assert_ne!(fold_of(&[9]).digest, fold_of(&[1, 2, 3, 4, 9]).digest);
}

/// A run whose End names a wrong checksum or chunk count is not restored either.
#[test]
fn folder_ignores_a_run_with_a_bad_end() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    folder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 5,
            tag: None,
        },
    );
    let id = expect_read(&mut folder, 5);
    let mut records = run_at(5, fold_of(&[1]));
    let end = records.len() - 1;
    let Some(RunRecord::End { chunks, checksum }) = RunRecord::decode(&records[end].body) else {
        panic!("the last record of a run is its End");
    };
    records[end].body = RunRecord::End {
        chunks,
        checksum: checksum ^ 1,
    }
    .encode();
    let step = folder.on_reply(id, Reply::Records { records, next: 9 });
    assert!(step.events.is_empty());
    assert_eq!(folder.fold(), None);
}

/// A folder that holds the whole prefix compares the run with its own state and resets on it; a
/// run that disagrees is reported with both digests (a FoldAgreement fact).
#[test]
fn folder_with_the_prefix_compares_and_resets() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    let mut records = vec![app(1), app(2)];
    records.extend(run_at(3, fold_of(&[1, 2])));
    let step = folder.on_reply(id, Reply::Records { records, next: 7 });
    let agreed = fold_of(&[1, 2]).digest;
    assert_eq!(
        step.events[2..],
        [
            Event::CheckpointCompared {
                client: CLIENT,
                begin: 3,
                end: 6,
                digest: agreed,
                checkpoint_digest: agreed
            },
            Event::Folded {
                client: CLIENT,
                offset: 6,
                digest: agreed
            },
        ]
    );
    // A mid-log checkpoint of a different state: compared (mismatch) and the fold resets on it.
    let id = expect_read(&mut folder, 7);
    let wrong = fold_of(&[2]);
    let step = folder.on_reply(
        id,
        Reply::Records {
            records: run_at(7, wrong),
            next: 11,
        },
    );
    assert_eq!(
        step.events,
        vec![
            Event::CheckpointCompared {
                client: CLIENT,
                begin: 7,
                end: 10,
                digest: agreed,
                checkpoint_digest: wrong.digest
            },
            Event::Folded {
                client: CLIENT,
                offset: 10,
                digest: wrong.digest
            },
        ]
    );
    assert_eq!(folder.fold(), Some(wrong));
}

/// A write between a run's records interrupts it: the run is not restored.
#[test]
fn an_interrupted_run_is_not_restored() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    folder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 5,
            tag: None,
        },
    );
    let id = expect_read(&mut folder, 5);
    let mut records = run_at(5, fold_of(&[1]));
    let end = records.pop().unwrap();
    records.push(app(8));
    records.push(record(9, end.body));
    let step = folder.on_reply(id, Reply::Records { records, next: 10 });
    assert!(!step
        .events
        .iter()
        .any(|event| matches!(event, Event::CheckpointRestored { .. })));
}

/// The End's checksum covers the chunk payloads: a run with one chunk byte changed (same count,
/// same lengths, End intact) is not restored.
#[test]
fn folder_ignores_a_run_with_a_corrupted_chunk() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    folder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 5,
            tag: None,
        },
    );
    let id = expect_read(&mut folder, 5);
    let mut records = run_at(5, fold_of(&[1]));
    let Some(RunRecord::Chunk { index, mut payload }) = RunRecord::decode(&records[1].body) else {
        panic!("the second record of a run is its first chunk");
    };
    payload[0] ^= 1;
    records[1].body = RunRecord::Chunk { index, payload }.encode();
    let step = folder.on_reply(id, Reply::Records { records, next: 9 });
    assert!(step.events.is_empty());
    assert_eq!(folder.fold(), None);
}

/// A reply that is not a batch from the cursor (a repeated offset, a record at or past `next`, a
/// record below the cursor) is dropped whole: nothing delivered, the cursor stays.
#[test]
fn reader_drops_a_malformed_batch() {
    let mut reader = Reader::new(CLIENT, 2, 16);
    for (records, next) in [
        (vec![app(2), app(2)], 4),
        (vec![app(2), app(4)], 4),
        (vec![app(1), app(3)], 4),
        (vec![app(3), app(2)], 4),
    ] {
        let id = expect_read(&mut reader, 2);
        let step = reader.on_reply(id, Reply::Records { records, next });
        assert!(step.delivered.is_empty());
        assert_eq!(reader.cursor(), 2);
    }
    expect_read(&mut reader, 2);
}

/// `CursorTooOld` naming a floor at or below the cursor is not a gap: the reader asks another
/// node from the same cursor.
#[test]
fn reader_floor_at_or_below_the_cursor_is_not_a_gap() {
    let mut reader = Reader::new(CLIENT, 5, 16);
    for floor in [4, 5] {
        let id = expect_read(&mut reader, 5);
        let step = reader.on_reply(id, Reply::CursorTooOld { floor, tag: None });
        assert!(step.events.is_empty());
        assert_eq!(step.route, Route::AnotherNode);
    }
    expect_read(&mut reader, 5);
}

/// FNV-1a, written out: the digest folds the offset (8 bytes, little-endian), the body's length
/// (8 bytes, little-endian) and the body, byte by byte.
fn fnv1a(mut digest: u64, offset: Offset, body: &[u8]) -> u64 {
    let mut bytes = offset.to_le_bytes().to_vec();
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(body);
    for byte in bytes {
        digest = (digest ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    digest
}

/// The fold is FNV-1a over `(offset, length, body)` of each write, from the FNV offset basis, and
/// counts the writes: a reference written out here, not the fold's own code.
#[test]
fn the_fold_is_fnv1a_of_offset_length_and_body() {
    let mut fold = Fold::empty();
    assert_eq!(fold.digest, 0xcbf2_9ce4_8422_2325);
    let mut expected = fold.digest;
    for (offset, body) in [(1, b"a".to_vec()), (3, vec![0xff, 0, 7]), (9, vec![])] {
        fold.apply(offset, &body);
        expected = fnv1a(expected, offset, &body);
        assert_eq!(fold.digest, expected);
    }
    assert_eq!(fold.writes, 3);
}

/// A run's chunks must come in index order from 0: a run whose chunks carry the wrong indices
/// (the payloads themselves in order) is not restored.
#[test]
fn folder_ignores_a_run_with_misnumbered_chunks() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    folder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 5,
            tag: None,
        },
    );
    let id = expect_read(&mut folder, 5);
    let mut records = run_at(5, fold_of(&[1]));
    for (record, index) in records[1..3].iter_mut().zip([1, 0]) {
        let Some(RunRecord::Chunk { payload, .. }) = RunRecord::decode(&record.body) else {
            panic!("records 1 and 2 of the run are its chunks");
        };
        record.body = RunRecord::Chunk { index, payload }.encode();
    }
    let step = folder.on_reply(id, Reply::Records { records, next: 9 });
    assert!(step.events.is_empty());
    assert_eq!(folder.fold(), None);
}

/// `chunks_max` bounds the chunks of a run a folder accepts: a run of exactly `chunks_max`
/// chunks is restored, one of `chunks_max + 1` is not.
#[test]
fn folder_accepts_at_most_chunks_max_chunks() {
    let state = fold_of(&[1, 2]);
    // 16 state bytes in 6-byte chunks: 3 chunks (Begin at 5, chunks at 6..=8, End at 9).
    let records: Vec<ReadRecord> = encode_run(state, 6)
        .iter()
        .enumerate()
        .map(|(index, run_record)| record(5 + index as Offset, run_record.encode()))
        .collect();
    assert_eq!(records.len(), 5);
    for (chunks_max, restored) in [(3, true), (2, false)] {
        let mut folder = Folder::new(CLIENT, 16, chunks_max);
        let id = expect_read(&mut folder, 1);
        folder.on_reply(
            id,
            Reply::CursorTooOld {
                floor: 5,
                tag: None,
            },
        );
        let id = expect_read(&mut folder, 5);
        folder.on_reply(
            id,
            Reply::Records {
                records: records.clone(),
                next: 10,
            },
        );
        assert_eq!(folder.fold().is_some(), restored, "chunks_max {chunks_max}");
        assert_eq!(folder.cursor(), 10);
    }
}

/// A read answered `NotLeader` or `NoReadIndex` goes to the hinted leader next, from the same
/// cursor.
#[test]
fn reader_not_leader_or_no_read_index_routes_to_the_hint() {
    let mut reader = Reader::new(CLIENT, 3, 16);
    let id = expect_read(&mut reader, 3);
    let step = reader.on_reply(id, Reply::NotLeader { hint: Some(2) });
    assert_eq!(step.route, Route::Leader(Some(2)));
    let id = expect_read(&mut reader, 3);
    let step = reader.on_reply(id, Reply::NoReadIndex { hint: Some(1) });
    assert_eq!(step.route, Route::Leader(Some(1)));
    expect_read(&mut reader, 3);
}

/// A reader and a folder report the identity the driver gave them (the driver routes their
/// replies by it).
#[test]
fn readers_report_their_client_id() {
    assert_eq!(Reader::new(CLIENT, 1, 16).client_id(), CLIENT);
    assert_eq!(Folder::new(CLIENT + 1, 16, 8).client_id(), CLIENT + 1);
}

/// A folder's unknown outcome ends the read in flight: it reads again from the same cursor.
#[test]
fn folder_rereads_after_an_unknown_outcome() {
    let mut folder = Folder::new(CLIENT, 16, 8);
    let id = expect_read(&mut folder, 1);
    assert!(!folder.on_unknown(id).ignored);
    assert_eq!(folder.in_flight(), None);
    expect_read(&mut folder, 1);
}
