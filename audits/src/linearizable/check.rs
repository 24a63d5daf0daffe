//! The checker: a history's client operations against the sequential specification, in three
//! stages.
//! 1. **Operations** (`super::operations`): each reply paired with its request, and the records
//!    nobody acknowledged inferred from the committed log.
//! 2. **Candidate** (`super::candidate`): the order the landings' offsets reveal, checked in
//!    near-linear time.
//! 3. **Search** (`super::search`) only where the candidate fails: Wing–Gong–Lowe depth-first
//!    search over "which operation linearizes next", memoizing (linearized set, state digest),
//!    over the history's prefix up to the candidate's failure (operations answered later count as
//!    unknown there, a relaxation: a prefix with no order proves the whole has none). Budgeted by
//!    operations and by search steps (never by time, so a run's verdict is deterministic): over
//!    budget is `Unchecked`, never a pass.

use super::candidate::{candidate, Failure};
use super::operations::{in_search, operations, Operation};
use super::search::{search, Search};
use felix_core::api::Reply;
use felix_core::history::Event;

/// The budget of one check. Enforced: over it, the history is `Unchecked`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Operations a history may hold (the candidate is linear in them).
    pub operations_max: usize,
    /// Operations the exact search may take on.
    pub search_operations_max: usize,
    /// Search steps (one tried linearization each).
    pub search_steps_max: u64,
}

impl Budget {
    /// The budget every simulated run is judged with.
    pub const DEFAULT: Budget = Budget {
        operations_max: 1_000_000,
        search_operations_max: 4_096,
        search_steps_max: 100_000,
    };
}

/// A history that admits no order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The step at which the history stopped admitting an order (the last reply involved).
    pub step: usize,
    /// The operations that admit no order, the reason, and the specification just before.
    pub message: String,
}

/// What the checker concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// An order exists (`searched`: the exact search found it; else the candidate was one).
    Linearizable {
        operations: usize,
        searched: bool,
    },
    NotLinearizable(Finding),
    /// Over budget: neither proved nor refuted.
    Unchecked {
        reason: String,
    },
}

/// Checks a history (module doc). The finding names events as `crate::step_ref`s.
pub fn check_history(history: &[Event], budget: Budget) -> Verdict {
    check(&operations(history), budget, &crate::step_ref)
}

/// Checks operations (module doc, 2 and 3).
pub fn check(operations: &[Operation], budget: Budget, step: &dyn Fn(usize) -> String) -> Verdict {
    if operations.len() > budget.operations_max {
        return Verdict::Unchecked {
            reason: format!(
                "{} operations, over the budget of {}",
                operations.len(),
                budget.operations_max
            ),
        };
    }
    let mut failure = match candidate(operations) {
        Ok(()) => {
            return Verdict::Linearizable {
                operations: operations.len(),
                searched: false,
            }
        }
        Err(failure) => failure,
    };
    // With a committed log and every landing's offset a fact, the candidate is the only order
    // of the landings, and every other operation sat at its earliest place: its failure is final.
    let committed_log = operations.iter().any(|operation| operation.hint.is_some());
    let facts = operations
        .iter()
        .filter(|operation| operation.offset.is_some() && in_search(operation))
        .all(|operation| operation.certain);
    if committed_log && facts {
        failure.definitive = true;
    }
    if failure.definitive {
        return Verdict::NotLinearizable(finding(operations, &failure, None, step));
    }
    // The prefix up to the failure: a relaxation of the whole history.
    let horizon = failure
        .involved
        .iter()
        .map(|&index| operations[index].ret.unwrap_or(operations[index].call))
        .max()
        .unwrap_or(usize::MAX);
    let prefix = prefix(operations, horizon);
    if prefix.len() > budget.search_operations_max {
        return Verdict::Unchecked {
            reason: format!(
                "the candidate failed ({}) and the search would take {} operations, over the budget of {}",
                failure.reason,
                prefix.len(),
                budget.search_operations_max
            ),
        };
    }
    let (outcome, searched) = match search(&prefix, budget.search_steps_max) {
        Search::Found => {
            // The candidate was wrong but an order exists for the prefix: search the whole.
            let all: Vec<Operation> = operations.to_vec();
            if all.len() > budget.search_operations_max {
                return Verdict::Unchecked {
                    reason: format!(
                        "the candidate failed ({}), the prefix has an order, and the whole history \
                         has {} operations, over the search budget of {}",
                        failure.reason,
                        all.len(),
                        budget.search_operations_max
                    ),
                };
            }
            (search(&all, budget.search_steps_max), all)
        }
        outcome => (outcome, prefix),
    };
    match outcome {
        Search::Found => Verdict::Linearizable {
            operations: operations.len(),
            searched: true,
        },
        Search::None => {
            let count = searchable(&searched);
            Verdict::NotLinearizable(finding(operations, &failure, Some(count), step))
        }
        Search::OverBudget => Verdict::Unchecked {
            reason: format!(
                "the candidate failed ({}) and the search ran past {} steps",
                failure.reason, budget.search_steps_max
            ),
        },
    }
}

/// The finding of a failure: the operations that admit no order, why, the specification just
/// before, and (`searched`) how many operations the search found no order of.
fn finding(
    operations: &[Operation],
    failure: &Failure,
    searched: Option<usize>,
    step: &dyn Fn(usize) -> String,
) -> Finding {
    let last = failure
        .involved
        .iter()
        .map(|&index| operations[index].ret.unwrap_or(operations[index].call))
        .max()
        .unwrap_or(0);
    let named: Vec<String> = failure
        .involved
        .iter()
        .map(|&index| operations[index].describe(step))
        .collect();
    let subject = if named.len() == 1 {
        format!("{} admits no place in any order", named[0])
    } else {
        format!("{} admit no order", named.join("; and "))
    };
    let searched = match searched {
        Some(count) => format!(" (no order of the {count} operations up to {})", step(last)),
        None => String::new(),
    };
    Finding {
        step: last,
        message: format!(
            "{subject}: {}; the specification just before: {}{searched}",
            failure.reason,
            failure.before.describe()
        ),
    }
}

/// The operations called by `horizon`; those answered after it count as unknown, keeping their
/// answer as the only outcome they may have (or dropped when it changes nothing).
fn prefix(operations: &[Operation], horizon: usize) -> Vec<Operation> {
    let mut kept = Vec::new();
    for operation in operations {
        if operation.call > horizon {
            continue;
        }
        let mut operation = operation.clone();
        if operation.ret.is_some_and(|ret| ret > horizon) {
            let reply = operation.reply.take();
            operation.ret = None;
            match reply {
                Some(reply @ (Reply::Appended { .. } | Reply::TruncateRefused { .. })) => {
                    operation.hint = Some(reply)
                }
                // Changes nothing: leaving it out relaxes the history.
                _ => continue,
            }
        }
        kept.push(operation);
    }
    kept
}

/// How many operations the search takes on (it skips the ones judged alone).
fn searchable(operations: &[Operation]) -> usize {
    operations
        .iter()
        .filter(|operation| in_search(operation))
        .count()
}
