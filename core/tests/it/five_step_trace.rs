//! The first seed's five-step trace ("The trace"), replayed on the real core: three brokers, two
//! lease holders, a small deterministic in-test driver.
//!
//! The seed numbers positions from 1 with no leader noop; here the leader's noop takes offset 1,
//! so every position is one higher: holder 2's fenced write lands at 2, its trim (floor 3, its own
//! offset) at 3; holder 1 read the stream to tail 2 before the lease moved.
//!
//! With every rule on, holder 1's fenced write is refused, it re-reads from its own cursor (2),
//! is refused with `CursorTooOld` tagged epoch 2, and retires. With `HiddenTrims` or `Untagged`
//! (no tag), and with the `ReadFromEarliest` and `TailFromRefusal` twins, holder 1 writes and
//! trims after holder 2, breaking StaleTrimRefused.
//!
//! Two variants of the trace cover the broker-side rules the holder leans on: a stale no-op trim
//! (rule 4; the `NoopSkip` twin leaks the new tail) and a fenced write deleted by retention with no
//! trim involved (rule 5; the `Retention` twin). The driver is `client_driver::Cluster`.

use crate::client_driver::{Cluster, Exchange};
use felix_core::api::{ClientId, ReadFrom, Reply, Request};
use felix_core::client::{Client, Holder, HolderConfig, HolderOp, HolderStatus};
use felix_core::history::Event;
use felix_core::{Command, Entry, Headers, Offset, Rules, TwinName};

const HOLDER_1: ClientId = 1;
const HOLDER_2: ClientId = 2;

fn holder_config() -> HolderConfig {
    HolderConfig {
        read_batch_max: 16,
        ops_max: 4,
    }
}

fn epoch_of(entry: &Entry) -> Option<u64> {
    match &entry.command {
        Command::Write { headers, .. } | Command::Trim { headers, .. } => headers.epoch(),
        Command::Fence { .. } | Command::Noop => None,
    }
}

/// StaleTrimRefused over a committed log: the first committed write or trim of a holder that
/// follows a committed write of a newer holder, as (offset, its epoch, the newer epoch).
fn stale_trim_refused_violation(committed: &[Entry]) -> Option<(Offset, u64, u64)> {
    let mut newest_write_epoch = 0;
    for entry in committed {
        let Some(epoch) = epoch_of(entry) else {
            continue;
        };
        if epoch < newest_write_epoch {
            return Some((entry.offset, epoch, newest_write_epoch));
        }
        if matches!(entry.command, Command::Write { .. }) {
            newest_write_epoch = newest_write_epoch.max(epoch);
        }
    }
    None
}

fn read(from: Offset) -> Request {
    Request::Read {
        from: ReadFrom::Offset(from),
        max_records: 16,
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

fn trim(epoch: u64, tail: Offset) -> Request {
    Request::Trim {
        expected_tail: Some(tail),
        fence: None,
        floor: tail,
        headers: Headers::with_epoch(epoch),
    }
}

/// Steps 1–3 of the trace; returns the cluster and holder 1, paused after reading to tail 2.
fn first_three_steps(rules: Rules) -> (Cluster, Holder) {
    let config = holder_config();
    let mut cluster = Cluster::new(rules);
    // Step 1: holder 1 has the lease (epoch 1), reads the stream to its tail, and pauses before
    // writing anything. The lease moves to holder 2; nobody tells holder 1.
    cluster.history.push(Event::LeaseGranted {
        client: HOLDER_1,
        epoch: 1,
    });
    let mut holder_1 = Holder::new(HOLDER_1, 1, 1, rules, config);
    let (id, request) = holder_1.next_request().expect("holder 1 reads");
    assert_eq!(request, read(1));
    let reply = cluster.request(HOLDER_1, id, request);
    assert_eq!(
        reply,
        Reply::Records {
            records: vec![],
            next: 2
        }
    );
    assert!(holder_1.on_reply(id, reply).events.is_empty());
    assert_eq!(holder_1.status(), HolderStatus::Fencing);
    cluster.history.push(Event::LeaseGranted {
        client: HOLDER_2,
        epoch: 2,
    });
    // Steps 2 and 3: holder 2 makes its fenced write at 2, then trims with floor 3 (its own
    // offset: everything below is old history once there is a snapshot).
    let mut holder_2 = Holder::new(HOLDER_2, 2, 1, rules, config);
    holder_2
        .submit(HolderOp::Trim { floor: u64::MAX })
        .expect("room for a trim");
    let (exchanges, events) = cluster.run_client(&mut holder_2, 8);
    assert!(events.is_empty());
    assert_eq!(
        exchanges,
        vec![
            (
                read(1),
                Reply::Records {
                    records: vec![],
                    next: 2
                }
            ),
            (fenced_write(2, 2), Reply::Appended { offset: 2, tail: 3 }),
            (trim(2, 3), Reply::Appended { offset: 3, tail: 4 }),
        ]
    );
    assert_eq!(
        cluster.brokers[0].floor(),
        3,
        "the trim moved the floor to 3"
    );
    (cluster, holder_1)
}

/// Step 4 and 5 for holder 1, which wakes up wanting to trim: returns its exchanges, its events
/// and the leader's committed log afterwards.
fn holder_1_wakes_up(rules: Rules) -> (Vec<Exchange>, Vec<Event>, Vec<Entry>) {
    let (mut cluster, mut holder_1) = first_three_steps(rules);
    holder_1
        .submit(HolderOp::Trim { floor: u64::MAX })
        .expect("room for a trim");
    let (exchanges, events) = cluster.run_client(&mut holder_1, 8);
    (exchanges, events, cluster.committed(0))
}

/// The committed log a stale holder leaves when it writes (4) and trims (5) after holder 2.
fn assert_stale_holder_wrote_after_holder_2(committed: &[Entry]) {
    let epochs: Vec<(Offset, Option<u64>)> = committed
        .iter()
        .map(|entry| (entry.offset, epoch_of(entry)))
        .collect();
    assert_eq!(
        epochs,
        vec![
            (1, None),
            (2, Some(2)),
            (3, Some(2)),
            (4, Some(1)),
            (5, Some(1))
        ]
    );
    assert!(matches!(committed[3].command, Command::Write { .. }));
    assert!(matches!(
        committed[4].command,
        Command::Trim { floor: 5, .. }
    ));
    assert_eq!(stale_trim_refused_violation(committed), Some((4, 1, 2)));
}

/// Every rule on: holder 1 is refused, re-reads from its own cursor, is refused as too old with
/// a tag naming epoch 2, and retires; nothing of epoch 1 is ever committed.
#[test]
fn every_rule_on_holder_1_retires_on_the_tag() {
    let (exchanges, events, committed) = holder_1_wakes_up(Rules::default());
    assert_eq!(
        exchanges,
        vec![
            (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
            (
                read(2),
                Reply::CursorTooOld {
                    floor: 3,
                    tag: Some(Headers::with_epoch(2))
                }
            ),
        ]
    );
    assert_eq!(
        events,
        vec![Event::HolderRetired {
            client: HOLDER_1,
            epoch: 1,
            newer_epoch: 2,
            by_tag: true
        }]
    );
    assert_eq!(committed.len(), 3);
    assert_eq!(stale_trim_refused_violation(&committed), None);
}

/// HiddenTrims (the design before the fix) and Untagged: the refusal carries no tag; holder 1
/// reports the gap, resumes at the floor, sees only the skipped trim, and writes and trims after
/// holder 2 — the trim hid the fence.
#[test]
fn without_the_tag_holder_1_writes_and_trims_after_holder_2() {
    for twin in [TwinName::HiddenTrims, TwinName::Untagged] {
        let (exchanges, events, committed) = holder_1_wakes_up(Rules::twin(twin));
        assert_eq!(
            exchanges,
            vec![
                (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
                (
                    read(2),
                    Reply::CursorTooOld {
                        floor: 3,
                        tag: None
                    }
                ),
                (
                    read(3),
                    Reply::Records {
                        records: vec![],
                        next: 4
                    }
                ),
                (fenced_write(1, 4), Reply::Appended { offset: 4, tail: 5 }),
                (trim(1, 5), Reply::Appended { offset: 5, tail: 6 }),
            ],
            "{twin}"
        );
        assert_eq!(
            events,
            vec![Event::Gap {
                client: HOLDER_1,
                from: 2,
                to: 3
            }],
            "{twin}"
        );
        assert_stale_holder_wrote_after_holder_2(&committed);
    }
}

/// ReadFromEarliest: the re-read resolves to the floor, is never refused, never tagged.
#[test]
fn read_from_earliest_holder_1_writes_after_holder_2() {
    let (exchanges, events, committed) = holder_1_wakes_up(Rules::twin(TwinName::ReadFromEarliest));
    assert_eq!(
        exchanges[..2],
        [
            (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
            (
                Request::Read {
                    from: ReadFrom::Earliest,
                    max_records: 16
                },
                Reply::Records {
                    records: vec![],
                    next: 4
                }
            ),
        ]
    );
    assert!(events.is_empty());
    assert_stale_holder_wrote_after_holder_2(&committed);
}

/// TailFromRefusal: holder 1 adopts the refusal's tail and writes straight after holder 2.
#[test]
fn tail_from_refusal_holder_1_writes_after_holder_2() {
    let (exchanges, events, committed) = holder_1_wakes_up(Rules::twin(TwinName::TailFromRefusal));
    assert_eq!(
        exchanges[..2],
        [
            (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
            (fenced_write(1, 4), Reply::Appended { offset: 4, tail: 5 }),
        ]
    );
    assert!(events.is_empty());
    assert_stale_holder_wrote_after_holder_2(&committed);
}

/// The driver is deterministic: the same rules give the same history, event for event.
#[test]
fn the_trace_is_deterministic() {
    let run = |rules: Rules| {
        let (mut cluster, mut holder_1) = first_three_steps(rules);
        holder_1
            .submit(HolderOp::Trim { floor: u64::MAX })
            .expect("room");
        cluster.run_client(&mut holder_1, 8);
        cluster.history
    };
    assert_eq!(run(Rules::default()), run(Rules::default()));
    assert_ne!(run(Rules::default()), run(Rules::twin(TwinName::Untagged)));
}

fn write(epoch: u64, tail: Offset, body: &[u8]) -> Request {
    Request::Append {
        expected_tail: Some(tail),
        fence: None,
        body: body.to_vec(),
        headers: Headers::with_epoch(epoch),
    }
}

/// A variant of the trace for rule 4: holder 1 fenced at 2 and trimmed to 3 (it is serving, tail
/// 4), then the lease moves; holder 2 is refused as too old with holder 1's own tag (epoch 1, not
/// news), reports the gap, and makes its fenced write at 4. Holder 1 wakes with a trim at or below
/// the floor (a no-op) and a write. Returns holder 1's exchanges, events, and node 0's commits.
fn noop_trim_variant(rules: Rules) -> (Vec<Exchange>, Vec<Event>, Vec<Entry>) {
    let mut cluster = Cluster::new(rules);
    let mut holder_1 = Holder::new(HOLDER_1, 1, 1, rules, holder_config());
    holder_1.submit(HolderOp::Trim { floor: 3 }).expect("room");
    let (exchanges, _) = cluster.run_client(&mut holder_1, 8);
    assert_eq!(
        exchanges[2],
        (trim(1, 3), Reply::Appended { offset: 3, tail: 4 })
    );
    assert_eq!(holder_1.status(), HolderStatus::Serving);
    let mut holder_2 = Holder::new(HOLDER_2, 2, 1, rules, holder_config());
    let (exchanges, events) = cluster.run_client(&mut holder_2, 8);
    assert_eq!(
        exchanges[0],
        (
            read(1),
            Reply::CursorTooOld {
                floor: 3,
                tag: Some(Headers::with_epoch(1))
            }
        )
    );
    assert_eq!(
        events,
        vec![Event::Gap {
            client: HOLDER_2,
            from: 1,
            to: 3
        }]
    );
    assert_eq!(
        exchanges[2],
        (fenced_write(2, 4), Reply::Appended { offset: 4, tail: 5 })
    );
    holder_1.submit(HolderOp::Trim { floor: 2 }).expect("room");
    holder_1
        .submit(HolderOp::Write {
            body: b"late".to_vec(),
        })
        .expect("room");
    let (exchanges, events) = cluster.run_client(&mut holder_1, 8);
    (exchanges, events, cluster.committed(0))
}

/// Rule 4 on: holder 1's no-op trim is checked against the tail and refused; it re-reads from its
/// cursor, reads holder 2's fenced write and retires.
#[test]
fn noop_trim_checks_the_tail_and_holder_1_retires() {
    let (exchanges, events, committed) = noop_trim_variant(Rules::default());
    let mut noop_trim = trim(1, 4);
    if let Request::Trim { floor, .. } = &mut noop_trim {
        *floor = 2;
    }
    assert_eq!(exchanges[0], (noop_trim, Reply::OffsetMismatch { tail: 5 }));
    assert_eq!(exchanges[1].0, read(4));
    assert_eq!(
        events,
        vec![Event::HolderRetired {
            client: HOLDER_1,
            epoch: 1,
            newer_epoch: 2,
            by_tag: false
        }]
    );
    assert_eq!(stale_trim_refused_violation(&committed), None);
}

/// NoopSkip: the no-op trim answers with the new tail unchecked; holder 1 takes it and writes
/// after holder 2.
#[test]
fn noop_skip_leaks_the_tail_and_holder_1_writes_after_holder_2() {
    let (exchanges, events, committed) = noop_trim_variant(Rules::twin(TwinName::NoopSkip));
    assert_eq!(exchanges[0].1, Reply::TrimNoop { tail: 5 });
    assert_eq!(
        exchanges[1],
        (write(1, 5, b"late"), Reply::Appended { offset: 5, tail: 6 })
    );
    assert!(events.is_empty());
    assert_eq!(stale_trim_refused_violation(&committed), Some((5, 1, 2)));
}

/// A variant of the trace for rule 5: no trim at all. Holder 2 makes its fenced write at 2, then
/// leadership moves six times (six noops, 3..=8). With retention on, the segment holding the
/// fenced write (1..=4) is deleted, so holder 1's re-read from 2 is refused untagged and it writes
/// after holder 2; with retention off, it reads the fenced write and retires.
fn retention_variant(rules: Rules) -> (Vec<Exchange>, Vec<Event>, Vec<Entry>) {
    let (mut cluster, mut holder_1) = {
        let mut cluster = Cluster::new(rules);
        let mut holder_1 = Holder::new(HOLDER_1, 1, 1, rules, holder_config());
        let (exchanges, _) = cluster.run_client(&mut holder_1, 1);
        assert_eq!(
            exchanges,
            vec![(
                read(1),
                Reply::Records {
                    records: vec![],
                    next: 2
                }
            )]
        );
        (cluster, holder_1)
    };
    let mut holder_2 = Holder::new(HOLDER_2, 2, 1, rules, holder_config());
    let (exchanges, _) = cluster.run_client(&mut holder_2, 8);
    assert_eq!(
        exchanges[1],
        (fenced_write(2, 2), Reply::Appended { offset: 2, tail: 3 })
    );
    for node in [1, 2, 0, 1, 2, 0] {
        cluster.elect(node);
    }
    assert_eq!(cluster.brokers[0].committed(), 8);
    holder_1
        .submit(HolderOp::Write {
            body: b"late".to_vec(),
        })
        .expect("room");
    let (exchanges, events) = cluster.run_client(&mut holder_1, 8);
    (exchanges, events, cluster.committed(0))
}

/// Retention off (rule 5): the fenced write is still there to read; holder 1 retires.
#[test]
fn retention_off_keeps_the_fenced_write_and_holder_1_retires() {
    let (exchanges, events, committed) = retention_variant(Rules::default());
    assert_eq!(
        exchanges[0],
        (fenced_write(1, 2), Reply::OffsetMismatch { tail: 9 })
    );
    assert_eq!(exchanges[1].0, read(2));
    assert_eq!(
        events,
        vec![Event::HolderRetired {
            client: HOLDER_1,
            epoch: 1,
            newer_epoch: 2,
            by_tag: false
        }]
    );
    assert_eq!(stale_trim_refused_violation(&committed), None);
}

/// Retention: the fenced write was deleted with no trim involved; the refusal has no tag to carry
/// and holder 1 writes after holder 2.
#[test]
fn retention_deletes_the_fence_and_holder_1_writes_after_holder_2() {
    let (exchanges, events, committed) = retention_variant(Rules::twin(TwinName::Retention));
    assert_eq!(
        exchanges[..3],
        [
            (fenced_write(1, 2), Reply::OffsetMismatch { tail: 9 }),
            (
                read(2),
                Reply::CursorTooOld {
                    floor: 5,
                    tag: None
                }
            ),
            (
                read(5),
                Reply::Records {
                    records: vec![],
                    next: 9
                }
            ),
        ]
    );
    assert_eq!(
        events,
        vec![Event::Gap {
            client: HOLDER_1,
            from: 2,
            to: 5
        }]
    );
    assert_eq!(stale_trim_refused_violation(&committed), Some((9, 1, 2)));
}
