//! The "why" of a failing run: the events a violation depends on, picked from the whole run up
//! to the step where it was detected, not only from the window just before it.
//!
//! `causal` follows what the finding names. Its sentence names events by step (the acknowledgement,
//! the commit it contradicts), and clients, nodes, offsets and epochs in the audits' fixed words
//! ("client 1", "node 0", "offset 26", "epoch 7"). The why holds those events; the request each
//! named reply answered; the commits, floors, deletions and jumps at the named offsets; the leader
//! changes, crashes, restarts and lost disk writes of the nodes involved, and the pauses of the
//! clients involved, from the first named event on; and the lease moves of the named epochs, all in
//! step order. A finding that names no step, offset or epoch falls back to `lines`.
//!
//! `lines`: each invariant names the kinds of events its violations are made of (for
//! StaleTrimRefused: the lease moves, the stale holder's refusals and reads, both holders' writes
//! and trims). Where the finding names its clients (`Finding::clients`), client events of other
//! clients are left out.
//! Everything here is a pure filter over the trace: it explains, it judges nothing.

use crate::render::trace::{SimEvent, TraceEvent, TraceLine};
use felix_core::api::{ClientId, Reply, Request};
use felix_core::history::Event;
use felix_core::record::{NodeId, Offset};
use felix_core::rules::Invariant;
use std::collections::BTreeSet;

/// The most lines a "why" section lists unless asked for more (`--why-max`).
pub const WHY_LINES_MAX: usize = 40;

/// What a finding's sentence names, in the audits' words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Named {
    pub steps: BTreeSet<u64>,
    pub clients: BTreeSet<ClientId>,
    pub nodes: BTreeSet<NodeId>,
    pub offsets: BTreeSet<Offset>,
    pub epochs: BTreeSet<u64>,
    pub floors: BTreeSet<Offset>,
    pub terms: BTreeSet<u64>,
}

/// Every number that follows `word ` in `text` as a whole word.
fn numbers_after(text: &str, word: &str) -> BTreeSet<u64> {
    let pattern = format!("{word} ");
    text.match_indices(&pattern)
        .filter(|(position, _)| {
            text[..*position]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
        })
        .filter_map(|(position, _)| {
            let digits: String = text[position + pattern.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

impl Named {
    /// What `detail` names, with the finding's own step and clients.
    pub fn of(detail: &str, step: Option<u64>, clients: &[ClientId]) -> Named {
        let mut steps = numbers_after(detail, "step");
        steps.extend(step);
        let mut named_clients: BTreeSet<ClientId> = numbers_after(detail, "client")
            .into_iter()
            .filter_map(|client| ClientId::try_from(client).ok())
            .collect();
        named_clients.extend(clients.iter().copied());
        Named {
            steps,
            clients: named_clients,
            nodes: numbers_after(detail, "node")
                .into_iter()
                .filter_map(|node| NodeId::try_from(node).ok())
                .collect(),
            offsets: numbers_after(detail, "offset"),
            epochs: numbers_after(detail, "epoch")
                .into_iter()
                .chain(numbers_after(&detail.replace("epoch=", "epoch "), "epoch"))
                .collect(),
            floors: numbers_after(detail, "floor"),
            terms: numbers_after(detail, "term"),
        }
    }
}

/// The node and client an event is about, if any.
fn parties(event: &TraceEvent) -> (Option<NodeId>, Option<ClientId>) {
    match event {
        TraceEvent::History(history) => (history.node(), client_of(history)),
        TraceEvent::Sim(
            SimEvent::DiskLost { node, .. } | SimEvent::DiskReadFailed { node, .. },
        ) => (Some(*node), None),
        TraceEvent::Sim(SimEvent::Paused { client } | SimEvent::Resumed { client }) => {
            (None, Some(*client))
        }
        TraceEvent::Sim(_) => (None, None),
    }
}

/// Whether `event` records something at one of `offsets`: its commit, its acknowledgement, a
/// floor, deletion or jump that moves past it.
fn at_offsets(event: &TraceEvent, offsets: &BTreeSet<Offset>) -> bool {
    let TraceEvent::History(history) = event else {
        return false;
    };
    let crosses = |low: Offset, high: Offset| offsets.range(low..high).next().is_some();
    match history {
        Event::Committed { entry, .. } => offsets.contains(&entry.offset),
        Event::Replied {
            reply: Reply::Appended { offset, .. },
            ..
        } => offsets.contains(offset),
        Event::FloorApplied { floor, trim, .. } => {
            crosses(0, *floor) || trim.is_some_and(|trim| offsets.contains(&trim))
        }
        Event::SegmentsDeleted { below, .. } => crosses(0, *below),
        Event::Jumped { point, .. } | Event::TrimmedToSent { point, .. } => crosses(0, *point),
        Event::TruncateRefused { offset, .. } => offsets.contains(offset),
        _ => false,
    }
}

/// Whether `event` sets one of `floors`: a node applying it, or the trim that asked for it.
fn sets_floor(event: &TraceEvent, floors: &BTreeSet<Offset>) -> bool {
    match event {
        TraceEvent::History(Event::FloorApplied { floor, .. }) => floors.contains(floor),
        TraceEvent::History(Event::Requested {
            request: Request::Trim { floor, .. },
            ..
        }) => floors.contains(floor),
        _ => false,
    }
}

/// Whether `event` is an election step of one of `terms`: a leader, a vote granted or sent.
fn in_terms(event: &TraceEvent, terms: &BTreeSet<u64>) -> bool {
    match event {
        TraceEvent::History(history) => match history {
            Event::BecameLeader { term, .. } => terms.contains(term),
            Event::PromiseChanged {
                term,
                vote: Some(_),
                ..
            }
            | Event::PromiseSent {
                term,
                vote: Some(_),
                ..
            } => terms.contains(term),
            _ => false,
        },
        TraceEvent::Sim(_) => false,
    }
}

/// Whether `event` is a fault, restart or leader change of a node (or a pause of a client).
fn is_fault(event: &TraceEvent) -> bool {
    match event {
        TraceEvent::History(history) => matches!(
            history,
            Event::Crashed { .. } | Event::Restarted { .. } | Event::BecameLeader { .. }
        ),
        TraceEvent::Sim(sim) => matches!(
            sim,
            SimEvent::DiskLost { .. }
                | SimEvent::DiskReadFailed { .. }
                | SimEvent::Paused { .. }
                | SimEvent::Resumed { .. }
        ),
    }
}

/// The causal why (module doc): the indices of the lines up to `step` that the finding named
/// `named` depends on, at most `lines_max` (the named events first, then the latest of the rest),
/// in step order; `None` when the finding names no step, offset or epoch to follow.
pub fn causal(
    named: &Named,
    trace: &[TraceLine],
    step: usize,
    lines_max: usize,
) -> Option<Vec<usize>> {
    let anchors: BTreeSet<usize> = named
        .steps
        .iter()
        .map(|&named_step| named_step as usize)
        .filter(|&index| index <= step && index < trace.len())
        .collect();
    // Only the finding's own step and nothing to follow from it: say nothing new.
    let follow = [&named.offsets, &named.epochs, &named.floors, &named.terms];
    if anchors.len() <= 1 && follow.iter().all(|set| set.is_empty()) {
        return None;
    }
    let mut nodes = named.nodes.clone();
    let mut clients = named.clients.clone();
    let mut core: BTreeSet<usize> = anchors.clone();
    for &anchor in &anchors {
        let (node, client) = parties(&trace[anchor].event);
        nodes.extend(node);
        clients.extend(client);
        // The request a named reply answered: the client's latest request before it.
        if let TraceEvent::History(Event::Replied { client, .. }) = &trace[anchor].event {
            let request = trace[..anchor].iter().rposition(|line| {
                matches!(&line.event, TraceEvent::History(Event::Requested { client: asked, .. }) if asked == client)
            });
            core.extend(request);
        }
    }
    // Faults count from the first event the finding names (or the request it answered).
    let start = core.first().copied().unwrap_or(0);
    let mut rest = Vec::new();
    for (index, line) in trace.iter().enumerate().take(step + 1) {
        if core.contains(&index) {
            continue;
        }
        let (node, client) = parties(&line.event);
        let involved = node.is_some_and(|node| nodes.contains(&node))
            || client.is_some_and(|client| clients.contains(&client));
        let lease = match &line.event {
            TraceEvent::Sim(SimEvent::LeaseMoved { epoch, .. })
            | TraceEvent::History(Event::LeaseGranted { epoch, .. }) => {
                named.epochs.contains(epoch)
            }
            _ => false,
        };
        if at_offsets(&line.event, &named.offsets)
            || sets_floor(&line.event, &named.floors)
            || in_terms(&line.event, &named.terms)
            || lease
            || (index >= start && involved && is_fault(&line.event))
        {
            rest.push(index);
        }
    }
    let room = lines_max.saturating_sub(core.len());
    let skip = rest.len().saturating_sub(room);
    core.extend(rest.drain(skip..));
    let mut picked: Vec<usize> = core.into_iter().collect();
    // More named events than room: the latest of them.
    let over = picked.len().saturating_sub(lines_max);
    picked.drain(..over);
    Some(picked)
}

/// The indices of the lines (up to and including `step`) that `invariant`'s violation, naming
/// `clients`, depends on, at most `lines_max` of them, the latest kept.
pub fn lines(
    invariant: Invariant,
    clients: &[ClientId],
    trace: &[TraceLine],
    step: usize,
    lines_max: usize,
) -> Vec<usize> {
    let clients: BTreeSet<ClientId> = clients.iter().copied().collect();
    let mut picked: Vec<usize> = trace
        .iter()
        .enumerate()
        .take(step + 1)
        .filter(|(_, line)| relevant(invariant, &clients, &line.event))
        .map(|(index, _)| index)
        .collect();
    let skip = picked.len().saturating_sub(lines_max);
    picked.drain(..skip);
    picked
}

/// The client a history event is about, if any.
pub fn client_of(event: &Event) -> Option<ClientId> {
    match event {
        Event::Requested { client, .. }
        | Event::Replied { client, .. }
        | Event::LeaseGranted { client, .. }
        | Event::HolderRetired { client, .. }
        | Event::Gap { client, .. }
        | Event::Folded { client, .. }
        | Event::CheckpointRestored { client, .. }
        | Event::CheckpointCompared { client, .. }
        | Event::CheckpointWritten { client, .. }
        | Event::OwnerStopped { client, .. } => Some(*client),
        _ => None,
    }
}

fn is_refusal(reply: &Reply) -> bool {
    matches!(
        reply,
        Reply::OffsetMismatch { .. }
            | Reply::FenceMismatch { .. }
            | Reply::CursorTooOld { .. }
            | Reply::TruncateRefused { .. }
            | Reply::TrimNoop { .. }
    )
}

fn relevant(invariant: Invariant, clients: &BTreeSet<ClientId>, event: &TraceEvent) -> bool {
    let history = match event {
        TraceEvent::Sim(sim) => return sim_relevant(invariant, sim),
        TraceEvent::History(history) => history,
    };
    if let Some(client) = client_of(history) {
        if !clients.is_empty()
            && !clients.contains(&client)
            && invariant != Invariant::StaleTrimRefused
        {
            return false;
        }
    }
    match invariant {
        Invariant::StaleTrimRefused => match history {
            Event::LeaseGranted { .. } | Event::HolderRetired { .. } => true,
            Event::Replied { request, reply, .. } => {
                is_refusal(reply)
                    || matches!(request, Request::Read { .. })
                    || matches!(reply, Reply::Appended { .. })
            }
            _ => false,
        },
        Invariant::FloorRecordKept => matches!(
            history,
            Event::FloorApplied { .. }
                | Event::SegmentsDeleted { .. }
                | Event::Jumped { .. }
                | Event::TrimmedToSent { .. }
        ),
        Invariant::NoReadBelowFloor => match history {
            Event::FloorApplied { .. } | Event::Jumped { .. } => true,
            Event::Replied { request, .. } => {
                matches!(request, Request::Read { .. } | Request::Trim { .. })
            }
            _ => false,
        },
        Invariant::AckedWritesKept | Invariant::CommittedPrefixAgreement => match history {
            Event::BecameLeader { .. }
            | Event::Crashed { .. }
            | Event::Restarted { .. }
            | Event::FloorApplied { .. }
            | Event::Jumped { .. } => true,
            Event::Replied { reply, .. } => matches!(reply, Reply::Appended { .. }),
            _ => false,
        },
        Invariant::TermNeverDecreases => matches!(
            history,
            Event::PromiseChanged { .. }
                | Event::Jumped { .. }
                | Event::Crashed { .. }
                | Event::Restarted { .. }
        ),
        Invariant::FoldAgreement => match history {
            Event::Folded { .. }
            | Event::CheckpointRestored { .. }
            | Event::CheckpointCompared { .. }
            | Event::CheckpointWritten { .. }
            | Event::OwnerStopped { .. }
            | Event::TruncateRefused { .. }
            | Event::FloorApplied { .. } => true,
            Event::Replied { request, .. } => {
                matches!(request, Request::Trim { .. } | Request::Fence { .. })
            }
            _ => false,
        },
        // Convergence, budgets, panics: who led, who crashed, when the faults healed.
        _ => matches!(
            history,
            Event::BecameLeader { .. }
                | Event::PromiseChanged { .. }
                | Event::Crashed { .. }
                | Event::Restarted { .. }
                | Event::PhaseChanged { .. }
        ),
    }
}

fn sim_relevant(invariant: Invariant, event: &SimEvent) -> bool {
    match event {
        SimEvent::LeaseMoved { .. }
        | SimEvent::Paused { .. }
        | SimEvent::Resumed { .. }
        | SimEvent::HolderRestarted { .. } => {
            matches!(
                invariant,
                Invariant::StaleTrimRefused
                    | Invariant::FoldAgreement
                    | Invariant::NoReadBelowFloor
            )
        }
        SimEvent::DiskLost { .. } => matches!(
            invariant,
            Invariant::AckedWritesKept
                | Invariant::CommittedPrefixAgreement
                | Invariant::TermNeverDecreases
        ),
        // A node that cannot read its disk stays down: it matters to the liveness judges.
        SimEvent::DiskReadFailed { .. } => {
            matches!(invariant, Invariant::Progress | Invariant::Convergence)
        }
        // Where a continuation left its parent: every why of it crosses the fork.
        SimEvent::Healed | SimEvent::Finished { .. } | SimEvent::Forked { .. } => true,
        // Verdict lines follow the run; the why is drawn from the run itself.
        SimEvent::Violation { .. } => false,
        SimEvent::Started { .. } | SimEvent::Phase { .. } | SimEvent::NetworkFault { .. } => {
            !matches!(
                invariant,
                Invariant::StaleTrimRefused | Invariant::FoldAgreement | Invariant::FloorRecordKept
            )
        }
    }
}
