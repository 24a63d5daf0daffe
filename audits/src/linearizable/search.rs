//! The exact search (Wing–Gong–Lowe), where the candidate order fails (`check.rs`, module doc 3).

use super::operations::{in_search, Operation};
use super::refusal::Words;
use super::spec::{Mark, Spec};
use crate::splitmix::splitmix64;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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
///
/// A visit costs what is left to decide, not the history's length: the operations not linearized
/// yet are kept in two linked lists (by request and by answer, `Order`), so the earliest answer
/// left and the operations requested before it are read off their heads; the memo finds a node by
/// a hash kept up to date step by step (`Memo`).
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
        done_hash: 0,
        by_call: Order::new(&ops, |operation| Some(operation.call)),
        by_ret: Order::new(&ops, |operation| operation.ret),
        spec: Spec::new(),
        seen: Memo::new(words),
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
            walk.toggle(index);
        }
        let Some(&index) = children.get(*next) else {
            frames.pop();
            continue;
        };
        *next += 1;
        let mark = walk.spec.mark();
        let advanced = walk.advance(index);
        debug_assert!(advanced, "a child advanced when generated");
        walk.toggle(index);
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
    /// The linearized operations, a bit each.
    done: Vec<u64>,
    /// `done`'s hash (`Memo`): the XOR of `zobrist(i)` over the linearized operations `i`.
    done_hash: u64,
    /// The operations by request, and the answered ones by answer.
    by_call: Order,
    by_ret: Order,
    spec: Spec,
    seen: Memo,
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

    /// Linearizes operation `index`, or takes it back (the caller applies or undoes its effect).
    fn toggle(&mut self, index: usize) {
        self.done[index / 64] ^= 1 << (index % 64);
        self.done_hash ^= zobrist(index);
        let done = self.is_done(index);
        self.by_call.toggled(index, done);
        self.by_ret.toggled(index, done);
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
        let Some((_, frontier)) = self.by_ret.first() else {
            return Visit::Found;
        };
        // Generated highest index first (a stack's push order): which are new depends only on
        // the nodes seen before this one, so the order among them is only the children's.
        let mut candidates: Vec<usize> = self.by_call.before(frontier).collect();
        candidates.sort_unstable_by(|a, b| b.cmp(a));
        let mut children = Vec::new();
        for index in candidates {
            let mark = self.spec.mark();
            if !self.advance(index) {
                continue;
            }
            let digest = self.spec.digest();
            self.spec.undo(mark);
            let hash = Memo::hash(self.done_hash ^ zobrist(index), digest);
            if self.seen.insert(&self.done, index, hash, digest) {
                children.push(index);
            }
        }
        // Generated highest index first (a stack's push order); explored lowest first.
        children.reverse();
        Visit::Children(children)
    }
}

/// The operations not linearized yet, in the order of one of their steps (request or answer;
/// ties by index), as a doubly linked list over that order: linearizing an operation unlinks it
/// and taking it back links it again where it was (the search takes back in the reverse order it
/// linearizes), so a visit walks only what is left to linearize, from the first.
struct Order {
    /// The operations that have the step, by step then index.
    sorted: Vec<usize>,
    /// Their steps, in that order.
    steps: Vec<usize>,
    /// Each operation's place in `sorted` (`NONE`: it has no such step).
    place: Vec<usize>,
    /// The list: the places after and before each place; place `sorted.len()` is its head and
    /// end.
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl Order {
    fn new(ops: &[&Operation], step: impl Fn(&Operation) -> Option<usize>) -> Order {
        let mut sorted: Vec<(usize, usize)> = (0..ops.len())
            .filter_map(|i| Some((step(ops[i])?, i)))
            .collect();
        sorted.sort_unstable();
        let mut place = vec![NONE; ops.len()];
        for (at, &(_, index)) in sorted.iter().enumerate() {
            place[index] = at;
        }
        let head = sorted.len();
        Order {
            steps: sorted.iter().map(|&(step, _)| step).collect(),
            sorted: sorted.into_iter().map(|(_, index)| index).collect(),
            place,
            next: (0..=head).map(|at| (at + 1) % (head + 1)).collect(),
            prev: (0..=head).map(|at| (at + head) % (head + 1)).collect(),
        }
    }

    /// Operation `index` was just linearized (`done`) or taken back.
    fn toggled(&mut self, index: usize, done: bool) {
        let at = self.place[index];
        if at == NONE {
            return;
        }
        let (before, after) = (self.prev[at], self.next[at]);
        if done {
            self.next[before] = after;
            self.prev[after] = before;
        } else {
            self.next[before] = at;
            self.prev[after] = at;
        }
    }

    /// The first operation in this order not linearized yet, and its step.
    fn first(&self) -> Option<(usize, usize)> {
        let at = self.next[self.sorted.len()];
        (at != self.sorted.len()).then(|| (self.sorted[at], self.steps[at]))
    }

    /// The operations not linearized yet whose step is before `step`, in this order.
    fn before(&self, step: usize) -> impl Iterator<Item = usize> + '_ {
        let head = self.sorted.len();
        std::iter::successors(Some(self.next[head]), |&at| Some(self.next[at]))
            .take_while(move |&at| at != head && self.steps[at] < step)
            .map(|at| self.sorted[at])
    }
}

/// The memo: every node seen, as (linearized set, specification digest), kept whole (no hash
/// stands for a node: two nodes are the same only when both parts are equal), so the search
/// visits exactly the nodes an ordered set of those pairs would let it. A node is found by a hash
/// of both parts; the set's part is kept up to date as operations are linearized and taken back
/// (`Walk::done_hash`), so a lookup costs one probe and, on a hit, one comparison of the sets.
/// The sets lie in one flat vector, `words` words each.
struct Memo {
    words: usize,
    /// By hash: the last node stored with it.
    heads: HashMap<u64, usize, BuildHasherDefault<Prehashed>>,
    /// Node `k`'s linearized set: `sets[k * words..(k + 1) * words]`.
    sets: Vec<u64>,
    digests: Vec<u64>,
    /// The node stored before node `k` with the same hash (`NONE`: none).
    earlier: Vec<usize>,
}

const NONE: usize = usize::MAX;

impl Memo {
    fn new(words: usize) -> Memo {
        Memo {
            words,
            heads: HashMap::default(),
            sets: Vec::new(),
            digests: Vec::new(),
            earlier: Vec::new(),
        }
    }

    /// A node's hash: its linearized set's (`Walk::done_hash`) with its state's digest.
    fn hash(set_hash: u64, digest: u64) -> u64 {
        splitmix64(set_hash ^ splitmix64(digest))
    }

    /// Records the node `done` plus operation `index`, with the state `digest`, under `hash`
    /// (`Memo::hash`; nodes that share one are told apart whole): true when it was not seen
    /// before.
    fn insert(&mut self, done: &[u64], index: usize, hash: u64, digest: u64) -> bool {
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        let head = self.heads.get(&hash).copied().unwrap_or(NONE);
        let mut at = head;
        while at != NONE {
            let set = &self.sets[at * self.words..(at + 1) * self.words];
            // The digest first: it tells most nodes sharing a hash apart without the sets.
            if self.digests[at] == digest
                && (set.iter().zip(done).enumerate())
                    .all(|(w, (&kept, &now))| kept == if w == word { now | bit } else { now })
            {
                return false;
            }
            at = self.earlier[at];
        }
        let node = self.digests.len();
        self.sets.extend_from_slice(done);
        self.sets[node * self.words + word] |= bit;
        self.digests.push(digest);
        self.earlier.push(head);
        self.heads.insert(hash, node);
        true
    }
}

/// Operation `index`'s word in the linearized set's hash: fixed, well spread.
fn zobrist(index: usize) -> u64 {
    splitmix64(index as u64 ^ 0x9e37_79b9_7f4a_7c15)
}

/// The memo's hasher: its keys are hashes already (`splitmix64`), taken as they are.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 << 8) | u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// The memo answers as a set of (linearized set, digest) pairs, whatever the hashes,
        /// even when every node shares one (`all_collide`) or most do.
        #[test]
        fn the_memo_is_a_set_of_its_pairs(
            inserts in proptest::collection::vec((0u64..8, 0usize..130, 0u64..3), 1..300),
            all_collide in any::<bool>(),
        ) {
            let words = 3;
            let mut memo = Memo::new(words);
            let mut set: BTreeSet<(Vec<u64>, u64)> = BTreeSet::new();
            for (seed, index, digest) in inserts {
                // A linearized set drawn from a few, without `index`.
                let mut done: Vec<u64> = (0..words as u64)
                    .map(|w| splitmix64(seed * 3 + w) & splitmix64(seed + 17 * w))
                    .collect();
                done[index / 64] &= !(1 << (index % 64));
                let done_hash = (0..words * 64)
                    .filter(|&i| done[i / 64] & (1 << (i % 64)) != 0)
                    .fold(0, |hash, i| hash ^ zobrist(i));
                let hash = if all_collide {
                    digest % 2
                } else {
                    Memo::hash(done_hash ^ zobrist(index), digest)
                };
                let mut after = done.clone();
                after[index / 64] |= 1 << (index % 64);
                prop_assert_eq!(memo.insert(&done, index, hash, digest), set.insert((after, digest)));
            }
        }

        /// The lists hold exactly the operations not linearized yet, in step order, through any
        /// sequence of linearizations taken back in reverse (as the search does).
        #[test]
        fn an_order_lists_what_is_left(
            steps in proptest::collection::vec(proptest::option::of(0usize..20), 1..40),
            moves in proptest::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 0..80),
        ) {
            let ops: Vec<Operation> = steps
                .iter()
                .map(|&step| Operation {
                    client: None,
                    op: super::super::spec::Op::Noop,
                    reply: None,
                    call: 0,
                    ret: step,
                    offset: None,
                    hint: None,
                    certain: false,
                })
                .collect();
            let refs: Vec<&Operation> = ops.iter().collect();
            let mut order = Order::new(&refs, |operation| operation.ret);
            let mut stack: Vec<usize> = Vec::new();
            for (push, pick) in moves {
                let left: Vec<usize> = (0..ops.len()).filter(|i| !stack.contains(i)).collect();
                if push && !left.is_empty() {
                    let index = left[pick.index(left.len())];
                    stack.push(index);
                    order.toggled(index, true);
                } else if let Some(index) = stack.pop() {
                    order.toggled(index, false);
                }
                let mut expected: Vec<(usize, usize)> = (0..ops.len())
                    .filter(|i| !stack.contains(i))
                    .filter_map(|i| Some((steps[i]?, i)))
                    .collect();
                expected.sort_unstable();
                prop_assert_eq!(order.first(), expected.first().map(|&(step, i)| (i, step)));
                for bound in [0, 5, 10, 20] {
                    let before: Vec<usize> = order.before(bound).collect();
                    let naive: Vec<usize> = (expected.iter())
                        .filter(|&&(step, _)| step < bound)
                        .map(|&(_, i)| i)
                        .collect();
                    prop_assert_eq!(before, naive);
                }
            }
        }
    }
}
