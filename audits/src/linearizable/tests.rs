//! Synthetic histories, one holding and one breaking, for each class of behaviour the checker
//! distinguishes.

use super::check::{check_history, Budget, Verdict};
use crate::test_support::{committed, noop};
use felix_core::api::{ReadFrom, ReadRecord, Reply, Request};
use felix_core::history::Event;
use felix_core::record::{Command, Entry, Headers, Offset};

fn append(body: &str, expected_tail: Option<Offset>) -> Request {
    Request::Append {
        expected_tail,
        fence: None,
        body: body.as_bytes().to_vec(),
        headers: Headers::with_epoch(1),
    }
}

fn trim(floor: Offset, expected_tail: Option<Offset>, epoch: u64) -> Request {
    Request::Trim {
        expected_tail,
        fence: None,
        floor,
        headers: Headers::with_epoch(epoch),
    }
}

fn read(from: Offset) -> Request {
    Request::Read {
        from: ReadFrom::Offset(from),
        max_records: 8,
    }
}

fn record(offset: Offset, body: &str) -> ReadRecord {
    ReadRecord {
        offset,
        body: body.as_bytes().to_vec(),
        headers: Headers::with_epoch(1),
    }
}

fn records(records: Vec<ReadRecord>, next: Offset) -> Reply {
    Reply::Records { records, next }
}

fn appended(offset: Offset) -> Reply {
    Reply::Appended {
        offset,
        tail: offset + 1,
    }
}

fn requested(client: u32, request: &Request) -> Event {
    Event::Requested {
        client,
        node: 0,
        request: request.clone(),
    }
}

fn replied(client: u32, request: &Request, reply: Reply) -> Event {
    Event::Replied {
        client,
        node: 0,
        request: request.clone(),
        reply,
    }
}

/// A request answered at once (request, then reply).
fn call(client: u32, request: Request, reply: Reply) -> [Event; 2] {
    [
        requested(client, &request),
        replied(client, &request, reply),
    ]
}

fn history(parts: Vec<Vec<Event>>) -> Vec<Event> {
    parts.into_iter().flatten().collect()
}

fn holds(history: &[Event]) {
    let verdict = check_history(history, Budget::DEFAULT);
    assert!(
        matches!(verdict, Verdict::Linearizable { .. }),
        "{verdict:?}"
    );
}

fn breaks(history: &[Event], expected_words: &str) -> String {
    match check_history(history, Budget::DEFAULT) {
        Verdict::NotLinearizable(finding) => {
            // The history's own numbering: each step reference is a history index.
            let message = crate::render_steps(&finding.message, &|index| index as u64);
            assert!(
                message.contains(expected_words),
                "{message} does not say {expected_words:?}"
            );
            message
        }
        other => panic!("expected a finding, got {other:?}"),
    }
}

/// An acknowledged write that a later read misses is lost; served, it holds.
#[test]
fn lost_acknowledged_write() {
    let write = call(1, append("a", Some(1)), appended(1)).to_vec();
    holds(&history(vec![
        write.clone(),
        call(2, read(1), records(vec![record(1, "a")], 2)).to_vec(),
    ]));
    breaks(
        &history(vec![write, call(2, read(1), records(vec![], 2)).to_vec()]),
        "where the log holds writes 1:\"a\"",
    );
}

/// A served record nobody requested is a phantom; one whose request never learned its outcome
/// appearing later is allowed (unknown, never failed).
#[test]
fn phantom_record_and_unknown_write_that_appears() {
    let unknown = append("x", None);
    holds(&history(vec![
        vec![requested(1, &unknown)],
        call(2, read(1), records(vec![record(1, "x")], 2)).to_vec(),
    ]));
    // The unknown write may also never land.
    holds(&history(vec![
        vec![requested(1, &unknown)],
        call(2, read(1), records(vec![], 1)).to_vec(),
    ]));
    breaks(
        &history(vec![
            call(2, read(1), records(vec![record(1, "x")], 2)).to_vec()
        ]),
        "past every landed record",
    );
}

/// Two acknowledged appends at one offset admit no order (no search needed).
#[test]
fn two_acknowledged_appends_at_one_offset() {
    holds(&history(vec![
        call(1, append("a", None), appended(1)).to_vec(),
        call(2, append("b", None), appended(2)).to_vec(),
    ]));
    let message = breaks(
        &history(vec![
            call(1, append("a", None), appended(1)).to_vec(),
            call(2, append("b", None), appended(1)).to_vec(),
        ]),
        "both landed at offset 1",
    );
    assert!(message.contains("client 1's Append \"a\""), "{message}");
    assert!(message.contains("client 2's Append \"b\""), "{message}");
    assert!(message.contains("at step 3"), "{message}");
}

/// A conditional append is acknowledged only at its expected tail.
#[test]
fn conditional_append_at_another_offset() {
    holds(&history(vec![
        call(1, append("a", Some(1)), appended(1)).to_vec(),
        call(1, append("b", Some(2)), appended(2)).to_vec(),
    ]));
    breaks(
        &history(vec![
            call(1, append("a", Some(1)), appended(1)).to_vec(),
            call(1, append("b", Some(3)), appended(2)).to_vec(),
        ]),
        "conditional on tail 3, acknowledged at 2",
    );
}

/// A read sent after a write was acknowledged must see it; a read concurrent with it need not.
#[test]
fn stale_read() {
    let write = append("a", None);
    let early = read(1);
    // The read was sent before the write was acknowledged: it may miss it.
    holds(&history(vec![
        vec![requested(1, &write), requested(2, &early)],
        vec![replied(1, &write, appended(1))],
        vec![replied(2, &early, records(vec![], 1))],
    ]));
    let message = breaks(
        &history(vec![
            call(1, write.clone(), appended(1)).to_vec(),
            call(2, read(1), records(vec![], 1)).to_vec(),
        ]),
        "admit no order",
    );
    assert!(message.contains("client 1's Append \"a\""), "{message}");
    assert!(message.contains("client 2's Read from 1"), "{message}");
}

/// A read serves every write in its range: skipping one is a finding.
#[test]
fn skipped_record() {
    let writes = history(vec![
        call(1, append("a", Some(1)), appended(1)).to_vec(),
        call(1, append("b", Some(2)), appended(2)).to_vec(),
    ]);
    let mut good = writes.clone();
    good.extend(call(
        2,
        read(1),
        records(vec![record(1, "a"), record(2, "b")], 3),
    ));
    holds(&good);
    let mut bad = writes;
    bad.extend(call(2, read(1), records(vec![record(2, "b")], 3)));
    breaks(&bad, "served writes 2:\"b\" in [1, 3)");
}

/// CursorTooOld names a floor that was in force, with the headers of the trim that set it.
#[test]
fn wrong_floor_or_tag_in_cursor_too_old() {
    let setup = history(vec![
        call(1, append("a", Some(1)), appended(1)).to_vec(),
        call(1, append("b", Some(2)), appended(2)).to_vec(),
        call(1, trim(2, Some(3), 1), appended(3)).to_vec(),
    ]);
    let with = |reply: Reply| {
        let mut events = setup.clone();
        events.extend(call(2, read(1), reply));
        events
    };
    holds(&with(Reply::CursorTooOld {
        floor: 2,
        tag: Some(Headers::with_epoch(1)),
    }));
    breaks(
        &with(Reply::CursorTooOld {
            floor: 2,
            tag: Some(Headers::with_epoch(2)),
        }),
        "never in force",
    );
    breaks(
        &with(Reply::CursorTooOld {
            floor: 3,
            tag: Some(Headers::with_epoch(1)),
        }),
        "never in force",
    );
    // Below the floor of a trim acknowledged before it, a read is refused, never served.
    breaks(
        &with(records(vec![record(1, "a"), record(2, "b")], 3)),
        "admit no order",
    );
}

/// A no-op trim answers with the tail it was conditional on (rule 4) and only at or below the
/// floor.
#[test]
fn no_op_trim_answered_with_a_wrong_tail() {
    let setup = call(1, append("a", Some(1)), appended(1)).to_vec();
    let with = |request: Request, reply: Reply| {
        let mut events = setup.clone();
        events.extend(call(1, request, reply));
        events
    };
    holds(&with(trim(1, Some(2), 1), Reply::TrimNoop { tail: 2 }));
    breaks(
        &with(trim(1, Some(2), 1), Reply::TrimNoop { tail: 3 }),
        "conditional on tail 2 answered with tail 3",
    );
    breaks(
        &with(trim(2, Some(2), 1), Reply::TrimNoop { tail: 2 }),
        "which the floor never reached",
    );
}

/// Two readers cannot see different records at one offset.
#[test]
fn two_readers_see_different_records() {
    let unknown_a = append("a", None);
    let unknown_b = append("b", None);
    let setup = vec![requested(1, &unknown_a), requested(3, &unknown_b)];
    let mut good = setup.clone();
    good.extend(call(2, read(1), records(vec![record(1, "a")], 2)));
    good.extend(call(
        4,
        read(1),
        records(vec![record(1, "a"), record(2, "b")], 3),
    ));
    holds(&good);
    let mut bad = setup;
    bad.extend(call(2, read(1), records(vec![record(1, "a")], 2)));
    bad.extend(call(4, read(1), records(vec![record(1, "b")], 2)));
    breaks(&bad, "admit");
}

/// A leader's noop nobody requested fills its slot (read off the committed log); without it an
/// acknowledgement past the tail has nothing below it.
#[test]
fn noops_come_from_the_committed_log() {
    let write = call(1, append("a", None), appended(2)).to_vec();
    holds(&history(vec![
        vec![committed(0, noop(1, 1))],
        write.clone(),
        vec![committed(
            0,
            Entry {
                offset: 2,
                term: 1,
                command: Command::Write {
                    body: b"a".to_vec(),
                    headers: Headers::with_epoch(1),
                },
            },
        )],
    ]));
    breaks(&history(vec![write]), "landed at 2");
}

/// Refusals are held only to what was asked: any tail but the expected one.
#[test]
fn refusals_name_something_else_than_what_was_asked() {
    holds(&history(vec![call(
        1,
        append("a", Some(5)),
        Reply::OffsetMismatch { tail: 9 },
    )
    .to_vec()]));
    breaks(
        &history(vec![call(
            1,
            append("a", Some(5)),
            Reply::OffsetMismatch { tail: 5 },
        )
        .to_vec()]),
        "naming its own expected tail 5",
    );
}

/// The search is budgeted by steps: over it, a history is unchecked, never passed.
#[test]
fn over_budget_is_unchecked() {
    // A stale read the candidate cannot settle (no committed log), searched with no steps.
    let events = history(vec![
        call(1, append("a", None), appended(1)).to_vec(),
        call(2, read(1), records(vec![], 1)).to_vec(),
    ]);
    let budget = Budget {
        search_steps_max: 0,
        ..Budget::DEFAULT
    };
    assert!(matches!(
        check_history(&events, budget),
        Verdict::Unchecked { .. }
    ));
    let budget = Budget {
        operations_max: 1,
        ..Budget::DEFAULT
    };
    assert!(matches!(
        check_history(&events, budget),
        Verdict::Unchecked { .. }
    ));
}

/// A pipelining client's answers, out of order, each pair with its own request: two writes in
/// flight at once, the second landing first, hold with the reads that saw them in that order;
/// a read that then misses the first acknowledged write breaks.
#[test]
fn a_pipelines_answers_pair_with_their_own_requests() {
    let first = append("a", None);
    let second = append("b", None);
    let both_sent = vec![requested(1, &first), requested(1, &second)];
    let answered = vec![
        replied(1, &second, appended(1)),
        replied(1, &first, appended(2)),
    ];
    holds(&history(vec![
        both_sent.clone(),
        answered.clone(),
        call(2, read(1), records(vec![record(1, "b"), record(2, "a")], 3)).to_vec(),
    ]));
    breaks(
        &history(vec![
            both_sent,
            answered,
            call(2, read(1), records(vec![record(1, "b")], 2)).to_vec(),
        ]),
        "client 1's Append \"a\" {epoch=1} (requested at step 0, answered Appended at 2",
    );
}
