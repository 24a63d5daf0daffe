//! The properties of FelixHeadTrim: its `Spec::ALWAYS` and `Spec::SOMETIMES` tables and their
//! conditions.

use felix_names::Invariant;

use crate::spec::{Conditions, Invariants};

use super::spec::{FelixHeadTrim, Kind, State};

/// The `always` properties, in the order the model declares them.
pub(crate) const ALWAYS: Invariants<FelixHeadTrim, 5> = [
    (Invariant::TypeOk, type_ok),
    (Invariant::StaleTrimRefused, stale_trim_refused),
    (Invariant::FloorRecordKept, floor_record_kept),
    (Invariant::NoReadBelowFloor, no_read_below_floor),
    (Invariant::ElectionSafety, election_safety),
];
/// The `sometimes` properties, in the order the model declares them.
pub(crate) const COVERAGE: Conditions<FelixHeadTrim, 3> = [
    ("SometimesTrimLands", trim_lands),
    (
        "SometimesStaleHolderRetiresOnTag",
        stale_holder_retires_on_tag,
    ),
    ("SometimesReadBelowFloorRefused", read_below_floor_refused),
];

/// `ElectionSafety`: no two brokers lead the same term (a deposed leader still believes it leads
/// its own, older, term):
/// `\A b, q \in Brokers : b # q /\ leader[b] /\ leader[q] => term[b] # term[q]`.
pub fn election_safety(model: &FelixHeadTrim, state: &State) -> bool {
    let brokers = usize::from(model.config.bounds.brokers);
    (0..brokers).all(|b| {
        (0..brokers).all(|q| {
            b == q || !(state.leader[b] && state.leader[q]) || state.term[b] != state.term[q]
        })
    })
}

/// `StaleTrimRefused`: no committed write or trim of one holder follows a committed write of a
/// newer holder (deleted records included): on every broker, for committed offsets i < j, a write
/// at i and a write or
/// trim at j imply `log[b][j].h >= log[b][i].h`.
pub fn stale_trim_refused(model: &FelixHeadTrim, state: &State) -> bool {
    (1..=model.config.bounds.brokers).all(|b| {
        let mut committed = state.log[usize::from(b) - 1]
            .records()
            .take(usize::from(state.commit[usize::from(b) - 1]));
        // The newest epoch of a write seen so far, scanning the committed prefix in order.
        let mut newest_write = 0;
        committed.all(|record| {
            let ok = !matches!(record.k, Kind::Write | Kind::Trim) || record.h >= newest_write;
            if record.k == Kind::Write {
                newest_write = newest_write.max(record.h);
            }
            ok
        })
    })
}

/// `TypeOK`: every variable in its domain (the spec's conjuncts, one by one): terms, lengths,
/// commit indexes, floors, starts, tails and counters within their bounds, and
/// `commit[b] <= Len(log[b])`, `start[b] <= commit[b] + 1`.
pub fn type_ok(model: &FelixHeadTrim, state: &State) -> bool {
    let bounds = &model.config.bounds;
    let max_len = bounds.max_len();
    let max_term = 1 + bounds.max_promotions;
    let brokers_ok = (1..=bounds.brokers).all(|b| {
        let i = usize::from(b) - 1;
        let log = &state.log[i];
        (1..=max_term).contains(&state.term[i])
            && log.len() <= max_len
            && log.records().all(|record| {
                record.k != Kind::Empty
                    && record.h <= bounds.holders
                    && (1..=max_term).contains(&record.t)
                    && record.f <= max_len + 1
            })
            && state.commit[i] <= max_len
            && state.commit[i] <= log.len()
            && (1..=max_len + 1).contains(&state.floor[i])
            && (1..=max_len + 1).contains(&state.start[i])
            && state.start[i] <= state.commit[i] + 1
    });
    brokers_ok
        && (1..=bounds.holders).contains(&state.lease)
        && (1..=bounds.holders).all(|h| state.expected[usize::from(h) - 1] <= max_len)
        && state.writes <= bounds.max_writes
        && state.trims <= bounds.max_trims
        && state.promotions <= bounds.max_promotions
        && state.crashes <= bounds.max_crashes
}

/// `FloorRecordKept`: every broker's applied floor equals the highest floor of its committed
/// trims (deleted ones included), and, unless retention deletes by design (Retention,
/// VisibleTrims), it deleted nothing at or above its floor: it still holds the record that set
/// its floor.
pub fn floor_record_kept(model: &FelixHeadTrim, state: &State) -> bool {
    let retention = model.config.retention_deletes();
    (1..=model.config.bounds.brokers).all(|b| {
        state.floor(b) == state.trim_floor(b)
            && (retention || state.start[usize::from(b) - 1] <= state.floor(b))
    })
}

/// `NoReadBelowFloor`: no read has served a write below the floor of a trim acknowledged before
/// the read.
pub fn no_read_below_floor(_: &FelixHeadTrim, state: &State) -> bool {
    !state.stale_read
}

/// A trim lands: some broker's floor rose above 1.
fn trim_lands(model: &FelixHeadTrim, state: &State) -> bool {
    (1..=model.config.bounds.brokers).any(|b| state.floor(b) > 1)
}

/// A stale holder retires on a tagged refusal: a holder has retired, and the only news of a newer
/// epoch a read from its reset cursor (a retiring `Read` sets its tail to 0) could get from some
/// leader is the tag: the read would be refused as too old with a tag of a newer epoch while no
/// write of a newer epoch is readable. The state does not record why a holder retired (a variable
/// for it would split states and break the count equality with TLC), so this is the state-level
/// witness; the exact step is pinned by the seed-trace test
/// (`with_the_tag_the_stale_read_retires_holder_1`).
fn stale_holder_retires_on_tag(model: &FelixHeadTrim, state: &State) -> bool {
    let config = model.config;
    (1..=config.bounds.holders).any(|h| {
        state.retired[usize::from(h) - 1]
            && (1..=config.bounds.brokers).any(|s| {
                let from = state.expected[usize::from(h) - 1] + 1;
                let rs = state.readable_start(s);
                let (newer, _) = state.read_outcome(config, h, s, from.max(rs));
                state.serves(config, s) && from < rs && state.floor_tag(config, s) > h && !newer
            })
    })
}

/// A read below the floor is refused: an active holder's cursor is below what some leader can
/// serve, so its next read there is refused with CursorTooOld.
fn read_below_floor_refused(model: &FelixHeadTrim, state: &State) -> bool {
    (1..=model.config.bounds.holders).any(|h| {
        state.active(h)
            && (1..=model.config.bounds.brokers).any(|s| {
                state.serves(model.config, s)
                    && state.expected[usize::from(h) - 1] + 1 < state.readable_start(s)
            })
    })
}
