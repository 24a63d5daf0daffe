//! Engine tests of a pipelining owner (`OwnerConfig::writes_in_flight_max` above 1): several
//! fenced application writes in flight at once, answered in any order, and every other request
//! sent alone once the writes in flight are answered.

use felix_core::api::{ReadFrom, Reply, Request, RequestId};
use felix_core::client::checkpoint::OwnerOp;
use felix_core::client::{Client, Owner, OwnerConfig, OwnerStatus, Route};
use felix_core::history::Event;
use felix_core::{Headers, Token};

const OWNER: u32 = 3;

fn config(writes_in_flight_max: usize) -> OwnerConfig {
    OwnerConfig {
        read_batch_max: 8,
        chunk_bytes: 8,
        chunks_max: 4,
        ops_max: 6,
        writes_in_flight_max,
    }
}

fn write(body: &[u8]) -> Request {
    Request::Append {
        expected_tail: None,
        fence: Some(Token(2)),
        body: body.to_vec(),
        headers: Headers::default(),
    }
}

/// An owner with `max` writes in flight at most, fenced (Token(2) replacing Token(1)), with
/// `bodies` submitted as writes.
fn pipelining_owner(max: usize, bodies: &[&[u8]]) -> Owner {
    let mut owner = Owner::new(OWNER, Token(2), Token(1), config(max));
    let (id, request) = owner.next_request().expect("the fence");
    assert!(matches!(request, Request::Fence { .. }));
    assert_eq!(owner.next_request(), None, "the fence goes out alone");
    owner.on_reply(id, Reply::Appended { offset: 1, tail: 2 });
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    for body in bodies {
        owner
            .submit(OwnerOp::Write {
                body: body.to_vec(),
            })
            .expect("room for the write");
    }
    owner
}

/// Sends every request the owner has now; returns (id, request) in order.
fn send_all(owner: &mut Owner) -> Vec<(RequestId, Request)> {
    std::iter::from_fn(|| owner.next_request()).collect()
}

/// Up to the bound of writes go out at once, each with a fresh id; an answer to any of them (out
/// of order) makes room for the next, and the oldest in flight is the one `in_flight` names.
#[test]
fn writes_go_out_up_to_the_bound_and_answers_come_in_any_order() {
    let mut owner = pipelining_owner(3, &[b"a", b"b", b"c", b"d"]);
    let sent = send_all(&mut owner);
    let requests: Vec<Request> = sent.iter().map(|(_, request)| request.clone()).collect();
    assert_eq!(requests, vec![write(b"a"), write(b"b"), write(b"c")]);
    assert!(sent.windows(2).all(|pair| pair[0].0 < pair[1].0));
    assert_eq!(owner.in_flight(), Some(sent[0].0));
    let step = owner.on_reply(sent[1].0, Reply::Appended { offset: 3, tail: 4 });
    assert!(!step.ignored);
    assert_eq!(
        owner.on_reply(sent[1].0, Reply::Appended { offset: 3, tail: 4 }),
        felix_core::client::Step::ignored(),
        "an answer already taken is a late duplicate"
    );
    let more = send_all(&mut owner);
    assert_eq!(more.len(), 1);
    assert_eq!(more[0].1, write(b"d"));
    assert!(more[0].0 > sent[2].0);
    owner.on_reply(sent[0].0, Reply::Appended { offset: 2, tail: 3 });
    assert_eq!(owner.in_flight(), Some(sent[2].0));
    assert_eq!(send_all(&mut owner), vec![], "nothing left to send");
}

/// A write answered `NotLeader` goes out again, first, with its own body; a write whose outcome
/// is unknown is dropped (it may have landed), never sent twice.
#[test]
fn not_leader_resends_the_write_and_an_unknown_one_is_dropped() {
    let mut owner = pipelining_owner(2, &[b"a", b"b", b"c"]);
    let sent = send_all(&mut owner);
    assert_eq!(sent.len(), 2);
    let step = owner.on_reply(sent[1].0, Reply::NotLeader { hint: Some(2) });
    assert_eq!(step.route, Route::Leader(Some(2)));
    let again = send_all(&mut owner);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].1, write(b"b"), "the refused write, before c");
    assert!(!owner.on_unknown(sent[0].0).ignored);
    let next = send_all(&mut owner);
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].1, write(b"c"), "a is dropped, not sent again");
    owner.on_reply(again[0].0, Reply::Appended { offset: 2, tail: 3 });
    owner.on_reply(next[0].0, Reply::Appended { offset: 3, tail: 4 });
    assert_eq!(owner.in_flight(), None);
    assert_eq!(send_all(&mut owner), vec![]);
}

/// A checkpoint behind the writes waits until every write in flight is answered, then reads
/// alone; no write goes out while the read is in flight.
#[test]
fn a_checkpoint_waits_for_the_writes_in_flight_and_goes_alone() {
    let mut owner = pipelining_owner(4, &[b"a", b"b"]);
    owner.submit(OwnerOp::Checkpoint).unwrap();
    owner
        .submit(OwnerOp::Write {
            body: b"c".to_vec(),
        })
        .unwrap();
    let sent = send_all(&mut owner);
    assert_eq!(sent.len(), 2, "the checkpoint is next: it waits");
    owner.on_reply(sent[0].0, Reply::Appended { offset: 2, tail: 3 });
    assert_eq!(send_all(&mut owner), vec![]);
    owner.on_reply(
        sent[1].0,
        Reply::Invalid(felix_core::api::InvalidRequest::TooLarge { bytes: 9, limit: 8 }),
    );
    let read = send_all(&mut owner);
    assert_eq!(
        read.len(),
        1,
        "the read goes alone, the write behind it waits"
    );
    assert_eq!(
        read[0].1,
        Request::Read {
            from: ReadFrom::Offset(1),
            max_records: 8,
        }
    );
}

/// A fence refusal of one write stops the owner: the answers to the other writes in flight are
/// ignored, and it asks nothing more.
#[test]
fn a_fence_refusal_stops_the_pipeline() {
    let mut owner = pipelining_owner(3, &[b"a", b"b", b"c"]);
    let sent = send_all(&mut owner);
    assert_eq!(sent.len(), 3);
    let step = owner.on_reply(sent[1].0, Reply::FenceMismatch { current: Token(5) });
    assert_eq!(
        step.events,
        vec![Event::OwnerStopped {
            client: OWNER,
            token: Token(2),
            current: Token(5),
        }]
    );
    assert!(owner.is_finished());
    assert!(
        owner
            .on_reply(sent[0].0, Reply::Appended { offset: 2, tail: 3 })
            .ignored
    );
    assert!(owner.on_unknown(sent[2].0).ignored);
    assert_eq!(owner.next_request(), None);
    assert_eq!(
        owner.submit(OwnerOp::Write {
            body: b"d".to_vec()
        }),
        Err(OwnerOp::Write {
            body: b"d".to_vec()
        })
    );
}

/// The writes in flight count against `ops_max`: a full pipeline plus the queue is full.
#[test]
fn writes_in_flight_count_against_the_queue_bound() {
    let mut owner = pipelining_owner(3, &[b"a", b"b", b"c", b"d", b"e", b"f"]);
    assert_eq!(send_all(&mut owner).len(), 3);
    let refused = owner.submit(OwnerOp::Write {
        body: b"g".to_vec(),
    });
    assert!(
        refused.is_err(),
        "3 in flight and 3 waiting: 6 is the bound"
    );
    let mut single = pipelining_owner(1, &[b"a", b"b", b"c", b"d", b"e", b"f"]);
    assert_eq!(send_all(&mut single).len(), 1);
    let refused = single.submit(OwnerOp::Write {
        body: b"g".to_vec(),
    });
    assert!(
        refused.is_err(),
        "1 in flight and 5 waiting: 6 is the bound"
    );
}
