//! Continuations (`felix_sim::seeded::fork`): a run forked at a trace step is its parent up to the
//! step and a timeline of its own after it, named by (seed, step, branch) alone.

use felix_audits::Counter;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine};
use felix_sim::seeded::fork::{first_step, Fork};
use felix_sim::{run, RunSpec};

/// The seed and step the tests fork at: early enough that every run reaches it.
const SEED: u64 = 5;
const STEP: u64 = 300;

fn continuation(branch: u32) -> felix_sim::RunReport {
    let spec = RunSpec {
        keep_trace: true,
        fork: Some(Fork { step: STEP, branch }),
        ..RunSpec::new(SEED, None)
    };
    run(&spec)
}

/// The lines after the first (whose label names the fork), rendered for comparison.
fn body(report: &felix_sim::RunReport) -> Vec<String> {
    let lines = report.trace_lines.as_deref().unwrap_or_default();
    lines.iter().skip(1).map(TraceLine::to_json).collect()
}

/// Same (seed, step, branch): the same run, event for event (the same trace hash and lines).
#[test]
fn a_continuation_replays_exactly() {
    let first = continuation(1);
    let second = continuation(1);
    assert_eq!(first.trace_hash, second.trace_hash);
    assert_eq!(body(&first), body(&second));
}

/// Branches 0 and 1 hold their parent's lines up to the step, mark the fork right after the
/// step's event, and differ after it; the first line names the fork.
#[test]
fn branches_share_the_prefix_and_differ_after() {
    let parent = run(&RunSpec {
        keep_trace: true,
        ..RunSpec::new(SEED, None)
    });
    let zero = continuation(0);
    let one = continuation(1);
    let (parent, zero_lines, one_lines) = (body(&parent), body(&zero), body(&one));
    let prefix = STEP as usize;
    assert_eq!(parent[..prefix], zero_lines[..prefix]);
    assert_eq!(parent[..prefix], one_lines[..prefix]);
    let lines = zero.trace_lines.as_deref().unwrap_or_default();
    let forked_at = lines
        .iter()
        .position(|line| matches!(line.event, TraceEvent::Sim(SimEvent::Forked { .. })))
        .expect("the continuation marks its fork");
    assert!(forked_at as u64 > STEP, "forked at line {forked_at}");
    assert_ne!(zero.trace_hash, one.trace_hash);
    assert_ne!(zero_lines[forked_at..], one_lines[forked_at..]);
    match &lines[0].event {
        TraceEvent::Sim(SimEvent::Started { twin, .. }) => {
            assert_eq!(twin.as_deref(), Some("fork 300:0"))
        }
        other => panic!("the first line is {other:?}"),
    }
}

/// A fork past the end of the run never happens: the continuation is its parent's run.
#[test]
fn a_fork_past_the_end_changes_nothing_but_the_label() {
    let parent = run(&RunSpec {
        keep_trace: true,
        ..RunSpec::new(SEED, None)
    });
    let late = run(&RunSpec {
        keep_trace: true,
        fork: Some(Fork {
            step: u64::MAX,
            branch: 0,
        }),
        ..RunSpec::new(SEED, None)
    });
    assert_eq!(body(&parent), body(&late));
}

/// `first_step` places a counter's first rise at the step of the history event that made it:
/// the trace's line at that step is the first whose prefix reaches it, and a counter the run
/// never reaches has no step.
#[test]
fn first_step_finds_where_a_counter_first_rose() {
    let spec = RunSpec {
        keep_trace: true,
        ..RunSpec::new(SEED, None)
    };
    let report = run(&spec);
    let lines = report.trace_lines.as_deref().unwrap_or_default();
    let rules = felix_core::Rules::default();
    let step = first_step(SEED, rules, &report.knobs, None, Counter::LeaderChanged)
        .expect("the run elects a leader");
    let first_leader = lines
        .iter()
        .find(|line| {
            matches!(
                line.event,
                TraceEvent::History(felix_core::history::Event::BecameLeader { .. })
            )
        })
        .map(|line| line.step);
    assert_eq!(Some(step), first_leader);
    assert_eq!(
        first_step(SEED, rules, &report.knobs, None, Counter::RetentionDeleted),
        None
    );
}
