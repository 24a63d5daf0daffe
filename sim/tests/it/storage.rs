//! Storage faults (knob `storage_faults`): a node whose disk reads back damaged is found corrupt
//! by the core's recovery and stays down for good, and the run still holds every invariant; a
//! run with the faults replays exactly from its printed knobs.

use felix_core::history::Event;
use felix_sim::trace::TraceEvent;
use felix_sim::{run, RunSpec};

const DAMAGE: [&str; 3] = [
    "disk_bit_flipped",
    "disk_sector_zeroed",
    "disk_write_misdirected",
];

fn damaged(coverage: &std::collections::BTreeMap<String, u64>) -> u64 {
    DAMAGE
        .iter()
        .map(|name| coverage.get(*name).copied().unwrap_or(0))
        .sum()
}

/// The node a node's own event (or its crash or restart) is about.
fn node_of(event: &Event) -> Option<u32> {
    match event {
        Event::PromiseChanged { node, .. }
        | Event::BecameLeader { node, .. }
        | Event::Committed { node, .. }
        | Event::FloorApplied { node, .. }
        | Event::TruncateRefused { node, .. }
        | Event::SegmentsDeleted { node, .. }
        | Event::TrimmedToSent { node, .. }
        | Event::Jumped { node, .. }
        | Event::NodeState { node, .. }
        | Event::DurablePromise { node, .. }
        | Event::PromiseSent { node, .. }
        | Event::DurableLog { node, .. }
        | Event::AckSent { node, .. }
        | Event::Crashed { node }
        | Event::Restarted { node }
        | Event::StoreCorrupt { node, .. } => Some(*node),
        _ => None,
    }
}

/// In the first seeds whose disks were damaged: the history records `StoreCorrupt` for as many
/// nodes as damage was counted, no event of such a node follows it, and no judge finds anything
/// (the cluster stayed live without it).
#[test]
fn a_node_found_corrupt_stays_down_and_the_run_holds() {
    let mut seen = 0;
    for seed in 0..200 {
        let report = run(&RunSpec::new(seed, None));
        if damaged(&report.coverage) == 0 {
            continue;
        }
        let mut spec = RunSpec::new(seed, None);
        spec.keep_trace = true;
        let report = run(&spec);
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        let history: Vec<Event> = (report.trace_lines.iter().flatten())
            .filter_map(|line| match &line.event {
                TraceEvent::History(event) => Some(event.clone()),
                TraceEvent::Sim(_) => None,
            })
            .collect();
        let lost: Vec<(usize, u32)> = (history.iter().enumerate())
            .filter_map(|(step, event)| match event {
                Event::StoreCorrupt { node, reason } => {
                    assert!(reason.contains("corrupt store file"), "{reason}");
                    Some((step, *node))
                }
                _ => None,
            })
            .collect();
        assert_eq!(lost.len() as u64, damaged(&report.coverage), "seed {seed}");
        assert!(lost.len() <= (report.knobs.brokers as usize - 1) / 2);
        for (step, node) in lost {
            let after = history[step + 1..]
                .iter()
                .find(|event| node_of(event) == Some(node));
            assert_eq!(
                after, None,
                "seed {seed}: node {node} acted after its store was found corrupt"
            );
        }
        seen += 1;
        if seen == 3 {
            return;
        }
    }
    panic!("only {seen} seeds of 0..200 damaged a disk");
}

/// A run with the storage faults on replays exactly from its knobs (`felix replay --knobs`).
#[test]
fn storage_faults_replay_from_their_knobs() {
    let seed = (0..100)
        .find(|seed| {
            felix_sim::knobs::Knobs::draw(*seed, None)
                .storage_faults
                .is_some()
        })
        .unwrap_or(u64::MAX);
    let first = run(&RunSpec::new(seed, None));
    let json = serde_json::to_string(&first.knobs).unwrap_or_default();
    let mut spec = RunSpec::new(seed, None);
    spec.knobs = felix_sim::knobs::Knobs::parse(&json).ok();
    assert!(spec.knobs.is_some(), "{json}");
    let again = run(&spec);
    assert_eq!(first.trace_hash, again.trace_hash);
    assert_eq!(first.coverage, again.coverage);
}
