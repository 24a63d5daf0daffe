//! A Stateright counterexample as a `Diagram`: one row per action, the model's own states.
//!
//! The checker's report carries each step's action (as the spec names it) and the variables it
//! changed. To draw who did what, the path is replayed on the model: from the initial state, each
//! step's action is the enabled action with that name, and its successor is the next state. So
//! the picture is drawn from typed states (logs, floors, tags, what each holder believes), and a
//! report that does not replay is a bug, not something to draw around. Row sentences are the
//! trace renderer's lines (`felix_model::trace::render`), the ones `felix check` prints.

use super::{Diagram, Lane, LaneKind, Mark, Row, Style, Violation, Window};
use felix_core::rules::Invariant;
use felix_model::check::Report;
use felix_model::head_trim::config::Config;
use felix_model::head_trim::spec::{Action, FelixHeadTrim, Kind, Record, State};
use stateright::Model;

/// The diagram of `report`'s counterexample (or of a passing configuration: lanes, no rows).
pub fn diagram(config: &'static Config, report: &Report) -> Diagram {
    let states = replay(config, report);
    let holders = config.bounds.holders;
    let brokers = config.bounds.brokers;
    let mut lanes = vec![Lane {
        name: "lease".to_string(),
        kind: LaneKind::Lease,
        note: "service".to_string(),
    }];
    for h in 1..=holders {
        lanes.push(Lane {
            name: format!("h{h}"),
            kind: LaneKind::Client,
            note: format!("holder, epoch {h}"),
        });
    }
    for b in 1..=brokers {
        lanes.push(Lane {
            name: format!("b{b}"),
            kind: LaneKind::Broker,
            note: "broker".to_string(),
        });
    }
    let lane_count = lanes.len();
    let outcome = match report.invariant {
        Some(invariant) => format!("VIOLATED {invariant}"),
        None => "pass: no counterexample".to_string(),
    };
    let mut diagram = Diagram {
        title: format!("{}: {outcome}", report.config),
        subtitle: vec![
            format!(
                "Stateright model, {} unique states, shortest counterexample: {} steps after Init",
                report.unique_states,
                report.trace.len().saturating_sub(1)
            ),
            format!("felix check {}", report.config),
        ],
        lanes,
        rows: Vec::with_capacity(states.len()),
        violations: Vec::new(),
        states: vec![Vec::new(); lane_count],
        window: Window {
            before: states.len(),
            after: 0,
        },
        omitted: String::new(),
        why: Vec::new(),
        story: Vec::new(),
    };
    let sentences = felix_model::trace::render(&report.trace);
    let sentences: Vec<&str> = sentences.lines().collect();
    let holder_lane = |h: u8| usize::from(h);
    let broker_lane = |b: u8| usize::from(holders) + usize::from(b);
    for (index, (before, action, after)) in states.iter().enumerate() {
        let text = sentences
            .get(index)
            .map(|line| strip_number(line).to_string())
            .unwrap_or_default();
        let mark = match (before, action) {
            (Some(before), Some(action)) => {
                mark(config, before, *action, after, holder_lane, broker_lane)
            }
            _ => Mark::Band {
                label: "Init".to_string(),
                style: Style::Note,
            },
        };
        diagram.rows.push(Row {
            step: index as u64,
            time: String::new(),
            text,
            mark,
        });
        diagram.set_state(0, index, lease_lines(after));
        for h in 1..=holders {
            diagram.set_state(holder_lane(h), index, holder_lines(after, h));
        }
        for b in 1..=brokers {
            diagram.set_state(broker_lane(b), index, broker_lines(config, after, b));
        }
    }
    if let (Some(invariant), Some(last)) = (report.invariant, states.last()) {
        diagram.violations.push(Violation {
            row: states.len() - 1,
            invariant: invariant.to_string(),
            detail: detail(config, &last.2, invariant),
        });
    }
    diagram
}

/// `(state before, action, state after)` for each step; `Init` has neither before nor action.
type Step = (Option<State>, Option<Action>, State);

/// Replays the report's actions on the model. The checker found this path on this model, so a
/// step that does not replay is a bug (an assert), not an input to draw around.
fn replay(config: &'static Config, report: &Report) -> Vec<Step> {
    let model = FelixHeadTrim::new(config);
    let mut state = model
        .init_states()
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{} has no initial state", config.name));
    let mut steps: Vec<Step> = vec![(None, None, state.clone())];
    for step in report.trace.iter().skip(1) {
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let next = actions
            .into_iter()
            .filter(|action| action.to_string() == step.action)
            .find_map(|action| model.next_state(&state, action).map(|next| (action, next)));
        let (action, next) = next.unwrap_or_else(|| {
            panic!(
                "{}: step {:?} is not enabled where the counterexample takes it",
                config.name, step.action
            )
        });
        steps.push((Some(state), Some(action), next.clone()));
        state = next;
    }
    steps
}

/// `"  3. Write(2, 1): ..."` -> `"Write(2, 1): ..."`.
fn strip_number(line: &str) -> &str {
    let trimmed = line.trim_start();
    match trimmed.split_once(". ") {
        Some((number, rest)) if number.chars().all(|c| c.is_ascii_digit()) => rest,
        _ => trimmed,
    }
}

/// A record as a log listing shows it: `w e2`, `t e2 floor 2`, `noop`.
fn record(record: Record) -> String {
    match record.k {
        Kind::Write => format!("write epoch {} (term {})", record.h, record.t),
        Kind::Trim => format!(
            "trim floor {} epoch {} (term {})",
            record.f, record.h, record.t
        ),
        Kind::Noop => format!("noop (term {})", record.t),
        Kind::Empty => "empty".to_string(),
    }
}

fn index(number: u8) -> usize {
    usize::from(number) - 1
}

/// A `Read`'s arrow: the refusal or the answer, and whether the holder retires or takes a tail.
fn read_label(config: &Config, before: &State, after: &State, h: u8, s: u8) -> (String, Style) {
    let from = before.expected[index(h)] + 1;
    let too_old = from < before.readable_start(s);
    let retired = after.retired[index(h)];
    let tag = before.floor_tag(config, s);
    match (too_old, retired) {
        (true, true) if tag > h => (
            format!("CursorTooOld tag epoch {tag}: h{h} retires"),
            Style::Refusal,
        ),
        (_, true) => (
            format!("read from {from}: a newer epoch's write, h{h} retires"),
            Style::Reply,
        ),
        (true, false) => (
            format!(
                "CursorTooOld (no tag) from {from}; h{h} takes tail {}",
                after.expected[index(h)] + 1
            ),
            Style::Refusal,
        ),
        (false, false) => (
            format!("read from {from}: tail {}", after.expected[index(h)] + 1),
            Style::Reply,
        ),
    }
}

/// A `Replicate`'s arrow: the record sent, the leader's new commit index, or a heartbeat.
fn replicate_label(before: &State, after: &State, l: u8, f: u8) -> String {
    let len = |state: &State, b: u8| state.log[index(b)].len();
    let sent = len(after, f) != len(before, f) || after.log[index(f)] != before.log[index(f)];
    let commit = after.commit[index(l)];
    let committed = commit != before.commit[index(l)];
    match (sent, committed) {
        (true, true) => format!("append {}; b{l} commits {commit}", len(after, f)),
        (true, false) => format!("append {}", len(after, f)),
        (false, true) => format!("b{l} commits {commit}"),
        (false, false) => "heartbeat".to_string(),
    }
}

/// How one action is drawn.
fn mark(
    config: &Config,
    before: &State,
    action: Action,
    after: &State,
    holder_lane: impl Fn(u8) -> usize,
    broker_lane: impl Fn(u8) -> usize,
) -> Mark {
    let len = |state: &State, b: u8| state.log[index(b)].len();
    match action {
        Action::MoveLease => Mark::Arrow {
            from: 0,
            to: holder_lane(after.lease),
            label: format!("lease epoch {}; h{} NOT told", after.lease, before.lease),
            style: Style::Fault,
        },
        Action::Promote(b, q) => {
            let votes: Vec<String> = (1..=config.bounds.brokers)
                .filter(|m| q & (1 << (m - 1)) != 0)
                .map(|m| format!("b{m}"))
                .collect();
            Mark::Point {
                lane: broker_lane(b),
                label: format!(
                    "leader of term {} ({})",
                    after.term[index(b)],
                    votes.join(",")
                ),
                style: Style::Fault,
            }
        }
        Action::Write(h, s) => Mark::Arrow {
            from: holder_lane(h),
            to: broker_lane(s),
            label: format!("write epoch {h} at {}", len(after, s)),
            style: Style::Request,
        },
        Action::TrimAppend(h, s, floor) => Mark::Arrow {
            from: holder_lane(h),
            to: broker_lane(s),
            label: format!("trim floor {floor} at {} (epoch {h})", len(after, s)),
            style: Style::Request,
        },
        Action::TrimNoop(h, s) => Mark::Arrow {
            from: holder_lane(h),
            to: broker_lane(s),
            label: format!(
                "no-op trim; h{h} takes tail {}",
                after.expected[index(h)] + 1
            ),
            style: Style::Request,
        },
        Action::Refused(h, s) => Mark::Arrow {
            from: broker_lane(s),
            to: holder_lane(h),
            label: format!(
                "OffsetMismatch; h{h} takes tail {}",
                after.expected[index(h)] + 1
            ),
            style: Style::Refusal,
        },
        Action::Read(h, s) => {
            let (label, style) = read_label(config, before, after, h, s);
            Mark::Arrow {
                from: broker_lane(s),
                to: holder_lane(h),
                label,
                style,
            }
        }
        Action::Replicate(l, f) => Mark::Arrow {
            from: broker_lane(l),
            to: broker_lane(f),
            label: replicate_label(before, after, l, f),
            style: Style::Peer,
        },
        Action::StepDown(l, f) => Mark::Arrow {
            from: broker_lane(f),
            to: broker_lane(l),
            label: format!("term {}: b{l} steps down", after.term[index(l)]),
            style: Style::Peer,
        },
        Action::Compact(b) => Mark::Point {
            lane: broker_lane(b),
            label: format!("deletes below {}", after.start[index(b)]),
            style: Style::Floor,
        },
        Action::Retain(b) => Mark::Point {
            lane: broker_lane(b),
            label: format!("retention deletes below {}", after.start[index(b)]),
            style: Style::Fault,
        },
        Action::Crash(b) => Mark::Point {
            lane: broker_lane(b),
            label: "crash".to_string(),
            style: Style::Fault,
        },
    }
}

fn lease_lines(state: &State) -> Vec<String> {
    vec![format!(
        "epoch {} is the newest lease (holder h{})",
        state.lease, state.lease
    )]
}

fn holder_lines(state: &State, h: u8) -> Vec<String> {
    let mut lines = Vec::new();
    if h > state.lease {
        lines.push("no lease yet".to_string());
    } else if state.retired[index(h)] {
        lines.push("RETIRED: learnt of a newer epoch".to_string());
    } else if h == state.lease {
        lines.push(format!("holds the lease, epoch {h}"));
    } else {
        lines.push(format!(
            "believes it holds epoch {h}; the lease moved to h{} (NOT told)",
            state.lease
        ));
    }
    let expected = state.expected[index(h)];
    lines.push(format!(
        "believes the stream ends at {expected}: next write at {}",
        expected + 1
    ));
    lines
}

fn broker_lines(config: &Config, state: &State, b: u8) -> Vec<String> {
    let role = if state.leader[index(b)] {
        "leader"
    } else {
        "follower"
    };
    let tag = match state.floor_tag(config, b) {
        0 => "no tag".to_string(),
        epoch => format!("tag epoch {epoch}"),
    };
    let mut lines = vec![
        format!("term {} {role}", state.term[index(b)]),
        format!(
            "floor {} ({tag}), serves from {}",
            state.floor(b),
            state.readable_start(b)
        ),
        format!(
            "commit {}, holds from {}",
            state.commit[index(b)],
            state.start[index(b)]
        ),
    ];
    let log = &state.log[index(b)];
    for offset in 1..=log.len() {
        let deleted = if offset < state.start[index(b)] {
            " (deleted)"
        } else {
            ""
        };
        let committed = if offset <= state.commit[index(b)] {
            ""
        } else {
            " (not committed)"
        };
        lines.push(format!(
            "{offset}: {}{deleted}{committed}",
            record(log.at(offset))
        ));
    }
    lines
}

/// What broke, in words: for StaleTrimRefused, the two committed records out of order.
fn detail(config: &Config, state: &State, invariant: Invariant) -> String {
    if invariant == Invariant::StaleTrimRefused {
        for b in 1..=config.bounds.brokers {
            let log = &state.log[index(b)];
            let mut newest: Option<(u8, u8)> = None;
            for offset in 1..=state.commit[index(b)] {
                let record = log.at(offset);
                if let Some((at, epoch)) = newest {
                    if matches!(record.k, Kind::Write | Kind::Trim) && record.h < epoch {
                        let what = if record.k == Kind::Write {
                            "write"
                        } else {
                            "trim"
                        };
                        return format!(
                            "on b{b}: committed {what} at {offset} from holder epoch {} follows \
                             the committed write at {at} from newer epoch {epoch}",
                            record.h
                        );
                    }
                }
                if record.k == Kind::Write && newest.is_none_or(|(_, epoch)| record.h > epoch) {
                    newest = Some((offset, record.h));
                }
            }
        }
    }
    format!("the state after the last step breaks {invariant}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step number is stripped from a rendered trace line, nothing else.
    #[test]
    fn strips_the_step_number() {
        assert_eq!(strip_number("  3. Write(2, 1): x"), "Write(2, 1): x");
        assert_eq!(strip_number("Init: y"), "Init: y");
    }
}

#[cfg(test)]
mod picture_tests {
    use super::*;
    use felix_model::spec::Spec;

    /// The HiddenTrims counterexample drawn: one row per step, the silent lease move from the
    /// lease service, the stale holder's untagged refusal, the last step highlighted.
    #[test]
    fn hidden_trims_counterexample_is_drawn() {
        let config = FelixHeadTrim::lookup("HiddenTrims").expect("the twin exists");
        let report = felix_model::check::check(config, 1);
        let diagram = diagram(config, &report);
        let names: Vec<&str> = diagram
            .lanes
            .iter()
            .map(|lane| lane.name.as_str())
            .collect();
        assert_eq!(names, ["lease", "h1", "h2", "b1", "b2", "b3"]);
        assert_eq!(diagram.rows.len(), report.trace.len());
        let violation = &diagram.violations[0];
        assert_eq!(violation.invariant, "StaleTrimRefused");
        assert_eq!(violation.row, diagram.rows.len() - 1);
        assert!(
            violation.detail.contains("from holder epoch 1"),
            "{}",
            violation.detail
        );
        assert!(matches!(&diagram.rows[1].mark,
            Mark::Arrow { from: 0, to: 2, style: Style::Fault, label } if label.contains("NOT told")));
        assert!(diagram.rows.iter().any(|row| matches!(&row.mark,
            Mark::Arrow { from: 3, to: 1, style: Style::Refusal, label }
                if label.contains("CursorTooOld (no tag)"))));
        assert!(
            diagram.rows[1].text.starts_with("MoveLease"),
            "{}",
            diagram.rows[1].text
        );
        let h1 = &diagram.states[1].last().expect("h1 has a state").lines;
        assert!(h1.iter().any(|line| line.contains("NOT told")), "{h1:?}");
    }
}
