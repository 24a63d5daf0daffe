//! The why of a failing run told in a few lines: one line per party (a client, a node, the lease),
//! in the order the parties first act, each listing what that party did in the why with its steps.
//!
//! A why is a list of trace lines in step order; read top to bottom it interleaves a dozen parties.
//! The story regroups the same events by who acted, so "c1 asked n1 to fence, was told it landed at
//! 2; n1 committed it and crashed; n0 lost a torn write, became leader and committed a noop there"
//! reads in three lines. Equal phrases of one party merge ("crashed (steps 49, 62)"), and a disk
//! loss of nothing is left out. It is a pure regrouping of the why's lines (`why::causal`'s, or
//! `why::lines`' where it falls back): it adds no event and judges nothing.

use crate::render::describe;
use crate::render::trace::{SimEvent, TraceEvent, TraceLine};
use felix_core::history::Event;
use std::collections::BTreeSet;

/// The most lines a story has: one per party, the last one naming the parties left over.
pub const STORY_LINES_MAX: usize = 5;

/// The most phrases one party's line lists before "and N more".
const PHRASES_MAX: usize = 6;

/// The most steps one phrase lists before "..." and a count.
const STEPS_MAX: usize = 4;

/// Who acted in `event` and what they did, in words; `None` for an event that tells nothing.
fn party_and_phrase(event: &TraceEvent) -> Option<(String, String)> {
    let sentence = describe::trace_event(event);
    let what = sentence
        .split_once(": ")
        .map_or(sentence.as_str(), |(_, what)| what)
        .to_string();
    Some(match event {
        TraceEvent::History(Event::Requested { client, node, .. }) => {
            (format!("c{client}"), format!("asked n{node}: {what}"))
        }
        TraceEvent::History(Event::Replied { client, node, .. }) => {
            (format!("c{client}"), format!("answered by n{node}: {what}"))
        }
        TraceEvent::Sim(SimEvent::Paused { client }) => (format!("c{client}"), "frozen".into()),
        TraceEvent::Sim(SimEvent::Resumed { client }) => (format!("c{client}"), "thawed".into()),
        TraceEvent::Sim(SimEvent::DiskLost {
            ops_lost: 0,
            torn: false,
            ..
        }) => return None,
        TraceEvent::Sim(
            SimEvent::DiskLost { node, .. } | SimEvent::DiskReadFailed { node, .. },
        ) => (
            format!("n{node}"),
            what.replacen(&format!("n{node} "), "", 1),
        ),
        TraceEvent::Sim(SimEvent::LeaseMoved { .. }) => ("the lease".into(), what),
        TraceEvent::Sim(_) => ("the simulator".into(), what),
        TraceEvent::History(_) => match sentence.split_once(": ") {
            Some((who, what)) => (who.to_string(), what.to_string()),
            None => ("the run".into(), sentence.clone()),
        },
    })
}

/// "step 5" or "steps 5, 9, 12" or "steps 5, 9, 12, 14, ... (7 times)".
pub fn steps_text(steps: &[u64]) -> String {
    let shown: Vec<String> = steps.iter().take(STEPS_MAX).map(u64::to_string).collect();
    match steps.len() {
        1 => format!("step {}", shown[0]),
        count if count <= STEPS_MAX => format!("steps {}", shown.join(", ")),
        count => format!("steps {}, ... ({count} times)", shown.join(", ")),
    }
}

/// One party's events: its phrases in first-occurrence order, each with the steps it happened at.
struct Party {
    name: String,
    phrases: Vec<(String, Vec<u64>)>,
    /// Whether the party acts at a step the finding names.
    named: bool,
}

impl Party {
    fn events(&self) -> usize {
        self.phrases.iter().map(|(_, steps)| steps.len()).sum()
    }

    fn line(&self) -> String {
        let mut parts: Vec<String> = self
            .phrases
            .iter()
            .take(PHRASES_MAX)
            .map(|(phrase, steps)| format!("{phrase} ({})", steps_text(steps)))
            .collect();
        let more: usize = self
            .phrases
            .iter()
            .skip(PHRASES_MAX)
            .map(|(_, steps)| steps.len())
            .sum();
        if more > 0 {
            parts.push(format!("and {more} more"));
        }
        format!("{}: {}.", self.name, parts.join("; "))
    }
}

/// The story of `why` (indices into `trace`, in step order): at most `STORY_LINES_MAX` lines, one
/// per party in the order they first act. When there are more parties than lines, the parties
/// that act at one of the `named` steps (the finding's own step and those its words name) are told
/// first, then the earliest to act; the last line names the parties left over with their event
/// counts. Empty when the why holds fewer than two events worth telling.
pub fn story(trace: &[TraceLine], why: &[usize], named: &BTreeSet<u64>) -> Vec<String> {
    let mut parties: Vec<Party> = Vec::new();
    for &index in why {
        let Some(line) = trace.get(index) else {
            continue;
        };
        let Some((name, phrase)) = party_and_phrase(&line.event) else {
            continue;
        };
        let party = match parties.iter().position(|party| party.name == name) {
            Some(position) => &mut parties[position],
            None => {
                parties.push(Party {
                    name,
                    phrases: Vec::new(),
                    named: false,
                });
                parties.last_mut().expect("just pushed")
            }
        };
        party.named |= named.contains(&line.step);
        match party.phrases.iter_mut().find(|(known, _)| *known == phrase) {
            Some((_, steps)) => steps.push(line.step),
            None => party.phrases.push((phrase, vec![line.step])),
        }
    }
    if parties.iter().map(Party::events).sum::<usize>() < 2 {
        return Vec::new();
    }
    let room = if parties.len() > STORY_LINES_MAX {
        STORY_LINES_MAX - 1
    } else {
        parties.len()
    };
    // Which parties get a line: the named ones first, then by first act; told in first-act order.
    let mut order: Vec<usize> = (0..parties.len()).collect();
    order.sort_by_key(|&position| (!parties[position].named, position));
    let mut told: Vec<usize> = order[..room].to_vec();
    told.sort_unstable();
    let mut lines: Vec<String> = told
        .iter()
        .map(|&position| parties[position].line())
        .collect();
    let rest: Vec<String> = order[room..]
        .iter()
        .map(|&position| &parties[position])
        .map(|party| match party.events() {
            1 => format!("{} (1 event)", party.name),
            events => format!("{} ({events} events)", party.name),
        })
        .collect();
    if !rest.is_empty() {
        lines.push(format!("also involved: {}.", rest.join(", ")));
    }
    lines
}
