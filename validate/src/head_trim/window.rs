//! Windows: a few simulated brokers' projected variables as one small FelixHeadTrim `State`.
//!
//! The model's states are bounded (3 brokers, logs of at most `LOG_MAX` records, terms below 32,
//! floors below 64, epochs below 8); a simulated run is not. Every model action used here reads
//! offsets only relative to a commit index or a match point, and compares terms, floors and
//! epochs only by order, equality and successor; so each check renames the values it needs:
//! - offsets: shifted down by a base at or below every offset the action reads (the records at or
//!   below the base are identical before and after, and no action looks at them);
//! - terms, floors: an order-preserving renaming that also keeps "v + 1" adjacent
//!   (`Renaming`), so `<`, `=`, `max` and `+ 1` mean the same on both sides;
//! - epochs: a dense order-preserving renaming (`Renaming::dense`): the model only compares
//!   epochs (`h' > h`, a floor tag against a holder), never adds to one, so 8 distinct epochs fit
//!   its 3 bits where successor gaps would let only about half of them.
//!
//! A step whose values do not fit (more than `LOG_MAX` records above the base, too many distinct
//! terms) is not checked and is counted as `Abstraction::OutOfBounds`, never passed silently.

use super::projection::ProjectedRecord;
use crate::renaming;
use crate::steps::{Failure, Renaming, OUT, UNSEEN};
use felix_model::head_trim::config::{Bounds, Config};
use felix_model::head_trim::spec::{FelixHeadTrim, Kind, Log, Record, State, BROKERS_MAX, LOG_MAX};
use stateright::Model;

/// The configuration every window runs under: the design (every rule on), three brokers, one
/// holder, and bounds loose enough that no counter guard ever binds (window states start every
/// counter at 0 and take at most a few actions).
pub static WINDOW: Config = Config::passing(
    "FelixHeadTrimValidate",
    Bounds {
        brokers: 3,
        holders: 1,
        max_writes: 3,
        max_trims: 3,
        max_promotions: 2,
        max_crashes: 1,
        seg_size: 1,
    },
);

/// The highest term a window holds: the model's terms are below 32.
pub(crate) const TERMS_LAST: u8 = 31;

/// One broker of a window, already renamed.
#[derive(Clone, Debug)]
pub struct WindowBroker {
    pub term: u8,
    pub leader: bool,
    pub records: Vec<Record>,
    pub commit: u8,
    pub floor: u8,
    pub start: u8,
}

impl WindowBroker {
    /// An empty follower (a window's unused broker).
    pub fn absent(term: u8) -> WindowBroker {
        WindowBroker {
            term,
            leader: false,
            records: Vec::new(),
            commit: 0,
            floor: 1,
            start: 1,
        }
    }
}

/// The model state of a window: the model's initial state (holder 1 with the lease, every
/// counter at 0) with brokers 1..=3 these, and holder 1's tail `expected`. None when a log does
/// not fit.
pub fn state(brokers: [WindowBroker; BROKERS_MAX], expected: u8) -> Option<State> {
    if brokers.iter().any(|broker| broker.records.len() > LOG_MAX) {
        return None;
    }
    let mut state = FelixHeadTrim::new(&WINDOW).init_states().remove(0);
    state.term = std::array::from_fn(|b| brokers[b].term);
    state.leader = std::array::from_fn(|b| brokers[b].leader);
    state.log = std::array::from_fn(|b| Log::from_records(&brokers[b].records));
    state.commit = std::array::from_fn(|b| brokers[b].commit);
    state.floor = std::array::from_fn(|b| brokers[b].floor);
    state.start = std::array::from_fn(|b| brokers[b].start);
    state.expected[0] = expected;
    Some(state)
}

/// The renamings of a window's records: terms (1..=31), the trims' floors (1..=63) and epochs
/// (densely, 0..=7).
pub(crate) type Names = renaming::Names<Renaming>;

impl Names {
    /// The renamings of `records`, with the further `terms` and `floors` the window holds.
    pub(crate) fn new(
        records: &[ProjectedRecord],
        terms: impl IntoIterator<Item = u64>,
        floors: impl IntoIterator<Item = u64>,
    ) -> Result<Names, Failure> {
        // The model only compares epochs: renamed densely (see the module doc).
        let epochs = records
            .iter()
            .map(|record| record.epoch)
            .chain(std::iter::once(0));
        let epochs = Renaming::dense(epochs, 0, 7).ok_or(OUT)?;
        Names::renamed(records, terms, TERMS_LAST, floors, epochs)
    }

    /// The records, renamed; a record the projection never saw is not checked.
    pub(crate) fn records(&self, projected: &[ProjectedRecord]) -> Result<Vec<Record>, Failure> {
        projected
            .iter()
            .map(|projected| {
                if projected.kind == Kind::Empty {
                    return Err(UNSEEN);
                }
                Ok(Record {
                    k: projected.kind,
                    h: self.more.to(projected.epoch),
                    t: self.terms.to(projected.term),
                    f: if projected.kind == Kind::Trim {
                        self.floors.to(projected.floor)
                    } else {
                        0
                    },
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::steps::Renaming;

    /// The renaming keeps order and successors, and refuses a set that does not fit.
    #[test]
    fn renaming_keeps_order_and_successors() {
        let renaming = Renaming::new([7, 100, 8, 3], 1, 31).expect("fits");
        assert_eq!(renaming.to(3), 1);
        assert_eq!(renaming.to(7), 3);
        assert_eq!(renaming.to(8), 4);
        assert_eq!(renaming.to(100), 6);
        assert_eq!(renaming.back(4), Some(8));
        assert_eq!(renaming.back(2), None);
        assert!(Renaming::new(0..40, 1, 31).is_none());
        let dense = Renaming::dense([0, 9, 4, 30], 0, 3).expect("fits");
        assert_eq!(
            (dense.to(0), dense.to(4), dense.to(9), dense.to(30)),
            (0, 1, 2, 3)
        );
        assert!(Renaming::dense(0..5, 0, 3).is_none());
    }
}
