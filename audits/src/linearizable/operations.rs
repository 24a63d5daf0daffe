//! The checker's first stage (`check` module doc, 1): a history's events paired into operations.
//!
//! Each `Replied` is paired with its client's latest unanswered `Requested` asking the same (a
//! client has one request in flight, and a `Requested` before any reply leaves the earlier
//! operation *unknown*; a pipelining writer has several, which never ask the same, answered in any
//! order). Real time is the history's order: an operation is called at its request's step and
//! returns at its reply's step. The committed log (the first `Committed` per offset) tells which
//! records nobody acknowledged: a leader's noop becomes an inferred `Noop` operation, a client
//! record becomes the outcome of that client's unknown operation (its *hint*), a second copy of a
//! request the network duplicated becomes an inferred copy, and a record no request asked for is
//! left unexplained (a phantom: no order fills its slot).

use super::content::{command_key, request_key, ContentKey};
use super::pairing::answered;
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
    pub(super) fn candidate_reply(&self) -> Option<Reply> {
        if let Some(reply) = self.reply.clone().or_else(|| self.hint.clone()) {
            return Some(reply);
        }
        self.offset.map(|offset| Reply::Appended {
            offset,
            tail: offset.saturating_add(1),
        })
    }

    pub(super) fn is_unknown_read(&self) -> bool {
        self.reply.is_none() && matches!(self.op, Op::Client(Request::Read { .. }))
    }
}

/// Pairs requests with replies and infers the records nobody acknowledged (module doc).
pub fn operations(history: &[Event]) -> Vec<Operation> {
    let Paired {
        mut operations,
        committed,
        refused,
    } = paired(history);
    if committed.is_empty() {
        infer_from_reads(&mut operations);
        return operations;
    }
    let inferred = infer_from_committed(&mut operations, &committed, &refused);
    operations.extend(inferred);
    operations
}

/// A history read once: its operations, each reply paired with its request, and what the
/// committed log and the refused truncates show.
struct Paired<'h> {
    operations: Vec<Operation>,
    /// The first `Committed` per offset: its step and record.
    committed: BTreeMap<Offset, (usize, &'h Command)>,
    /// The first refused truncate per offset: the token in force it named.
    refused: BTreeMap<Offset, Token>,
}

fn paired(history: &[Event]) -> Paired<'_> {
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
    Paired {
        operations,
        committed,
        refused,
    }
}

/// The operations the committed log shows and no reply did: a leader's noop, the outcome of a
/// request nobody learned (set on it as its hint), a network duplicate's copy. Returns the
/// inferred ones to add.
fn infer_from_committed(
    operations: &mut [Operation],
    committed: &BTreeMap<Offset, (usize, &Command)>,
    refused: &BTreeMap<Offset, Token>,
) -> Vec<Operation> {
    let claimed: BTreeSet<Offset> = operations
        .iter()
        .filter_map(|operation| operation.offset)
        .collect();
    let by_content = by_content(operations);
    let mut inferred = Vec::new();
    // The writer token along the committed log: a fenced request lands only under its token.
    let mut token = Token(0);
    for (&offset, &(step, command)) in committed {
        let in_force = token;
        if let Command::Fence { new, .. } = command {
            token = *new;
        }
        if claimed.contains(&offset) {
            continue;
        }
        let refused_here = refused.get(&offset).copied();
        let fenced_right = |op: &Op| fenced_right(op, in_force, refused_here.is_some());
        let outcome = match refused_here {
            Some(current) => Reply::TruncateRefused { current },
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
                    Some(Reply::TruncateRefused { .. }) => refused_here.is_some(),
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
    inferred
}

/// The client operations by the content they ask for.
fn by_content(operations: &[Operation]) -> BTreeMap<ContentKey, Vec<usize>> {
    let mut by_content: BTreeMap<ContentKey, Vec<usize>> = BTreeMap::new();
    for (index, operation) in operations.iter().enumerate() {
        if let Op::Client(request) = &operation.op {
            if let Some(key) = request_key(request) {
                by_content.entry(key).or_default().push(index);
            }
        }
    }
    by_content
}

/// Whether `op` could have landed under the writer token `in_force`: a fenced request lands only
/// under its token; a truncate the committed log shows refused (`refused`) only under another.
fn fenced_right(op: &Op, in_force: Token, refused: bool) -> bool {
    match op {
        Op::Client(Request::Append { fence, .. }) => fence.is_none_or(|fence| fence == in_force),
        Op::Client(Request::Trim { fence, .. }) if refused => {
            fence.is_some_and(|fence| fence != in_force)
        }
        Op::Client(Request::Trim { fence, .. }) => fence.is_none_or(|fence| fence == in_force),
        Op::Client(Request::Fence { old, .. }) => *old == in_force,
        _ => false,
    }
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
