//! The configurations of FelixHeadTrim: the constants and rule switches of each `.cfg` file.
//!
//! Names are exactly the TLA+ configuration names (`docs/formal/FelixHeadTrim<Name>.cfg`). A twin
//! is its base configuration with exactly one switch flipped, and names the invariant it must
//! break; `tests` hold both facts.

use felix_names::TwinName;

use super::spec::FelixHeadTrim;
use crate::spec::{Constants, RuleSwitches, SpecConfig};

/// The rule switches, named for the rule (as the core's `Rules`): `true` is the rule on, the design
/// as shipped; each twin switches exactly one rule off. The TLA+ constants are named for the twin
/// instead (`Untagged = TRUE` is `floor_tag: false`); `rules` is the one place that pairs
/// them (`RuleSwitches::constants` negates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Switches {
    /// Readers may see trims and CursorTooOld carries the floor-setting trim's headers (off:
    /// HiddenTrims, the design before the fix: readers skip trims and CursorTooOld carries
    /// nothing).
    pub trims_visible: bool,
    /// CursorTooOld carries the tag (off: Untagged, `FloorTag = 0`).
    pub floor_tag: bool,
    /// A no-op trim still checks the tail (off: NoopSkip).
    pub noop_trim_checks_tail: bool,
    /// Only trims delete: no retention of old segments regardless of trims (off: Retention).
    pub only_trims_delete: bool,
    /// A refused holder re-reads from its own cursor (off: ReadFromEarliest, from earliest).
    pub reread_from_cursor: bool,
    /// The tail never comes from a refusal (off: TailFromRefusal, a holder adopts the tail named
    /// by OffsetMismatch).
    pub tail_not_from_refusal: bool,
    /// Compaction never deletes the active segment, the one holding the floor-setting trim (off:
    /// CompactActive).
    pub compaction_keeps_floor_record: bool,
    /// The tag is read from the trim that set the floor (off: TagAtFloor, from the record at the
    /// floor).
    pub tag_from_trim: bool,
    /// The fix is the tag: readers skip trim records and only trims delete (off: VisibleTrims,
    /// the seed's rejected first fix: no tag, readers see trim records, deletion on).
    pub tag_not_visible_trims: bool,
    /// A broker serves a read only at a read index (off: LocalReads, from its own state).
    pub read_index: bool,
}

impl RuleSwitches for Switches {
    fn rules(&self) -> Vec<(TwinName, bool)> {
        vec![
            (TwinName::HiddenTrims, self.trims_visible),
            (TwinName::Untagged, self.floor_tag),
            (TwinName::NoopSkip, self.noop_trim_checks_tail),
            (TwinName::Retention, self.only_trims_delete),
            (TwinName::ReadFromEarliest, self.reread_from_cursor),
            (TwinName::TailFromRefusal, self.tail_not_from_refusal),
            (TwinName::CompactActive, self.compaction_keeps_floor_record),
            (TwinName::TagAtFloor, self.tag_from_trim),
            (TwinName::VisibleTrims, self.tag_not_visible_trims),
            (TwinName::LocalReads, self.read_index),
        ]
    }
}

impl Switches {
    /// Whether retention deletes segments regardless of trims: the Retention twin, and the
    /// VisibleTrims twin (the rejected fix ran with deletion on).
    pub fn retention_deletes(&self) -> bool {
        !self.only_trims_delete || !self.tag_not_visible_trims
    }
}

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

/// Every rule on (a twin switches one off).
pub const ALL_ON: Switches = Switches {
    trims_visible: true,
    floor_tag: true,
    noop_trim_checks_tail: true,
    only_trims_delete: true,
    reread_from_cursor: true,
    tail_not_from_refusal: true,
    compaction_keeps_floor_record: true,
    tag_from_trim: true,
    tag_not_visible_trims: true,
    read_index: true,
};

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

const MAIN: Config = Config::passing("FelixHeadTrim", MAIN_BOUNDS, ALL_ON);
const FAILOVER: Config = Config::passing("FelixHeadTrimFailover", FAILOVER_BOUNDS, ALL_ON);
const STEADY: Config = Config::passing("FelixHeadTrimSteady", STEADY_BOUNDS, ALL_ON);

/// Every configuration (one per `.cfg` file), passing ones first, then the twins
/// (`Spec::configs`).
pub static CONFIGS: [Config; 18] = [
    MAIN,
    STEADY,
    Config::passing("FelixHeadTrimPromotions", PROMOTIONS_BOUNDS, ALL_ON),
    Config::passing("FelixHeadTrimCrash", CRASH_BOUNDS, ALL_ON),
    FAILOVER,
    Config::passing("FelixHeadTrimLiveness", LIVENESS_BOUNDS, ALL_ON),
    Config::passing("FelixHeadTrimCombined", COMBINED_BOUNDS, ALL_ON),
    Config::passing("FelixHeadTrimAll", ALL_BOUNDS, ALL_ON),
    Config::twin(
        "FelixHeadTrimHiddenTrims",
        TwinName::HiddenTrims,
        &MAIN,
        Switches {
            trims_visible: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimUntagged",
        TwinName::Untagged,
        &MAIN,
        Switches {
            floor_tag: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimNoopSkip",
        TwinName::NoopSkip,
        &MAIN,
        Switches {
            noop_trim_checks_tail: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimRetention",
        TwinName::Retention,
        &FAILOVER,
        Switches {
            only_trims_delete: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimReadFromEarliest",
        TwinName::ReadFromEarliest,
        &MAIN,
        Switches {
            reread_from_cursor: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimTailFromRefusal",
        TwinName::TailFromRefusal,
        &MAIN,
        Switches {
            tail_not_from_refusal: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimCompactActive",
        TwinName::CompactActive,
        &MAIN,
        Switches {
            compaction_keeps_floor_record: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimTagAtFloor",
        TwinName::TagAtFloor,
        &MAIN,
        Switches {
            tag_from_trim: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimVisibleTrims",
        TwinName::VisibleTrims,
        &STEADY,
        Switches {
            tag_not_visible_trims: false,
            ..ALL_ON
        },
    ),
    Config::twin(
        "FelixHeadTrimLocalReads",
        TwinName::LocalReads,
        &MAIN,
        Switches {
            read_index: false,
            ..ALL_ON
        },
    ),
];
