//! Engine tests of the checkpoint owner (paros): fence, fold, checkpoint run, truncate, and the
//! refusals that stop it. Each test sets up an owner, delivers replies, and asserts the exact
//! requests and events.

use felix_core::api::{ReadFrom, ReadRecord, Reply, Request, RequestId};
use felix_core::client::checkpoint::{encode_run, OwnerOp, RunRecord, MAGIC};
use felix_core::client::{Client, Fold, Owner, OwnerConfig, OwnerStatus, Route};
use felix_core::history::Event;
use felix_core::{Headers, Offset, Token};

const OWNER: u32 = 3;

fn config() -> OwnerConfig {
    OwnerConfig {
        read_batch_max: 8,
        chunk_bytes: 8,
        chunks_max: 4,
        ops_max: 4,
        writes_in_flight_max: 1,
    }
}

fn app_write(offset: Offset) -> ReadRecord {
    ReadRecord {
        offset,
        body: format!("app {offset}").into_bytes(),
        headers: Headers::default(),
    }
}

fn expect_request(owner: &mut Owner, expected: Request) -> RequestId {
    let (id, request) = owner.next_request().expect("a request");
    assert_eq!(request, expected);
    assert_eq!(owner.next_request(), None, "at most one request in flight");
    id
}

fn fenced_append(tail: Option<Offset>, body: Vec<u8>) -> Request {
    Request::Append {
        expected_tail: tail,
        fence: Some(Token(2)),
        body,
        headers: Headers::default(),
    }
}

/// An owner that took the fence (Token(2) replacing Token(1)).
fn fenced_owner() -> Owner {
    let mut owner = Owner::new(OWNER, Token(2), Token(1), config());
    let id = expect_request(
        &mut owner,
        Request::Fence {
            new: Token(2),
            old: Token(1),
        },
    );
    assert!(owner
        .on_reply(id, Reply::Appended { offset: 1, tail: 2 })
        .events
        .is_empty());
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    assert_eq!(owner.token(), Token(2));
    assert_eq!(owner.client_id(), OWNER);
    owner
}

/// An owner that read writes 2 and 3 (tail 4) and wrote its checkpoint run at 4..=7
/// (Begin, two chunks, End), returning the owner and its fold at 4.
fn owner_with_written_run() -> (Owner, Fold) {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    let id = expect_request(
        &mut owner,
        Request::Read {
            from: ReadFrom::Offset(1),
            max_records: 8,
        },
    );
    let step = owner.on_reply(
        id,
        Reply::Records {
            records: vec![app_write(2), app_write(3)],
            next: 4,
        },
    );
    assert_eq!(owner.cursor(), 4, "the cursor moves to the read's next");
    let mut expected = Fold::empty();
    expected.apply(2, b"app 2");
    let digest_2 = expected.digest;
    expected.apply(3, b"app 3");
    assert_eq!(
        step.events,
        vec![
            Event::Folded {
                client: OWNER,
                offset: 2,
                digest: digest_2
            },
            Event::Folded {
                client: OWNER,
                offset: 3,
                digest: expected.digest
            },
        ]
    );
    let run = encode_run(expected, 8);
    assert_eq!(
        run.len(),
        4,
        "16 state bytes in 8-byte chunks: Begin, 2 chunks, End"
    );
    for (index, record) in run.iter().enumerate() {
        let offset = 4 + index as Offset;
        let id = expect_request(&mut owner, fenced_append(Some(offset), record.encode()));
        let step = owner.on_reply(
            id,
            Reply::Appended {
                offset,
                tail: offset + 1,
            },
        );
        if index + 1 < run.len() {
            assert!(step.events.is_empty());
            assert_eq!(owner.status(), OwnerStatus::Writing { begin: Some(4) });
        } else {
            assert_eq!(
                step.events,
                vec![Event::CheckpointWritten {
                    client: OWNER,
                    begin: 4,
                    end: 7
                }]
            );
        }
    }
    (owner, expected)
}

fn truncate_to(floor: Offset) -> Request {
    Request::Trim {
        expected_tail: None,
        fence: Some(Token(2)),
        floor,
        headers: Headers::default(),
    }
}

/// The owner's first request is its fence record; a refused fence names the token in force and
/// stops the owner.
#[test]
fn fence_first_and_a_refused_fence_stops_the_owner() {
    let mut owner = Owner::new(OWNER, Token(2), Token(1), config());
    owner
        .submit(OwnerOp::Write {
            body: b"a".to_vec(),
        })
        .unwrap();
    let id = expect_request(
        &mut owner,
        Request::Fence {
            new: Token(2),
            old: Token(1),
        },
    );
    let step = owner.on_reply(id, Reply::FenceMismatch { current: Token(5) });
    assert_eq!(
        step.events,
        vec![Event::OwnerStopped {
            client: OWNER,
            token: Token(2),
            current: Token(5)
        }]
    );
    assert_eq!(owner.status(), OwnerStatus::Stopped { current: Token(5) });
    assert_eq!(owner.next_request(), None);
}

/// The checkpoint run: read to the tail, Begin/Chunk/Chunk/End at 4..=7, each a fenced append
/// conditional on the tail with the magic prefix, then a fenced truncate to the run's start.
#[test]
fn checkpoint_run_then_truncate_to_its_start() {
    let (mut owner, _) = owner_with_written_run();
    let id = expect_request(&mut owner, truncate_to(4));
    let step = owner.on_reply(id, Reply::Appended { offset: 8, tail: 9 });
    assert!(step.events.is_empty());
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    assert_eq!(owner.next_request(), None);
}

/// Every record of a run carries the magic prefix and decodes back to itself.
#[test]
fn run_records_carry_the_magic_prefix() {
    for record in encode_run(Fold::empty(), 3) {
        let body = record.encode();
        assert!(body.starts_with(MAGIC));
        assert_eq!(RunRecord::decode(&body), Some(record));
    }
    assert_eq!(RunRecord::decode(b"plain write"), None);
    let mut truncated = MAGIC.to_vec();
    truncated.push(b'E');
    assert_eq!(RunRecord::decode(&truncated), Some(RunRecord::Malformed));
    // A chunk too short to carry its 4-byte index is malformed, not a chunk.
    for length in 0..4 {
        let mut short = MAGIC.to_vec();
        short.push(b'C');
        short.extend(vec![0; length]);
        assert_eq!(RunRecord::decode(&short), Some(RunRecord::Malformed));
    }
}

/// A truncate under a stale fence committed and refused in place: the owner learns the fence in
/// force from `TruncateRefused` and stops.
#[test]
fn refused_truncate_stops_the_owner() {
    let (mut owner, _) = owner_with_written_run();
    let id = expect_request(&mut owner, truncate_to(4));
    let step = owner.on_reply(id, Reply::TruncateRefused { current: Token(9) });
    assert_eq!(
        step.events,
        vec![Event::OwnerStopped {
            client: OWNER,
            token: Token(2),
            current: Token(9)
        }]
    );
    assert!(owner.is_finished());
    assert_eq!(owner.next_request(), None);
}

/// Refused at sequencing (`FenceMismatch`) is the same lesson.
#[test]
fn fence_mismatch_on_truncate_stops_the_owner() {
    let (mut owner, _) = owner_with_written_run();
    let id = expect_request(&mut owner, truncate_to(4));
    let step = owner.on_reply(id, Reply::FenceMismatch { current: Token(9) });
    assert_eq!(owner.status(), OwnerStatus::Stopped { current: Token(9) });
    assert_eq!(step.events.len(), 1);
}

/// The shared trim fence: a truncate the limit forbids is skipped, never clamped to a floor that
/// is not a checkpoint.
#[test]
fn truncate_above_the_trim_limit_is_skipped() {
    let (mut owner, _) = owner_with_written_run();
    owner.set_trim_limit(Some(3));
    assert_eq!(owner.next_request(), None);
    owner.set_trim_limit(None);
    assert_eq!(
        owner.next_request(),
        None,
        "the skipped truncate is not sent later"
    );
}

/// The driver crashes the owner inside the run: Begin and one chunk land, the owner asks nothing
/// more, and no End is ever written.
#[test]
fn crash_inside_the_run_leaves_no_end() {
    let mut owner = fenced_owner();
    owner.crash_inside_run(2);
    owner.submit(OwnerOp::Checkpoint).unwrap();
    let (id, _) = owner.next_request().unwrap();
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 2,
        },
    );
    let run = encode_run(Fold::empty(), 8);
    for offset in 2..4 {
        let id = expect_request(
            &mut owner,
            fenced_append(Some(offset), run[offset as usize - 2].encode()),
        );
        owner.on_reply(
            id,
            Reply::Appended {
                offset,
                tail: offset + 1,
            },
        );
    }
    assert_eq!(owner.next_request(), None);
    assert_eq!(owner.status(), OwnerStatus::Crashed);
}

/// A run record refused by the tail check abandons the run (no End); the owner stays fenced.
#[test]
fn refused_run_record_abandons_the_run() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    let (id, _) = owner.next_request().unwrap();
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 2,
        },
    );
    let (id, request) = owner.next_request().unwrap();
    assert!(matches!(
        request,
        Request::Append {
            expected_tail: Some(2),
            ..
        }
    ));
    let step = owner.on_reply(id, Reply::OffsetMismatch { tail: 3 });
    assert!(step.events.is_empty());
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    assert_eq!(owner.next_request(), None);
}

/// Application writes are fenced appends; a NotLeader reply routes and retries the same write.
#[test]
fn application_writes_are_fenced_and_retried_after_not_leader() {
    let mut owner = fenced_owner();
    owner
        .submit(OwnerOp::Write {
            body: b"a".to_vec(),
        })
        .unwrap();
    let id = expect_request(&mut owner, fenced_append(None, b"a".to_vec()));
    let step = owner.on_reply(id, Reply::NotLeader { hint: Some(1) });
    assert_eq!(step.route, Route::Leader(Some(1)));
    let id = expect_request(&mut owner, fenced_append(None, b"a".to_vec()));
    owner.on_reply(id, Reply::Appended { offset: 2, tail: 3 });
    assert_eq!(owner.next_request(), None);
}

/// An explicit truncate (what a stale or buggy caller sends) is a fenced trim to that floor.
#[test]
fn explicit_truncate_is_a_fenced_trim() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Truncate { floor: 2 }).unwrap();
    let id = expect_request(&mut owner, truncate_to(2));
    owner.on_reply(id, Reply::TrimNoop { tail: 2 });
    assert_eq!(owner.next_request(), None);
}

/// A fence whose outcome was unknown and is asked again is refused naming the owner's own token:
/// that means the first one landed, and the owner holds the fence.
#[test]
fn retried_fence_that_already_landed_is_held() {
    let mut owner = Owner::new(OWNER, Token(2), Token(1), config());
    let fence = Request::Fence {
        new: Token(2),
        old: Token(1),
    };
    let id = expect_request(&mut owner, fence.clone());
    assert!(owner.on_unknown(id).events.is_empty());
    let id = expect_request(&mut owner, fence);
    let step = owner.on_reply(id, Reply::FenceMismatch { current: Token(2) });
    assert!(step.events.is_empty());
    assert_eq!(owner.status(), OwnerStatus::Fenced);
}

/// A run record refused at sequencing (`FenceMismatch`: another owner's fence is in force) stops
/// the owner: it learns the token in force, abandons the run and asks nothing more.
#[test]
fn fence_mismatch_on_a_run_record_stops_the_owner() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    owner
        .submit(OwnerOp::Write {
            body: b"later".to_vec(),
        })
        .unwrap();
    let (id, _) = owner.next_request().unwrap();
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 2,
        },
    );
    let run = encode_run(Fold::empty(), 8);
    let id = expect_request(&mut owner, fenced_append(Some(2), run[0].encode()));
    let step = owner.on_reply(id, Reply::FenceMismatch { current: Token(7) });
    assert_eq!(
        step.events,
        vec![Event::OwnerStopped {
            client: OWNER,
            token: Token(2),
            current: Token(7)
        }]
    );
    assert_eq!(owner.status(), OwnerStatus::Stopped { current: Token(7) });
    assert_eq!(owner.next_request(), None);
}

/// An application write refused at sequencing stops the owner too; the writes queued behind it
/// are never sent.
#[test]
fn fence_mismatch_on_an_application_write_stops_the_owner() {
    let mut owner = fenced_owner();
    for body in [b"a", b"b"] {
        owner
            .submit(OwnerOp::Write {
                body: body.to_vec(),
            })
            .unwrap();
    }
    let id = expect_request(&mut owner, fenced_append(None, b"a".to_vec()));
    let step = owner.on_reply(id, Reply::FenceMismatch { current: Token(7) });
    assert_eq!(
        step.events,
        vec![Event::OwnerStopped {
            client: OWNER,
            token: Token(2),
            current: Token(7)
        }]
    );
    assert_eq!(owner.status(), OwnerStatus::Stopped { current: Token(7) });
    assert_eq!(owner.next_request(), None);
}

fn read_from(from: Offset) -> Request {
    Request::Read {
        from: ReadFrom::Offset(from),
        max_records: 8,
    }
}

/// `ops_max` bounds the operations waiting; a stopped owner takes none.
#[test]
fn owner_submit_is_bounded_and_refused_once_stopped() {
    let mut owner = fenced_owner();
    for _ in 0..4 {
        owner.submit(OwnerOp::Checkpoint).unwrap();
    }
    assert_eq!(owner.submit(OwnerOp::Checkpoint), Err(OwnerOp::Checkpoint));
    let mut stopped = Owner::new(OWNER, Token(2), Token(1), config());
    let id = stopped.next_request().unwrap().0;
    stopped.on_reply(id, Reply::FenceMismatch { current: Token(5) });
    assert_eq!(
        stopped.submit(OwnerOp::Checkpoint),
        Err(OwnerOp::Checkpoint)
    );
}

/// A full batch (`read_batch_max` writes) is not the tail: the owner reads on before it writes
/// its run. An empty read at its own cursor is the tail: the run lands exactly there.
#[test]
fn checkpoint_reads_past_a_full_batch_and_lands_at_an_empty_reads_cursor() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    let id = expect_request(&mut owner, read_from(1));
    owner.on_reply(
        id,
        Reply::Records {
            records: (2..10).map(app_write).collect(),
            next: 10,
        },
    );
    let id = expect_request(&mut owner, read_from(10));
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 10,
        },
    );
    let mut state = Fold::empty();
    for offset in 2..10 {
        state.apply(offset, format!("app {offset}").as_bytes());
    }
    assert_eq!(owner.fold(), Some(state));
    let run = encode_run(state, 8);
    expect_request(&mut owner, fenced_append(Some(10), run[0].encode()));
}

/// A read answer that is not a batch from the cursor (a repeated offset, a record at or past
/// `next`) is dropped whole: nothing folded, the cursor stays, the owner reads again.
#[test]
fn owner_drops_a_malformed_batch() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    for (records, next) in [
        (vec![app_write(2), app_write(2)], 3),
        (vec![app_write(2), app_write(3)], 3),
        (vec![], 0),
    ] {
        let id = expect_request(&mut owner, read_from(1));
        let step = owner.on_reply(id, Reply::Records { records, next });
        assert!(step.events.is_empty());
        assert_eq!(owner.cursor(), 1);
        assert_eq!(owner.fold(), Some(Fold::empty()));
    }
    expect_request(&mut owner, read_from(1));
}

/// `CursorTooOld` above the cursor is a gap (the fold's base is lost); one that names a floor at
/// or below the cursor is a node behind: no gap, the fold kept, ask another node.
#[test]
fn owner_gaps_only_on_a_floor_above_its_cursor() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    for floor in [0, 1] {
        let id = expect_request(&mut owner, read_from(1));
        let step = owner.on_reply(id, Reply::CursorTooOld { floor, tag: None });
        assert!(step.events.is_empty());
        assert_eq!(step.route, Route::AnotherNode);
        assert_eq!(owner.fold(), Some(Fold::empty()));
    }
    let id = expect_request(&mut owner, read_from(1));
    let step = owner.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 6,
            tag: None,
        },
    );
    assert_eq!(
        step.events,
        vec![Event::Gap {
            client: OWNER,
            from: 1,
            to: 6
        }]
    );
    assert_eq!(owner.cursor(), 6);
    assert_eq!(owner.fold(), None);
    expect_request(&mut owner, read_from(6));
}

/// An `Appended` for a run record that leaves no room after it (`tail == offset`) is not an
/// acknowledgement of that record: the run is abandoned, nothing more of it is sent.
#[test]
fn a_run_record_ack_without_a_tail_after_it_abandons_the_run() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    let id = expect_request(&mut owner, read_from(1));
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 2,
        },
    );
    let (id, _) = owner.next_request().unwrap();
    let step = owner.on_reply(id, Reply::Appended { offset: 2, tail: 2 });
    assert!(step.events.is_empty());
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    assert_eq!(owner.next_request(), None);
}

/// An `Appended` for a run record at an offset other than the one it was conditional on is not
/// its acknowledgement either: the run is abandoned.
#[test]
fn a_run_record_ack_at_another_offset_abandons_the_run() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    let id = expect_request(&mut owner, read_from(1));
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 2,
        },
    );
    let (id, _) = owner.next_request().unwrap();
    let step = owner.on_reply(id, Reply::Appended { offset: 5, tail: 6 });
    assert!(step.events.is_empty());
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    assert_eq!(owner.next_request(), None);
}

/// `NotLeader` to the fence or to the checkpoint's truncate routes to the hint and the same
/// request is asked again (neither is dropped).
#[test]
fn not_leader_to_the_fence_or_the_truncate_is_retried() {
    let mut owner = Owner::new(OWNER, Token(2), Token(1), config());
    let fence = Request::Fence {
        new: Token(2),
        old: Token(1),
    };
    let id = expect_request(&mut owner, fence.clone());
    let step = owner.on_reply(id, Reply::NotLeader { hint: Some(2) });
    assert_eq!(step.route, Route::Leader(Some(2)));
    expect_request(&mut owner, fence);

    let (mut owner, _) = owner_with_written_run();
    let id = expect_request(&mut owner, truncate_to(4));
    let step = owner.on_reply(id, Reply::NotLeader { hint: Some(0) });
    assert_eq!(step.route, Route::Leader(Some(0)));
    expect_request(&mut owner, truncate_to(4));
}

/// An unknown outcome is not retried where a retry could duplicate: the application write is
/// dropped (it may have landed), a run record abandons the run; the owner then does the next op.
#[test]
fn unknown_outcomes_drop_the_write_and_abandon_the_run() {
    let mut owner = fenced_owner();
    for body in [b"a", b"b"] {
        owner
            .submit(OwnerOp::Write {
                body: body.to_vec(),
            })
            .unwrap();
    }
    let id = expect_request(&mut owner, fenced_append(None, b"a".to_vec()));
    assert!(!owner.on_unknown(id).ignored);
    let id = expect_request(&mut owner, fenced_append(None, b"b".to_vec()));
    owner.on_reply(id, Reply::Appended { offset: 3, tail: 4 });

    owner.submit(OwnerOp::Checkpoint).unwrap();
    let id = expect_request(&mut owner, read_from(1));
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 4,
        },
    );
    let (id, _) = owner.next_request().unwrap();
    assert!(!owner.on_unknown(id).ignored);
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    assert_eq!(owner.next_request(), None);
}

/// A read answered `NotLeader` or `NoReadIndex` routes to the hinted leader; a run record
/// answered `NotLeader` routes too and the same record is sent again (the run goes on).
#[test]
fn not_leader_to_a_read_or_a_run_record_routes_to_the_hint() {
    let mut owner = fenced_owner();
    owner.submit(OwnerOp::Checkpoint).unwrap();
    let id = expect_request(&mut owner, read_from(1));
    let step = owner.on_reply(id, Reply::NotLeader { hint: Some(1) });
    assert_eq!(step.route, Route::Leader(Some(1)));
    let id = expect_request(&mut owner, read_from(1));
    let step = owner.on_reply(id, Reply::NoReadIndex { hint: Some(2) });
    assert_eq!(step.route, Route::Leader(Some(2)));
    let id = expect_request(&mut owner, read_from(1));
    owner.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 2,
        },
    );
    let begin = fenced_append(Some(2), encode_run(Fold::empty(), 8)[0].encode());
    let id = expect_request(&mut owner, begin.clone());
    let step = owner.on_reply(id, Reply::NotLeader { hint: None });
    assert_eq!(step.route, Route::Leader(None));
    assert_eq!(owner.status(), OwnerStatus::Writing { begin: None });
    expect_request(&mut owner, begin);
}
