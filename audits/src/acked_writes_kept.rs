//! AckedWritesKept: every acknowledged write at or above the floor stays in the committed log.
//!
//! An acknowledgement is a `Replied` whose reply is `Appended { offset }`: the client was told its
//! record is committed at `offset`. Requests without one (timed out, dropped, crashed broker) are
//! *unknown* and never judged. Two checks:
//! 1. *The record stays.* Every `Committed` event at an acknowledged offset, by any node, before
//!    or after the acknowledgement, must hold the acknowledged record: `Append` -> `Write` with
//!    the same body and headers, `Trim` -> the same `Trim`, `Fence` -> the same `Fence`. Reported
//!    once per offset, at the later of the commit and the acknowledgement (catches an ack sent
//!    before the record was durable on a majority, then lost and overwritten).
//! 2. *The floor does not pass it.* A node may drop records only below a floor set by a trim it
//!    has walked. A `FloorApplied { trim: Some(t) }` by a node whose own walk has not reached `t`
//!    (no `Committed` at `t` by that node yet, any life) is a floor applied past the commit; it is a
//!    violation when it covers a write acknowledged before it at or above the cluster's floor (the
//!    highest floor of a committed, non-refused trim so far).
//!
//! Records below the floor leave storage legitimately; the history keeps their commits, so check 1
//! holds them to what was acknowledged without needing to know the floor.
//! Assumes a node reports `Committed` for a trim before the `FloorApplied` it causes.

use crate::log::{refused_trims, trim_floor};
use crate::{Violation, ACKED_WRITES_KEPT};
use felix_core::api::{ClientId, Reply, Request};
use felix_core::history::Event;
use felix_core::record::{Command, NodeId, Offset};
use std::collections::{BTreeMap, BTreeSet};

/// The record an acknowledged request must have put at its offset.
fn acknowledged_command(request: &Request) -> Option<Command> {
    match request {
        Request::Append { body, headers, .. } => Some(Command::Write {
            body: body.clone(),
            headers: headers.clone(),
        }),
        Request::Trim {
            floor,
            headers,
            fence,
            ..
        } => Some(Command::Trim {
            floor: *floor,
            headers: headers.clone(),
            fence: *fence,
        }),
        Request::Fence { new, old } => Some(Command::Fence {
            new: *new,
            old: *old,
        }),
        Request::Read { .. } => None,
    }
}

struct Ack {
    step: usize,
    client: ClientId,
    command: Command,
}

/// The violations of AckedWritesKept in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut violations = records_stay(history);
    violations.extend(floor_does_not_pass(history));
    violations
}

/// Check 1: the committed record at an acknowledged offset is the acknowledged one.
fn records_stay(history: &[Event]) -> Vec<Violation> {
    let mut acks: BTreeMap<Offset, Vec<Ack>> = BTreeMap::new();
    for (step, event) in history.iter().enumerate() {
        let Event::Replied {
            client,
            request,
            reply: Reply::Appended { offset, .. },
            ..
        } = event
        else {
            continue;
        };
        if let Some(command) = acknowledged_command(request) {
            acks.entry(*offset).or_default().push(Ack {
                step,
                client: *client,
                command,
            });
        }
    }
    let mut reported: BTreeSet<Offset> = BTreeSet::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        let Event::Committed { node, entry } = event else {
            continue;
        };
        if reported.contains(&entry.offset) {
            continue;
        }
        let Some(offset_acks) = acks.get(&entry.offset) else {
            continue;
        };
        if let Some(ack) = offset_acks.iter().find(|ack| ack.command != entry.command) {
            reported.insert(entry.offset);
            violations.push(Violation::new(
                ACKED_WRITES_KEPT,
                step.max(ack.step),
                format!(
                    "client {} was told its {:?} landed at offset {} (step {}), but node {node} \
                     committed {:?} there (step {step})",
                    ack.client, ack.command, entry.offset, ack.step, entry.command
                ),
            ));
        }
    }
    violations
}

/// Check 2: no node applies a floor from a trim it has not walked over an acknowledged write.
fn floor_does_not_pass(history: &[Event]) -> Vec<Violation> {
    let refused = refused_trims(history);
    let mut first_commits: BTreeSet<Offset> = BTreeSet::new();
    let mut cluster_floor: Offset = 0;
    // Per node, the offsets of the trims its walk reached.
    let mut walked_trims: BTreeMap<NodeId, BTreeSet<Offset>> = BTreeMap::new();
    // Acknowledged writes so far: offset -> step of the first acknowledgement.
    let mut acked_writes: BTreeMap<Offset, usize> = BTreeMap::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        match event {
            Event::Committed { node, entry } => {
                let Some((floor, _)) = trim_floor(&entry.command) else {
                    continue;
                };
                walked_trims.entry(*node).or_default().insert(entry.offset);
                if first_commits.insert(entry.offset) && !refused.contains(&entry.offset) {
                    cluster_floor = cluster_floor.max(floor);
                }
            }
            Event::Replied {
                request: Request::Append { .. },
                reply: Reply::Appended { offset, .. },
                ..
            } => {
                acked_writes.entry(*offset).or_insert(step);
            }
            Event::FloorApplied {
                node,
                floor,
                trim: Some(trim),
            } => {
                let walked = walked_trims
                    .get(node)
                    .is_some_and(|trims| trims.contains(trim));
                if walked || *floor <= cluster_floor {
                    continue;
                }
                if let Some((offset, ack_step)) = acked_writes.range(cluster_floor..*floor).next() {
                    violations.push(Violation::new(
                        ACKED_WRITES_KEPT,
                        step,
                        format!(
                            "node {node} applied floor {floor} from the trim at offset {trim} \
                             before its walk committed it, dropping the write acknowledged at \
                             offset {offset} (step {ack_step}) above the cluster's floor \
                             {cluster_floor}"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    fn floor_applied(node: NodeId, floor: Offset, trim: Offset) -> Event {
        Event::FloorApplied {
            node,
            floor,
            trim: Some(trim),
        }
    }

    /// Acknowledged records committed as acknowledged, an unknown write overwritten, and floors
    /// applied after the walk reached their trims all hold.
    #[test]
    fn acknowledged_records_kept_holds() {
        let history = vec![
            committed(0, write(1, 1, 1)),
            write_acked(1, 1, 1),
            committed(1, write(1, 1, 1)),
            // Offset 2: a write that was never acknowledged (unknown) lost to another record.
            committed(0, write(2, 2, 2)),
            committed(0, trim(3, 2, 3, 2)),
            trim_acked(2, 3, 3, 2),
            floor_applied(0, 3, 3),
            committed(1, write(2, 2, 2)),
            committed(1, trim(3, 2, 3, 2)),
            floor_applied(1, 3, 3),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// An acknowledgement sent before the record was durable, then a different record committed
    /// at that offset, breaks it once per offset, at the later of ack and commit.
    #[test]
    fn acked_then_overwritten_breaks_it() {
        let history = vec![
            write_acked(1, 1, 1),
            committed(0, write(1, 2, 2)),
            committed(1, write(1, 2, 2)),
            committed(0, write(2, 2, 2)),
            write_acked(2, 2, 3),
        ];
        let violations = check(&history);
        let steps: Vec<usize> = violations.iter().map(|violation| violation.step).collect();
        assert_eq!(steps, vec![1, 4], "{violations:?}");
        assert!(violations
            .iter()
            .all(|violation| violation.invariant == ACKED_WRITES_KEPT));
    }

    /// A floor applied from a trim the node has not committed, over an acknowledged write above
    /// the cluster's floor, breaks it; over nothing acknowledged, it is not judged.
    #[test]
    fn floor_past_commit_breaks_it() {
        let history = vec![
            committed(0, write(1, 1, 1)),
            write_acked(1, 1, 1),
            floor_applied(2, 1, 9),
            floor_applied(0, 2, 2),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].step, 3);
        assert!(violations[0].message.contains("offset 1"));
    }
}
