//! Benchmark of `audit()` on the reference cluster's correct histories: events audited per second.
//! Timings live here, never in asserts.
//!
//! `cargo run --release -p felix-audits --example audit_bench -- [HISTORIES] [STEPS]`

use felix_audits::synthetic::correct_history;
use felix_audits::{
    acked_writes_kept, audit, committed_prefix_agreement, convergence, coverage, floor_record_kept,
    fold_agreement, no_read_below_floor, stale_trim_refused, term_never_decreases, Invariant,
    Violation,
};
use felix_core::history::Event;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

fn kind(event: &Event) -> &'static str {
    match event {
        Event::PromiseChanged { .. } => "PromiseChanged",
        Event::BecameLeader { .. } => "BecameLeader",
        Event::Committed { .. } => "Committed",
        Event::FloorApplied { .. } => "FloorApplied",
        Event::SegmentsDeleted { .. } => "SegmentsDeleted",
        Event::Jumped { .. } => "Jumped",
        Event::NodeState { .. } => "NodeState",
        Event::Crashed { .. } => "Crashed",
        Event::Restarted { .. } => "Restarted",
        Event::Requested { .. } => "Requested",
        Event::Replied { .. } => "Replied",
        Event::Folded { .. } => "Folded",
        _ => "other",
    }
}

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let parse = |index: usize, default: usize| -> Option<usize> {
        arguments
            .get(index)
            .map_or(Some(default), |text| text.parse().ok())
    };
    let (Some(histories), Some(steps)) = (parse(0, 1_000), parse(1, 2_000)) else {
        eprintln!("usage: audit_bench [HISTORIES] [STEPS] (both positive integers)");
        return ExitCode::from(2);
    };
    let mut kinds: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut events = 0u64;
    let mut violations = 0usize;
    let mut audit_seconds = 0f64;
    type Check = fn(&[Event]) -> Vec<Violation>;
    let checks: [(&str, Check); 8] = [
        (
            Invariant::StaleTrimRefused.name(),
            stale_trim_refused::check,
        ),
        (Invariant::FloorRecordKept.name(), floor_record_kept::check),
        (
            Invariant::NoReadBelowFloor.name(),
            no_read_below_floor::check,
        ),
        (Invariant::AckedWritesKept.name(), acked_writes_kept::check),
        (
            Invariant::CommittedPrefixAgreement.name(),
            committed_prefix_agreement::check,
        ),
        (
            Invariant::TermNeverDecreases.name(),
            term_never_decreases::check,
        ),
        (Invariant::FoldAgreement.name(), fold_agreement::check),
        (Invariant::Convergence.name(), convergence::check),
    ];
    let mut check_seconds = [0f64; 9];
    for seed in 0..histories as u64 {
        let history = correct_history(seed, steps);
        for event in &history {
            *kinds.entry(kind(event)).or_default() += 1;
        }
        events += history.len() as u64;
        let started = Instant::now();
        let report = audit(&history);
        audit_seconds += started.elapsed().as_secs_f64();
        violations += report.violations.len();
        for (index, (_, check)) in checks.iter().enumerate() {
            let started = Instant::now();
            std::hint::black_box(check(&history));
            check_seconds[index] += started.elapsed().as_secs_f64();
        }
        let started = Instant::now();
        std::hint::black_box(coverage(&history));
        check_seconds[8] += started.elapsed().as_secs_f64();
    }
    println!(
        "{histories} histories, {events} events, {violations} violations, audit {audit_seconds:.3} s, \
         {:.0} events/s, {:.1} us/history",
        events as f64 / audit_seconds,
        audit_seconds * 1e6 / histories as f64
    );
    println!("event mix: {kinds:?}");
    for (index, (name, _)) in checks.iter().enumerate() {
        println!("  {name:<26} {:.3} s", check_seconds[index]);
    }
    println!("  {:<26} {:.3} s", "coverage", check_seconds[8]);
    if violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
