//! A short nemesis run over three real nodes (kills, pauses, partitions, drops, delays, silent
//! lease moves, power loss on the nodes the seed puts in power-loss mode) passes every audit, and is not vacuous: faults were injected, writes were
//! acknowledged and nodes crashed and came back in the recorded history; the trace reads back
//! in the simulator's format and renders as `felix trace show` renders it.

use super::support::exe;
use felix_core::history::Event;
use felix_node::nemesis::{self, schedule, NemesisConfig};
use std::time::Duration;

#[test]
fn a_short_nemesis_run_holds_every_invariant() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let seed = 5;
    let time = Duration::from_secs(15);
    // The seed's schedule has every kind of fault this test claims to inject.
    let planned = schedule::draw(seed, 3, time);
    let has = |pick: fn(&schedule::Action) -> bool| planned.iter().any(|(_, a)| pick(a));
    assert!(has(|a| matches!(a, schedule::Action::Kill(_))));
    assert!(has(|a| matches!(a, schedule::Action::Pause(_))));
    assert!(has(|a| matches!(
        a,
        schedule::Action::Isolate(_) | schedule::Action::CutOneWay { .. }
    )));
    // Power loss: a kill of a node in power-loss mode loses its unsynced suffix, and with every
    // rule on nothing acknowledged depends on it; one node syncs at once, as before.
    let power_loss = schedule::draw_power_loss(seed, 3);
    assert!(power_loss.contains(&0) && power_loss.iter().any(|window| *window > 0));
    let config = NemesisConfig {
        exe: exe(),
        nodes: 3,
        replicas: 0,
        time,
        seed,
        twin: None,
        dir: dir.path().to_path_buf(),
        trace: dir.path().join("trace.jsonl"),
        holders: 2,
        readers: 2,
        paros: false,
    };
    let outcome = nemesis::run(&config).expect("the run starts");
    let violations: Vec<String> = outcome
        .report
        .violations
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(
        outcome.unexpected_exits.is_empty(),
        "{:?}",
        outcome.unexpected_exits
    );
    assert!(outcome.converged);
    let text = std::fs::read_to_string(&outcome.trace).expect("the trace");
    let lines: Vec<felix_sim::trace::TraceLine> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a trace line"))
        .collect();
    // `felix trace show` renders each line with this function: every line of a nemesis trace
    // has its sentence.
    for line in &lines {
        assert!(!felix_sim::describe::trace_line(line).is_empty());
    }
    let count = |pick: &dyn Fn(&Event) -> bool| {
        lines
            .iter()
            .filter(
                |line| matches!(&line.event, felix_sim::trace::TraceEvent::History(e) if pick(e)),
            )
            .count()
    };
    let acked = count(&|e| {
        matches!(
            e,
            Event::Replied {
                reply: felix_core::api::Reply::Appended { .. },
                ..
            }
        )
    });
    assert!(acked >= 50, "only {acked} acknowledged appends");
    assert!(count(&|e| matches!(e, Event::Crashed { .. })) >= 1);
    assert!(count(&|e| matches!(e, Event::Restarted { .. })) >= 1);
    assert!(count(&|e| matches!(e, Event::Committed { .. })) >= acked);
}

/// The paros workload under the same faults, with a non-voting replica beside the three voters:
/// owners hand the writer fence on, write checkpoint runs and truncate, folders fold (one joins
/// late and restores); every audit holds, the run wrote at least one checkpoint and folded
/// records, and the replica (n4) was asked and answered.
#[test]
fn a_short_paros_run_holds_every_invariant() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = NemesisConfig {
        exe: exe(),
        nodes: 3,
        replicas: 1,
        time: Duration::from_secs(12),
        seed: 9,
        twin: None,
        dir: dir.path().to_path_buf(),
        trace: dir.path().join("trace.jsonl"),
        holders: 2,
        readers: 1,
        paros: true,
    };
    let outcome = nemesis::run(&config).expect("the run starts");
    let violations: Vec<String> = outcome
        .report
        .violations
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(
        outcome.unexpected_exits.is_empty(),
        "{:?}",
        outcome.unexpected_exits
    );
    let text = std::fs::read_to_string(&outcome.trace).expect("the trace");
    assert!(
        text.contains("\"CheckpointWritten\""),
        "no checkpoint was written"
    );
    assert!(text.contains("\"Folded\""), "nothing was folded");
    let replica_answered = text.lines().any(|line| {
        let line: serde_json::Value = serde_json::from_str(line).expect("a trace line");
        line["history"]["Replied"]["node"] == 4
    });
    assert!(replica_answered, "the replica n4 answered no request");
}
