//! The why of a failing run told in a few lines: one line per party (a client, a node, the lease),
//! in the order the parties first act, each listing what that party did in the why with its steps.
//!
//! A why is a list of trace lines in step order; read top to bottom it interleaves a dozen parties.
//! The story regroups the same events by who acted, so "c1 asked n1 to fence, was told it landed
//! at 2; n1 committed it and crashed; n0 lost a torn write, became leader and committed a noop
//! there" reads in three lines. Equal phrases of one party merge ("crashed (steps 49, 62)"), and a
//! disk loss of nothing is left out. It is a pure regrouping of `why::causal`'s lines: it adds no
//! event and judges nothing.

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
fn steps_text(steps: &[u64]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use felix_core::api::{Reply, Request};
    use felix_core::record::{Command, Entry};
    use felix_core::Token;

    fn line(step: u64, event: TraceEvent) -> TraceLine {
        TraceLine {
            step,
            time: step,
            event,
        }
    }

    /// The AckBeforeSync shape: a client's fence, its commit and acknowledgement, two crashes (one
    /// losing nothing, left out), a new leader's noop at the same offset. Three parties, three
    /// lines, in the order they first act, equal phrases merged.
    #[test]
    fn regroups_the_why_by_party() {
        let fence = Request::Fence {
            new: Token(2),
            old: Token(0),
        };
        let committed = |node, term, command| {
            TraceEvent::History(Event::Committed {
                node,
                entry: Entry {
                    offset: 2,
                    term,
                    command,
                },
            })
        };
        let trace: Vec<TraceLine> = vec![
            line(
                0,
                TraceEvent::History(Event::Requested {
                    client: 1,
                    node: 1,
                    request: fence.clone(),
                }),
            ),
            line(1, committed(1, 1, Command::Noop)),
            line(2, TraceEvent::History(Event::Crashed { node: 0 })),
            line(
                3,
                TraceEvent::Sim(SimEvent::DiskLost {
                    node: 0,
                    ops_lost: 1,
                    torn: true,
                }),
            ),
            line(4, TraceEvent::History(Event::Crashed { node: 1 })),
            line(
                5,
                TraceEvent::Sim(SimEvent::DiskLost {
                    node: 1,
                    ops_lost: 0,
                    torn: false,
                }),
            ),
            line(
                6,
                TraceEvent::History(Event::Replied {
                    client: 1,
                    node: 1,
                    request: fence,
                    reply: Reply::Appended { offset: 2, tail: 3 },
                }),
            ),
            line(7, TraceEvent::History(Event::Crashed { node: 1 })),
            line(
                8,
                TraceEvent::History(Event::BecameLeader { node: 0, term: 6 }),
            ),
            line(9, committed(0, 6, Command::Noop)),
        ];
        let why: Vec<usize> = (0..trace.len()).collect();
        let told = story(&trace, &why, &BTreeSet::new());
        assert_eq!(
            told,
            vec![
                "c1: asked n1: Fence 0->2 (step 0); answered by n1: Appended at 2 (tail 3) (step 6).",
                "n1: committed 2@1 noop (step 1); crashed (steps 4, 7).",
                "n0: crashed (step 2); lost 1 unsynced storage ops, last record torn (step 3); became leader of term 6 (step 8); committed 2@6 noop (step 9).",
            ]
        );
        // A why of one event tells no story.
        assert!(story(&trace, &[2], &BTreeSet::new()).is_empty());
    }

    /// More parties than lines: the last line names the rest with their counts.
    #[test]
    fn names_the_parties_left_over() {
        let trace: Vec<TraceLine> = (0..7)
            .map(|node| {
                line(
                    node,
                    TraceEvent::History(Event::Crashed { node: node as u32 }),
                )
            })
            .collect();
        let why: Vec<usize> = (0..7).collect();
        let told = story(&trace, &why, &BTreeSet::new());
        assert_eq!(told.len(), STORY_LINES_MAX);
        assert_eq!(told[0], "n0: crashed (step 0).");
        assert_eq!(
            told[STORY_LINES_MAX - 1],
            "also involved: n4 (1 event), n5 (1 event), n6 (1 event)."
        );
        // The party acting at a named step gets a line even though it acts last.
        let told = story(&trace, &why, &BTreeSet::from([6]));
        assert_eq!(told[3], "n6: crashed (step 6).");
        assert_eq!(
            told[STORY_LINES_MAX - 1],
            "also involved: n3 (1 event), n4 (1 event), n5 (1 event)."
        );
        assert_eq!(
            steps_text(&[1, 2, 3, 4, 5]),
            "steps 1, 2, 3, 4, ... (5 times)"
        );
    }
}
