//! The unit tests of `felix_sim::render::why` (sim/src/render/why.rs).

use super::line;
use felix_core::api::{Reply, Request};
use felix_core::history::Event;
use felix_core::rules::Invariant;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine};

use felix_core::api::ReadFrom;
use felix_sim::render::why::*;

/// The causal why follows what the finding names: the acknowledgement and the commit it names
/// by step, the request the acknowledgement answered, the commit at the named offset on another
/// node, the crash of the acknowledging node in between; not another client's request, not a
/// crash of an uninvolved node, not a commit at another offset.
#[test]
fn causal_picks_what_the_finding_names() {
    use felix_core::record::{Command, Entry};
    use felix_core::Token;
    let committed = |node, offset| {
        TraceEvent::History(Event::Committed {
            node,
            entry: Entry {
                offset,
                term: 1,
                command: Command::Noop,
            },
        })
    };
    let fence = Request::Fence {
        new: Token(1),
        old: Token(0),
    };
    let trace: Vec<TraceLine> = [
        TraceEvent::History(Event::Requested {
            client: 2,
            node: 1,
            request: fence.clone(),
        }),
        TraceEvent::History(Event::Requested {
            client: 1,
            node: 1,
            request: fence.clone(),
        }),
        committed(1, 2),
        committed(1, 3),
        TraceEvent::History(Event::Crashed { node: 1 }),
        TraceEvent::History(Event::Crashed { node: 2 }),
        TraceEvent::History(Event::Replied {
            client: 1,
            node: 1,
            request: fence,
            reply: Reply::Appended { offset: 2, tail: 3 },
        }),
        committed(0, 2),
    ]
    .into_iter()
    .enumerate()
    .map(|(step, event)| line(step as u64, event))
    .collect();
    let named = Named::of(
        "client 1 was told its Fence landed at offset 2 (step 6), but node 0 committed noop there (step 7)",
        Some(7),
        &[1],
    );
    assert_eq!(
        causal(&named, &trace, 7, WHY_LINES_MAX),
        Some(vec![1, 2, 4, 6, 7])
    );
    // At most two: the events named, the latest first.
    assert_eq!(causal(&named, &trace, 7, 2), Some(vec![6, 7]));
    // Nothing to follow beyond its own step: the kind filter answers instead.
    let bare = Named::of("node 0 is stuck", Some(7), &[]);
    assert_eq!(causal(&bare, &trace, 7, WHY_LINES_MAX), None);
}

/// For StaleTrimRefused the silent lease move and the stale holder's refusal are picked even
/// far before the violation; a commit on a node is not.
#[test]
fn stale_trim_refused_picks_the_lease_move_and_the_refusal() {
    let trace = vec![
        line(
            0,
            TraceEvent::Sim(SimEvent::LeaseMoved {
                from: Some(0),
                to: 1,
                epoch: 2,
                told: false,
            }),
        ),
        line(
            1,
            TraceEvent::History(Event::BecameLeader { node: 0, term: 1 }),
        ),
        line(
            2,
            TraceEvent::History(Event::Replied {
                client: 0,
                node: 0,
                request: Request::Read {
                    from: ReadFrom::Offset(1),
                    max_records: 4,
                },
                reply: Reply::CursorTooOld {
                    floor: 3,
                    tag: None,
                },
            }),
        ),
    ];
    let picked = lines(Invariant::StaleTrimRefused, &[0], &trace, 2, WHY_LINES_MAX);
    assert_eq!(picked, vec![0, 2]);
}
