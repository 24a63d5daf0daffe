//! The properties of ParosTrimJump: its `Spec::ALWAYS` and `Spec::SOMETIMES` tables and their
//! conditions.

use felix_names::Invariant;

use crate::spec::{Conditions, Invariants};

use super::spec::{goes_back, Kind, ParosTrimJump, ReadAnswer, State};

/// The `always` properties, in the order the model declares them (the spec's order).
/// AckedWritesKept comes before CommittedPrefixAgreement: where a state breaks both (the
/// AckBeforeSync twin), both checkers name the first in this order.
pub(crate) const ALWAYS: Invariants<ParosTrimJump, 5> = [
    (Invariant::TermNeverDecreases, term_never_decreases),
    (Invariant::AckedWritesKept, acked_writes_kept),
    (
        Invariant::CommittedPrefixAgreement,
        committed_prefix_agreement,
    ),
    (Invariant::NoReadBelowFloor, no_read_below_floor),
    (Invariant::ElectionSafety, election_safety),
];
/// The `sometimes` properties, in the order the model declares them.
pub(crate) const COVERAGE: Conditions<ParosTrimJump, 4> = [
    ("SometimesVoterJumps", voter_jumps),
    ("SometimesReplicaJumps", replica_jumps),
    ("SometimesTruncateRefused", truncate_refused),
    ("SometimesNotHeldRange", not_held_range),
];

fn nodes(model: &ParosTrimJump) -> std::ops::RangeInclusive<u8> {
    1..=model.config.bounds.nodes()
}

/// `ElectionSafety`: `\A m, n \in Nodes : m # n /\ leader[m] /\ leader[n] => term[m] # term[n]`.
pub fn election_safety(model: &ParosTrimJump, state: &State) -> bool {
    nodes(model).all(|m| {
        nodes(model).all(|n| {
            let (i, j) = (usize::from(m) - 1, usize::from(n) - 1);
            m == n || !(state.leader[i] && state.leader[j]) || state.term[i] != state.term[j]
        })
    })
}

/// `TermNeverDecreases`: a node's promise (term, then vote within a term) never goes back, jumps
/// included: `~GoesBack(high[n], <<term[n], vote[n]>>)` for every node.
pub fn term_never_decreases(model: &ParosTrimJump, state: &State) -> bool {
    nodes(model).all(|n| {
        let i = usize::from(n) - 1;
        !goes_back(state.high[i], (state.term[i], state.vote[i]))
    })
}

/// `CommittedPrefixAgreement`: nodes that both committed and hold a slot hold the same record.
pub fn committed_prefix_agreement(model: &ParosTrimJump, state: &State) -> bool {
    let committed_held = |n: u8, i: u8| i <= state.commit[usize::from(n) - 1] && state.holds(n, i);
    nodes(model).all(|a| {
        nodes(model).all(|b| {
            (1..=model.config.bounds.max_len()).all(|i| {
                !(committed_held(a, i) && committed_held(b, i))
                    || state.rec(a, i) == state.rec(b, i)
            })
        })
    })
}

/// `AckedWritesKept`: every acknowledged write is the record at its slot on every node that
/// committed and holds that slot, and (at or above `decided`) no node's floor or first held
/// slot passes it.
pub fn acked_writes_kept(model: &ParosTrimJump, state: &State) -> bool {
    state.acked.pairs().all(|(slot, record)| {
        nodes(model).all(|n| {
            let i = usize::from(n) - 1;
            let stays =
                !(slot <= state.commit[i] && state.holds(n, slot)) || state.rec(n, slot) == record;
            let not_passed =
                slot < state.decided || (state.floor[i] <= slot && state.start[i] <= slot);
            stays && not_passed
        })
    })
}

/// `NoReadBelowFloor`: no read is served a slot below the floor of a truncate acknowledged before
/// it: a read a node would serve from a committed slot starts at or above `decided`.
pub fn no_read_below_floor(model: &ParosTrimJump, state: &State) -> bool {
    let config = model.config;
    nodes(model).all(|n| {
        (1..=config.bounds.max_len() + 1).all(|from| {
            !(from <= state.commit[usize::from(n) - 1]
                && state.read_answer(config, n, from) == ReadAnswer::Served)
                || from >= state.decided
        })
    })
}

/// A node that holds nothing below a point above its floor has jumped and its walk has not yet
/// reached the truncate that set the sender's floor (compaction never leaves `start > floor`).
fn jumped(state: &State, n: u8) -> bool {
    state.start[usize::from(n) - 1] > state.floor[usize::from(n) - 1]
}

/// A voter jumped: it holds nothing below a point above its floor.
fn voter_jumps(model: &ParosTrimJump, state: &State) -> bool {
    (1..=model.config.bounds.voters).any(|n| jumped(state, n))
}

/// A replica jumped.
fn replica_jumps(model: &ParosTrimJump, state: &State) -> bool {
    (model.config.bounds.voters + 1..=model.config.bounds.nodes()).any(|n| jumped(state, n))
}

/// A committed truncate was refused by the fence (`TruncateRefused`): some node's committed, held
/// log holds a truncate whose fence was not the writer token in force at its slot (folded from
/// the node's sealed writer).
fn truncate_refused(model: &ParosTrimJump, state: &State) -> bool {
    nodes(model).any(|n| {
        let i = usize::from(n) - 1;
        let mut writer = state.swriter[i];
        (state.start[i]..=state.commit[i].min(state.last_index(n))).any(|slot| {
            let record = state.rec(n, slot);
            let refused = record.k == Kind::Truncate && record.o != writer;
            if record.k == Kind::SetLeader && record.o == writer + 1 {
                writer = record.o;
            }
            refused
        })
    })
}

/// A NotHeld range: some node holds committed slots at or above its floor and below its first held
/// slot. A read there passes the core's `CursorTooOld` check and fails its `NotHeld` check. Only a
/// jump makes such a range, and it closes when the node's walk reaches the truncate that set the
/// sender's floor. With the read index as modelled (atomic: a confirmed leader's commit index now),
/// the node is not ready to serve until then, so `ReadAnswer` is never `NotHeld` in a reachable
/// state: a `NotHeld` answer needs a read index taken before that truncate committed
/// (docs/formal/README.md says more).
fn not_held_range(model: &ParosTrimJump, state: &State) -> bool {
    nodes(model).any(|n| {
        let i = usize::from(n) - 1;
        state.floor[i] < state.start[i] && state.floor[i] <= state.commit[i]
    })
}
