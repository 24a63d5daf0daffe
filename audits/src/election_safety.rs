//! ElectionSafety: no two nodes become leader in the same term (Raft's election safety).
//!
//! Read from `BecameLeader { node, term }`: the first node to become leader of a term owns it;
//! another node becoming leader of the same term is a violation, reported once per term at the
//! event where the second leader appeared. The same node becoming leader of its term again (a
//! restart does not re-elect within a term, but a history may repeat the event) is not.

use crate::{step_ref, Violation, ELECTION_SAFETY};
use felix_core::history::Event;
use felix_core::record::{NodeId, Term};
use std::collections::{BTreeMap, BTreeSet};

/// The violations of ElectionSafety in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let mut leaders: BTreeMap<Term, (NodeId, usize)> = BTreeMap::new();
    let mut reported: BTreeSet<Term> = BTreeSet::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
        let Event::BecameLeader { node, term } = *event else {
            continue;
        };
        match leaders.get(&term) {
            None => {
                leaders.insert(term, (node, step));
            }
            Some(&(first, first_step)) if first != node && reported.insert(term) => {
                violations.push(Violation::new(
                    ELECTION_SAFETY,
                    step,
                    format!(
                        "node {node} became leader of term {term}, which node {first} already \
                         leads (since {})",
                        step_ref(first_step)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leader(node: NodeId, term: Term) -> Event {
        Event::BecameLeader { node, term }
    }

    /// One leader per term holds, whatever the order of terms; a node re-announcing its own term
    /// is not a second leader.
    #[test]
    fn one_leader_per_term_holds() {
        let history = vec![
            leader(0, 1),
            leader(1, 2),
            leader(1, 2),
            leader(2, 4),
            leader(0, 3),
        ];
        assert!(check(&history).is_empty());
    }

    /// Two nodes leading one term is found at the second's event, once per term.
    #[test]
    fn two_leaders_in_one_term_break_it() {
        let history = vec![leader(0, 1), leader(1, 2), leader(2, 2), leader(0, 2)];
        let violations = check(&history);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].step, 2);
        assert_eq!(
            violations[0].text(),
            "node 2 became leader of term 2, which node 1 already leads (since step 1)"
        );
    }
}
