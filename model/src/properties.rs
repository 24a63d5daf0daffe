//! The properties of FelixHeadTrim: the spec's invariants (`always`) and coverage checks
//! (`sometimes`) that show the invariants are not vacuous.
//!
//! Invariant names are the TLA+ names, the audit names and the docs' names (one name per
//! invariant). TLC has no `sometimes`; those exist only here, as state predicates, because the
//! spec's state does not record why a holder retired (adding a variable for it would split
//! states and break the count equality with TLC).

use stateright::Property;

use crate::spec::{FelixHeadTrim, Kind, State};

/// No committed write or trim of one holder follows a committed write of a newer holder
/// (deleted records included).
pub const STALE_TRIM_REFUSED: &str = "StaleTrimRefused";
/// The serving leader's floor is always the one its trim records set, deleted ones included,
/// and it still holds the record that set it.
pub const FLOOR_RECORD_KEPT: &str = "FloorRecordKept";
/// Coverage: a trim lands (some broker's floor rises above 1).
pub const TRIM_LANDS: &str = "SometimesTrimLands";
/// Coverage: a stale holder retires on a tagged refusal.
pub const STALE_HOLDER_RETIRES_ON_TAG: &str = "SometimesStaleHolderRetiresOnTag";
/// Coverage: a read below the floor is refused.
pub const READ_BELOW_FLOOR_REFUSED: &str = "SometimesReadBelowFloorRefused";

/// The `always` properties, in the order the model declares them.
pub const INVARIANTS: [&str; 2] = [STALE_TRIM_REFUSED, FLOOR_RECORD_KEPT];
/// The `sometimes` properties, in the order the model declares them.
pub const SOMETIMES: [&str; 3] = [
    TRIM_LANDS,
    STALE_HOLDER_RETIRES_ON_TAG,
    READ_BELOW_FLOOR_REFUSED,
];

/// Every property of the model.
pub fn all() -> Vec<Property<FelixHeadTrim>> {
    vec![
        Property::always(STALE_TRIM_REFUSED, stale_trim_refused),
        Property::always(FLOOR_RECORD_KEPT, floor_record_kept),
        Property::sometimes(TRIM_LANDS, trim_lands),
        Property::sometimes(STALE_HOLDER_RETIRES_ON_TAG, stale_holder_retires_on_tag),
        Property::sometimes(READ_BELOW_FLOOR_REFUSED, read_below_floor_refused),
    ]
}

/// `StaleTrimRefused`: on every broker, for committed offsets i < j, a write at i and a write or
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

/// `FloorRecordKept`: a leader whose floor was set by a trim still holds that trim record.
pub fn floor_record_kept(model: &FelixHeadTrim, state: &State) -> bool {
    (1..=model.config.bounds.brokers).all(|b| {
        let setter = state.floor_setter(b);
        !state.leader[usize::from(b) - 1]
            || setter == 0
            || setter >= state.start[usize::from(b) - 1]
    })
}

/// Some broker's floor rose above 1: a trim committed.
fn trim_lands(model: &FelixHeadTrim, state: &State) -> bool {
    (1..=model.config.bounds.brokers).any(|b| state.floor(b) > 1)
}

/// A holder has retired, and the only news of a newer epoch a read from its reset cursor (a
/// retiring `Read` sets its tail to 0) could get from some leader is the tag: the read would be
/// refused as too old with a tag of a newer epoch while no write of a newer epoch is readable.
/// The state does not record why a holder retired (a variable for it would split states and
/// break the count equality with TLC), so this is the state-level witness; the exact step is
/// pinned by the seed-trace test (`with_the_tag_the_stale_read_retires_holder_1`).
fn stale_holder_retires_on_tag(model: &FelixHeadTrim, state: &State) -> bool {
    let config = model.config;
    (1..=config.bounds.holders).any(|h| {
        state.retired[usize::from(h) - 1]
            && (1..=config.bounds.brokers).any(|s| {
                let from = state.expected[usize::from(h) - 1] + 1;
                let rs = state.readable_start(s);
                let newer = (from.max(rs)..=state.commit[usize::from(s) - 1]).any(|i| {
                    let record = state.log[usize::from(s) - 1].at(i);
                    record.k == Kind::Write && record.h > h
                });
                state.leader[usize::from(s) - 1]
                    && from < rs
                    && state.floor_tag(config, s) > h
                    && !newer
            })
    })
}

/// An active holder's cursor is below what some leader can serve: its next read there is
/// refused with CursorTooOld.
fn read_below_floor_refused(model: &FelixHeadTrim, state: &State) -> bool {
    (1..=model.config.bounds.holders).any(|h| {
        state.active(h)
            && (1..=model.config.bounds.brokers).any(|s| {
                state.leader[usize::from(s) - 1]
                    && state.expected[usize::from(h) - 1] + 1 < state.readable_start(s)
            })
    })
}
