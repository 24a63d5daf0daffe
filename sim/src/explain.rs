//! Readable trace lines: one short sentence per event, for the summary of a failing run.
//!
//! The JSONL trace is for tools; a person replaying a seed reads these. Requests, replies and
//! records are rendered by the scenario describers (`script::describe`) so a failing seed reads
//! like a scenario file.

use crate::script::describe;
use crate::trace::{SimEvent, TraceEvent, TraceLine};
use felix_core::history::Event;

/// One trace line as `step  time  what happened`.
pub fn line(trace_line: &TraceLine) -> String {
    format!(
        "{:>6}  {:>9.6}s  {}",
        trace_line.step,
        trace_line.time as f64 / 1e6,
        event(&trace_line.event)
    )
}

/// One trace line given as JSON (as the recorder keeps it); the JSON itself if it is not one.
pub fn json_line(json: &str) -> String {
    match serde_json::from_str::<TraceLine>(json) {
        Ok(trace_line) => line(&trace_line),
        Err(_) => json.to_string(),
    }
}

/// One event's sentence (no step, no time): what replay, the summary and `--html` pictures show.
pub fn event(event: &TraceEvent) -> String {
    match event {
        TraceEvent::History(event) => history(event),
        TraceEvent::Sim(event) => sim(event),
    }
}

fn sim(event: &SimEvent) -> String {
    match event {
        SimEvent::Started { seed, twin, .. } => match twin {
            Some(twin) => format!("sim: seed {seed} starts ({twin})"),
            None => format!("sim: seed {seed} starts"),
        },
        SimEvent::Phase { name } => format!("sim: {name} phase"),
        SimEvent::NetworkFault { description } => format!("sim: network: {description}"),
        SimEvent::Healed => "sim: every fault healed".to_string(),
        SimEvent::LeaseMoved {
            from,
            to,
            epoch,
            told,
        } => {
            let from = from.map_or("nobody".to_string(), |client| format!("c{client}"));
            let told = if *told { "told" } else { "NOT told" };
            format!("sim: lease epoch {epoch} moved from {from} to c{to} ({from} {told})")
        }
        SimEvent::Paused { client } => format!("sim: c{client} frozen"),
        SimEvent::Resumed { client } => format!("sim: c{client} thawed"),
        SimEvent::DiskLost {
            node,
            ops_lost,
            torn,
        } => {
            let torn = if *torn { ", last record torn" } else { "" };
            format!("sim: n{node} lost {ops_lost} unsynced storage ops{torn}")
        }
        SimEvent::Finished { reason } => format!("sim: run ends: {reason}"),
    }
}

fn history(event: &Event) -> String {
    if let Some(line) = describe::node_event(event) {
        return line;
    }
    match event {
        Event::Committed { node, entry } => {
            format!("n{node}: committed {}", describe::entry(entry))
        }
        Event::NodeState {
            node,
            term,
            leader,
            floor,
            committed,
            readable_start,
            ..
        } => {
            let role = if *leader { "leader" } else { "not leader" };
            format!(
                "n{node}: state term {term} {role} floor {floor} committed {committed} serves from {readable_start}"
            )
        }
        Event::Requested {
            client,
            node,
            request,
        } => {
            format!("c{client} -> n{node}: {}", describe::request(request))
        }
        Event::Replied {
            client,
            node,
            reply,
            ..
        } => {
            format!("c{client} <- n{node}: {}", describe::reply(reply))
        }
        Event::LeaseGranted { client, epoch } => format!("c{client}: granted lease epoch {epoch}"),
        Event::HolderRetired {
            client,
            epoch,
            newer_epoch,
            by_tag,
        } => {
            let how = if *by_tag {
                "a tagged CursorTooOld"
            } else {
                "a newer write"
            };
            format!("c{client}: holder of epoch {epoch} retires: saw epoch {newer_epoch} in {how}")
        }
        Event::Gap { client, from, to } => format!("c{client}: gap {from}..{to} reported"),
        Event::Folded {
            client,
            offset,
            digest,
        } => {
            format!("c{client}: folded {offset} -> {digest:#018x}")
        }
        Event::CheckpointRestored { client, begin, end } => {
            format!("c{client}: restored from checkpoint {begin}..={end}")
        }
        Event::PhaseChanged { phase } => format!("phase {phase:?}"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use felix_core::api::Reply;

    /// A JSON trace line renders as one readable sentence with its step and time.
    #[test]
    fn renders_a_refusal() {
        let json = serde_json::to_string(&TraceLine {
            step: 7,
            time: 1_500_000,
            event: TraceEvent::History(Event::Replied {
                client: 1,
                node: 2,
                request: felix_core::api::Request::Read {
                    from: felix_core::api::ReadFrom::Offset(3),
                    max_records: 8,
                },
                reply: Reply::CursorTooOld {
                    floor: 9,
                    tag: None,
                },
            }),
        })
        .unwrap_or_default();
        let text = json_line(&json);
        assert!(
            text.contains("c1 <- n2: CursorTooOld floor 9 untagged"),
            "{text}"
        );
        assert!(text.trim_start().starts_with("7  "), "{text}");
        assert!(text.contains("1.500000s"), "{text}");
    }
}
