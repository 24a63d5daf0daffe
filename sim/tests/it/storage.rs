//! Storage faults (knob `storage_faults`): a node whose disk reads back damaged is found corrupt
//! by the core's recovery and stays down for good, and the run still holds every invariant; a
//! run with the faults replays exactly from its printed knobs.

use felix_audits::{Counter, Counts};
use felix_core::history::Event;
use felix_sim::render::trace::TraceEvent;
use felix_sim::{run, RunSpec};

const DAMAGE: [Counter; 3] = [
    Counter::DiskBitFlipped,
    Counter::DiskSectorZeroed,
    Counter::DiskWriteMisdirected,
];

fn damaged(coverage: &Counts) -> u64 {
    DAMAGE.iter().map(|counter| coverage.count(*counter)).sum()
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
            // A client's `Requested` and `Replied` are left out: a client may still send to the
            // node, or get a reply it sent before its crash; neither is the node acting.
            let after = history[step + 1..].iter().find(|event| {
                !matches!(event, Event::Requested { .. } | Event::Replied { .. })
                    && event.node() == Some(node)
            });
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
            felix_sim::seeded::knobs::Knobs::draw(*seed, None)
                .storage_faults
                .is_some()
        })
        .unwrap_or(u64::MAX);
    let first = run(&RunSpec::new(seed, None));
    let json = serde_json::to_string(&first.knobs).unwrap_or_default();
    let mut spec = RunSpec::new(seed, None);
    spec.knobs = felix_sim::seeded::knobs::Knobs::parse(&json).ok();
    assert!(spec.knobs.is_some(), "{json}");
    let again = run(&spec);
    assert_eq!(first.trace_hash, again.trace_hash);
    assert_eq!(first.coverage, again.coverage);
}

/// A failed read leaves a `disk_read_failed` line naming the node and the store's i/o error, one
/// per count of `disk_read_failed`, and the node is not restarted before the retry it names.
#[test]
fn a_failed_read_is_a_trace_line_and_the_node_restarts_no_sooner_than_its_retry() {
    use felix_sim::render::trace::SimEvent;
    for seed in 0..200 {
        let report = run(&RunSpec::new(seed, None));
        let failed = report.coverage.count(Counter::DiskReadFailed);
        if failed == 0 {
            continue;
        }
        let mut spec = RunSpec::new(seed, None);
        spec.keep_trace = true;
        let report = run(&spec);
        let lines: Vec<_> = report.trace_lines.iter().flatten().collect();
        let mut seen = 0;
        for (index, line) in lines.iter().enumerate() {
            let TraceEvent::Sim(SimEvent::DiskReadFailed {
                node,
                error,
                retry_micros,
            }) = &line.event
            else {
                continue;
            };
            seen += 1;
            assert!(error.starts_with("i/o error on "), "seed {seed}: {error}");
            let restart = lines[index + 1..].iter().find(|later| {
                matches!(later.event, TraceEvent::History(Event::Restarted { node: n }) if n == *node)
            });
            if let Some(restart) = restart {
                assert!(
                    restart.time >= line.time + retry_micros,
                    "seed {seed}: n{node} restarted before its retry"
                );
            }
        }
        assert_eq!(seen, failed, "seed {seed}: lines against the counter");
        return;
    }
    panic!("no seed of 0..200 failed a disk read");
}
