//! The properties of FelixHeadTrim: the invariants (`always`) and the coverage checks (`sometimes`).
//!
//! Names are the TLA+ names, the audit names and the docs' names (one name per invariant).

use stateright::Property;

use crate::spec::{FelixHeadTrim, Kind, State};

/// Name of the invariant: no committed write or trim from one holder follows a committed write
/// from a newer holder.
pub const STALE_TRIM_REFUSED: &str = "StaleTrimRefused";
/// Name of the invariant: the serving leader's floor is always the one its trim records set.
pub const FLOOR_RECORD_KEPT: &str = "FloorRecordKept";
/// Coverage: some trim lands.
pub const TRIM_LANDS: &str = "SometimesTrimLands";
/// Coverage: a stale holder retires on a tagged refusal.
pub const STALE_HOLDER_RETIRES_ON_TAG: &str = "SometimesStaleHolderRetiresOnTag";
/// Coverage: a read below the floor is refused.
pub const READ_BELOW_FLOOR_REFUSED: &str = "SometimesReadBelowFloorRefused";

/// The `always` properties, in the order a run reports them.
pub const INVARIANTS: [&str; 2] = [STALE_TRIM_REFUSED, FLOOR_RECORD_KEPT];
/// The `sometimes` properties.
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
        Property::sometimes(TRIM_LANDS, |_, s: &State| s.floor > 1),
        Property::sometimes(STALE_HOLDER_RETIRES_ON_TAG, |_, s: &State| {
            s.retired.iter().any(|r| *r)
        }),
        Property::sometimes(READ_BELOW_FLOOR_REFUSED, |_, s: &State| {
            s.retired.iter().any(|r| *r)
        }),
    ]
}

fn stale_trim_refused(_: &FelixHeadTrim, s: &State) -> bool {
    s.log
        .iter()
        .enumerate()
        .all(|(i, a)| a.kind != Kind::Write || s.log[i + 1..].iter().all(|b| b.holder >= a.holder))
}

fn floor_record_kept(_: &FelixHeadTrim, s: &State) -> bool {
    s.floor == 1
        || s.log
            .iter()
            .enumerate()
            .any(|(i, r)| i + 1 >= s.start as usize && r.kind == Kind::Trim && r.floor == s.floor)
}
