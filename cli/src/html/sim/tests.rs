//! Tests of the sim run's diagram (`super`).

use super::*;
use felix_core::TwinName;
use felix_sim::RunSpec;

/// A seed HiddenTrims fails on (`felix sweep --twin HiddenTrims --seeds 2000..4000`: of those
/// with this cluster's shape, the one with the shortest story); the first seed's story on a
/// three-broker cluster with a replica and two holders.
const SEED: u64 = 2508;
/// The holder the lease left without telling it, last before the violation: its lane and name.
const STALE: (usize, &str) = (2, "c1");

fn hidden_trims() -> (RunReport, Diagram) {
    let mut spec = RunSpec::new(SEED, Some(TwinName::HiddenTrims));
    spec.keep_trace = true;
    let report = felix_sim::run(&spec);
    let diagram = diagram(&report, "felix replay --seed 2508 --twin HiddenTrims");
    (report, diagram)
}

/// The row of the twin's own violation (StaleTrimRefused): other judges (Linearizable) may
/// see the stale holder's answers first, and the page marks every finding.
fn named_row(diagram: &Diagram) -> usize {
    diagram
        .violations
        .iter()
        .find(|violation| violation.invariant == "StaleTrimRefused")
        .expect("the twin's violation is drawn")
        .row
}

/// The diagram has a lifeline per lease service, client, broker and replica, one row per
/// trace line, and the violation at the step the audit named.
#[test]
fn lanes_rows_and_the_violation_follow_the_run() {
    let (report, diagram) = hidden_trims();
    let names: Vec<&str> = diagram
        .lanes
        .iter()
        .map(|lane| lane.name.as_str())
        .collect();
    // c2 is the prober (a knob of the seed's draw).
    assert_eq!(names, ["lease", "c0", "c1", "c2", "n0", "n1", "n2", "n3"]);
    assert_eq!(diagram.lanes[7].kind, LaneKind::Replica);
    assert_eq!(diagram.rows.len() as u64, report.steps);
    let finding = report
        .violations
        .iter()
        .find(|finding| finding.invariant == "StaleTrimRefused")
        .expect("the twin's finding");
    let violation = diagram
        .violations
        .iter()
        .find(|violation| violation.invariant == "StaleTrimRefused")
        .expect("the twin's violation is drawn");
    assert_eq!(Some(diagram.rows[violation.row].step), finding.step);
    assert_eq!(violation.detail, finding.detail);
}

/// The picture tells the seed's story: the lease moved without telling its holder (a fault
/// mark on the stale holder), the stale holder's read was refused with an untagged
/// CursorTooOld (a refusal arrow to it), and its write committed after the new holder's.
#[test]
fn the_stale_holder_story_is_drawn() {
    let (_, diagram) = hidden_trims();
    let at = named_row(&diagram);
    let before = &diagram.rows[..at];
    let moved = before.iter().rposition(|row| {
        matches!(&row.mark, Mark::Point { lane, label, style: Style::Fault }
            if *lane == STALE.0 && label.contains("NOT told"))
    });
    let refused = before.iter().rposition(|row| {
        matches!(&row.mark, Mark::Arrow { to, label, style: Style::Refusal, .. }
            if *to == STALE.0 && label.contains("CursorTooOld") && label.contains("untagged"))
    });
    assert!(
        moved.is_some() && refused.is_some(),
        "{moved:?} {refused:?}"
    );
    assert!(moved < refused, "the lease moved before the refused read");
    assert!(
        matches!(&diagram.rows[at].mark, Mark::Point { style: Style::Commit, label, .. }
            if label.contains(" write ")),
        "{:?}",
        diagram.rows[at].mark
    );
}

/// The state at the violation: the committing node lists the stale write above the new
/// holder's records, and the stale holder believes the tail it wrote at.
#[test]
fn state_at_the_violation_shows_logs_and_beliefs() {
    let (_, diagram) = hidden_trims();
    let at = named_row(&diagram);
    let state = |lane: usize| {
        diagram.states[lane]
            .iter()
            .rev()
            .find(|change| change.row <= at)
            .map(|change| change.lines.join("\n"))
            .unwrap_or_default()
    };
    // Some broker's log at the violation holds a write and the trim that set its floor.
    let brokers: Vec<String> = (0..diagram.lanes.len())
        .filter(|&lane| diagram.lanes[lane].kind == LaneKind::Broker)
        .map(state)
        .collect();
    assert!(
        brokers
            .iter()
            .any(|log| log.contains(" write ") && log.contains("trim floor=")),
        "{brokers:?}"
    );
    let stale = state(STALE.0);
    assert!(stale.contains("holds lease epoch"), "{stale}");
    assert!(stale.contains("believes the tail is"), "{stale}");
    let lease = state(0);
    assert!(
        lease.contains(&format!("{} lost its lease and was NOT told", STALE.1)),
        "{lease}"
    );
}
