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
//! 2. *The floor does not pass it.* A node's floor comes from committed trims (its walk, or a
//!    peer's sealed state through a jump), so it is never above the *cluster's floor*: the highest
//!    floor of a first-committed, non-refused trim so far. A node that reports a higher floor
//!    (`FloorApplied` or `NodeState`) refuses, and may delete, every record below it: a violation
//!    when a write acknowledged before then lies in between (the floor applied past the commit).
//!    Reported once per node and acknowledged offset.
//!
//! Records below the floor leave storage legitimately; the history keeps their commits, so check 1
//! holds them to what was acknowledged without needing to know the floor.
//! Assumes `Committed` events are observed (`observe_commits`), and that a node's `Committed` for
//! a trim comes before the `FloorApplied` and `NodeState` showing its floor.

use crate::log::{refused_trims, trim_floor};
use crate::{step_ref, Violation, ACKED_WRITES_KEPT};
use felix_core::api::{ClientId, Reply, Request};
use felix_core::history::Event;
use felix_core::record::{Command, NodeId, Offset};
use felix_core::words;
use std::collections::{BTreeMap, BTreeSet};

/// Whether `command` is the record an acknowledged `request` put at its offset (reads put none).
fn is_acknowledged_record(request: &Request, command: &Command) -> bool {
    match (request, command) {
        (
            Request::Append { body, headers, .. },
            Command::Write {
                body: written_body,
                headers: written_headers,
            },
        ) => body == written_body && headers == written_headers,
        (
            Request::Trim {
                floor,
                headers,
                fence,
                ..
            },
            Command::Trim {
                floor: written_floor,
                headers: written_headers,
                fence: written_fence,
            },
        ) => floor == written_floor && headers == written_headers && fence == written_fence,
        (
            Request::Fence { new, old },
            Command::Fence {
                new: written_new,
                old: written_old,
            },
        ) => new == written_new && old == written_old,
        _ => false,
    }
}

struct Ack<'h> {
    step: usize,
    client: ClientId,
    request: &'h Request,
}

/// The violations of AckedWritesKept in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut violations = records_stay(history);
    violations.extend(floor_does_not_pass(history));
    violations
}

/// Check 1: the committed record at an acknowledged offset is the acknowledged one.
fn records_stay(history: &[Event]) -> Vec<Violation> {
    let mut acks: BTreeMap<Offset, Vec<Ack<'_>>> = BTreeMap::new();
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
        if !matches!(request, Request::Read { .. }) {
            acks.entry(*offset).or_default().push(Ack {
                step,
                client: *client,
                request,
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
        if let Some(ack) = offset_acks
            .iter()
            .find(|ack| !is_acknowledged_record(ack.request, &entry.command))
        {
            reported.insert(entry.offset);
            violations.push(
                Violation::new(
                    ACKED_WRITES_KEPT,
                    step.max(ack.step),
                    format!(
                        "client {} was told its {} landed at offset {} ({}), but node {node} \
                     committed {} there ({})",
                        ack.client,
                        words::request(ack.request),
                        entry.offset,
                        step_ref(ack.step),
                        words::command(&entry.command),
                        step_ref(step)
                    ),
                )
                .with_clients(vec![ack.client]),
            );
        }
    }
    violations
}

/// Check 2: no node holds a floor above the cluster's floor over an acknowledged write.
fn floor_does_not_pass(history: &[Event]) -> Vec<Violation> {
    let refused = refused_trims(history);
    let mut first_commits: BTreeSet<Offset> = BTreeSet::new();
    let mut cluster_floor: Offset = 0;
    // Acknowledged writes so far: offset -> step of the first acknowledgement.
    let mut acked_writes: BTreeMap<Offset, usize> = BTreeMap::new();
    // (node, offset) already reported, so that repeated samples report a loss once.
    let mut reported: BTreeSet<(NodeId, Offset)> = BTreeSet::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        let (node, floor, source) = match event {
            Event::Committed { entry, .. } => {
                if let Some((floor, _)) = trim_floor(&entry.command) {
                    if first_commits.insert(entry.offset) && !refused.contains(&entry.offset) {
                        cluster_floor = cluster_floor.max(floor);
                    }
                }
                continue;
            }
            Event::Replied {
                request: Request::Append { .. },
                reply: Reply::Appended { offset, .. },
                ..
            } => {
                acked_writes.entry(*offset).or_insert(step);
                continue;
            }
            Event::FloorApplied { node, floor, trim } => {
                let source = match trim {
                    Some(trim) => format!("applied floor {floor} from the trim at offset {trim}"),
                    None => format!("took floor {floor} from a trim point"),
                };
                (*node, *floor, source)
            }
            Event::NodeState { node, floor, .. } => (*node, *floor, format!("holds floor {floor}")),
            _ => continue,
        };
        if floor <= cluster_floor {
            continue;
        }
        let Some((offset, ack_step)) = acked_writes
            .range(cluster_floor..floor)
            .find(|(offset, _)| !reported.contains(&(node, **offset)))
        else {
            continue;
        };
        reported.insert((node, *offset));
        violations.push(Violation::new(
            ACKED_WRITES_KEPT,
            step,
            format!(
                "node {node} {source}, above the floor {cluster_floor} of the committed trims, \
                 dropping the write acknowledged at offset {offset} ({})",
                step_ref(*ack_step)
            ),
        ));
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

    /// A floor above the committed trims' floor, over an acknowledged write, breaks it once per
    /// node and offset; over nothing acknowledged, or once the trim is committed, it holds.
    #[test]
    fn floor_past_commit_breaks_it() {
        let history = vec![
            committed(0, write(1, 1, 1)),
            write_acked(1, 1, 1),
            floor_applied(2, 1, 9),
            state(0, 1, true, 2, 1),
            state(0, 1, true, 2, 1),
            committed(0, trim(2, 1, 2, 1)),
            state(1, 1, false, 2, 2),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].step, 3);
        assert!(violations[0].message.contains("node 0 holds floor 2"));
        assert!(violations[0].message.contains("offset 1"));
    }
}
