//! The checker: a history's client operations against the sequential specification.
//!
//! 1. **Operations** (`operations`): each `Replied` is paired with its client's latest unanswered
//!    `Requested` asking the same (a client has one request in flight, and a `Requested` before
//!    any reply leaves the earlier operation *unknown*; a pipelining writer has several, which
//!    never ask the same, answered in any order). Real time is the history's order: an operation is called at its
//!    request's step and returns at its reply's step. The committed log (the first `Committed`
//!    per offset) tells which records nobody acknowledged: a leader's noop becomes an inferred
//!    `Noop` operation, a client record becomes the outcome of that client's unknown operation
//!    (its *hint*), a second copy of a request the network duplicated becomes an inferred copy,
//!    and a record no request asked for is left unexplained (a phantom: no order fills its slot).
//! 2. **Candidate** (like Elle, the data reveals the order): every operation that landed names
//!    its offset, so the landing order is the offsets'. Replay them through the specification,
//!    check real time between them, then place every other operation (reads, no-op trims,
//!    `CursorTooOld`) at the earliest position its reply and real time allow, in call order:
//!    near-linear, and exact whenever every landing's offset is known.
//! 3. **Search** only where the candidate fails: Wing–Gong–Lowe depth-first search over "which
//!    operation linearizes next", memoizing (linearized set, state digest), over the history's
//!    prefix up to the candidate's failure (operations answered later count as unknown there, a
//!    relaxation: a prefix with no order proves the whole has none). Budgeted by operations and
//!    by search steps (never by time, so a run's verdict is deterministic): over budget is
//!    `Unchecked`, never a pass.

use super::content::{command_key, request_key, ContentKey};
use super::pairing::answered;
use super::search::{search, Search};
use super::spec::{reply_words, Op, Spec};
use felix_core::api::{ClientId, Reply, Request};
use felix_core::history::Event;
use felix_core::record::{Command, Offset, Token};
use felix_core::words;
use std::collections::{BTreeMap, BTreeSet};

/// One operation of the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The client; `None` for a record nobody requested (noop, network duplicate).
    pub client: Option<ClientId>,
    pub op: Op,
    /// The reply the client got; `None`: the outcome is unknown.
    pub reply: Option<Reply>,
    /// The step of its request (0 for an inferred record).
    pub call: usize,
    /// The step of its reply.
    pub ret: Option<usize>,
    /// Where the data says it landed (its acknowledgement, the committed log, a read).
    pub offset: Option<Offset>,
    /// For an unknown outcome: the outcome the committed log shows.
    pub hint: Option<Reply>,
    /// Whether `offset` is a fact: the client's acknowledgement, or the committed log's record
    /// with exactly one request that could have written it (never a guess between several).
    pub certain: bool,
}

impl Operation {
    /// The operation in words, with its steps.
    /// The operation in words; `step` names a position in the history (the trace's step where
    /// the caller knows it).
    pub fn describe(&self, step: &dyn Fn(usize) -> String) -> String {
        let what = match &self.op {
            Op::Noop => "a noop".to_string(),
            Op::Client(request) => words::request(request),
        };
        let who = match self.client {
            Some(client) => format!("client {client}"),
            None => "nobody".to_string(),
        };
        match (&self.reply, self.ret) {
            (Some(reply), Some(ret)) => format!(
                "{who}'s {what} (requested at {}, answered {} at {})",
                step(self.call),
                reply_words(reply),
                step(ret)
            ),
            _ => match (&self.hint, self.offset) {
                (Some(hint), _) => format!(
                    "{who}'s {what} (requested at {}, outcome unknown, {} in the committed log)",
                    step(self.call),
                    reply_words(hint)
                ),
                (None, Some(offset)) => format!(
                    "{who}'s {what} (requested at {}, outcome unknown, read at {offset})",
                    step(self.call)
                ),
                (None, None) => format!(
                    "{who}'s {what} (requested at {}, outcome unknown)",
                    step(self.call)
                ),
            },
        }
    }

    /// The reply the candidate replays: the client's, else the committed log's, else the offset a
    /// read showed it at.
    fn candidate_reply(&self) -> Option<Reply> {
        if let Some(reply) = self.reply.clone().or_else(|| self.hint.clone()) {
            return Some(reply);
        }
        self.offset.map(|offset| Reply::Appended {
            offset,
            tail: offset.saturating_add(1),
        })
    }

    fn is_unknown_read(&self) -> bool {
        self.reply.is_none() && matches!(self.op, Op::Client(Request::Read { .. }))
    }
}

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

/// Pairs requests with replies and infers the records nobody acknowledged (module doc, 1).
pub fn operations(history: &[Event]) -> Vec<Operation> {
    let mut operations: Vec<Operation> = Vec::new();
    let mut open: BTreeMap<ClientId, Vec<usize>> = BTreeMap::new();
    let mut committed: BTreeMap<Offset, (usize, &Command)> = BTreeMap::new();
    let mut refused: BTreeMap<Offset, Token> = BTreeMap::new();
    for (step, event) in history.iter().enumerate() {
        match event {
            Event::Requested {
                client, request, ..
            } => {
                open.entry(*client).or_default().push(operations.len());
                operations.push(Operation {
                    client: Some(*client),
                    op: Op::Client(request.clone()),
                    reply: None,
                    call: step,
                    ret: None,
                    offset: None,
                    hint: None,
                    certain: false,
                });
            }
            Event::Replied {
                client,
                request,
                reply,
                ..
            } => {
                let Some(index) = answered(open.get_mut(client), &operations, request) else {
                    continue;
                };
                let operation = &mut operations[index];
                operation.reply = Some(reply.clone());
                operation.ret = Some(step);
                if let Reply::Appended { offset, .. } = reply {
                    operation.offset = Some(*offset);
                    operation.certain = true;
                }
            }
            Event::Committed { entry, .. } => {
                committed
                    .entry(entry.offset)
                    .or_insert((step, &entry.command));
            }
            Event::TruncateRefused {
                offset, current, ..
            } => {
                refused.entry(*offset).or_insert(*current);
            }
            _ => {}
        }
    }
    let claimed: BTreeSet<Offset> = operations
        .iter()
        .filter_map(|operation| operation.offset)
        .collect();
    let mut by_content: BTreeMap<ContentKey, Vec<usize>> = BTreeMap::new();
    if !committed.is_empty() {
        for (index, operation) in operations.iter().enumerate() {
            if let Op::Client(request) = &operation.op {
                if let Some(key) = request_key(request) {
                    by_content.entry(key).or_default().push(index);
                }
            }
        }
    }
    let mut inferred = Vec::new();
    // The writer token along the committed log: a fenced request lands only under its token.
    let mut token = Token(0);
    for (&offset, &(step, command)) in &committed {
        let in_force = token;
        if let Command::Fence { new, .. } = command {
            token = *new;
        }
        if claimed.contains(&offset) {
            continue;
        }
        let fenced_right = |op: &Op| match op {
            Op::Client(Request::Append { fence, .. }) => {
                fence.is_none_or(|fence| fence == in_force)
            }
            Op::Client(Request::Trim { fence, .. }) => match refused.get(&offset) {
                Some(_) => fence.is_some_and(|fence| fence != in_force),
                None => fence.is_none_or(|fence| fence == in_force),
            },
            Op::Client(Request::Fence { old, .. }) => *old == in_force,
            _ => false,
        };
        let outcome = match refused.get(&offset) {
            Some(&current) => Reply::TruncateRefused { current },
            None => Reply::Appended {
                offset,
                tail: offset.saturating_add(1),
            },
        };
        if matches!(command, Command::Noop) {
            inferred.push(Operation {
                client: None,
                op: Op::Noop,
                reply: None,
                call: 0,
                ret: None,
                offset: Some(offset),
                hint: Some(outcome),
                certain: true,
            });
            continue;
        }
        // The outcome of a request nobody learned, or of a refused truncate (its reply names no
        // offset): the earliest such request asking for exactly this record.
        let Some(key) = command_key(command) else {
            continue;
        };
        let candidates = by_content.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let mut eligible = candidates.iter().copied().filter(|&index| {
            let operation = &operations[index];
            operation.offset.is_none()
                && operation.call < step
                && asks_for(&operation.op, command, offset)
                && fenced_right(&operation.op)
                && match &operation.reply {
                    None => true,
                    Some(Reply::TruncateRefused { .. }) => refused.contains_key(&offset),
                    Some(_) => false,
                }
        });
        let owner = eligible.next();
        let alone = eligible.next().is_none();
        if let Some(index) = owner {
            let operation = &mut operations[index];
            operation.offset = Some(offset);
            operation.certain = alone;
            if operation.reply.is_none() {
                operation.hint = Some(outcome);
            }
            continue;
        }
        // A second copy of a request (the network delivered it twice; the journal does not
        // deduplicate): inferred, requested when the first copy was.
        let original = candidates.iter().copied().find(|&index| {
            operations[index].call < step
                && asks_for(&operations[index].op, command, offset)
                && fenced_right(&operations[index].op)
        });
        if let Some(index) = original {
            let original = &operations[index];
            inferred.push(Operation {
                client: None,
                op: original.op.clone(),
                reply: None,
                call: original.call,
                ret: None,
                offset: Some(offset),
                hint: Some(outcome),
                certain: false,
            });
        }
        // Else a phantom: nothing explains the slot, and no order fills it.
    }
    if committed.is_empty() {
        infer_from_reads(&mut operations);
    }
    operations.extend(inferred);
    operations
}

/// Without a committed log (a client-only trace), an unknown append whose record a read served
/// (the only request asking for that content) is placed there in the candidate, with no hint.
fn infer_from_reads(operations: &mut [Operation]) {
    let claimed: BTreeSet<Offset> = operations
        .iter()
        .filter_map(|operation| operation.offset)
        .collect();
    let mut seen: BTreeMap<Offset, (Vec<u8>, felix_core::record::Headers)> = BTreeMap::new();
    for operation in operations.iter() {
        if let Some(Reply::Records { records, .. }) = &operation.reply {
            for record in records {
                seen.entry(record.offset)
                    .or_insert_with(|| (record.body.clone(), record.headers.clone()));
            }
        }
    }
    for (offset, (body, headers)) in seen {
        if claimed.contains(&offset) {
            continue;
        }
        let matching: Vec<usize> = operations
            .iter()
            .enumerate()
            .filter(|(_, operation)| {
                matches!(&operation.op, Op::Client(Request::Append { body: b, headers: h, .. })
                    if *b == body && *h == headers)
            })
            .map(|(index, _)| index)
            .collect();
        if let [index] = matching[..] {
            if operations[index].reply.is_none() && operations[index].offset.is_none() {
                operations[index].offset = Some(offset);
            }
        }
    }
}

/// Whether `op` asks for exactly the record `command` at `offset` (a conditional request lands
/// only at its expected tail).
fn asks_for(op: &Op, command: &Command, offset: Offset) -> bool {
    let at_tail = |expected_tail: &Option<Offset>| expected_tail.is_none_or(|tail| tail == offset);
    match (op, command) {
        (
            Op::Client(Request::Append {
                body,
                headers,
                expected_tail,
                ..
            }),
            Command::Write {
                body: written,
                headers: written_headers,
            },
        ) => body == written && headers == written_headers && at_tail(expected_tail),
        (
            Op::Client(Request::Trim {
                floor,
                headers,
                fence,
                expected_tail,
            }),
            Command::Trim {
                floor: written_floor,
                headers: written_headers,
                fence: written_fence,
            },
        ) => {
            floor == written_floor
                && headers == written_headers
                && fence == written_fence
                && at_tail(expected_tail)
        }
        (Op::Client(Request::Fence { new, old }), Command::Fence { new: n, old: o }) => {
            new == n && old == o
        }
        _ => false,
    }
}

/// Checks a history (module doc). The finding names events as `crate::step_ref`s.
pub fn check_history(history: &[Event], budget: Budget) -> Verdict {
    check(&operations(history), budget, &crate::step_ref)
}

/// Where the candidate failed: the operations involved, why, the state just before, and whether
/// the failure needs no search (facts no order can reconcile).
struct Failure {
    involved: Vec<usize>,
    reason: String,
    before: Box<Spec>,
    definitive: bool,
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
    let finding = |failure: &Failure, searched: Option<usize>| {
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
    };
    if failure.definitive {
        return Verdict::NotLinearizable(finding(&failure, None));
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
    match search(&prefix, budget.search_steps_max) {
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
            match search(&all, budget.search_steps_max) {
                Search::Found => Verdict::Linearizable {
                    operations: operations.len(),
                    searched: true,
                },
                Search::None => Verdict::NotLinearizable(finding(&failure, Some(searchable(&all)))),
                Search::OverBudget => Verdict::Unchecked {
                    reason: format!(
                        "the candidate failed ({}) and the search ran past {} steps",
                        failure.reason, budget.search_steps_max
                    ),
                },
            }
        }
        Search::None => Verdict::NotLinearizable(finding(&failure, Some(searchable(&prefix)))),
        Search::OverBudget => Verdict::Unchecked {
            reason: format!(
                "the candidate failed ({}) and the search ran past {} steps",
                failure.reason, budget.search_steps_max
            ),
        },
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

/// Whether an operation takes part in the order: not an unknown read (it changes nothing and
/// constrains nothing), not a reply that depends on no state (judged alone).
pub(super) fn in_search(operation: &Operation) -> bool {
    if operation.is_unknown_read() {
        return false;
    }
    match &operation.reply {
        Some(reply) => Spec::local(&operation.op, reply).is_none(),
        None => true,
    }
}

/// The candidate order (module doc, 2).
fn candidate(operations: &[Operation]) -> Result<(), Failure> {
    // Replies that depend on no state are judged alone; their failure needs no search.
    for (index, operation) in operations.iter().enumerate() {
        if let Some(reply) = &operation.reply {
            if let Some(Err(reason)) = Spec::local(&operation.op, reply) {
                return Err(Failure {
                    involved: vec![index],
                    reason,
                    before: Box::default(),
                    definitive: true,
                });
            }
        }
    }
    // The landings, by offset.
    let mut landings: Vec<(Offset, usize)> = Vec::new();
    let mut others: Vec<usize> = Vec::new();
    for (index, operation) in operations.iter().enumerate() {
        if !in_search(operation) {
            continue;
        }
        match operation.offset {
            Some(offset) => landings.push((offset, index)),
            None => match &operation.reply {
                None => {} // an unknown operation the data never shows: left out (never).
                Some(Reply::TruncateRefused { .. }) => {
                    return Err(Failure {
                        involved: vec![index],
                        reason: "its refused record is nowhere in the committed log".to_string(),
                        before: Box::default(),
                        definitive: false,
                    })
                }
                Some(_) => others.push(index),
            },
        }
    }
    landings.sort_unstable();
    for pair in landings.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (first, second) = (pair[0].1, pair[1].1);
            let both_acked =
                operations[first].reply.is_some() && operations[second].reply.is_some();
            return Err(Failure {
                involved: vec![first, second],
                reason: format!("both landed at offset {}", pair[0].0),
                before: Box::default(),
                definitive: both_acked,
            });
        }
    }
    // Replay the landings; remember the floor after each and where each (floor, tag) began.
    let mut spec = Spec::new();
    let mut floor_at: Vec<Offset> = vec![spec.floor()];
    let mut floors_from: Vec<((Offset, Option<felix_core::record::Headers>), usize)> =
        vec![((spec.floor(), None), 0)];
    for (position, &(offset, index)) in landings.iter().enumerate() {
        let operation = &operations[index];
        if offset != spec.tail() {
            let reason = if offset > spec.tail() {
                format!(
                    "it landed at {offset}, but nothing any client or the committed log shows \
                     landed at {}",
                    spec.tail()
                )
            } else {
                format!("it landed at {offset} below the tail {}", spec.tail())
            };
            return Err(Failure {
                involved: vec![index],
                reason,
                before: Box::new(spec),
                definitive: false,
            });
        }
        let Some(reply) = operation.candidate_reply() else {
            unreachable!("a landing has an offset, hence a reply");
        };
        let before = spec.tail();
        match spec.apply(&operation.op, &reply) {
            Ok(true) => {}
            Ok(false) => {
                return Err(Failure {
                    involved: vec![index],
                    reason: "it landed but the specification writes nothing for it".to_string(),
                    before: Box::new(spec),
                    definitive: false,
                })
            }
            Err(reason) => {
                return Err(Failure {
                    involved: vec![index],
                    reason,
                    before: Box::new(spec),
                    definitive: false,
                })
            }
        }
        assert_eq!(spec.tail(), before + 1);
        floor_at.push(spec.floor());
        let current = (spec.floor(), spec.tag().cloned());
        if floors_from.last().map(|(known, _)| known) != Some(&current) {
            floors_from.push((current, position + 1));
        }
    }
    let log = spec;
    // Real time between landings: no landing answered before another was requested may sit
    // after it. Walk the offsets downwards keeping the earliest answer seen.
    let mut earliest: Option<(usize, usize)> = None; // (ret, index)
    for &(_, index) in landings.iter().rev() {
        let operation = &operations[index];
        if let Some((ret, later)) = earliest {
            if ret < operation.call {
                return Err(Failure {
                    involved: vec![later, index],
                    reason: "the first was answered before the second was requested, yet landed \
                             after it"
                        .to_string(),
                    before: Box::new(replay_until(
                        operations,
                        &landings,
                        operations[index].offset,
                    )),
                    definitive: operations[later].reply.is_some()
                        && operations[index].reply.is_some(),
                });
            }
        }
        if let Some(ret) = operation.ret {
            if earliest.is_none_or(|(known, _)| ret < known) {
                earliest = Some((ret, index));
            }
        }
    }
    // Bounds from landings: at least every landing answered before the call, at most before every
    // landing requested after the return. Positions count landed records.
    let mut by_ret: Vec<(usize, Offset)> = landings
        .iter()
        .filter_map(|&(offset, index)| operations[index].ret.map(|ret| (ret, offset)))
        .collect();
    by_ret.sort_unstable();
    let mut prefix_max: Vec<Offset> = Vec::with_capacity(by_ret.len());
    for &(_, offset) in &by_ret {
        prefix_max.push(prefix_max.last().copied().unwrap_or(0).max(offset));
    }
    let mut by_call: Vec<(usize, Offset, usize)> = landings
        .iter()
        .map(|&(offset, index)| (operations[index].call, offset, index))
        .collect();
    by_call.sort_unstable();
    let mut suffix_min: Vec<(Offset, usize)> = vec![(Offset::MAX, usize::MAX); by_call.len() + 1];
    for at in (0..by_call.len()).rev() {
        let (_, offset, index) = by_call[at];
        suffix_min[at] = suffix_min[at + 1].min((offset, index));
    }
    let last = landings.len();
    // The other operations, earliest feasible position first, in call order (real time among
    // them: one answered before another was requested sits no later).
    others.sort_unstable_by_key(|&index| operations[index].call);
    let mut returns: Vec<(usize, usize)> = others
        .iter()
        .map(|&index| (operations[index].ret.unwrap_or(usize::MAX), index))
        .collect();
    returns.sort_unstable();
    let mut placed: BTreeMap<usize, usize> = BTreeMap::new();
    let mut returned_max: (usize, Option<usize>) = (0, None);
    let mut next_return = 0;
    for &index in &others {
        let operation = &operations[index];
        while next_return < returns.len() && returns[next_return].0 < operation.call {
            let other = returns[next_return].1;
            if let Some(&position) = placed.get(&other) {
                if position >= returned_max.0 {
                    returned_max = (position, Some(other));
                }
            }
            next_return += 1;
        }
        let answered_before = by_ret.partition_point(|&(ret, _)| ret < operation.call);
        let low_landing = if answered_before == 0 {
            0
        } else {
            prefix_max[answered_before - 1] as usize
        };
        let ret = operation.ret.unwrap_or(usize::MAX);
        let requested_after = by_call.partition_point(|&(call, _, _)| call <= ret);
        let (high_offset, high_index) = suffix_min[requested_after];
        let high = if high_offset == Offset::MAX {
            last
        } else {
            high_offset as usize - 1
        };
        let Some(reply) = &operation.reply else {
            continue;
        };
        let (feasible_low, feasible_high, why) =
            feasible(&operation.op, reply, &log, &floor_at, &floors_from, last);
        let low = low_landing.max(returned_max.0).max(feasible_low);
        let top = high.min(feasible_high);
        if low > top {
            let mut involved = vec![index];
            let reason;
            if feasible_low > feasible_high {
                reason = why;
            } else if feasible_low > high {
                if high_index != usize::MAX {
                    involved.push(high_index);
                }
                reason = format!(
                    "it was answered before the second was requested, yet needs {}",
                    why_low(feasible_low)
                );
            } else if feasible_high < low_landing {
                let answered = by_ret[answered_before - 1].1;
                if let Some(&(_, landed)) = landings.iter().find(|(offset, _)| *offset == answered)
                {
                    involved.push(landed);
                }
                reason = format!(
                    "it was requested after the second was answered, yet {why} holds only before \
                     offset {}",
                    feasible_high + 1
                );
            } else {
                if let Some(other) = returned_max.1 {
                    involved.push(other);
                }
                reason = format!(
                    "it was requested after the second was answered, which saw the log up to \
                     offset {}, yet {why} holds only before offset {}",
                    returned_max.0,
                    feasible_high + 1
                );
            }

            involved.dedup();
            let position = low_landing.max(returned_max.0).min(last);
            return Err(Failure {
                involved,
                reason,
                before: Box::new(replay_until(
                    operations,
                    &landings,
                    Some(position as Offset + 1),
                )),
                definitive: false,
            });
        }
        placed.insert(index, low);
    }
    Ok(())
}

fn why_low(position: usize) -> String {
    format!("the log up to offset {position}")
}

/// The positions (records landed) at which `reply` to `op` is allowed, as an interval, and what
/// holds there in words; an empty interval when none.
fn feasible(
    op: &Op,
    reply: &Reply,
    log: &Spec,
    floor_at: &[Offset],
    floors_from: &[((Offset, Option<felix_core::record::Headers>), usize)],
    last: usize,
) -> (usize, usize, String) {
    let empty = |why: String| (1, 0, why);
    let Op::Client(request) = op else {
        return empty("a noop is no reply".to_string());
    };
    match (request, reply) {
        (Request::Read { from, max_records }, Reply::Records { records, next }) => {
            let Some(position) = next.checked_sub(1).map(|position| position as usize) else {
                return empty("a read answered next 0".to_string());
            };
            if position > last {
                return empty(format!("it served up to {next}, past every landed record"));
            }
            // The content below `next` is fixed once it landed: judge it at `next`'s position.
            let at = replay_view(log, floor_at, position);
            if let Err(reason) = at.check(*from, *max_records, records, *next) {
                return empty(reason);
            }
            let cap = (*max_records).min(super::spec::read_records_max()) as usize;
            let complete = records.len() < cap;
            let start = match from {
                felix_core::api::ReadFrom::Offset(from) => *from,
                felix_core::api::ReadFrom::Earliest => {
                    records.first().map_or(*next, |record| record.offset)
                }
            };
            // The floor must still be at most where it served from.
            let floor_high = floor_at.partition_point(|&floor| floor <= start);
            if floor_high == 0 {
                return empty(format!("floor above {start} from the start"));
            }
            let high = if complete {
                position
            } else {
                (floor_high - 1).min(last)
            };
            (position, high, format!("serving up to {next} from {start}"))
        }
        (
            Request::Read {
                from: felix_core::api::ReadFrom::Offset(_),
                ..
            },
            Reply::CursorTooOld { floor, tag },
        ) => {
            let key = (*floor, tag.clone());
            match floors_from.iter().find(|(known, _)| *known == key) {
                Some(&(_, position)) => match log.step(op, reply) {
                    Ok(_) => (position, last, format!("floor {floor}")),
                    Err(reason) => empty(reason),
                },
                None => empty(format!(
                    "CursorTooOld names floor {floor} with {}, which was never in force",
                    match tag {
                        Some(headers) => format!("tag {}", words::headers(headers)),
                        None => "no tag".to_string(),
                    }
                )),
            }
        }
        (Request::Trim { floor, .. }, Reply::TrimNoop { .. }) => {
            let position = floor_at.partition_point(|&known| known < *floor);
            if position > last {
                return empty(format!(
                    "a no-op trim asking for floor {floor}, which the floor never reached"
                ));
            }
            match Spec::noop_trim_tail(request, reply) {
                Ok(()) => (position, last, format!("floor at least {floor}")),
                Err(reason) => empty(reason),
            }
        }
        _ => empty(format!(
            "{} cannot be answered {}",
            words::request(request),
            reply_words(reply)
        )),
    }
}

/// The log's records as a read at `position` sees them: the same records, the floor then.
fn replay_view<'a>(log: &'a Spec, floor_at: &[Offset], position: usize) -> ReadView<'a> {
    ReadView {
        log,
        floor: floor_at[position],
        tail: position as Offset + 1,
    }
}

struct ReadView<'a> {
    log: &'a Spec,
    floor: Offset,
    tail: Offset,
}

impl ReadView<'_> {
    fn check(
        &self,
        from: felix_core::api::ReadFrom,
        max_records: u32,
        records: &[felix_core::api::ReadRecord],
        next: Offset,
    ) -> Result<(), String> {
        self.log
            .check_records_at(from, max_records, records, next, self.floor, self.tail)
    }
}

/// The specification after the landings below `offset`.
fn replay_until(
    operations: &[Operation],
    landings: &[(Offset, usize)],
    offset: Option<Offset>,
) -> Spec {
    let mut spec = Spec::new();
    for &(landed, index) in landings {
        if offset.is_some_and(|offset| landed >= offset) {
            break;
        }
        let Some(reply) = operations[index].candidate_reply() else {
            break;
        };
        if spec.apply(&operations[index].op, &reply) != Ok(true) {
            break;
        }
    }
    spec
}
