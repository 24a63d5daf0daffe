//! Engine tests of the lease holder (felixd): set up a holder, deliver one reply, assert the exact
//! request and events that come out. Covers the holder rules 1–4 (`client/mod.rs`) and their twins.

use felix_core::api::{InvalidRequest, ReadFrom, ReadRecord, Reply, Request, RequestId};
use felix_core::client::{
    Client, Holder, HolderConfig, HolderOp, HolderStatus, Route, SubmitError,
};
use felix_core::history::Event;
use felix_core::{Headers, Offset, Rules, TwinName};

const HOLDER: u32 = 7;
const BATCH: u32 = 4;

fn config() -> HolderConfig {
    HolderConfig {
        read_batch_max: BATCH,
        ops_max: 4,
    }
}

fn write(offset: Offset, epoch: u64) -> ReadRecord {
    ReadRecord {
        offset,
        body: format!("w{offset}").into_bytes(),
        headers: Headers::with_epoch(epoch),
    }
}

fn read(from: Offset) -> Request {
    Request::Read {
        from: ReadFrom::Offset(from),
        max_records: BATCH,
    }
}

fn fenced_write(epoch: u64, tail: Offset) -> Request {
    Request::Append {
        expected_tail: Some(tail),
        fence: None,
        body: Holder::fenced_write_body(epoch),
        headers: Headers::with_epoch(epoch),
    }
}

/// Sends the next request, asserting it is `expected`; returns its id.
fn expect_request(holder: &mut Holder, expected: Request) -> RequestId {
    let (id, request) = holder.next_request().expect("a request");
    assert_eq!(request, expected);
    assert_eq!(holder.next_request(), None, "at most one request in flight");
    id
}

/// A holder of `epoch` that read an empty stream (tail 1) and is about to make its fenced write.
fn fencing_holder(epoch: u64, rules: Rules) -> Holder {
    let mut holder = Holder::new(HOLDER, epoch, 1, rules, config());
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 1,
        },
    );
    assert!(step.events.is_empty());
    assert_eq!(holder.status(), HolderStatus::Fencing);
    holder
}

/// A holder of `epoch` whose fenced write landed at 1: serving with tail 2.
fn serving_holder(epoch: u64, rules: Rules) -> Holder {
    let mut holder = fencing_holder(epoch, rules);
    let id = expect_request(&mut holder, fenced_write(epoch, 1));
    let step = holder.on_reply(id, Reply::Appended { offset: 1, tail: 2 });
    assert!(step.events.is_empty());
    assert_eq!(holder.status(), HolderStatus::Serving);
    holder
}

/// A new holder reads from its cursor to the tail, in batches, then makes its fenced write
/// conditional on the tail it read, epoch in the headers.
#[test]
fn reads_to_the_tail_then_makes_its_fenced_write() {
    let mut holder = Holder::new(HOLDER, 3, 1, Rules::default(), config());
    let id = expect_request(&mut holder, read(1));
    // A full batch: not at the tail yet.
    let full = vec![write(1, 1), write(2, 1), write(4, 2), write(5, 2)];
    let step = holder.on_reply(
        id,
        Reply::Records {
            records: full,
            next: 6,
        },
    );
    assert!(step.events.is_empty());
    assert_eq!(holder.status(), HolderStatus::Reading);
    let id = expect_request(&mut holder, read(6));
    let step = holder.on_reply(
        id,
        Reply::Records {
            records: vec![write(6, 2)],
            next: 8,
        },
    );
    assert!(step.events.is_empty());
    assert_eq!(holder.tail(), Some(8));
    expect_request(&mut holder, fenced_write(3, 8));
}

/// Rule 1, first half: a holder that reads a write from a newer epoch retires and asks nothing.
#[test]
fn retires_on_reading_a_newer_write() {
    let mut holder = Holder::new(HOLDER, 1, 1, Rules::default(), config());
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(
        id,
        Reply::Records {
            records: vec![write(1, 2)],
            next: 2,
        },
    );
    assert_eq!(
        step.events,
        vec![Event::HolderRetired {
            client: HOLDER,
            epoch: 1,
            newer_epoch: 2,
            by_tag: false
        }]
    );
    assert_eq!(
        holder.status(),
        HolderStatus::Retired {
            newer_epoch: 2,
            by_tag: false
        }
    );
    assert!(holder.is_finished());
    assert_eq!(holder.next_request(), None);
    assert_eq!(
        holder.submit(HolderOp::Write { body: vec![1] }),
        Err(SubmitError::Retired)
    );
}

/// The seed's trace with every rule on: holder 1's fenced write is refused, it re-reads from its
/// own cursor (1), is refused as too old with a tag naming epoch 2, and retires.
#[test]
fn refused_holder_rereads_from_cursor_and_retires_on_the_tag() {
    let mut holder = fencing_holder(1, Rules::default());
    let id = expect_request(&mut holder, fenced_write(1, 1));
    let step = holder.on_reply(id, Reply::OffsetMismatch { tail: 3 });
    assert!(step.events.is_empty());
    assert_eq!(holder.tail(), None, "the tail never comes from a refusal");
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 2,
            tag: Some(Headers::with_epoch(2)),
        },
    );
    assert_eq!(
        step.events,
        vec![Event::HolderRetired {
            client: HOLDER,
            epoch: 1,
            newer_epoch: 2,
            by_tag: true
        }]
    );
    assert_eq!(holder.next_request(), None);
}

/// Untagged / HiddenTrims (the broker sends no tag): the holder reports the gap, resumes at the
/// floor, finds only a skipped trim and writes after holder 2 — the bug the tag fixes.
#[test]
fn untagged_refusal_moves_to_the_floor_and_the_holder_writes_on() {
    let mut holder = fencing_holder(1, Rules::twin(TwinName::Untagged));
    let id = expect_request(&mut holder, fenced_write(1, 1));
    holder.on_reply(id, Reply::OffsetMismatch { tail: 3 });
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 2,
            tag: None,
        },
    );
    assert_eq!(
        step.events,
        vec![Event::Gap {
            client: HOLDER,
            from: 1,
            to: 2
        }]
    );
    let id = expect_request(&mut holder, read(2));
    holder.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 3,
        },
    );
    expect_request(&mut holder, fenced_write(1, 3));
}

/// A tag with an older or equal epoch is not news: the holder moves to the floor and reads on.
#[test]
fn a_tag_from_an_older_epoch_does_not_retire() {
    let mut holder = Holder::new(HOLDER, 2, 1, Rules::default(), config());
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 5,
            tag: Some(Headers::with_epoch(1)),
        },
    );
    assert_eq!(
        step.events,
        vec![Event::Gap {
            client: HOLDER,
            from: 1,
            to: 5
        }]
    );
    expect_request(&mut holder, read(5));
}

/// Rule 3's twin (TailFromRefusal): the holder adopts OffsetMismatch.tail and writes straight
/// after the new holder without reading.
#[test]
fn tail_from_refusal_twin_adopts_the_refusals_tail() {
    let mut holder = fencing_holder(1, Rules::twin(TwinName::TailFromRefusal));
    let id = expect_request(&mut holder, fenced_write(1, 1));
    holder.on_reply(id, Reply::OffsetMismatch { tail: 3 });
    assert_eq!(holder.tail(), Some(3));
    expect_request(&mut holder, fenced_write(1, 3));
}

/// Rule 2's twin (ReadFromEarliest): after a refusal the holder re-reads from `Earliest`, which
/// resolves to the floor and carries no tag; later batches continue from the reply's `next`.
#[test]
fn read_from_earliest_twin_rereads_from_earliest() {
    let mut holder = fencing_holder(1, Rules::twin(TwinName::ReadFromEarliest));
    let id = expect_request(&mut holder, fenced_write(1, 1));
    holder.on_reply(id, Reply::OffsetMismatch { tail: 3 });
    let id = expect_request(
        &mut holder,
        Request::Read {
            from: ReadFrom::Earliest,
            max_records: BATCH,
        },
    );
    let step = holder.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 3,
        },
    );
    assert!(step.events.is_empty());
    expect_request(&mut holder, fenced_write(1, 3));
}

/// Serving: writes and trims are conditional on the tail; a trim's floor is clamped to the offset
/// it lands at; acknowledged answers move the tail.
#[test]
fn serving_holder_writes_and_trims_under_the_tail_check() {
    let mut holder = serving_holder(2, Rules::default());
    holder
        .submit(HolderOp::Write {
            body: b"x".to_vec(),
        })
        .unwrap();
    holder.submit(HolderOp::Trim { floor: 100 }).unwrap();
    let id = expect_request(
        &mut holder,
        Request::Append {
            expected_tail: Some(2),
            fence: None,
            body: b"x".to_vec(),
            headers: Headers::with_epoch(2),
        },
    );
    holder.on_reply(id, Reply::Appended { offset: 2, tail: 3 });
    let id = expect_request(
        &mut holder,
        Request::Trim {
            expected_tail: Some(3),
            fence: None,
            floor: 3,
            headers: Headers::with_epoch(2),
        },
    );
    holder.on_reply(id, Reply::Appended { offset: 3, tail: 4 });
    assert_eq!(holder.tail(), Some(4));
    assert_eq!(holder.cursor(), 4);
    assert_eq!(holder.ops_waiting(), 0);
    assert_eq!(holder.next_request(), None, "no work, nothing to ask");
}

/// Rule 4 (client side): a no-op trim's answer is an acknowledged answer; its tail is taken.
/// With the broker's check on, it equals the tail the holder expected.
#[test]
fn noop_trim_answer_gives_the_tail() {
    let mut holder = serving_holder(2, Rules::default());
    holder.submit(HolderOp::Trim { floor: 1 }).unwrap();
    let id = expect_request(
        &mut holder,
        Request::Trim {
            expected_tail: Some(2),
            fence: None,
            floor: 1,
            headers: Headers::with_epoch(2),
        },
    );
    let step = holder.on_reply(id, Reply::TrimNoop { tail: 2 });
    assert!(step.events.is_empty());
    assert_eq!(holder.tail(), Some(2));
    assert_eq!(holder.ops_waiting(), 0);
}

/// An unknown outcome of the fenced write forgets the tail; reading its own write back (its own
/// epoch) tells the holder it landed, and it serves from after it.
#[test]
fn unknown_fenced_write_is_learned_by_reading_it_back() {
    let mut holder = fencing_holder(2, Rules::default());
    let id = expect_request(&mut holder, fenced_write(2, 1));
    let step = holder.on_unknown(id);
    assert!(step.events.is_empty());
    assert_eq!(holder.status(), HolderStatus::Reading);
    let id = expect_request(&mut holder, read(1));
    holder.on_reply(
        id,
        Reply::Records {
            records: vec![write(1, 2)],
            next: 2,
        },
    );
    assert_eq!(holder.status(), HolderStatus::Serving);
    holder
        .submit(HolderOp::Write {
            body: b"y".to_vec(),
        })
        .unwrap();
    expect_request(
        &mut holder,
        Request::Append {
            expected_tail: Some(2),
            fence: None,
            body: b"y".to_vec(),
            headers: Headers::with_epoch(2),
        },
    );
}

/// Routing: NotLeader names the hint, NotHeld asks another node; the same read is asked again.
#[test]
fn redirects_are_routed_and_retried() {
    let mut holder = Holder::new(HOLDER, 1, 1, Rules::default(), config());
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(id, Reply::NotLeader { hint: Some(2) });
    assert_eq!(step.route, Route::Leader(Some(2)));
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(id, Reply::NotHeld { from: 1 });
    assert_eq!(step.route, Route::AnotherNode);
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(
        id,
        Reply::Invalid(InvalidRequest::ReadPastTail { from: 1, tail: 0 }),
    );
    assert_eq!(step.route, Route::AnotherNode);
    expect_request(&mut holder, read(1));
}

/// Replies for ids not in flight are ignored and change nothing; a reply of the wrong kind is
/// handled as an unknown outcome (re-read), never a panic.
#[test]
fn stale_and_wrong_replies_are_harmless() {
    let mut holder = fencing_holder(1, Rules::default());
    assert!(
        holder
            .on_reply(99, Reply::Appended { offset: 1, tail: 2 })
            .ignored
    );
    assert!(holder.on_unknown(99).ignored);
    let id = expect_request(&mut holder, fenced_write(1, 1));
    // Records for an append, and an Appended at an offset it did not ask for.
    let step = holder.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 1,
        },
    );
    assert!(!step.ignored);
    assert_eq!(holder.status(), HolderStatus::Reading);
    let id = expect_request(&mut holder, read(1));
    // A malformed batch: records out of order.
    holder.on_reply(
        id,
        Reply::Records {
            records: vec![write(3, 1), write(2, 1)],
            next: 4,
        },
    );
    assert_eq!(holder.status(), HolderStatus::Reading);
    let id = expect_request(&mut holder, read(1));
    holder.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 1,
        },
    );
    let id = expect_request(&mut holder, fenced_write(1, 1));
    holder.on_reply(id, Reply::Appended { offset: 5, tail: 6 });
    assert_eq!(holder.status(), HolderStatus::Reading);
}

/// The operation queue is bounded by `ops_max`.
#[test]
fn submit_is_bounded() {
    let mut holder = serving_holder(1, Rules::default());
    for _ in 0..4 {
        holder.submit(HolderOp::Write { body: vec![] }).unwrap();
    }
    assert_eq!(
        holder.submit(HolderOp::Write { body: vec![] }),
        Err(SubmitError::Full)
    );
}

/// The holder reports what it was built with and what waits: its epoch, and every submitted
/// operation until it is answered.
#[test]
fn accessors_report_the_epoch_and_the_waiting_ops() {
    let mut holder = serving_holder(3, Rules::default());
    assert_eq!(holder.epoch(), 3);
    assert_eq!(holder.client_id(), HOLDER);
    assert_eq!(holder.ops_waiting(), 0);
    holder.submit(HolderOp::Write { body: vec![1] }).unwrap();
    holder.submit(HolderOp::Trim { floor: 1 }).unwrap();
    assert_eq!(holder.ops_waiting(), 2);
}

/// The fenced write is recognisable in a trace: its body names the holder's epoch.
#[test]
fn the_fenced_write_body_names_its_epoch() {
    assert_eq!(
        Holder::fenced_write_body(7),
        b"fenced write of epoch 7".to_vec()
    );
    assert_ne!(Holder::fenced_write_body(7), Holder::fenced_write_body(8));
}

/// A `TrimNoop` is an answer to a trim only: to a write it is handled as an unknown outcome
/// (the write is dropped, the tail forgotten and re-read), never taken as the tail.
#[test]
fn a_trim_noop_to_a_write_is_not_a_tail() {
    let mut holder = serving_holder(2, Rules::default());
    holder.submit(HolderOp::Write { body: vec![1] }).unwrap();
    let (id, _) = holder.next_request().unwrap();
    holder.on_reply(id, Reply::TrimNoop { tail: 9 });
    assert_eq!(holder.tail(), None);
    assert_eq!(holder.ops_waiting(), 0);
    expect_request(&mut holder, read(2));
}

/// A write answered `NotLeader` is routed to the hint and sent again, conditional on the same
/// tail (nothing was learned about the stream).
#[test]
fn a_write_answered_not_leader_is_retried() {
    let mut holder = serving_holder(2, Rules::default());
    holder.submit(HolderOp::Write { body: vec![1] }).unwrap();
    let write = Request::Append {
        expected_tail: Some(2),
        fence: None,
        body: vec![1],
        headers: Headers::with_epoch(2),
    };
    let id = expect_request(&mut holder, write.clone());
    let step = holder.on_reply(id, Reply::NotLeader { hint: Some(1) });
    assert_eq!(step.route, Route::Leader(Some(1)));
    assert_eq!(holder.tail(), Some(2));
    expect_request(&mut holder, write);
}

/// `Invalid` to a submitted write drops that write (a bad request is never retried); `Invalid`
/// to the fenced write drops nothing that was submitted. Either way the holder re-reads.
#[test]
fn invalid_drops_the_submitted_op_but_not_the_queue() {
    let mut holder = serving_holder(2, Rules::default());
    holder.submit(HolderOp::Write { body: vec![1] }).unwrap();
    let (id, _) = holder.next_request().unwrap();
    holder.on_reply(
        id,
        Reply::Invalid(InvalidRequest::FloorAboveOffset {
            floor: 3,
            offset: 2,
        }),
    );
    assert_eq!(holder.ops_waiting(), 0);
    assert_eq!(holder.tail(), None);

    let mut holder = fencing_holder(2, Rules::default());
    holder.submit(HolderOp::Write { body: vec![1] }).unwrap();
    let id = expect_request(&mut holder, fenced_write(2, 1));
    holder.on_reply(
        id,
        Reply::Invalid(InvalidRequest::FloorAboveOffset {
            floor: 3,
            offset: 2,
        }),
    );
    assert_eq!(holder.ops_waiting(), 1);
    assert_eq!(holder.status(), HolderStatus::Reading);
}

/// ReadFromEarliest twin: the re-read from `Earliest` moves the cursor up to the reply's `next`
/// when that is ahead of it (what it read is behind it now).
#[test]
fn a_read_from_earliest_moves_the_cursor_up() {
    let mut holder = fencing_holder(1, Rules::twin(TwinName::ReadFromEarliest));
    let id = expect_request(&mut holder, fenced_write(1, 1));
    holder.on_reply(id, Reply::OffsetMismatch { tail: 3 });
    let (id, _) = holder.next_request().unwrap();
    holder.on_reply(
        id,
        Reply::Records {
            records: vec![write(2, 0)],
            next: 3,
        },
    );
    assert_eq!(holder.cursor(), 3);
}

/// A read answer that is not a batch from the cursor (a repeated offset, a record at or past
/// `next`, a record below the cursor) is handled as an unknown outcome: nothing learned from it
/// (no tail, the cursor stays), the holder reads again.
#[test]
fn a_malformed_batch_teaches_the_holder_nothing() {
    let mut holder = Holder::new(HOLDER, 3, 2, Rules::default(), config());
    for (records, next) in [
        (vec![write(2, 1), write(2, 1)], 4),
        (vec![write(2, 1), write(4, 1)], 4),
        (vec![write(1, 1), write(3, 1)], 4),
    ] {
        let id = expect_request(&mut holder, read(2));
        holder.on_reply(id, Reply::Records { records, next });
        assert_eq!(holder.cursor(), 2);
        assert_eq!(holder.tail(), None);
    }
    expect_request(&mut holder, read(2));
}

/// A refusal tagged with the holder's own epoch is not a newer epoch: no retirement, the holder
/// moves to the floor and reads on.
#[test]
fn a_tag_with_its_own_epoch_does_not_retire() {
    let mut holder = Holder::new(HOLDER, 2, 1, Rules::default(), config());
    let id = expect_request(&mut holder, read(1));
    let step = holder.on_reply(
        id,
        Reply::CursorTooOld {
            floor: 4,
            tag: Some(Headers::with_epoch(2)),
        },
    );
    assert_eq!(
        step.events,
        vec![Event::Gap {
            client: HOLDER,
            from: 1,
            to: 4
        }]
    );
    expect_request(&mut holder, read(4));
}

/// ReadFromEarliest twin: a re-read from `Earliest` whose `next` is below the cursor leaves the
/// cursor where it is (it never goes back).
#[test]
fn a_read_from_earliest_behind_the_cursor_keeps_it() {
    let mut holder = Holder::new(
        HOLDER,
        1,
        5,
        Rules::twin(TwinName::ReadFromEarliest),
        config(),
    );
    let id = expect_request(&mut holder, read(5));
    holder.on_reply(
        id,
        Reply::Records {
            records: vec![],
            next: 5,
        },
    );
    let id = expect_request(&mut holder, fenced_write(1, 5));
    holder.on_reply(id, Reply::OffsetMismatch { tail: 6 });
    let (id, _) = holder.next_request().unwrap();
    holder.on_reply(
        id,
        Reply::Records {
            records: vec![write(2, 0)],
            next: 3,
        },
    );
    assert_eq!(holder.cursor(), 5);
    assert_eq!(holder.tail(), Some(3));
}
