//! The unit tests of `felix_sim::render::story` (sim/src/render/story.rs).

use super::line;
use felix_core::history::Event;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine};
use std::collections::BTreeSet;

use felix_core::api::{Reply, Request};
use felix_core::record::{Command, Entry};
use felix_core::Token;
use felix_sim::render::story::*;

/// The AckBeforeSync shape: a client's fence, its commit and acknowledgement, two crashes (one
/// losing nothing, left out), a new leader's noop at the same offset. Three parties, three
/// lines, in the order they first act, equal phrases merged.
#[test]
fn regroups_the_why_by_party() {
    let fence = Request::Fence {
        new: Token(2),
        old: Token(0),
    };
    let committed = |node, term, command| {
        TraceEvent::History(Event::Committed {
            node,
            entry: Entry {
                offset: 2,
                term,
                command,
            },
        })
    };
    let trace: Vec<TraceLine> = vec![
        line(
            0,
            TraceEvent::History(Event::Requested {
                client: 1,
                node: 1,
                request: fence.clone(),
            }),
        ),
        line(1, committed(1, 1, Command::Noop)),
        line(2, TraceEvent::History(Event::Crashed { node: 0 })),
        line(
            3,
            TraceEvent::Sim(SimEvent::DiskLost {
                node: 0,
                ops_lost: 1,
                torn: true,
            }),
        ),
        line(4, TraceEvent::History(Event::Crashed { node: 1 })),
        line(
            5,
            TraceEvent::Sim(SimEvent::DiskLost {
                node: 1,
                ops_lost: 0,
                torn: false,
            }),
        ),
        line(
            6,
            TraceEvent::History(Event::Replied {
                client: 1,
                node: 1,
                request: fence,
                reply: Reply::Appended { offset: 2, tail: 3 },
            }),
        ),
        line(7, TraceEvent::History(Event::Crashed { node: 1 })),
        line(
            8,
            TraceEvent::History(Event::BecameLeader { node: 0, term: 6 }),
        ),
        line(9, committed(0, 6, Command::Noop)),
    ];
    let why: Vec<usize> = (0..trace.len()).collect();
    let told = story(&trace, &why, &BTreeSet::new());
    assert_eq!(
        told,
        vec![
            "c1: asked n1: Fence 0->2 (step 0); answered by n1: Appended at 2 (tail 3) (step 6).",
            "n1: committed 2@1 noop (step 1); crashed (steps 4, 7).",
            "n0: crashed (step 2); lost 1 unsynced storage ops, last record torn (step 3); became leader of term 6 (step 8); committed 2@6 noop (step 9).",
        ]
    );
    // A why of one event tells no story.
    assert!(story(&trace, &[2], &BTreeSet::new()).is_empty());
}

/// More parties than lines: the last line names the rest with their counts.
#[test]
fn names_the_parties_left_over() {
    let trace: Vec<TraceLine> = (0..7)
        .map(|node| {
            line(
                node,
                TraceEvent::History(Event::Crashed { node: node as u32 }),
            )
        })
        .collect();
    let why: Vec<usize> = (0..7).collect();
    let told = story(&trace, &why, &BTreeSet::new());
    assert_eq!(told.len(), STORY_LINES_MAX);
    assert_eq!(told[0], "n0: crashed (step 0).");
    assert_eq!(
        told[STORY_LINES_MAX - 1],
        "also involved: n4 (1 event), n5 (1 event), n6 (1 event)."
    );
    // The party acting at a named step gets a line even though it acts last.
    let told = story(&trace, &why, &BTreeSet::from([6]));
    assert_eq!(told[3], "n6: crashed (step 6).");
    assert_eq!(
        told[STORY_LINES_MAX - 1],
        "also involved: n3 (1 event), n4 (1 event), n5 (1 event)."
    );
    assert_eq!(
        steps_text(&[1, 2, 3, 4, 5]),
        "steps 1, 2, 3, 4, ... (5 times)"
    );
}
