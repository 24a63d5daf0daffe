//! CommittedPrefixAgreement: no two nodes hold different records at a committed offset.
//!
//! Every `Committed { node, entry }` is compared with the first commit of the same offset (by any
//! node, including the same node before a restart): a different term or command is a violation,
//! reported once per offset, at the first disagreeing commit. Offsets a node jumped over are not
//! committed by it and are not compared.

use crate::{step_ref, Violation, COMMITTED_PREFIX_AGREEMENT};
use felix_core::history::Event;
use felix_core::record::{NodeId, Offset};
use felix_core::words;
use std::collections::{BTreeMap, BTreeSet};

/// The violations of CommittedPrefixAgreement in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    // offset -> (node, step) of its first commit.
    let mut first: BTreeMap<Offset, (NodeId, usize)> = BTreeMap::new();
    let mut reported: BTreeSet<Offset> = BTreeSet::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        let Event::Committed { node, entry } = event else {
            continue;
        };
        let (first_node, first_step) = *first.entry(entry.offset).or_insert((*node, step));
        if first_step == step || reported.contains(&entry.offset) {
            continue;
        }
        let Event::Committed {
            entry: first_entry, ..
        } = &history[first_step]
        else {
            unreachable!("first commits index Committed events only");
        };
        if first_entry != entry {
            reported.insert(entry.offset);
            violations.push(Violation::new(
                COMMITTED_PREFIX_AGREEMENT,
                step,
                format!(
                    "node {node} committed {} at offset {}, but node {first_node} committed {} \
                     there at {}",
                    words::entry(entry),
                    entry.offset,
                    words::entry(first_entry),
                    step_ref(first_step)
                ),
            ));
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// Three nodes committing the same records, in any interleaving, agree.
    #[test]
    fn same_records_agree() {
        let history = vec![
            committed(0, noop(1, 1)),
            committed(0, write(2, 1, 1)),
            committed(1, noop(1, 1)),
            committed(2, noop(1, 1)),
            committed(1, write(2, 1, 1)),
            committed(2, write(2, 1, 1)),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// A different record (or the same command under another term) at a committed offset is
    /// reported once, at the first disagreeing commit.
    #[test]
    fn different_record_at_committed_offset_breaks_it() {
        let history = vec![
            committed(0, write(1, 1, 1)),
            committed(1, write(1, 2, 1)),
            committed(2, write(1, 1, 2)),
            committed(0, write(2, 1, 1)),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].invariant, COMMITTED_PREFIX_AGREEMENT);
        assert_eq!(violations[0].step, 1);
        assert!(violations[0].message.contains("node 1"));
    }
}
