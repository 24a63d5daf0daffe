//! Regression: the history of `felix replay --seed 63706` on main at c11684e (every rule on), the
//! NoReadBelowFloor alarm a 200,000-seed sweep found.
//!
//! `data/seed-63706-c11684e.jsonl` is that run's history (one `Event` per line) up to the alarm:
//! node 1 crashed, restarted with its floor back at 1 (floors are volatile until the walk reapplies
//! them) and served client 0 the records 2..5 for a read from 1. The old audit bounded a read by
//! `min(acknowledged floor, the serving node's floor)` and paired the reply with an older identical
//! read sent before the crash, assuming the oldest candidate had the lowest bound: the restart
//! broke that assumption, and the alarm named the wrong reason ("floor 5, which it had applied").
//! In the seed's meaning the reply *is* a violation, for a reason the old audit could not see: a
//! trim asking for floor 5 had been acknowledged (history step 311) before the oldest of client 0's
//! identical unanswered reads was sent (and one asking for floor 10, step 434, before the later
//! ones), and the old core served from the restarted node's own state (no read index). The core now
//! serves reads at a read index, and `sim/tests/it/read_index.rs` holds the same seed clean. These
//! tests pin that the audit judges the history by acknowledgements and send order only: no restart,
//! crash or node floor moves it.

use felix_audits::no_read_below_floor::check;
use felix_audits::NO_READ_BELOW_FLOOR;
use felix_core::api::{ReadRecord, Reply};
use felix_core::history::Event;

fn history() -> Vec<Event> {
    include_str!("data/seed-63706-c11684e.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a history event of the fixture"))
        .collect()
}

/// The history step of node 1's reply of records 2..5 (trace step 573).
const REPLY_STEP: usize = 557;

/// The reply is matched to the oldest identical unanswered read and judged against the floor of
/// the trims acknowledged before that read was sent (5), and nothing else is reported.
#[test]
fn the_restarted_node_reply_is_judged_by_the_acknowledged_floor() {
    let history = history();
    assert!(matches!(
        &history[REPLY_STEP],
        Event::Replied {
            client: 0,
            node: 1,
            reply: Reply::Records { .. },
            ..
        }
    ));
    let violations = check(&history);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].invariant, NO_READ_BELOW_FLOOR);
    assert_eq!(violations[0].step, REPLY_STEP);
    assert_eq!(
        violations[0].text(),
        "node 1 served client 0 the record at offset 2 below floor 5, set by a trim acknowledged \
         at step 311, before the read was sent"
    );
}

/// Crashes, restarts and every node-floor report can be removed from the history without
/// changing the verdict: the restart cannot confuse the audit any more.
#[test]
fn restarts_and_node_floors_do_not_move_the_verdict() {
    let history = history();
    let without_nodes: Vec<Event> = history
        .iter()
        .filter(|event| {
            !matches!(
                event,
                Event::Crashed { .. }
                    | Event::Restarted { .. }
                    | Event::FloorApplied { .. }
                    | Event::NodeState { .. }
            )
        })
        .cloned()
        .collect();
    // Steps shift when events are removed; the rest of the verdict must not.
    let verdict = |events: &[Event]| -> Vec<(String, felix_audits::Invariant)> {
        check(events)
            .into_iter()
            .map(|violation| {
                let reason = violation
                    .message
                    .split(", set by")
                    .next()
                    .map(str::to_string);
                (reason.unwrap_or_default(), violation.invariant)
            })
            .collect()
    };
    assert_eq!(verdict(&history), verdict(&without_nodes));
    assert_eq!(verdict(&history).len(), 1);
}

/// The same history with the restarted node serving at or above the acknowledged floor holds: no
/// false alarm from the pairing of identical reads across the restart.
#[test]
fn a_reply_at_the_acknowledged_floor_holds() {
    let mut history = history();
    let Event::Replied { reply, .. } = &mut history[REPLY_STEP] else {
        panic!("the fixture's reply step moved");
    };
    *reply = Reply::Records {
        records: vec![ReadRecord {
            offset: 10,
            body: b"w938138".to_vec(),
            headers: Default::default(),
        }],
        next: 11,
    };
    assert_eq!(check(&history), vec![]);
}
