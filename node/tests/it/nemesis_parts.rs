//! The nemesis's parts that need no process: its schedules are functions of the seed, its merge
//! of the recorded histories keeps each source's order, and a node that did not come up is
//! explained by its log's last lines.

use felix_core::history::{Event, Phase};
use felix_node::nemesis::history::{merge, Stamped};
use felix_node::nemesis::log_tail;
use felix_node::nemesis::schedule::{
    draw, draw_all, draw_client_pauses, draw_power_loss, draw_tear, Action, POWER_LOSS_WINDOW_MS,
};
use felix_sim::render::trace::TraceEvent;
use std::time::Duration;

/// One seed, one schedule; another seed, another one; every start has its end.
#[test]
fn the_schedule_is_a_function_of_the_seed() {
    let length = Duration::from_secs(20);
    assert_eq!(draw(7, 3, length), draw(7, 3, length));
    assert_ne!(draw(7, 3, length), draw(8, 3, length));
    let schedule = draw(7, 3, length);
    let kills = schedule
        .iter()
        .filter(|(_, a)| matches!(a, Action::Kill(_)))
        .count();
    let restarts = schedule
        .iter()
        .filter(|(_, a)| matches!(a, Action::Restart(_)))
        .count();
    assert_eq!(kills, restarts);
    assert!(schedule.windows(2).all(|pair| pair[0].0 <= pair[1].0));
}

/// Client pauses and tears are functions of the seed that leave the node faults alone; every
/// client pause has its resume, and over a few kills both tears and plain power cuts are drawn.
#[test]
fn client_pauses_and_tears_are_drawn_from_the_seed() {
    let length = Duration::from_secs(30);
    let pauses = draw_client_pauses(7, 4, length);
    assert_eq!(pauses, draw_client_pauses(7, 4, length));
    let count = |pick: fn(&Action) -> bool| pauses.iter().filter(|(_, a)| pick(a)).count();
    let paused = count(|a| matches!(a, Action::PauseClient { .. }));
    assert!(paused >= 5);
    assert_eq!(paused, count(|a| matches!(a, Action::ResumeClient(_))));
    assert!(draw_client_pauses(7, 0, length).is_empty());
    let all = draw_all(7, 3, 4, length);
    assert_eq!(all.len(), draw(7, 3, length).len() + pauses.len());
    assert!(all.windows(2).all(|pair| pair[0].0 <= pair[1].0));
    let tears: Vec<Option<u32>> = (0..40).map(|kill| draw_tear(7, kill, 1)).collect();
    assert_eq!(
        tears,
        (0..40)
            .map(|kill| draw_tear(7, kill, 1))
            .collect::<Vec<_>>()
    );
    assert!(tears.iter().any(Option::is_some) && tears.iter().any(Option::is_none));
}

/// Power loss is a function of the seed, leaves the fault schedule alone, and over many seeds
/// draws both nodes in power-loss mode and nodes that sync at once.
#[test]
fn power_loss_is_drawn_from_the_seed() {
    assert_eq!(draw_power_loss(7, 3), draw_power_loss(7, 3));
    let windows: Vec<u32> = (0..100).flat_map(|seed| draw_power_loss(seed, 3)).collect();
    assert!(windows.contains(&0));
    assert!(windows.iter().any(|window| *window > 0));
    assert!(windows
        .iter()
        .all(|window| *window == 0 || POWER_LOSS_WINDOW_MS.contains(window)));
}

fn at(time_micros: u64, phase: Phase) -> Stamped {
    Stamped {
        time_micros,
        event: TraceEvent::History(Event::PhaseChanged { phase }),
    }
}

/// The merge orders by time across sources and keeps each source's own order, even where a
/// source's clock stepped back.
#[test]
fn the_merge_keeps_each_source_in_order() {
    use Phase::*;
    let first = vec![at(10, Safety), at(5, Liveness), at(30, End)];
    let second = vec![at(7, Safety), at(20, Liveness)];
    let merged = merge(vec![first, second]);
    let times: Vec<u64> = merged.iter().map(|line| line.time_micros).collect();
    assert_eq!(times, vec![7, 10, 5, 20, 30]);
}

/// The last lines of a log, indented; an empty or missing log is said to be so.
#[test]
fn a_log_tail_is_its_last_lines_or_says_why_there_are_none() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = dir.path().join("node-1.log");
    let lines: Vec<String> = (1..=10).map(|n| format!("line {n}")).collect();
    std::fs::write(&log, lines.join("\n")).expect("the log written");
    assert_eq!(log_tail(&log, 3), "  line 8\n  line 9\n  line 10");
    assert_eq!(log_tail(&log, 20).lines().count(), 10);
    std::fs::write(&log, "").expect("the log emptied");
    assert_eq!(log_tail(&log, 3), "  (empty)");
    let missing = dir.path().join("node-2.log");
    assert!(log_tail(&missing, 3).starts_with("  (cannot read it: "));
}
