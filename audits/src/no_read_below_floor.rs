//! NoReadBelowFloor: no reader is ever served a record below a trim that was acknowledged.
//!
//! The *acknowledged floor* is the highest floor of any `Trim` request a client was told landed
//! (`Replied` with `Appended`). A node applies floors lazily, so a node that has not walked to the
//! trim yet still legitimately holds and serves the records below it; what must never happen is a
//! node serving a record below a floor it had already applied. So a read is held to
//! `bound = min(acknowledged floor, the serving node's floor)`, both taken when the read was
//! *sent* (`Requested`): the node can only have raised its floor by the time it served it.
//!
//! Replies carry no request id, so a `Replied` read is matched to the earliest still-unanswered
//! identical read (same client, node, start and size): the earliest candidate has the lowest
//! bound, so a retried or dropped request can only make the audit more lenient, never report a
//! correct read. A reply with no matching request (a duplicate delivery) is not judged.
//!
//! A node's floor is what it reported (`FloorApplied`, `NodeState`) since its last restart: a crash
//! forgets it until reported again.

use crate::{Violation, NO_READ_BELOW_FLOOR};
use felix_core::api::{ClientId, ReadFrom, Reply, Request};
use felix_core::history::Event;
use felix_core::record::{NodeId, Offset};
use std::collections::{BTreeMap, VecDeque};

/// A read as a key: client, node, start (0 for earliest, else 1 + offset), size.
type ReadKey = (ClientId, NodeId, u64, u32);

fn read_key(client: ClientId, node: NodeId, request: &Request) -> Option<ReadKey> {
    let Request::Read { from, max_records } = request else {
        return None;
    };
    let start = match from {
        ReadFrom::Earliest => 0,
        ReadFrom::Offset(offset) => offset.saturating_add(1),
    };
    Some((client, node, start, *max_records))
}

/// The violations of NoReadBelowFloor in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut acknowledged_floor: Offset = 0;
    let mut node_floors: BTreeMap<NodeId, Offset> = BTreeMap::new();
    // Unanswered reads: the bound each was sent under, oldest first.
    let mut pending: BTreeMap<ReadKey, VecDeque<Offset>> = BTreeMap::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        match event {
            Event::FloorApplied { node, floor, .. } | Event::NodeState { node, floor, .. } => {
                let known = node_floors.entry(*node).or_insert(0);
                *known = (*known).max(*floor);
            }
            Event::Crashed { node } | Event::Restarted { node } => {
                node_floors.remove(node);
            }
            Event::Requested {
                client,
                node,
                request,
            } => {
                if let Some(key) = read_key(*client, *node, request) {
                    let node_floor = node_floors.get(node).copied().unwrap_or(0);
                    pending
                        .entry(key)
                        .or_default()
                        .push_back(acknowledged_floor.min(node_floor));
                }
            }
            Event::Replied {
                client,
                node,
                request,
                reply,
            } => match (request, reply) {
                (Request::Trim { floor, .. }, Reply::Appended { .. }) => {
                    acknowledged_floor = acknowledged_floor.max(*floor);
                }
                (Request::Read { .. }, Reply::Records { records, .. }) => {
                    let Some(key) = read_key(*client, *node, request) else {
                        continue;
                    };
                    let Some(bound) = pending.get_mut(&key).and_then(VecDeque::pop_front) else {
                        continue;
                    };
                    if let Some(record) = records.iter().find(|record| record.offset < bound) {
                        violations.push(Violation::new(
                            NO_READ_BELOW_FLOOR,
                            step,
                            format!(
                                "node {node} served client {client} the record at offset {} \
                                 below floor {bound}, which it had applied from an \
                                 acknowledged trim",
                                record.offset
                            ),
                        ));
                    }
                }
                (Request::Read { .. }, _) => {
                    // A refusal answers the oldest identical read too.
                    if let Some(key) = read_key(*client, *node, request) {
                        if let Some(queue) = pending.get_mut(&key) {
                            queue.pop_front();
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    fn floor_applied(node: NodeId, floor: Offset) -> Event {
        Event::FloorApplied {
            node,
            floor,
            trim: Some(floor),
        }
    }

    /// Reads sent before the trim was acknowledged, reads served by a node that had not applied
    /// it yet, and reads above the floor all hold.
    #[test]
    fn lazy_floors_and_reads_above_hold() {
        let history = vec![
            read_sent(1, 0, 1),
            trim_acked(9, 5, 5, 1),
            floor_applied(0, 5),
            read_served(1, 0, 1, &[1, 2]),
            read_sent(1, 1, 1),
            read_served(1, 1, 1, &[1, 2]),
            read_sent(1, 0, 5),
            read_served(1, 0, 5, &[6]),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// A node that applied an acknowledged trim's floor and still serves a record below it breaks
    /// it; a reply matched to a crashed node's forgotten floor does not.
    #[test]
    fn served_below_applied_floor_breaks_it() {
        let history = vec![
            committed(0, trim(5, 1, 5, 1)),
            floor_applied(0, 5),
            trim_acked(9, 5, 5, 1),
            read_sent(1, 0, 2),
            read_served(1, 0, 2, &[2, 3]),
            floor_applied(2, 5),
            Event::Crashed { node: 2 },
            read_sent(1, 2, 2),
            read_served(1, 2, 2, &[2]),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].invariant, NO_READ_BELOW_FLOOR);
        assert_eq!(violations[0].step, 4);
        assert!(violations[0].message.contains("offset 2 below floor 5"));
    }
}
