//! Linearizable: the journal, as its clients see it, is linearizable against its sequential
//! specification. Each answered operation takes effect at one instant between its request and
//! its reply; one whose outcome the client never learned takes effect at some instant after its
//! request, or never.
//!
//! # The sequential specification (`spec.rs`)
//!
//! State: the log (a slot per offset from 1: write, trim, fence, noop), the tail (the offset after
//! the last slot), the floor and the headers of the trim that set it (its *tag*), the writer
//! token in force, and every `(floor, tag)` in force so far. Initially: empty, tail 1, floor 1
//! with no tag, token 0.
//!
//! | operation | state | allowed replies |
//! |---|---|---|
//! | `Append { expected_tail, fence }` | tail `t`, token `w` | `Appended { offset: t, tail: t+1 }` if `expected_tail` ∈ {none, `t`} and `fence` ∈ {none, `w`}: the write takes slot `t` |
//! | `Trim { expected_tail, fence, floor, headers }` | tail `t`, floor `f`, token `w` | `Appended { offset: t, tail: t+1 }` under the same conditions and `floor ≤ t`: the trim takes slot `t`; if `floor > f` the floor becomes `floor`, tagged `headers` (a trim at or below the floor lands and changes nothing: a lagging leader appends one) |
//! | | | `TruncateRefused { current }` if `fence` is given, `current = w ≠ fence`: the slot is spent, the floor unmoved |
//! | | | `TrimNoop { tail }` if `floor ≤ f` and `tail = expected_tail` when one was given |
//! | `Fence { new, old }` | tail `t`, token `w` | `Appended { offset: t, tail: t+1 }` if `old = w`: the token becomes `new` |
//! | `Read { from: o, max }` | tail `t`, floor `f` | `Records { records, next }` if `f ≤ o ≤ next ≤ t`, `records` are exactly the writes in `[o, next)`, and `next = t` unless `min(max, read_records_max)` records were served |
//! | | | `CursorTooOld { floor, tag }` if `o < floor` and `(floor, tag)` was in force at some instant so far (a node answers from its own floor, which may lag) |
//! | `Read { from: earliest, max }` | tail `t`, floor `f` | `Records` as above from its first record's offset `s ≥ f` (a jumped node serves from its trim point) |
//! | any | any | `NotLeader`, `NoReadIndex`, `Invalid`; `NotHeld` for a read: nothing changes |
//! | `Append`/`Trim` with `expected_tail = e` | any | `OffsetMismatch { tail }` if `tail ≠ e`: nothing changes |
//! | `Append`/`Trim` with `fence = k`, `Fence { old: k }` | any | `FenceMismatch { current }` if `current ≠ k`: nothing changes |
//! | (no client) a leader's noop | tail `t` | lands at `t` (inferred from the committed log) |
//!
//! Refusals (`OffsetMismatch`, `FenceMismatch`, `TrimNoop`'s tail) are answered at once by the
//! sequencing leader against its own log, uncommitted records included, and a deposed leader
//! answers from a log that never commits: the tail or token they name is held only to what was
//! asked, never to the specification's state. (For the same reason a holder never takes its tail
//! from a refusal: the twin `TailFromRefusal`, which does, breaks `StaleTrimRefused`.) A network
//! duplicate of a request may land twice (the journal does not deduplicate); such a copy is
//! inferred from the committed log.
//!
//! # The checker (`check.rs`)
//!
//! A candidate order read off the offsets, checked in near-linear time; an exact Wing–Gong–Lowe
//! search only where the candidate fails, budgeted in operations and search steps (never in
//! time). Over budget is `Unchecked`: counted in the report's coverage (`history_unchecked`),
//! never a pass. A finding names the operations that admit no order, with the steps of their
//! requests and replies, and the specification's state just before.

mod candidate;
pub mod check;
mod content;
mod operations;
mod pairing;
mod refusal;
mod search;
pub mod spec;

pub use check::{check as check_operations, check_history, Budget, Finding, Verdict};
pub use operations::{operations, Operation};
pub use spec::{Op, Spec};

use crate::{Violation, LINEARIZABLE};
use felix_core::history::Event;

/// The violations of Linearizable in `history`, and the verdict (for the coverage counters).
pub fn check_with_verdict(history: &[Event]) -> (Vec<Violation>, Verdict) {
    let verdict = check_history(history, Budget::DEFAULT);
    let violations = match &verdict {
        Verdict::NotLinearizable(finding) => vec![Violation::new(
            LINEARIZABLE,
            finding.step,
            finding.message.clone(),
        )],
        _ => Vec::new(),
    };
    (violations, verdict)
}

/// The violations of Linearizable in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    check_with_verdict(history).0
}

#[cfg(test)]
mod tests;
