//! The comparison for ParosTrimJump paths: every node (voters and replicas) read as trace
//! validation reads it (`crate::paros::ParosNode`: kind, fence, term and `up_to` of each record;
//! term, leader, start, commit, writer, floor, sealed term), shifted by the two records of the
//! setup (`super::driver::SHIFT`), against the model's state after the same action.
//!
//! Compared: `term`, `vote`, `leader`, `start`, `Len(log)` and every record held, `commit`,
//! `writer`, `floor`, and `sterm` and `swriter` once a node holds nothing below a point. Not
//! compared, each for a named reason (docs/formal/README.md, "From the model to the code"):
//! - `sfloor`: the core seals the floor in force, which the trim at the point itself set; the
//!   model seals the fold below the point. What a jumper takes from it is compared instead:
//! - a jumper's `floor` until its walk reaches the trim at the point: the core takes the point
//!   (set by no trim; a read below it is `NotHeld`), the model the sender's sealed floor, below
//!   the point. Compared as at most the core's (`floor <= start`), exact again once the walk
//!   passes the point.
//! - the history variables `high`, `decided`, `acked` and the counters: the audits judge the
//!   core's history instead (TermNeverDecreases, AckedWritesKept, ...).

use super::driver::SHIFT;
use crate::conform::core::{node, Core};
use crate::conform::project::Difference;
use crate::paros::{ParosNode, ParosRecord};
use crate::voter::NodeProjection;
use felix_core::broker::Broker;
use felix_core::record::Command;
use felix_model::paros::config::ParosConfig;
use felix_model::paros::spec::{Kind, Record, State};

fn differ(variable: String, model: String, core: String) -> Option<Difference> {
    Some(Difference {
        variable,
        model,
        core,
    })
}

/// A core offset (or floor) in model slots; the setup's offsets are slot 0 or below.
fn slot(offset: u64) -> u64 {
    offset.saturating_sub(SHIFT)
}

/// A core record as the model's `[k, o, t, u]`; a write's owner is the body's second byte.
fn record(broker: &Broker, offset: u64, projected: ParosRecord) -> Record {
    let o = match projected.kind {
        Kind::Write => match broker.journal().entry(offset).map(|entry| &entry.command) {
            Some(Command::Write { body, .. }) if body.len() == 2 => body[1],
            _ => u8::MAX,
        },
        _ => projected.token.min(u64::from(u8::MAX)) as u8,
    };
    Record {
        k: projected.kind,
        o,
        t: projected.term.min(u64::from(u8::MAX)) as u8,
        u: if projected.kind == Kind::Truncate {
            slot(projected.up_to).min(u64::from(u8::MAX)) as u8
        } else {
            0
        },
    }
}

/// One node's projection: the records it holds from model slot 1 (or its first held slot).
struct View {
    term: u64,
    vote: u64,
    leader: bool,
    start: u64,
    records: Vec<Record>,
    commit: u64,
    writer: u64,
    floor: u64,
    /// The floor was set by a jump and the walk has not reached the trim at the point yet.
    jump_floor: bool,
    sterm: u64,
    swriter: u64,
}

impl View {
    fn read(broker: &Broker) -> View {
        let projected = ParosNode::read(broker);
        let first = projected.start.max(SHIFT + 1);
        let records = (first..=projected.len())
            .map(|offset| record(broker, offset, projected.at(offset)))
            .collect();
        let journal = broker.journal();
        View {
            term: projected.term,
            vote: broker.vote().map_or(0, |v| u64::from(v) + 1),
            leader: projected.leader,
            start: slot(first),
            records,
            commit: slot(projected.commit),
            writer: projected.writer,
            floor: slot(projected.floor).max(1),
            jump_floor: !projected.leader
                && projected.floor == projected.start
                && projected.commit < projected.floor,
            sterm: projected.sterm,
            swriter: journal.sealed().writer.0,
        }
    }

    fn describe(&self) -> String {
        let records: Vec<String> = self.records.iter().map(|r| r.to_string()).collect();
        format!(
            "term {} vote {} leader {} start {} commit {} writer {} floor {} log <<{}>>",
            self.term,
            self.vote,
            self.leader,
            self.start,
            self.commit,
            self.writer,
            self.floor,
            records.join(", ")
        )
    }
}

/// Compares the core with the model state `state` of `config`; the first difference.
pub fn compare(core: &Core, config: &ParosConfig, state: &State) -> Option<Difference> {
    for n in 1..=config.bounds.nodes() {
        let Some(broker) = core.env.nodes[node(n) as usize].host.broker.as_ref() else {
            return differ(format!("node {n}"), "up".to_string(), "down".to_string());
        };
        if let Some(difference) = compare_node(n, &View::read(broker), core.crashed, state) {
            return Some(difference);
        }
    }
    None
}

/// Compares node `n`'s view with the model; after a crash (`crashed`) the core's commit index,
/// writer and floor are compared as at most the model's: the core's walk is volatile (a restarted
/// node recovers its sealed state and learns its commit again from a leader), the model keeps it.
fn compare_node(n: u8, view: &View, crashed: bool, state: &State) -> Option<Difference> {
    let i = usize::from(n) - 1;
    let scalars = [
        ("term", u64::from(state.term[i]), view.term),
        ("vote", u64::from(state.vote[i]), view.vote),
        ("start", u64::from(state.start[i]), view.start),
        (
            "Len(log)",
            u64::from(state.log[i].len()),
            view.records.len() as u64,
        ),
    ];
    for (name, model, ours) in scalars {
        if model != ours {
            return differ(format!("{name}[{n}]"), model.to_string(), ours.to_string());
        }
    }
    if view.leader != state.leader[i] {
        return differ(
            format!("leader[{n}]"),
            state.leader[i].to_string(),
            view.leader.to_string(),
        );
    }
    for (position, ours) in view.records.iter().enumerate() {
        let theirs = state.log[i].at(position as u8 + 1);
        if *ours != theirs {
            return differ(
                format!("log[{n}][{}]", position + 1),
                theirs.to_string(),
                ours.to_string(),
            );
        }
    }
    let mut scalars = vec![
        ("commit", u64::from(state.commit[i]), view.commit),
        ("writer", u64::from(state.writer[i]), view.writer),
    ];
    if state.start[i] > 1 {
        scalars.push(("sterm", u64::from(state.sterm[i]), view.sterm));
        scalars.push(("swriter", u64::from(state.swriter[i]), view.swriter));
    }
    for (name, model, ours) in scalars {
        let at_most = crashed && (name == "commit" || name == "writer");
        if model != ours && !(at_most && ours < model) {
            return differ(format!("{name}[{n}]"), model.to_string(), ours.to_string());
        }
    }
    let floor = u64::from(state.floor[i]);
    let floor_agrees = if crashed && view.floor <= floor {
        true
    } else if view.jump_floor {
        floor <= view.floor && view.floor == view.start
    } else {
        floor == view.floor
    };
    if !floor_agrees {
        return differ(
            format!("floor[{n}]"),
            floor.to_string(),
            view.floor.to_string(),
        );
    }
    None
}

/// The core's nodes in one line each, in model slots.
pub fn describe(core: &Core, config: &ParosConfig) -> String {
    let lines: Vec<String> = (1..=config.bounds.nodes())
        .map(
            |n| match core.env.nodes[node(n) as usize].host.broker.as_ref() {
                None => format!("node {n}: down"),
                Some(broker) => format!("node {n}: {}", View::read(broker).describe()),
            },
        )
        .collect();
    lines.join("; ")
}

/// The model's nodes in the same words as `describe`.
pub fn describe_model(state: &State, config: &ParosConfig) -> String {
    let lines: Vec<String> = (1..=config.bounds.nodes())
        .map(|n| {
            let i = usize::from(n) - 1;
            let records: Vec<String> = state.log[i].records().map(|r| r.to_string()).collect();
            format!(
                "node {n}: term {} vote {} leader {} start {} commit {} writer {} floor {} log <<{}>>",
                state.term[i],
                state.vote[i],
                state.leader[i],
                state.start[i],
                state.commit[i],
                state.writer[i],
                state.floor[i],
                records.join(", ")
            )
        })
        .collect();
    lines.join("; ")
}
