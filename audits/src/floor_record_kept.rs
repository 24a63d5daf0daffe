//! FloorRecordKept: the serving leader's floor is always the one its trim records set, deleted
//! ones included; and the record that set it is never deleted.
//!
//! Definitions (offsets 0 and 1 both mean "nothing trimmed": floors are compared as `max(f, 1)`):
//! - The *trim floor up to c* is the highest floor asked by a committed trim at an offset `<= c`
//!   in the cluster's committed log (first commit of each offset), leaving out trims refused in
//!   place (`TruncateRefused`). The trim that first reached it is the *floor-setting trim*.
//!   Deleted trims count: the audit remembers every commit, whatever storage later drops.
//! - A node's *highest floor* is the highest floor it reported in its current life
//!   (`FloorApplied`, `NodeState`); a crash forgets it, since an unsynced compaction or jump may be
//!   lost with the process. Its *jump floor* is the part of it taken from a TrimmedTo jump
//!   (`FloorApplied { trim: None }`). A jump's `point` is not a floor: where a peer deleted past
//!   its floor (retention), the point is above it.
//!
//! Checks:
//! 1. At every `NodeState` with `leader: true`, `floor >= max(trim floor up to committed,
//!    highest floor)`: a leader never serves with a floor lower than its trims set, nor lower than
//!    it held before in the same life (what happens when the floor is rebuilt from a trim index
//!    that lost the floor-setting trim). After a restart the node recovers `committed` as its
//!    sealed base and its floor as the sealed floor, which covers every trim up to that base.
//!    A floor *above* the trims' is a floor applied past the commit: AckedWritesKept judges that.
//!    When the floor is exactly the trim floor, above the jump floor, and the state names a tag,
//!    the tag must be the floor-setting trim's headers.
//! 2. At every `NodeState` and every non-retention `SegmentsDeleted`, `readable_start <= floor`:
//!    a node deletes only whole segments entirely below its floor, so the floor-setting trim
//!    (at or above the floor) is never deleted. Once any node has deleted by retention, this check
//!    is off for the rest of the run: retention deletes past the floor by design, and a jump to a
//!    retention-deleted peer's point carries that past the floor to other nodes. Retention's
//!    danger is judged by StaleTrimRefused, the invariant the Retention twin breaks.
//!
//! Assumes `NodeState.committed` is the node's walked prefix, and that a node reports
//! `FloorApplied` before the `SegmentsDeleted` that follows from it.

use crate::log::{refused_trims, trim_floor, CommittedLog};
use crate::{Violation, FLOOR_RECORD_KEPT};
use felix_core::history::Event;
use felix_core::record::{Headers, NodeId, Offset};
use felix_core::words;
use std::collections::BTreeMap;

/// The running maximum of trim floors over the committed log, by offset.
struct TrimFloors<'h> {
    /// (trim offset, highest floor up to it, offset of the trim that set it, its headers),
    /// one row per trim that raised the maximum, in offset order.
    rows: Vec<(Offset, Offset, Offset, &'h Headers)>,
}

impl<'h> TrimFloors<'h> {
    fn from_history(history: &'h [Event]) -> TrimFloors<'h> {
        let log = CommittedLog::from_history(history);
        let refused = refused_trims(history);
        let mut rows: Vec<(Offset, Offset, Offset, &'h Headers)> = Vec::new();
        for (_, entry) in log.iter(history) {
            let Some((floor, headers)) = trim_floor(&entry.command) else {
                continue;
            };
            if refused.contains(&entry.offset) {
                continue;
            }
            let highest = rows.last().map_or(0, |row| row.1);
            if floor > highest {
                rows.push((entry.offset, floor, entry.offset, headers));
            }
        }
        TrimFloors { rows }
    }

    /// The trim floor up to `committed`, with the floor-setting trim's offset and headers.
    fn up_to(&self, committed: Offset) -> Option<(Offset, Offset, &'h Headers)> {
        let count = self.rows.partition_point(|row| row.0 <= committed);
        let row = self.rows.get(count.checked_sub(1)?)?;
        Some((row.1, row.2, row.3))
    }

    /// Check 1 on a leader's `NodeState` (`node`, `floor`, `committed`, `floor_tag`): its floor
    /// against the trims committed up to its commit index and the highest floor it held `before`
    /// this state in this life, then its tag against the floor-setting trim's headers.
    fn leader_floor(
        &self,
        before: &NodeFloors,
        step: usize,
        node: NodeId,
        floor: Offset,
        committed: Offset,
        floor_tag: Option<&Headers>,
    ) -> Option<Violation> {
        let by_trims = self.up_to(committed);
        let trim_floor = by_trims.map_or(0, |(floor, _, _)| floor);
        let expected = trim_floor.max(before.highest);
        if floor.max(1) < expected.max(1) {
            let source = match by_trims {
                Some((_, offset, _)) if trim_floor >= before.highest => {
                    format!("the trim at offset {offset}")
                }
                _ => "its own earlier floor in this life".to_string(),
            };
            return Some(Violation::new(
                FLOOR_RECORD_KEPT,
                step,
                format!(
                    "leader {node} serves with floor {floor} at committed index {committed}, but \
                     {source} set the floor to {expected}"
                ),
            ));
        }
        let ((_, offset, headers), tag) = (by_trims?, floor_tag?);
        (floor == trim_floor && trim_floor > before.jump && tag != headers).then(|| {
            Violation::new(
                FLOOR_RECORD_KEPT,
                step,
                format!(
                    "leader {node}'s floor {floor} carries tag {}, but the trim at offset {offset} \
                     that set it has headers {}",
                    words::headers(tag),
                    words::headers(headers)
                ),
            )
        })
    }
}

#[derive(Clone, Copy, Default)]
struct NodeFloors {
    /// The floor last reported in this life (None after a crash, until reported again).
    current: Option<Offset>,
    /// The highest floor reported in this life.
    highest: Offset,
    /// The highest floor taken from a jump in this life.
    jump: Offset,
}

impl NodeFloors {
    fn report(&mut self, floor: Offset) {
        self.current = Some(floor);
        self.highest = self.highest.max(floor);
    }
}

/// The violations of FloorRecordKept in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let trims = TrimFloors::from_history(history);
    let mut nodes: BTreeMap<NodeId, NodeFloors> = BTreeMap::new();
    let mut retention_seen = false;
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        match event {
            Event::FloorApplied { node, floor, trim } => {
                let floors = nodes.entry(*node).or_default();
                floors.report(*floor);
                if trim.is_none() {
                    floors.jump = floors.jump.max(*floor);
                }
            }
            Event::Crashed { node } => {
                nodes.insert(*node, NodeFloors::default());
            }
            Event::SegmentsDeleted {
                node,
                below,
                readable_start,
                retention,
            } => {
                if *retention {
                    retention_seen = true;
                    continue;
                }
                let floors = nodes.entry(*node).or_default();
                if let (Some(floor), false) = (floors.current, retention_seen) {
                    if *readable_start > floor.max(1) {
                        violations.push(Violation::new(
                            FLOOR_RECORD_KEPT,
                            step,
                            format!(
                                "node {node} deleted segments below {below} and now serves from \
                                 {readable_start}, above its floor {floor}: the floor-setting \
                                 trim is gone"
                            ),
                        ));
                    }
                }
            }
            Event::NodeState {
                node,
                leader,
                floor,
                committed,
                readable_start,
                floor_tag,
                ..
            } => {
                let floors = nodes.entry(*node).or_default();
                let before = *floors;
                floors.report(*floor);
                if !retention_seen && *readable_start > (*floor).max(1) {
                    violations.push(Violation::new(
                        FLOOR_RECORD_KEPT,
                        step,
                        format!(
                            "node {node} serves from {readable_start}, above its floor {floor}: \
                             it deleted the floor-setting trim"
                        ),
                    ));
                }
                if *leader {
                    let tag = floor_tag.as_ref();
                    let found = trims.leader_floor(&before, step, *node, *floor, *committed, tag);
                    violations.extend(found);
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

    fn deleted(node: NodeId, below: Offset, readable_start: Offset, retention: bool) -> Event {
        Event::SegmentsDeleted {
            node,
            below,
            readable_start,
            retention,
        }
    }

    fn floor_applied(node: NodeId, floor: Offset, trim: Option<Offset>) -> Event {
        Event::FloorApplied { node, floor, trim }
    }

    fn leader_state(node: NodeId, floor: Offset, committed: Offset, tag: Option<u64>) -> Event {
        let mut event = state(node, 1, true, floor, committed);
        if let Event::NodeState { floor_tag, .. } = &mut event {
            *floor_tag = tag.map(Headers::with_epoch);
        }
        event
    }

    fn serving(node: NodeId, floor: Offset, readable_start: Offset) -> Event {
        let mut event = state(node, 1, false, floor, floor);
        if let Event::NodeState {
            readable_start: slot,
            ..
        } = &mut event
        {
            *slot = readable_start;
        }
        event
    }

    /// A leader whose floor follows its committed trims (including a lower, no-op trim and one
    /// refused in place), that deletes whole segments below the floor, and that restarts with the
    /// floor it sealed and its sealed base as committed index, holds the invariant.
    #[test]
    fn floor_set_by_trims_holds() {
        let history = vec![
            committed(0, write(1, 1, 1)),
            committed(0, write(2, 1, 1)),
            committed(0, trim(3, 1, 3, 1)),
            floor_applied(0, 3, Some(3)),
            leader_state(0, 3, 3, Some(1)),
            committed(0, trim(4, 1, 2, 1)),
            committed(0, trim(5, 1, 5, 2)),
            Event::TruncateRefused {
                node: 0,
                offset: 5,
                current: felix_core::record::Token(7),
            },
            leader_state(0, 3, 5, Some(1)),
            deleted(0, 3, 3, false),
            Event::Crashed { node: 0 },
            Event::Restarted { node: 0 },
            leader_state(0, 3, 0, None),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// A leader that lost its floor-setting trim and rebuilt a lower floor, or that names the
    /// wrong tag, breaks it.
    #[test]
    fn lower_floor_or_wrong_tag_breaks_it() {
        let history = vec![
            committed(0, trim(2, 1, 2, 1)),
            committed(0, write(3, 1, 2)),
            committed(0, trim(4, 1, 4, 2)),
            floor_applied(0, 4, Some(4)),
            leader_state(0, 2, 4, Some(1)),
            leader_state(0, 4, 4, Some(1)),
            leader_state(0, 4, 4, Some(2)),
            // The same life, after a (hypothetical) rebuild that lost the trim at 4.
            leader_state(0, 2, 3, Some(1)),
        ];
        let violations = check(&history);
        let steps: Vec<usize> = violations.iter().map(|violation| violation.step).collect();
        assert_eq!(steps, vec![4, 5, 7], "{violations:?}");
        assert!(violations[0].message.contains("the trim at offset 4"));
        assert!(violations[1].message.contains("carries tag"));
        assert!(violations[2].message.contains("its own earlier floor"));
    }

    /// A node that deletes the segment holding its floor-setting trim breaks it, at the deletion
    /// and in every later state; a jump that takes a peer's sealed floor keeps it; once retention
    /// ran, deletions past the floor are not judged here.
    #[test]
    fn deleting_past_the_floor_breaks_it() {
        let history = vec![
            committed(0, trim(5, 1, 5, 1)),
            floor_applied(0, 5, Some(5)),
            deleted(0, 9, 9, false),
            serving(0, 5, 9),
            Event::Jumped {
                node: 1,
                point: 7,
                replica: false,
            },
            floor_applied(1, 8, None),
            deleted(1, 7, 7, false),
            deleted(2, 9, 9, true),
            serving(2, 0, 9),
        ];
        let violations = check(&history);
        let steps: Vec<usize> = violations.iter().map(|violation| violation.step).collect();
        assert_eq!(steps, vec![2, 3], "{violations:?}");
        assert!(violations
            .iter()
            .all(|violation| violation.invariant == FLOOR_RECORD_KEPT));
    }
}
