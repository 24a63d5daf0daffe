//! Convergence (liveness): after the faults heal, every live node reaches the cluster's committed
//! prefix within the deadline.
//!
//! The driver marks the deadline with `PhaseChanged { phase: End }`, recorded right after a
//! `NodeState` of every live node. At that marker:
//! - the cluster's committed index is the highest offset of any `Committed` event so far;
//! - a node is *live* when it has appeared in a node event and its last `Crashed` (if any) was
//!   followed by a `Restarted`;
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

/// The node a node event is about.
fn node_of(event: &Event) -> Option<NodeId> {
    match event {
        Event::PromiseChanged { node, .. }
        | Event::BecameLeader { node, .. }
        | Event::Committed { node, .. }
        | Event::FloorApplied { node, .. }
        | Event::TruncateRefused { node, .. }
        | Event::SegmentsDeleted { node, .. }
        | Event::TrimmedToSent { node, .. }
        | Event::Jumped { node, .. }
        | Event::NodeState { node, .. }
        | Event::Crashed { node }
        | Event::Restarted { node } => Some(*node),
        _ => None,
    }
}

/// The violations of Convergence in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut nodes: BTreeMap<NodeId, NodeView> = BTreeMap::new();
    let mut cluster_committed: Offset = 0;
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        if let Some(node) = node_of(event) {
            let view = nodes.entry(node).or_insert(NodeView {
                live: true,
                committed: None,
            });
            match event {
                Event::Crashed { .. } => view.live = false,
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
}
