//! Pipelined owners in the seeded world (knob `pipeline_depth`): a pipelined seed keeps several
//! writes of one client in flight at once, and replays identically, from its seed and from its
//! knobs.

use felix_core::api::ClientId;
use felix_core::history::Event;
use felix_sim::render::trace::{TraceEvent, TraceLine};
use felix_sim::seeded::knobs::{Knobs, Workload};
use felix_sim::{run, RunSpec};
use std::collections::BTreeMap;

/// How many times a client sent a request while an earlier one of its own was certainly still in
/// flight: no reply to it yet, and sent less than a client timeout ago (a client that keeps one
/// request in flight sends the next only after a reply or a timeout).
fn overlapping_sends(lines: &[TraceLine], timeout_micros: u64) -> usize {
    let mut last_sent: BTreeMap<ClientId, u64> = BTreeMap::new();
    let mut overlaps = 0;
    for line in lines {
        match &line.event {
            TraceEvent::History(Event::Requested { client, .. }) => {
                if last_sent
                    .get(client)
                    .is_some_and(|sent| line.time < sent + timeout_micros)
                {
                    overlaps += 1;
                }
                last_sent.insert(*client, line.time);
            }
            TraceEvent::History(Event::Replied { client, .. }) => {
                last_sent.remove(client);
            }
            _ => {}
        }
    }
    overlaps
}

/// The first seed whose drawn knobs pipeline at least four writes, with a busy owner.
fn pipelined_seed() -> (u64, Knobs) {
    (0..2_000)
        .map(|seed| (seed, Knobs::draw(seed, None)))
        .find(|(_, knobs)| {
            matches!(knobs.workload, Workload::Paros { .. })
                && knobs.pipeline_depth >= 4
                && knobs.op_per_million >= 500_000
                && knobs.trim_per_million < 500_000
        })
        .expect("a pipelined paros seed in 0..2000")
}

/// A pipelined seed sends writes while others are in flight; the same knobs with one write in
/// flight never do; the run is the same from its seed and from its printed knobs, twice.
#[test]
fn a_pipelined_seed_keeps_several_writes_in_flight_and_replays() {
    let (seed, knobs) = pipelined_seed();
    let mut spec = RunSpec::new(seed, None);
    spec.keep_trace = true;
    let first = run(&spec);
    assert!(
        first.violations.is_empty(),
        "seed {seed}: {:?}",
        first.violations
    );
    let lines = first.trace_lines.clone().unwrap_or_default();
    let overlaps = overlapping_sends(&lines, knobs.client_timeout_micros);
    assert!(
        overlaps > 0,
        "seed {seed}: no write sent with another in flight"
    );

    let again = run(&spec);
    assert_eq!(again.trace_hash, first.trace_hash, "seed {seed}");
    let json = serde_json::to_string(&knobs).unwrap_or_default();
    let mut from_knobs = spec.clone();
    from_knobs.knobs = Some(Knobs::parse(&json).unwrap_or_else(|error| panic!("{error}")));
    assert_eq!(run(&from_knobs).trace_hash, first.trace_hash, "seed {seed}");

    let mut one = knobs.clone();
    one.pipeline_depth = 1;
    let mut single = spec.clone();
    single.knobs = Some(one);
    let control = run(&single);
    let lines = control.trace_lines.unwrap_or_default();
    assert_eq!(overlapping_sends(&lines, knobs.client_timeout_micros), 0);
    assert_ne!(control.trace_hash, first.trace_hash);
}
