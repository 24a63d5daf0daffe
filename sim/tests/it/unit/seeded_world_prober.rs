//! The unit tests of `felix_sim::seeded::world::prober` (sim/src/seeded/world/prober.rs).

use felix_core::api::{ReadFrom, Reply, Request};
use felix_core::client::{Client, Route};
use felix_core::{Headers, Offset};

use felix_sim::seeded::world::prober::*;

/// A planned probe goes out once; a reply that routes it elsewhere plans it again (a bounded
/// number of times); any other reply ends it.
#[test]
fn a_probe_is_retried_only_where_the_reply_points() {
    let mut prober = Prober::new(7);
    assert_eq!(prober.next_request(), None);
    prober.plan(Probe::ReadEarliest);
    let (id, request) = prober
        .next_request()
        .unwrap_or((0, Probe::ReadFromZero.request(0)));
    assert!(matches!(
        request,
        Request::Read {
            from: ReadFrom::Earliest,
            ..
        }
    ));
    assert_eq!(prober.next_request(), None);
    let step = prober.on_reply(id, Reply::NotLeader { hint: Some(2) });
    assert_eq!(step.route, Route::Leader(Some(2)));
    let (again, _) = prober
        .next_request()
        .unwrap_or((0, Probe::ReadFromZero.request(0)));
    assert!(again > id);
    assert!(prober.on_reply(id, Reply::NotHeld { from: 1 }).ignored);
    let step = prober.on_reply(
        again,
        Reply::CursorTooOld {
            floor: 1,
            tag: None,
        },
    );
    assert_eq!(step.route, Route::Any);
    assert_eq!(prober.next_request(), None);
    for index in 0..Probe::KINDS_AT_EDGES {
        assert_ne!(Probe::of(index, 0), Probe::of(index + 1, 0));
    }
}

/// The trim past itself asks at the last tail a reply named, for the floor one past it; a
/// mismatch naming a new tail makes it ask again there, an `Invalid` ends it.
#[test]
fn the_trim_past_itself_follows_the_tail() {
    let trim_at = |tail: Offset| Request::Trim {
        expected_tail: Some(tail),
        fence: None,
        floor: tail + 1,
        headers: Headers::default(),
    };
    let mut prober = Prober::new(7);
    prober.plan(Probe::TrimPastItself);
    let (id, request) = prober
        .next_request()
        .unwrap_or((0, Probe::ReadEarliest.request(0)));
    assert_eq!(request, trim_at(0));
    prober.on_reply(id, Reply::OffsetMismatch { tail: 12 });
    let (again, request) = prober
        .next_request()
        .unwrap_or((0, Probe::ReadEarliest.request(0)));
    assert_eq!(request, trim_at(12));
    // The same tail again: the tail did not move, so asking again would only repeat it.
    prober.on_reply(again, Reply::OffsetMismatch { tail: 12 });
    assert_eq!(prober.next_request(), None);
    prober.plan(Probe::TrimPastItself);
    let (third, request) = prober
        .next_request()
        .unwrap_or((0, Probe::ReadEarliest.request(0)));
    assert_eq!(request, trim_at(12));
    let step = prober.on_reply(
        third,
        Reply::Invalid(felix_core::api::InvalidRequest::FloorAboveOffset {
            floor: 13,
            offset: 12,
        }),
    );
    assert_eq!(step.route, Route::Any);
    assert_eq!(prober.next_request(), None);
}
