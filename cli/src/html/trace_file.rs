//! A trace file as a `Diagram` (`felix trace show FILE --html PAGE`): a simulated run kept with
//! `felix replay --trace`, or a real-node run written by `felix nemesis`.
//!
//! A file carries no `RunReport`, so the page's header comes from its `started` line (seed, twin,
//! knobs) and its highlighted violations from its `violation` lines. The node lifelines are the
//! nodes the file names: the knobs' count (`brokers` in the simulator, numbered from 0; `nodes`
//! on real processes, numbered from 1), widened to every node an event names, so a line about a
//! node the knobs did not announce is still drawn on a lifeline of its own.

use super::sim::draw;
use super::{Diagram, Finding, Header};
use felix_core::NodeId;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine};

/// Node lifelines a page draws at most (a file naming node 4000000000 is refused, not drawn).
pub const NODES_MAX: NodeId = 64;

/// The diagram of a trace file's lines; an error is a message for the user (bad input).
pub fn diagram(lines: &[TraceLine], command: &str) -> Result<Diagram, String> {
    let Some(TraceEvent::Sim(SimEvent::Started {
        seed, twin, knobs, ..
    })) = lines.first().map(|line| &line.event)
    else {
        return Err("the first line is not the run's `started` line".to_string());
    };
    let real = knobs["real_processes"].as_bool().unwrap_or(false);
    let count = |key: &str| knobs[key].as_u64().unwrap_or(0).min(u64::from(NODES_MAX)) as NodeId;
    let (mut first, voters) = if real {
        (1, count("nodes"))
    } else {
        (0, count("brokers"))
    };
    let replicas = count("replicas");
    let mut last = (first + voters + replicas).saturating_sub(1);
    for line in lines {
        for node in nodes_named(&line.event) {
            first = first.min(node);
            last = last.max(node);
        }
    }
    if last.saturating_sub(first) >= NODES_MAX {
        return Err(format!(
            "the trace names nodes n{first} to n{last}: a page draws at most {NODES_MAX}"
        ));
    }
    let nodes = last + 1 - first;
    let replicas = replicas.min(nodes);
    let findings: Vec<Finding> = lines
        .iter()
        .filter_map(|line| match &line.event {
            TraceEvent::Sim(SimEvent::Violation {
                invariant,
                at_step,
                detail,
                ..
            }) => Some(Finding {
                step: *at_step,
                invariant: invariant.clone(),
                detail: detail.clone(),
            }),
            _ => None,
        })
        .collect();
    let seconds = lines.last().map_or(0, |line| line.time) as f64 / 1e6;
    let header = Header {
        title: format!(
            "seed {seed}{}{}",
            twin.as_ref()
                .map(|twin| format!(" twin {twin}"))
                .unwrap_or_default(),
            if real { " (real processes)" } else { "" }
        ),
        subtitle: vec![
            knobs_in_words(knobs),
            format!(
                "{} trace lines, {seconds:.3} s{}; {command}",
                lines.len(),
                if real {
                    " of real time (not deterministic: the seed fixed the faults only)"
                } else {
                    " simulated"
                }
            ),
        ],
        first_node: first,
        brokers: nodes - replicas,
        replicas,
    };
    Ok(draw(lines, &header, &findings))
}

/// The knobs as `name value` pairs (scalars and short lists).
fn knobs_in_words(knobs: &serde_json::Value) -> String {
    let Some(object) = knobs.as_object() else {
        return String::new();
    };
    object
        .iter()
        .filter(|(_, value)| !value.is_object())
        .map(|(name, value)| match value.as_str() {
            Some(text) => format!("{name} {text}"),
            None => format!("{name} {value}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every node a line names, where the diagram draws it on that node's lifeline.
fn nodes_named(event: &TraceEvent) -> Vec<NodeId> {
    match event {
        TraceEvent::History(event) => event.node().into_iter().chain(event.peer()).collect(),
        TraceEvent::Sim(
            SimEvent::DiskLost { node, .. } | SimEvent::DiskReadFailed { node, .. },
        ) => vec![*node],
        TraceEvent::Sim(_) => Vec::new(),
    }
}
