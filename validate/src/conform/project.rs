//! The comparison: the core's brokers and the driver's holders, projected onto the model's
//! variables, against the model's state after the same action.
//!
//! Each voter is read as trace validation reads it (`crate::head_trim::projection`: kind, epoch,
//! term and floor of each record; term, leader, commit, floor), then shifted by the one offset of
//! the cluster's first noop (`core`'s module doc). Compared: `term`, `leader`, `Len(log)`, every
//! record the broker still holds, `commit` and `floor` (each at most the model's after a `Crash`),
//! each holder's `expected` and `retired`, and `lease`. Not compared, each for a named reason
//! (docs/formal/README.md, "From the model to the code"): `start` (the core compacts eagerly at
//! fixed segment boundaries, the model at its own `Compact` step from its own start), records the
//! broker no longer holds (deleted; the model keeps them), `staleRead` (a ghost variable; the
//! NoReadBelowFloor audit judges the core's reads) and the counters `writes`, `trims`,
//! `promotions`, `crashes` (bounds of the search, not of the core).

use crate::conform::core::{node, Core};
use crate::head_trim::projection::{BrokerProjection, ProjectedRecord};
use crate::voter::NodeProjection;
use felix_model::head_trim::config::Config;
use felix_model::head_trim::spec::{Kind, Record, State};

/// The first difference between the core's projection and the model's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The variable, as the spec names it (`commit[2]`, `log[1][3]`, `expected[1]`).
    pub variable: String,
    /// The model's value.
    pub model: String,
    /// The core's value, projected.
    pub core: String,
}

/// A core record as the model's `[k, h, t, f]`, with the floor shifted to model offsets.
fn record(projected: ProjectedRecord) -> Record {
    Record {
        k: projected.kind,
        h: projected.epoch.min(u64::from(u8::MAX)) as u8,
        t: projected.term.min(u64::from(u8::MAX)) as u8,
        f: if projected.kind == Kind::Trim {
            projected.floor.saturating_sub(1).min(u64::from(u8::MAX)) as u8
        } else {
            0
        },
    }
}

fn differ(variable: String, model: String, core: String) -> Option<Difference> {
    Some(Difference {
        variable,
        model,
        core,
    })
}

/// Compares the core with the model state `state` of `config`; the first difference.
pub fn compare(core: &Core, config: &Config, state: &State) -> Option<Difference> {
    for b in 1..=config.bounds.brokers {
        let Some(broker) = core.env.nodes[node(b) as usize].host.broker.as_ref() else {
            return differ(format!("broker {b}"), "up".to_string(), "down".to_string());
        };
        if let Some(difference) =
            compare_broker(b, &BrokerProjection::read(broker), core.crashed, state)
        {
            return Some(difference);
        }
    }
    for h in 1..=config.bounds.holders {
        let i = usize::from(h) - 1;
        let ours = core.holders[i];
        if ours.expected != u64::from(state.expected[i]) {
            return differ(
                format!("expected[{h}]"),
                state.expected[i].to_string(),
                ours.expected.to_string(),
            );
        }
        if ours.retired != state.retired[i] {
            return differ(
                format!("retired[{h}]"),
                state.retired[i].to_string(),
                ours.retired.to_string(),
            );
        }
    }
    if core.lease != u64::from(state.lease) {
        return differ(
            "lease".to_string(),
            state.lease.to_string(),
            core.lease.to_string(),
        );
    }
    None
}

/// Compares broker `b`'s projection with the model; after a crash (`crashed`) the core's commit
/// (and the floor its walk reached) may lag the model's, never lead it.
fn compare_broker(
    b: u8,
    view: &BrokerProjection,
    crashed: bool,
    state: &State,
) -> Option<Difference> {
    let i = usize::from(b) - 1;
    let term = u64::from(state.term[i]);
    if view.term != term {
        return differ(
            format!("term[{b}]"),
            term.to_string(),
            view.term.to_string(),
        );
    }
    if view.leader != state.leader[i] {
        return differ(
            format!("leader[{b}]"),
            state.leader[i].to_string(),
            view.leader.to_string(),
        );
    }
    let log = &state.log[i];
    // The core's offset 1 is the cluster's first noop, which the model does not have.
    let len = view.len().saturating_sub(1);
    if len != u64::from(log.len()) {
        return differ(
            format!("Len(log[{b}])"),
            log.len().to_string(),
            format!("{len} ({})", view.describe()),
        );
    }
    for offset in 1..=log.len() {
        let held = view.at(u64::from(offset) + 1);
        if held.kind == Kind::Empty {
            continue;
        }
        let ours = record(held);
        if ours != log.at(offset) {
            return differ(
                format!("log[{b}][{offset}]"),
                log.at(offset).to_string(),
                ours.to_string(),
            );
        }
    }
    let agrees = |core: u64, model: u8| {
        if crashed {
            core <= u64::from(model)
        } else {
            core == u64::from(model)
        }
    };
    let commit = view.commit.saturating_sub(1);
    if !agrees(commit, state.commit[i]) {
        return differ(
            format!("commit[{b}]"),
            state.commit[i].to_string(),
            commit.to_string(),
        );
    }
    let floor = view.floor.saturating_sub(1).max(1);
    if !agrees(floor, state.floor[i]) {
        return differ(
            format!("floor[{b}]"),
            state.floor[i].to_string(),
            floor.to_string(),
        );
    }
    None
}

/// The core's brokers in one line each, in model offsets.
pub fn describe(core: &Core, config: &Config) -> String {
    let mut lines = Vec::new();
    for b in 1..=config.bounds.brokers {
        match core.env.nodes[node(b) as usize].host.broker.as_ref() {
            None => lines.push(format!("broker {b}: down")),
            Some(broker) => {
                let view = BrokerProjection::read(broker);
                let records: Vec<String> = (2..=view.len())
                    .map(|offset| {
                        let held = view.at(offset);
                        if held.kind == Kind::Empty {
                            "deleted".to_string()
                        } else {
                            record(held).to_string()
                        }
                    })
                    .collect();
                lines.push(format!(
                    "broker {b}: term {} leader {} commit {} floor {} log <<{}>>",
                    view.term,
                    view.leader,
                    view.commit.saturating_sub(1),
                    view.floor.saturating_sub(1).max(1),
                    records.join(", ")
                ));
            }
        }
    }
    for (index, holder) in core.holders.iter().enumerate() {
        lines.push(format!(
            "holder {}: expected {} retired {}",
            index + 1,
            holder.expected,
            holder.retired
        ));
    }
    lines.join("; ")
}

/// The model's brokers and holders in the same words as `describe`.
pub fn describe_model(state: &State, config: &Config) -> String {
    let mut lines = Vec::new();
    for b in 1..=config.bounds.brokers {
        let i = usize::from(b) - 1;
        let records: Vec<String> = state.log[i].records().map(|r| r.to_string()).collect();
        lines.push(format!(
            "broker {b}: term {} leader {} commit {} floor {} log <<{}>>",
            state.term[i],
            state.leader[i],
            state.commit[i],
            state.floor[i],
            records.join(", ")
        ));
    }
    for h in 1..=config.bounds.holders {
        let i = usize::from(h) - 1;
        lines.push(format!(
            "holder {h}: expected {} retired {}",
            state.expected[i], state.retired[i]
        ));
    }
    lines.join("; ")
}
