//! NoReadBelowFloor: no reader is ever served a record below a trim that was acknowledged.
//!
//! In the first seed's meaning, judged cluster-wide in real-time order: a read reply violates it
//! if it contains a record below the floor of any trim whose acknowledgement (`Replied` with
//! `Appended` to a `Trim`) the history shows *before the read request was sent* (`Requested`).
//! The serving node's own floor does not matter: a lagging follower, a restarted node or a deposed
//! leader that has not walked to the trim yet must not serve below it either (the core's read
//! index is what keeps that). A trim whose outcome its client never learned is unknown and never
//! counts; a read acknowledged after the read was sent does not bind it.
//!
//! Replies carry no request id, so a `Replied` read is matched to the earliest still-unanswered
//! identical read (same client, node, start and size). The acknowledged floor only grows along the
//! history, so the earliest candidate was sent under the lowest bound: a retried, dropped or
//! crashed-away request can only make the audit more lenient, never report a correct read (a
//! restart of the serving node changes nothing here: no node state enters the bound). A reply
//! with no matching request (a duplicate delivery) is not judged.

use crate::{step_ref, Violation, NO_READ_BELOW_FLOOR};
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
    // The highest floor of any trim acknowledged so far, and the step of that acknowledgement.
    let mut acknowledged: (Offset, usize) = (0, 0);
    // Unanswered reads: the acknowledged floor (and its step) each was sent under, oldest first.
    let mut pending: BTreeMap<ReadKey, VecDeque<(Offset, usize)>> = BTreeMap::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        match event {
            Event::Requested {
                client,
                node,
                request,
            } => {
                if let Some(key) = read_key(*client, *node, request) {
                    pending.entry(key).or_default().push_back(acknowledged);
                }
            }
            Event::Replied {
                client,
                node,
                request,
                reply,
            } => match (request, reply) {
                (Request::Trim { floor, .. }, Reply::Appended { .. })
                    if *floor > acknowledged.0 =>
                {
                    acknowledged = (*floor, step);
                }
                (Request::Read { .. }, _) => {
                    let Some(key) = read_key(*client, *node, request) else {
                        continue;
                    };
                    let Some((bound, acked_at)) =
                        pending.get_mut(&key).and_then(VecDeque::pop_front)
                    else {
                        continue;
                    };
                    let Reply::Records { records, .. } = reply else {
                        continue; // a refusal serves nothing
                    };
                    if let Some(record) = records.iter().find(|record| record.offset < bound) {
                        violations.push(
                            Violation::new(
                                NO_READ_BELOW_FLOOR,
                                step,
                                format!(
                                    "node {node} served client {client} the record at offset {} \
                                 below floor {bound}, set by a trim acknowledged at {}, \
                                 before the read was sent",
                                    record.offset,
                                    step_ref(acked_at)
                                ),
                            )
                            .with_clients(vec![*client]),
                        );
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

    /// Reads sent before the trim was acknowledged may be served below its floor (lazy floors:
    /// the read bound nothing yet), reads served at or above the floor hold, refusals serve
    /// nothing, and a trim whose outcome its client never learned binds no read.
    #[test]
    fn reads_sent_before_the_ack_and_reads_above_the_floor_hold() {
        let history = vec![
            read_sent(1, 0, 1),
            trim_acked(9, 5, 5, 1),
            read_served(1, 0, 1, &[1, 2]),
            read_sent(1, 1, 5),
            read_served(1, 1, 5, &[6]),
            read_sent(1, 2, 2),
            Event::Replied {
                client: 1,
                node: 2,
                request: read_request(2),
                reply: Reply::NotHeld { from: 2 },
            },
            Event::Requested {
                client: 3,
                node: 0,
                request: Request::Trim {
                    expected_tail: None,
                    fence: None,
                    floor: 9,
                    headers: Default::default(),
                },
            },
            read_sent(1, 0, 6),
            read_served(1, 0, 6, &[6, 7]),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// A lagging node that has not applied the trim (it reported no floor at all) still breaks
    /// it when it serves below the floor of a trim acknowledged before the read was sent: the
    /// bound is cluster-wide, not the serving node's own floor.
    #[test]
    fn a_lagging_node_serving_below_an_acknowledged_floor_breaks_it() {
        let history = vec![
            committed(0, trim(3, 1, 3, 1)),
            trim_acked(9, 3, 3, 1),
            read_sent(1, 2, 2),
            read_served(1, 2, 2, &[2]),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].invariant, NO_READ_BELOW_FLOOR);
        assert_eq!(violations[0].step, 3);
        assert!(
            violations[0].message.contains("offset 2 below floor 3"),
            "{}",
            violations[0].message
        );
    }

    /// Identical reads are matched oldest first, and the oldest was sent under the lowest bound:
    /// a crash and restart of the serving node between them changes nothing, and a reply matched
    /// to an older identical request is judged by that request's (lower) bound.
    #[test]
    fn identical_reads_are_judged_by_the_oldest_bound() {
        let history = vec![
            read_sent(1, 2, 2),
            trim_acked(9, 5, 5, 1),
            Event::Crashed { node: 2 },
            Event::Restarted { node: 2 },
            read_sent(1, 2, 2),
            read_served(1, 2, 2, &[2, 3]),
        ];
        assert_eq!(check(&history), vec![]);
    }
}
