//! Property test: no sequence of replies, however wrong, makes a client panic or break the driver
//! contract (at most one request in flight, strictly increasing request ids, a finished client
//! asks nothing, stale ids are ignored).

use felix_core::api::{InvalidRequest, ReadRecord, Reply};
use felix_core::client::checkpoint::{encode_run, OwnerOp};
use felix_core::client::{
    Client, Fold, Folder, Holder, HolderConfig, HolderOp, Owner, OwnerConfig, Reader,
};
use felix_core::{Headers, Rules, Token, TwinName};
use proptest::prelude::*;

fn headers() -> impl Strategy<Value = Option<Headers>> {
    prop_oneof![
        Just(None),
        (0u64..4).prop_map(|epoch| Some(Headers::with_epoch(epoch))),
        Just(Some(Headers::default())),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    let run: Vec<Vec<u8>> = encode_run(Fold::empty(), 8)
        .iter()
        .map(|record| record.encode())
        .collect();
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..6),
        proptest::sample::select(run),
    ]
}

fn record() -> impl Strategy<Value = ReadRecord> {
    (0u64..12, body(), headers()).prop_map(|(offset, body, headers)| ReadRecord {
        offset,
        body,
        headers: headers.unwrap_or_default(),
    })
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        (0u64..12, 0u64..12).prop_map(|(offset, tail)| Reply::Appended { offset, tail }),
        (0u64..12).prop_map(|tail| Reply::TrimNoop { tail }),
        (0u64..12).prop_map(|tail| Reply::OffsetMismatch { tail }),
        (0u64..4).prop_map(|token| Reply::FenceMismatch {
            current: Token(token)
        }),
        (0u64..4).prop_map(|token| Reply::TruncateRefused {
            current: Token(token)
        }),
        (proptest::collection::vec(record(), 0..5), 0u64..12)
            .prop_map(|(records, next)| Reply::Records { records, next }),
        (0u64..12, headers()).prop_map(|(floor, tag)| Reply::CursorTooOld { floor, tag }),
        (0u64..12).prop_map(|from| Reply::NotHeld { from }),
        proptest::option::of(0u32..3).prop_map(|hint| Reply::NotLeader { hint }),
        (0u64..12, 0u64..12)
            .prop_map(|(from, tail)| Reply::Invalid(InvalidRequest::ReadPastTail { from, tail })),
        (0u64..12, 0u64..12).prop_map(|(floor, offset)| Reply::Invalid(
            InvalidRequest::FloorAboveOffset { floor, offset }
        )),
    ]
}

#[derive(Clone, Debug)]
enum Action {
    Ask,
    Reply(Reply),
    StaleReply(Reply),
    Unknown,
    Submit(u8),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => Just(Action::Ask),
        6 => reply().prop_map(Action::Reply),
        1 => reply().prop_map(Action::StaleReply),
        1 => Just(Action::Unknown),
        2 => any::<u8>().prop_map(Action::Submit),
    ]
}

/// Drives `client` through `actions`, checking the driver contract after each one.
fn drive<C: Client>(client: &mut C, actions: &[Action], mut submit: impl FnMut(&mut C, u8)) {
    let mut last_id = 0;
    let mut in_flight = None;
    for action in actions {
        match action {
            Action::Ask => match client.next_request() {
                Some((id, _)) => {
                    assert!(
                        in_flight.is_none(),
                        "a second request while one is in flight"
                    );
                    assert!(id > last_id, "request ids increase");
                    assert!(!client.is_finished(), "a finished client asked");
                    last_id = id;
                    in_flight = Some(id);
                }
                None => assert!(in_flight.is_some() || client.in_flight().is_none()),
            },
            Action::Reply(reply) => {
                if let Some(id) = in_flight.take() {
                    client.on_reply(id, reply.clone());
                }
            }
            Action::StaleReply(reply) => {
                let before = client.in_flight();
                let step = client.on_reply(last_id + 1000, reply.clone());
                assert!(step.ignored && step.events.is_empty());
                assert_eq!(client.in_flight(), before);
            }
            Action::Unknown => {
                if let Some(id) = in_flight.take() {
                    client.on_unknown(id);
                }
            }
            Action::Submit(seed) => submit(client, *seed),
        }
        assert_eq!(
            client.in_flight(),
            in_flight,
            "the client and the driver agree on what is in flight"
        );
    }
}

/// Drives a pipelining `client` (at most `max` requests in flight) through `actions`: a reply
/// answers the newest request in flight, an unknown outcome the oldest, so answers come out of
/// order; the contract is checked after each action.
fn drive_pipeline<C: Client>(
    client: &mut C,
    actions: &[Action],
    max: usize,
    mut submit: impl FnMut(&mut C, u8),
) {
    let mut last_id = 0;
    let mut in_flight: Vec<u64> = Vec::new();
    for action in actions {
        match action {
            Action::Ask => match client.next_request() {
                Some((id, _)) => {
                    assert!(in_flight.len() < max, "more than {max} requests in flight");
                    assert!(id > last_id, "request ids increase");
                    assert!(!client.is_finished(), "a finished client asked");
                    last_id = id;
                    in_flight.push(id);
                }
                None => assert!(in_flight.len() < max || client.in_flight().is_some()),
            },
            Action::Reply(reply) => {
                if let Some(id) = in_flight.pop() {
                    client.on_reply(id, reply.clone());
                }
            }
            Action::StaleReply(reply) => {
                let step = client.on_reply(last_id + 1000, reply.clone());
                assert!(step.ignored && step.events.is_empty());
            }
            Action::Unknown => {
                if !in_flight.is_empty() {
                    client.on_unknown(in_flight.remove(0));
                }
            }
            Action::Submit(seed) => submit(client, *seed),
        }
        if !client.is_finished() {
            assert_eq!(
                client.in_flight(),
                in_flight.first().copied(),
                "the client and the driver agree on the oldest request in flight"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Pipelining owners (up to four writes in flight) survive any reply sequence answered out of
    /// order, and never keep more in flight than their bound.
    #[test]
    fn pipelining_owner_never_panics(
        actions in proptest::collection::vec(action(), 0..60),
        max in 1usize..5,
    ) {
        let config = OwnerConfig {
            read_batch_max: 3,
            chunk_bytes: 8,
            chunks_max: 4,
            ops_max: 6,
            writes_in_flight_max: max,
        };
        let mut owner = Owner::new(1, Token(2), Token(1), config);
        drive_pipeline(&mut owner, &actions, max, |owner, seed| {
            let op = match seed % 4 {
                0 | 3 => OwnerOp::Write { body: vec![seed] },
                1 => OwnerOp::Checkpoint,
                _ => OwnerOp::Truncate { floor: u64::from(seed % 12) },
            };
            let _ = owner.submit(op);
        });
    }

    /// Holders (every rule on, and two twins) survive any reply sequence.
    #[test]
    fn holder_never_panics(actions in proptest::collection::vec(action(), 0..60), twin in 0usize..3) {
        let rules = match twin {
            0 => Rules::default(),
            1 => Rules::twin(TwinName::TailFromRefusal),
            _ => Rules::twin(TwinName::ReadFromEarliest),
        };
        let config = HolderConfig { read_batch_max: 3, ops_max: 3 };
        let mut holder = Holder::new(1, 2, 1, rules, config);
        drive(&mut holder, &actions, |holder, seed| {
            let op = if seed % 2 == 0 {
                HolderOp::Write { body: vec![seed] }
            } else {
                HolderOp::Trim { floor: u64::from(seed % 12) }
            };
            let _ = holder.submit(op);
        });
    }

    /// Owners survive any reply sequence, crashes inside runs included.
    #[test]
    fn owner_never_panics(actions in proptest::collection::vec(action(), 0..60), crash in 0usize..5) {
        let config = OwnerConfig { read_batch_max: 3, chunk_bytes: 8, chunks_max: 4, ops_max: 3, writes_in_flight_max: 1 };
        let mut owner = Owner::new(1, Token(2), Token(1), config);
        if crash > 0 {
            owner.crash_inside_run(crash);
        }
        drive(&mut owner, &actions, |owner, seed| {
            let op = match seed % 3 {
                0 => OwnerOp::Write { body: vec![seed] },
                1 => OwnerOp::Checkpoint,
                _ => OwnerOp::Truncate { floor: u64::from(seed % 12) },
            };
            let _ = owner.submit(op);
            owner.set_trim_limit((seed % 5 > 0).then_some(u64::from(seed % 12)));
        });
    }

    /// Readers and folders survive any reply sequence and never move their cursor back.
    #[test]
    fn readers_never_panic(actions in proptest::collection::vec(action(), 0..60)) {
        let mut reader = Reader::new(1, 1, 3);
        drive(&mut reader, &actions, |_, _| {});
        let mut folder = Folder::new(2, 3, 4);
        let mut cursor = folder.cursor();
        drive(&mut folder, &actions, |folder, _| {
            assert!(folder.cursor() >= cursor);
            cursor = folder.cursor();
        });
    }
}
