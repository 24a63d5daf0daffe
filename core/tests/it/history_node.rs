//! `Event::node()`: every event that names a node gives that node, every other event none.

use felix_core::api::{ReadFrom, Reply, Request};
use felix_core::history::{Event, Phase};
use felix_core::record::{Command, Entry, Token};

fn read() -> Request {
    Request::Read {
        from: ReadFrom::Earliest,
        max_records: 1,
    }
}

/// One event of each variant a node emits, each with its own node (none 0 or 1), so a variant
/// answering `None` or another variant's node fails here.
fn node_emitted_events() -> Vec<(u32, Event)> {
    vec![
        (
            10,
            Event::PromiseChanged {
                node: 10,
                term: 2,
                vote: Some(3),
            },
        ),
        (11, Event::BecameLeader { node: 11, term: 2 }),
        (
            12,
            Event::Committed {
                node: 12,
                entry: Entry {
                    offset: 4,
                    term: 2,
                    command: Command::Noop,
                },
            },
        ),
        (
            13,
            Event::FloorApplied {
                node: 13,
                floor: 4,
                trim: None,
            },
        ),
        (
            14,
            Event::TruncateRefused {
                node: 14,
                offset: 4,
                current: Token(3),
            },
        ),
        (
            15,
            Event::SegmentsDeleted {
                node: 15,
                below: 4,
                readable_start: 4,
                retention: false,
            },
        ),
        (
            16,
            Event::TrimmedToSent {
                node: 16,
                to: 3,
                point: 4,
            },
        ),
        (
            17,
            Event::Jumped {
                node: 17,
                point: 4,
                replica: true,
            },
        ),
    ]
}

/// One event of each variant the driver records about a node, each with its own node.
fn driver_node_events() -> Vec<(u32, Event)> {
    vec![
        (
            18,
            Event::NodeState {
                node: 18,
                term: 2,
                vote: None,
                leader: false,
                floor: 0,
                committed: 4,
                readable_start: 0,
                floor_tag: None,
            },
        ),
        (
            19,
            Event::DurablePromise {
                node: 19,
                term: 2,
                vote: None,
            },
        ),
        (
            20,
            Event::PromiseSent {
                node: 20,
                to: 3,
                term: 2,
                vote: Some(3),
            },
        ),
        (
            26,
            Event::DurableLog {
                node: 26,
                last: 4,
                term: 2,
            },
        ),
        (
            27,
            Event::AckSent {
                node: 27,
                to: 3,
                term: 2,
                matched: 4,
                matched_term: Some(2),
            },
        ),
        (21, Event::Crashed { node: 21 }),
        (22, Event::Restarted { node: 22 }),
        (
            23,
            Event::StoreCorrupt {
                node: 23,
                reason: "corrupt store file".into(),
            },
        ),
        (
            24,
            Event::Requested {
                client: 3,
                node: 24,
                request: read(),
            },
        ),
        (
            25,
            Event::Replied {
                client: 3,
                node: 25,
                request: read(),
                reply: Reply::NotLeader { hint: Some(3) },
            },
        ),
    ]
}

/// Every event that names no node (client and run events).
fn other_events() -> Vec<Event> {
    vec![
        Event::LeaseGranted {
            client: 3,
            epoch: 2,
        },
        Event::HolderRetired {
            client: 3,
            epoch: 2,
            newer_epoch: 4,
            by_tag: true,
        },
        Event::Gap {
            client: 3,
            from: 2,
            to: 4,
        },
        Event::Folded {
            client: 3,
            offset: 4,
            digest: 5,
        },
        Event::CheckpointRestored {
            client: 3,
            begin: 2,
            end: 4,
        },
        Event::CheckpointCompared {
            client: 3,
            begin: 2,
            end: 4,
            digest: 5,
            checkpoint_digest: 5,
        },
        Event::CheckpointWritten {
            client: 3,
            begin: 2,
            end: 4,
        },
        Event::OwnerStopped {
            client: 3,
            token: Token(2),
            current: Token(4),
        },
        Event::PhaseChanged { phase: Phase::End },
    ]
}

/// Each node-naming variant gives its own node.
#[test]
fn an_event_that_names_a_node_gives_it() {
    let mut events = node_emitted_events();
    events.extend(driver_node_events());
    assert_eq!(events.len(), 18);
    for (node, event) in events {
        assert_eq!(event.node(), Some(node), "{event:?}");
    }
}

/// Client and run events give no node.
#[test]
fn an_event_that_names_no_node_gives_none() {
    for event in other_events() {
        assert_eq!(event.node(), None, "{event:?}");
    }
}

/// The events that record a message sent give its receiver as `peer()`; no other event does.
#[test]
fn a_sent_message_names_its_receiver_and_nothing_else_a_peer() {
    let mut sent = 0;
    let mut events = node_emitted_events();
    events.extend(driver_node_events());
    let others = other_events().into_iter().map(|event| (0, event));
    for (_, event) in events.into_iter().chain(others) {
        match &event {
            Event::TrimmedToSent { to, .. }
            | Event::PromiseSent { to, .. }
            | Event::AckSent { to, .. } => {
                assert_ne!(Some(*to), event.node(), "{event:?}: pick a receiver apart");
                assert_eq!(event.peer(), Some(*to), "{event:?}");
                sent += 1;
            }
            _ => assert_eq!(event.peer(), None, "{event:?}"),
        }
    }
    assert_eq!(sent, 3);
}
