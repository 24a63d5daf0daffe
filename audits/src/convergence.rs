//! Convergence (liveness): after the faults heal, every live node reaches the cluster's committed
//! prefix within the deadline.
//!
//! The driver marks the deadline with `PhaseChanged { phase: End }`, recorded right after a
//! `NodeState` of every live node. At that marker:
//! - the cluster's committed index is the highest offset of any `Committed` event so far;
//! - a node is *live* when it has appeared in a node event and its last `Crashed` (if any) was
//!   followed by a `Restarted` (not by a `StoreCorrupt`: a node found corrupt stays down);
//! - every live node's latest `NodeState` must show `committed` at or above the cluster's
//!   committed index. A live node with no `NodeState` at all is a violation too: a node the audit
//!   cannot see has not been shown to converge.
//!
//! A history without the marker (a run cut short) is not judged for liveness.

use crate::{Violation, CONVERGENCE};
use felix_core::history::{Event, Phase};
use felix_core::record::{NodeId, Offset};
use std::collections::BTreeMap;

/// What the audit knows about one node.
#[derive(Default)]
struct NodeView {
    live: bool,
    committed: Option<Offset>,
}

/// The violations of Convergence in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut nodes: BTreeMap<NodeId, NodeView> = BTreeMap::new();
    let mut cluster_committed: Offset = 0;
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        // Only node events say which nodes there are: a client's `Requested` and `Replied` name
        // the node it talked to, which may never have acted.
        let client_event = matches!(event, Event::Requested { .. } | Event::Replied { .. });
        if let Some(node) = event.node().filter(|_| !client_event) {
            let view = nodes.entry(node).or_insert(NodeView {
                live: true,
                committed: None,
            });
            match event {
                // A store found corrupt at a restart keeps its node down for good.
                Event::Crashed { .. } | Event::StoreCorrupt { .. } => view.live = false,
                Event::Restarted { .. } => view.live = true,
                Event::NodeState { committed, .. } => view.committed = Some(*committed),
                Event::Committed { entry, .. } => {
                    cluster_committed = cluster_committed.max(entry.offset);
                }
                _ => {}
            }
        }
        if !matches!(event, Event::PhaseChanged { phase: Phase::End }) {
            continue;
        }
        for (node, view) in nodes.iter().filter(|(_, view)| view.live) {
            match view.committed {
                None => violations.push(Violation::new(
                    CONVERGENCE,
                    step,
                    format!(
                        "live node {node} reported no state by the deadline (cluster committed \
                         index {cluster_committed})"
                    ),
                )),
                Some(committed) if committed < cluster_committed => {
                    violations.push(Violation::new(
                        CONVERGENCE,
                        step,
                        format!(
                            "live node {node} reached committed index {committed} by the \
                             deadline, behind the cluster's {cluster_committed}"
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// Every live node at the cluster's committed index holds it; a crashed node is not judged,
    /// and a history without the end marker is not judged at all.
    #[test]
    fn caught_up_nodes_converge() {
        let mut history = vec![
            committed(0, noop(1, 1)),
            committed(0, write(2, 1, 1)),
            committed(1, noop(1, 1)),
            Event::Crashed { node: 2 },
            state(0, 1, true, 0, 2),
            state(1, 1, false, 0, 2),
        ];
        assert_eq!(check(&history), vec![]);
        history.push(end());
        assert_eq!(check(&history), vec![]);
    }

    /// A live node behind the committed index at the deadline, and a restarted node that never
    /// reported its state, break it.
    #[test]
    fn lagging_or_silent_node_breaks_it() {
        let history = vec![
            committed(0, noop(1, 1)),
            committed(0, write(2, 1, 1)),
            Event::Crashed { node: 2 },
            Event::Restarted { node: 2 },
            state(0, 1, true, 0, 2),
            state(1, 1, false, 0, 1),
            end(),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(violations.iter().all(|violation| violation.step == 6));
        assert!(violations[0]
            .message
            .contains("node 1 reached committed index 1"));
        assert!(violations[1].message.contains("node 2 reported no state"));
    }

    /// Which nodes are judged: a node found corrupt is down for good, and a node a client only
    /// talked to never acted, so neither is; a node seen only sending a promise acted, so it is.
    #[test]
    fn the_nodes_judged_are_the_ones_that_acted_and_are_up() {
        let history = vec![
            committed(0, noop(1, 1)),
            Event::StoreCorrupt {
                node: 3,
                reason: "corrupt store file".into(),
            },
            read_sent(0, 4, 0),
            read_served(0, 5, 0, &[]),
            state(0, 1, true, 0, 1),
            end(),
        ];
        assert_eq!(check(&history), vec![]);
        let history = vec![
            committed(0, noop(1, 1)),
            Event::PromiseSent {
                node: 1,
                to: 0,
                term: 1,
                vote: None,
            },
            state(0, 1, true, 0, 1),
            end(),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert!(violations[0].message.contains("node 1 reported no state"));
    }
}
