//! The "why" of a failing run: the events a violation depends on, picked from the whole run up
//! to the step where it was detected, not only from the window just before it.
//!
//! Each invariant names the kinds of events its violations are made of (for StaleTrimRefused:
//! the lease moves, the stale holder's refusals and reads, both holders' writes and trims). Where
//! the finding names its clients (`Finding::clients`), client events of other clients are left out.
//! Everything here is a pure filter over the trace: it explains, it judges nothing.

use crate::trace::{SimEvent, TraceEvent, TraceLine};
use felix_core::api::{ClientId, Reply, Request};
use felix_core::history::Event;
use felix_core::rules::Invariant;
use std::collections::BTreeSet;

/// The most lines a "why" section lists (the last ones before the violation).
pub const WHY_LINES_MAX: usize = 40;

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

fn client_of(event: &Event) -> Option<u32> {
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
        SimEvent::LeaseMoved { .. } | SimEvent::Paused { .. } | SimEvent::Resumed { .. } => {
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
        SimEvent::Healed | SimEvent::Finished { .. } => true,
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

#[cfg(test)]
mod tests {
    use super::*;
    use felix_core::api::ReadFrom;

    fn line(step: u64, event: TraceEvent) -> TraceLine {
        TraceLine {
            step,
            time: step,
            event,
        }
    }

    /// For StaleTrimRefused the silent lease move and the stale holder's refusal are picked even
    /// far before the violation; a commit on a node is not.
    #[test]
    fn stale_trim_refused_picks_the_lease_move_and_the_refusal() {
        let trace = vec![
            line(
                0,
                TraceEvent::Sim(SimEvent::LeaseMoved {
                    from: Some(0),
                    to: 1,
                    epoch: 2,
                    told: false,
                }),
            ),
            line(
                1,
                TraceEvent::History(Event::BecameLeader { node: 0, term: 1 }),
            ),
            line(
                2,
                TraceEvent::History(Event::Replied {
                    client: 0,
                    node: 0,
                    request: Request::Read {
                        from: ReadFrom::Offset(1),
                        max_records: 4,
                    },
                    reply: Reply::CursorTooOld {
                        floor: 3,
                        tag: None,
                    },
                }),
            ),
        ];
        let picked = lines(Invariant::StaleTrimRefused, &[0], &trace, 2, WHY_LINES_MAX);
        assert_eq!(picked, vec![0, 2]);
    }
}
