//! The unit tests of `felix_sim::render::describe` (sim/src/render/describe.rs).

use felix_core::api::Reply;
use felix_core::history::Event;
use felix_sim::render::trace::{TraceEvent, TraceLine};

use felix_core::api::{ReadFrom, Request};
use felix_core::Token;
use felix_sim::render::describe::*;

/// A trace line renders as one readable sentence with its step and time.
#[test]
fn renders_a_refusal() {
    let text = trace_line(&TraceLine {
        step: 7,
        time: 1_500_000,
        event: TraceEvent::History(Event::Replied {
            client: 1,
            node: 2,
            request: Request::Read {
                from: ReadFrom::Offset(3),
                max_records: 8,
            },
            reply: Reply::CursorTooOld {
                floor: 9,
                tag: None,
            },
        }),
    });
    assert!(
        text.contains("n2 -> c1: CursorTooOld floor 9 untagged"),
        "{text}"
    );
    assert!(text.trim_start().starts_with("7  "), "{text}");
    assert!(text.contains("1.500000s"), "{text}");
}

/// The events `explain` once rendered with `Debug` read as words.
#[test]
fn client_events_read_as_words() {
    let stopped = Event::OwnerStopped {
        client: 0,
        token: Token(5),
        current: Token(6),
    };
    assert_eq!(
        event(&stopped, &ById),
        "c0: stopped (token 5, fence in force 6)"
    );
    let written = Event::CheckpointWritten {
        client: 2,
        begin: 4,
        end: 7,
    };
    assert!(!event(&written, &ById).contains('{'));
}
