//! The exact search (Wing–Gong–Lowe), where the candidate order fails (`check.rs`, module doc 3).

use super::check::{in_search, Operation};
use super::refusal::Words;
use super::spec::{Mark, Spec};
use std::collections::BTreeSet;

pub(super) enum Search {
    Found,
    None,
    OverBudget,
}

/// A visited node's children in exploration order, the next to explore, and the child applied now
/// (its index and the mark that undoes it).
type Frame = (Vec<usize>, usize, Option<(usize, Mark)>);

/// Wing–Gong–Lowe: depth first over which operation linearizes next, memoizing (linearized set,
/// state digest). An unknown operation may linearize (with its hint, or the state's answer) at
/// any point after its call, or never; every answered one must, with its reply.
///
/// One state is walked forward and back (`Spec::mark`, `Spec::undo`) instead of copied per step.
/// A visited node's children are all generated (and memoized) when it is visited, then explored
/// lowest index first, each subtree before the next sibling: the order, the memo and the step
/// count of a stack that pushes the children in reverse, so the verdict within the step budget is
/// the same.
pub(super) fn search(operations: &[Operation], steps_max: u64) -> Search {
    let ops: Vec<&Operation> = operations
        .iter()
        .filter(|operation| in_search(operation))
        .collect();
    // Replies judged alone must hold (else no order exists).
    for operation in operations {
        if let Some(reply) = &operation.reply {
            if let Some(Err(_)) = Spec::local_worded(&operation.op, reply, Words::Skipped) {
                return Search::None;
            }
        }
    }
    let words = ops.len().div_ceil(64).max(1);
    let mut walk = Walk {
        ops: &ops,
        done: vec![0; words],
        spec: Spec::new(),
        seen: BTreeSet::new(),
        steps: 0,
        steps_max,
    };
    let mut frames: Vec<Frame> = Vec::new();
    match walk.visit() {
        Visit::Found => return Search::Found,
        Visit::OverBudget => return Search::OverBudget,
        Visit::Children(children) => frames.push((children, 0, None)),
    }
    while let Some((children, next, applied)) = frames.last_mut() {
        if let Some((index, mark)) = applied.take() {
            walk.spec.undo(mark);
            walk.done[index / 64] &= !(1 << (index % 64));
        }
        let Some(&index) = children.get(*next) else {
            frames.pop();
            continue;
        };
        *next += 1;
        let mark = walk.spec.mark();
        let advanced = walk.advance(index);
        debug_assert!(advanced, "a child advanced when generated");
        walk.done[index / 64] |= 1 << (index % 64);
        *applied = Some((index, mark));
        match walk.visit() {
            Visit::Found => return Search::Found,
            Visit::OverBudget => return Search::OverBudget,
            Visit::Children(children) => frames.push((children, 0, None)),
        }
    }
    Search::None
}

/// The exact search's one state: the operations linearized so far and the specification after
/// them, with the memo and the step count.
struct Walk<'a> {
    ops: &'a [&'a Operation],
    done: Vec<u64>,
    spec: Spec,
    seen: BTreeSet<(Vec<u64>, u64)>,
    steps: u64,
    steps_max: u64,
}

enum Visit {
    Found,
    OverBudget,
    /// The children not seen before, in the order they are explored.
    Children(Vec<usize>),
}

impl Walk<'_> {
    fn is_done(&self, index: usize) -> bool {
        self.done[index / 64] & (1 << (index % 64)) != 0
    }

    /// Linearizes operation `index` now, in place: false when its reply is not allowed here (the
    /// state is then unchanged).
    fn advance(&mut self, index: usize) -> bool {
        let operation = self.ops[index];
        match (&operation.reply, &operation.hint) {
            (Some(reply), _) | (None, Some(reply)) => self
                .spec
                .apply_worded(&operation.op, reply, Words::Skipped)
                .is_ok(),
            (None, None) => {
                self.spec.invoke_in_place(&operation.op);
                true
            }
        }
    }

    /// One search step at the current node: done, over budget, or its new children.
    fn visit(&mut self) -> Visit {
        self.steps += 1;
        if self.steps > self.steps_max {
            return Visit::OverBudget;
        }
        // The earliest answer among the answered operations not yet linearized: only operations
        // requested before it may go next.
        let mut frontier = usize::MAX;
        let mut remaining = false;
        for (index, operation) in self.ops.iter().enumerate() {
            if self.is_done(index) {
                continue;
            }
            if let Some(ret) = operation.ret {
                remaining = true;
                frontier = frontier.min(ret);
            }
        }
        if !remaining {
            return Visit::Found;
        }
        let mut children = Vec::new();
        for index in (0..self.ops.len()).rev() {
            if self.is_done(index) || self.ops[index].call >= frontier {
                continue;
            }
            let mark = self.spec.mark();
            if !self.advance(index) {
                continue;
            }
            let mut after = self.done.clone();
            after[index / 64] |= 1 << (index % 64);
            let key = (after, self.spec.digest());
            self.spec.undo(mark);
            if self.seen.insert(key) {
                children.push(index);
            }
        }
        // Generated highest index first (a stack's push order); explored lowest first.
        children.reverse();
        Visit::Children(children)
    }
}
