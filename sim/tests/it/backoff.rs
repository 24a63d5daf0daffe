//! Clients back off when every node refuses them (a regression: seeds 150276 and 158233 of a
//! rules-on sweep ended with "processed 1000000 events without finishing: a livelock").
//!
//! Those runs were no livelock of the core: after mass crashes there was no leader for a while,
//! and the world retried every `NotLeader` / `NoReadIndex` at once, on a 10 us network: six
//! clients made some 400,000 round trips per simulated second until the event budget ran out,
//! before the election could finish. A client refused by as many nodes in a row as there are
//! nodes now waits a broker tick before each further try.

use felix_core::api::Reply;
use felix_core::history::Event;
use felix_sim::render::trace::TraceEvent;
use felix_sim::{run, RunSpec};
use std::collections::BTreeMap;

/// After `nodes` refusals in a row (`NotLeader`, `NoReadIndex`), a client's next request comes
/// at least a tick later. Returns how many times a client had to wait.
fn assert_backs_off(seed: u64) -> usize {
    let mut spec = RunSpec::new(seed, None);
    spec.keep_trace = true;
    let report = run(&spec);
    assert!(
        report.violations.is_empty(),
        "seed {seed}: {:?}",
        report.violations.first()
    );
    let nodes = (report.knobs.brokers + report.knobs.replicas) as usize;
    let tick = report.knobs.tick_micros;
    // Per client: refusals in a row, and the time of the last one once it must wait.
    let mut refusals: BTreeMap<u32, usize> = BTreeMap::new();
    let mut waiting: BTreeMap<u32, u64> = BTreeMap::new();
    let mut waits = 0;
    for line in report.trace_lines.as_ref().expect("a kept trace") {
        let TraceEvent::History(event) = line.event.clone() else {
            continue;
        };
        match event {
            Event::Replied { client, reply, .. } => {
                let count = refusals.entry(client).or_insert(0);
                if matches!(reply, Reply::NotLeader { .. } | Reply::NoReadIndex { .. }) {
                    *count += 1;
                    if *count >= nodes {
                        waiting.insert(client, line.time);
                    }
                } else {
                    *count = 0;
                }
            }
            Event::Requested { client, .. } => {
                if let Some(refused_at) = waiting.remove(&client) {
                    waits += 1;
                    assert!(
                        line.time >= refused_at + tick,
                        "seed {seed}: c{client} refused by {nodes} nodes in a row at {refused_at} \
                         us asked again at {} us, within a tick ({tick} us)",
                        line.time
                    );
                }
            }
            _ => {}
        }
    }
    waits
}

/// Both seeds finish (no event budget), clean, and their clients did have to wait.
#[test]
fn the_event_budget_seeds_finish_and_their_clients_back_off() {
    for seed in [150276, 158233] {
        let waits = assert_backs_off(seed);
        assert!(
            waits > 0,
            "seed {seed}: no client was refused by every node"
        );
    }
}

/// Over the default swarm, every client refused by every node in a row waits a tick.
#[test]
fn refused_clients_wait_a_tick() {
    let waits: usize = (0..40).map(assert_backs_off).sum();
    assert!(waits > 0, "no client of 40 runs was refused by every node");
}
