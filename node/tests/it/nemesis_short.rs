//! A short nemesis run over three real nodes (kills, pauses of nodes and of client processes,
//! partitions, drops, delays, silent lease moves, power loss on the nodes the seed puts in
//! power-loss mode, torn writes) passes every audit, and is not vacuous: faults were injected,
//! writes were acknowledged, nodes crashed and came back and client processes froze and thawed
//! in the recorded history; the trace reads back in the simulator's format and renders as
//! `felix trace show` renders it.

use super::support::exe;
use felix_core::history::Event;
use felix_node::nemesis::{self, schedule, NemesisConfig};
use felix_sim::render::trace::{SimEvent, TraceEvent};
use std::time::Duration;

#[test]
fn a_short_nemesis_run_holds_every_invariant() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let seed = 5;
    let time = Duration::from_secs(15);
    // The seed's schedule has every kind of fault this test claims to inject.
    let planned = schedule::draw_all(seed, 3, 4, time);
    let has = |pick: fn(&schedule::Action) -> bool| planned.iter().any(|(_, a)| pick(a));
    assert!(has(|a| matches!(a, schedule::Action::Kill(_))));
    assert!(has(|a| matches!(a, schedule::Action::Pause(_))));
    assert!(has(|a| matches!(
        a,
        schedule::Action::PauseClient {
            lease_expires: true,
            ..
        }
    )));
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
    assert!(
        outcome.client_failures.is_empty(),
        "{:?}",
        outcome.client_failures
    );
    assert!(outcome.converged);
    // Kills in power-loss mode cut the power first; every torn write was cut by a recovery.
    assert!(outcome.cuts.cuts >= 1, "{:?}", outcome.cuts);
    assert!(
        outcome.tails_cut as u64 >= outcome.cuts.torn,
        "{} tails cut, {:?}",
        outcome.tails_cut,
        outcome.cuts
    );
    let text = std::fs::read_to_string(&outcome.trace).expect("the trace");
    let lines: Vec<felix_sim::render::trace::TraceLine> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a trace line"))
        .collect();
    // `felix trace show` renders each line with this function: every line of a nemesis trace
    // has its sentence.
    for line in &lines {
        assert!(!felix_sim::render::describe::trace_line(line).is_empty());
    }
    let count = |pick: &dyn Fn(&Event) -> bool| {
        lines
            .iter()
            .filter(
                |line| matches!(&line.event, felix_sim::render::trace::TraceEvent::History(e) if pick(e)),
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
    assert!(count(&|e| matches!(e, Event::Requested { client: 0, .. })) >= 10);
    the_nodes_witnessed(&count, acked);
    the_clients_froze_and_thawed(&lines);
}

/// Counts the history events of a trace that a predicate picks.
type Count<'a> = dyn Fn(&dyn Fn(&Event) -> bool) -> usize + 'a;

/// The nodes' witnesses recorded what PromiseDurable judges: their durable promises and logs, and
/// the promises and acknowledgements their messages carried (at least one per acknowledged write).
fn the_nodes_witnessed(count: &Count, acked: usize) {
    assert!(count(&|e| matches!(e, Event::DurablePromise { .. })) >= 1);
    assert!(count(&|e| matches!(e, Event::PromiseSent { .. })) >= 1);
    assert!(count(&|e| matches!(e, Event::DurableLog { .. })) >= 1);
    assert!(count(&|e| matches!(e, Event::AckSent { .. })) >= acked);
}

/// Real nodes whose followers acknowledge appended records before their fsync (the
/// AckBeforeSync twin) break PromiseDurable: the witness each node keeps sees every early
/// acknowledgement leave before the durable log reaches it, with or without a crash. And the
/// nemesis judges CommittedDurable under the run's voters: a leader that counts those early
/// acknowledgements takes records as committed that no majority holds durably yet.
#[test]
fn real_nodes_that_acknowledge_before_the_fsync_break_promise_durable() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = NemesisConfig {
        exe: exe(),
        nodes: 3,
        replicas: 0,
        time: Duration::from_secs(4),
        seed: 5,
        twin: Some(felix_core::TwinName::AckBeforeSync),
        dir: dir.path().to_path_buf(),
        trace: dir.path().join("trace.jsonl"),
        holders: 2,
        readers: 1,
        paros: false,
    };
    let outcome = nemesis::run(&config).expect("the run starts");
    let broken: Vec<String> = (outcome.report.violations.iter())
        .map(|v| v.invariant.to_string())
        .collect();
    assert!(
        broken.iter().any(|name| name == "PromiseDurable"),
        "{broken:?}"
    );
    assert!(
        broken.iter().any(|name| name == "CommittedDurable"),
        "{broken:?}"
    );
}

/// The nemesis froze and thawed client processes (their requests came over their output).
fn the_clients_froze_and_thawed(lines: &[felix_sim::render::trace::TraceLine]) {
    let sim = |pick: &dyn Fn(&SimEvent) -> bool| {
        lines
            .iter()
            .filter(|line| matches!(&line.event, TraceEvent::Sim(e) if pick(e)))
            .count()
    };
    assert!(sim(&|e| matches!(e, SimEvent::Paused { .. })) >= 1);
    assert!(sim(&|e| matches!(e, SimEvent::Resumed { .. })) >= 1);
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
