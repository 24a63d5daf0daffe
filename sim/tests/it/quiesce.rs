//! The quiesce before the liveness deadline: in the last quarter of the liveness phase writers
//! send nothing more, so Convergence judges a cluster at rest (a regression: seed 9797 of the
//! AckBeforeSync control sweep failed Convergence because the owner's queued writes kept the
//! committed prefix moving to the last instant: the leader committed 84 at 14.93 s and the
//! followers learned it only with the next heartbeat, after the 15.00 s deadline).

use felix_core::api::Request;
use felix_core::history::Event;
use felix_core::TwinName;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine};
use felix_sim::seeded::world::QUIESCE_SHARE;
use felix_sim::{run, RunReport, RunSpec};

fn traced(mut spec: RunSpec) -> (RunReport, Vec<TraceLine>) {
    spec.keep_trace = true;
    let report = run(&spec);
    let lines = report.trace_lines.clone().expect("a kept trace");
    (report, lines)
}

/// The time of the quiesce marker, if the run got that far.
fn quiesce_time(lines: &[TraceLine]) -> Option<u64> {
    lines.iter().find_map(|line| match &line.event {
        TraceEvent::Sim(SimEvent::Phase { name }) if name == "quiesce" => Some(line.time),
        _ => None,
    })
}

/// Requests that change the journal (a writer's), sent at or after `from`.
fn writes_sent_after(lines: &[TraceLine], from: u64) -> Vec<&TraceLine> {
    lines
        .iter()
        .filter(|line| line.time >= from)
        .filter(|line| {
            matches!(
                &line.event,
                TraceEvent::History(Event::Requested { request, .. })
                    if !matches!(request, Request::Read { .. })
            )
        })
        .collect()
}

/// Seed 9797's control run reaches the quiesce, sends no write after it, and converges.
#[test]
fn seed_9797_converges_once_writers_stop() {
    let mut spec = RunSpec::new(9797, Some(TwinName::AckBeforeSync));
    spec.control = true;
    let (report, lines) = traced(spec);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let knobs = &report.knobs;
    let expected =
        knobs.safety_micros + knobs.liveness_micros - knobs.liveness_micros / QUIESCE_SHARE;
    let at = quiesce_time(&lines).expect("seed 9797 runs into the quiesce");
    assert_eq!(at, expected);
    assert!(
        writes_sent_after(&lines, expected).is_empty(),
        "a writer sent after the quiesce"
    );
    // The owner was still writing when the quiesce began: without it the run would have gone on
    // moving the committed prefix.
    assert!(
        !writes_sent_after(&lines, expected - 1_000_000).is_empty(),
        "no write in the second before the quiesce: the seed no longer shows what it pins"
    );
}

/// The phases come in order (liveness, then quiesce) and no writer sends anything once the
/// quiesce began. Default runs mostly converge long before the quiesce, so these runs get a
/// one-second liveness phase (quiesce 250 ms before the deadline); whether they converge in
/// that time is not the point here.
#[test]
fn no_writer_sends_after_the_quiesce() {
    let mut quiesced = 0;
    for seed in 0..40 {
        let mut spec = RunSpec::new(seed, None);
        let mut knobs = spec.knobs();
        knobs.liveness_micros = 1_000_000;
        spec.knobs = Some(knobs);
        let (report, lines) = traced(spec);
        let phases: Vec<&str> = lines
            .iter()
            .filter_map(|line| match &line.event {
                TraceEvent::Sim(SimEvent::Phase { name }) => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            phases == ["liveness"] || phases == ["liveness", "quiesce"],
            "seed {seed}: phases {phases:?}"
        );
        if let Some(at) = quiesce_time(&lines) {
            quiesced += 1;
            assert_eq!(at, report.knobs.safety_micros + 750_000, "seed {seed}");
            let late = writes_sent_after(&lines, at);
            assert!(late.is_empty(), "seed {seed}: {:?}", late.first());
        }
    }
    assert!(quiesced > 0, "no run of 40 reached the quiesce");
}
