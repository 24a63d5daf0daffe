//! LogTermsMonotone: along a node's log, from its sealed base on, record terms never decrease (the
//! first held record's term is at least the sealed base's, and each record's at least the one
//! before it). Raft keeps it: a leader appends in its own term, at least any term in its log; a
//! follower takes a leader's records after a matching one and drops its own conflicting suffix;
//! a record after a committed base of term `T` has a term of at least `T` (leader completeness).
//!
//! The driver's witness walks its node's log after each step and what a restart read back
//! (`witness::monotone`), and records `LogTermsDecreased` at the step that breaks it. This judge
//! reports each such event. A trim-point jump that keeps a stale suffix after a base of a newer
//! term, or a store that brings back records dropped in memory, breaks no end-state judge when the
//! suffix is repaired before anything reads it; it breaks this property at the step that makes it.

use crate::{Violation, LOG_TERMS_MONOTONE};
use felix_core::history::Event;

/// The violations of LogTermsMonotone in `history`: one per recorded decrease.
pub fn check(history: &[Event]) -> Vec<Violation> {
    (history.iter().enumerate())
        .filter_map(|(step, event)| match event {
            Event::LogTermsDecreased {
                node,
                offset,
                term,
                before,
                base,
                restart,
            } => Some(Violation::new(
                LOG_TERMS_MONOTONE,
                step,
                format!(
                    "node {node}'s log{} holds at offset {offset} a record of term {term}, below \
                     the term {before} of {}",
                    if *restart {
                        ", as its restart read it back,"
                    } else {
                        ""
                    },
                    if *base {
                        format!("its sealed base at offset {}", offset - 1)
                    } else {
                        format!("the record at offset {} before it", offset - 1)
                    }
                ),
            )),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decreased(node: u32, offset: u64, term: u64, before: u64, base: bool) -> Event {
        Event::LogTermsDecreased {
            node,
            offset,
            term,
            before,
            base,
            restart: false,
        }
    }

    /// Each recorded decrease is one violation at its step, naming the node, the offset, both
    /// terms and what came before; other events are none.
    #[test]
    fn each_decrease_is_reported() {
        let history = vec![
            Event::Crashed { node: 1 },
            decreased(2, 7, 3, 5, true),
            Event::Restarted { node: 1 },
            Event::LogTermsDecreased {
                node: 1,
                offset: 4,
                term: 1,
                before: 2,
                base: false,
                restart: true,
            },
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 2);
        assert_eq!(violations[0].step, 1);
        assert_eq!(violations[0].invariant, LOG_TERMS_MONOTONE);
        assert_eq!(
            violations[0].text(),
            "node 2's log holds at offset 7 a record of term 3, below the term 5 of \
             its sealed base at offset 6"
        );
        assert_eq!(violations[1].step, 3);
        assert_eq!(
            violations[1].text(),
            "node 1's log, as its restart read it back, holds at offset 4 a record of term 1, below \
             the term 2 of the record at offset 3 before it"
        );
        assert!(check(&history[..1]).is_empty());
    }
}
