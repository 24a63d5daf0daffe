//! The configurations of FelixHeadTrim: the constants of each `.cfg` file, and the twin it is.
//!
//! Names are exactly the TLA+ configuration names (`docs/formal/FelixHeadTrim<Name>.cfg`). A twin
//! is its base configuration with exactly one rule switched off, and names the invariant it must
//! break; `model/tests/it/configs.rs` holds both facts. The spec's rules, each by the twin that
//! switches it off (a boolean constant in every `.cfg` file, `SpecConfig::is_twin` here):
//! - HiddenTrims: readers skip trims and CursorTooOld carries nothing (the design before the fix;
//!   on, readers see trims and CursorTooOld carries the floor-setting trim's headers);
//! - Untagged: CursorTooOld carries no tag (`FloorTag = 0`);
//! - NoopSkip: a no-op trim skips the tail check;
//! - Retention: old segments are deleted regardless of trims (on, only trims delete);
//! - ReadFromEarliest: a refused holder re-reads from the earliest offset, not its own cursor;
//! - TailFromRefusal: a holder adopts the tail an OffsetMismatch names;
//! - CompactActive: compaction may delete the active segment, the one holding the floor-setting
//!   trim;
//! - TagAtFloor: the tag is read from the record at the floor, not the trim that set it;
//! - VisibleTrims: the seed's rejected first fix: no tag, readers see trim records, deletion on
//!   (on, the fix is the tag: readers skip trim records and only trims delete);
//! - LocalReads: a broker serves a read from its own state, not at a read index.

use felix_names::TwinName;

use super::spec::FelixHeadTrim;
use crate::spec::{Constants, SpecConfig};

/// The bounds of a configuration (TLA+ CONSTANTS), named as in the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// `NumBrokers`: brokers 1..NumBrokers.
    pub brokers: u8,
    /// `NumHolders`: lease holders 1..NumHolders; holder h's epoch is h.
    pub holders: u8,
    /// `MaxWrites`: writes appended, all holders and brokers together.
    pub max_writes: u8,
    /// `MaxTrims`: trims appended (a no-op trim needs one left but uses none up).
    pub max_trims: u8,
    /// `MaxPromotions`: elections (each appends the new leader's noop).
    pub max_promotions: u8,
    /// `MaxCrashes`: leader crash-restarts.
    pub max_crashes: u8,
    /// `SegSize`: records per segment.
    pub seg_size: u8,
}

impl Bounds {
    /// `MaxLen == MaxWrites + MaxTrims + MaxPromotions`: every append uses one of them up.
    pub fn max_len(&self) -> u8 {
        self.max_writes + self.max_trims + self.max_promotions
    }
}

impl Constants for Bounds {
    fn constants(&self) -> Vec<(&'static str, u8)> {
        vec![
            ("NumBrokers", self.brokers),
            ("NumHolders", self.holders),
            ("MaxWrites", self.max_writes),
            ("MaxTrims", self.max_trims),
            ("MaxPromotions", self.max_promotions),
            ("MaxCrashes", self.max_crashes),
            ("SegSize", self.seg_size),
        ]
    }
}

/// One configuration: a `.cfg` file.
pub type Config = SpecConfig<FelixHeadTrim>;

impl Config {
    /// Whether retention deletes segments regardless of trims: the Retention twin, and the
    /// VisibleTrims twin (the rejected fix ran with deletion on).
    pub fn retention_deletes(&self) -> bool {
        self.is_twin(TwinName::Retention) || self.is_twin(TwinName::VisibleTrims)
    }
}

/// `FelixHeadTrim.cfg` (main): two trims with every floor they may ask for, one promotion,
/// three-record segments.
const MAIN_BOUNDS: Bounds = Bounds {
    brokers: 3,
    holders: 2,
    max_writes: 2,
    max_trims: 2,
    max_promotions: 1,
    max_crashes: 0,
    seg_size: 3,
};

/// `FelixHeadTrimSteady.cfg`: three trims under one leader, two-record segments.
const STEADY_BOUNDS: Bounds = Bounds {
    max_trims: 3,
    max_promotions: 0,
    seg_size: 2,
    ..MAIN_BOUNDS
};

/// `FelixHeadTrimPromotions.cfg`: two promotions, one write, one trim.
const PROMOTIONS_BOUNDS: Bounds = Bounds {
    max_writes: 1,
    max_trims: 1,
    max_promotions: 2,
    seg_size: 2,
    ..MAIN_BOUNDS
};

/// `FelixHeadTrimCrash.cfg`: a crash, one promotion, one trim.
const CRASH_BOUNDS: Bounds = Bounds {
    max_trims: 1,
    max_crashes: 1,
    ..MAIN_BOUNDS
};

/// `FelixHeadTrimFailover.cfg`: two promotions and a crash, no trim, one-record segments.
const FAILOVER_BOUNDS: Bounds = Bounds {
    max_trims: 0,
    max_promotions: 2,
    max_crashes: 1,
    seg_size: 1,
    ..MAIN_BOUNDS
};

/// `FelixHeadTrimLiveness.cfg`: the fence write, one trim, one promotion (TLC also checks
/// StaleHolderRetires, which needs a small graph).
const LIVENESS_BOUNDS: Bounds = Bounds {
    max_writes: 1,
    max_trims: 1,
    seg_size: 2,
    ..MAIN_BOUNDS
};

/// `FelixHeadTrimCombined.cfg`: two trims, two promotions and a crash together, with one holder
/// and one write (the broker side: floors, deletion, read index, failover).
const COMBINED_BOUNDS: Bounds = Bounds {
    holders: 1,
    max_writes: 1,
    max_trims: 2,
    max_promotions: 2,
    max_crashes: 1,
    seg_size: 2,
    ..MAIN_BOUNDS
};

/// `FelixHeadTrimAll.cfg`: everything together with two holders: two trims, two promotions and
/// a crash.
const ALL_BOUNDS: Bounds = Bounds {
    max_promotions: 2,
    max_crashes: 1,
    seg_size: 2,
    ..MAIN_BOUNDS
};

const MAIN: Config = Config::passing("FelixHeadTrim", MAIN_BOUNDS);
const FAILOVER: Config = Config::passing("FelixHeadTrimFailover", FAILOVER_BOUNDS);
const STEADY: Config = Config::passing("FelixHeadTrimSteady", STEADY_BOUNDS);

/// Every configuration (one per `.cfg` file), passing ones first, then the twins
/// (`Spec::configs`).
pub static CONFIGS: [Config; 18] = [
    MAIN,
    STEADY,
    Config::passing("FelixHeadTrimPromotions", PROMOTIONS_BOUNDS),
    Config::passing("FelixHeadTrimCrash", CRASH_BOUNDS),
    FAILOVER,
    Config::passing("FelixHeadTrimLiveness", LIVENESS_BOUNDS),
    Config::passing("FelixHeadTrimCombined", COMBINED_BOUNDS),
    Config::passing("FelixHeadTrimAll", ALL_BOUNDS),
    Config::twin("FelixHeadTrimHiddenTrims", TwinName::HiddenTrims, &MAIN),
    Config::twin("FelixHeadTrimUntagged", TwinName::Untagged, &MAIN),
    Config::twin("FelixHeadTrimNoopSkip", TwinName::NoopSkip, &MAIN),
    Config::twin("FelixHeadTrimRetention", TwinName::Retention, &FAILOVER),
    Config::twin(
        "FelixHeadTrimReadFromEarliest",
        TwinName::ReadFromEarliest,
        &MAIN,
    ),
    Config::twin(
        "FelixHeadTrimTailFromRefusal",
        TwinName::TailFromRefusal,
        &MAIN,
    ),
    Config::twin("FelixHeadTrimCompactActive", TwinName::CompactActive, &MAIN),
    Config::twin("FelixHeadTrimTagAtFloor", TwinName::TagAtFloor, &MAIN),
    Config::twin("FelixHeadTrimVisibleTrims", TwinName::VisibleTrims, &STEADY),
    Config::twin("FelixHeadTrimLocalReads", TwinName::LocalReads, &MAIN),
];
