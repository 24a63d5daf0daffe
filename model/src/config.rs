//! The configurations of FelixHeadTrim: the constants and rule switches of each `.cfg` file.
//!
//! Names are exactly the TLA+ configuration names (`docs/formal/FelixHeadTrim<Name>.cfg`). A twin
//! is its base configuration with exactly one switch flipped, and names the invariant it must
//! break; `tests` hold both facts.

/// The rule switches. `false` everywhere is the design as shipped; each `true` is a twin's bug.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Switches {
    /// The design before the fix: readers skip trims and CursorTooOld carries nothing.
    pub hidden_trims: bool,
    /// Only the tag is off (`FloorTag = 0`).
    pub untagged: bool,
    /// A no-op trim skips the tail check.
    pub noop_skip: bool,
    /// Retention deletes old segments regardless of trims.
    pub retention: bool,
    /// A refused holder re-reads from earliest.
    pub read_from_earliest: bool,
    /// A holder adopts the tail named by OffsetMismatch.
    pub tail_from_refusal: bool,
    /// Compaction may delete the active segment (the one holding the floor-setting trim).
    pub compact_active: bool,
    /// The tag is read from the record at the floor, not from the trim that set it.
    pub tag_at_floor: bool,
    /// The seed's rejected first fix: no tag, readers see trim records, deletion on.
    pub visible_trims: bool,
    /// A broker serves reads from its own state, without a read index.
    pub local_reads: bool,
}

impl Switches {
    /// The switches that are on, by their TLA+ constant names.
    pub fn names_on(&self) -> Vec<&'static str> {
        self.constants()
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect()
    }

    /// Every switch as `(TLA+ constant name, value)`, in the spec's order.
    pub fn constants(&self) -> [(&'static str, bool); 10] {
        [
            ("HiddenTrims", self.hidden_trims),
            ("Untagged", self.untagged),
            ("NoopSkip", self.noop_skip),
            ("Retention", self.retention),
            ("ReadFromEarliest", self.read_from_earliest),
            ("TailFromRefusal", self.tail_from_refusal),
            ("CompactActive", self.compact_active),
            ("TagAtFloor", self.tag_at_floor),
            ("VisibleTrims", self.visible_trims),
            ("LocalReads", self.local_reads),
        ]
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

    /// The constants as `(TLA+ name, value)`, in the `.cfg` files' order.
    pub fn constants(&self) -> [(&'static str, u8); 7] {
        [
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

/// What a configuration is expected to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// Every invariant holds; the distinct-state count is pinned when small enough for a test.
    Pass,
    /// A twin: it must break exactly this invariant.
    Violates(&'static str),
}

/// One configuration: a `.cfg` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Full name, as the `.cfg` file (without the extension).
    pub name: &'static str,
    /// For a twin, the configuration it is one switch away from.
    pub base: Option<&'static str>,
    /// The bounds.
    pub bounds: Bounds,
    /// The rule switches.
    pub switches: Switches,
    /// Pass, or the invariant a twin must break.
    pub expectation: Expectation,
}

impl Config {
    /// The invariant a twin must break, or `None` for a passing configuration.
    pub fn expected_violation(&self) -> Option<&'static str> {
        match self.expectation {
            Expectation::Pass => None,
            Expectation::Violates(name) => Some(name),
        }
    }

    /// The name without the `FelixHeadTrim` prefix (`Main` for the main configuration).
    pub fn short_name(&self) -> &'static str {
        match self.name.strip_prefix(PREFIX) {
            Some("") | None => "Main",
            Some(rest) => rest,
        }
    }
}

/// The prefix every configuration name shares.
pub const PREFIX: &str = "FelixHeadTrim";

const NO_SWITCH: Switches = Switches {
    hidden_trims: false,
    untagged: false,
    noop_skip: false,
    retention: false,
    read_from_earliest: false,
    tail_from_refusal: false,
    compact_active: false,
    tag_at_floor: false,
    visible_trims: false,
    local_reads: false,
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

const fn passing(name: &'static str, bounds: Bounds) -> Config {
    Config {
        name,
        base: None,
        bounds,
        switches: NO_SWITCH,
        expectation: Expectation::Pass,
    }
}

const fn twin(
    name: &'static str,
    base: &Config,
    switches: Switches,
    invariant: &'static str,
) -> Config {
    Config {
        name,
        base: Some(base.name),
        bounds: base.bounds,
        switches,
        expectation: Expectation::Violates(invariant),
    }
}

const MAIN: Config = passing("FelixHeadTrim", MAIN_BOUNDS);
const FAILOVER: Config = passing("FelixHeadTrimFailover", FAILOVER_BOUNDS);
const STEADY: Config = passing("FelixHeadTrimSteady", STEADY_BOUNDS);

/// Every configuration (one per `.cfg` file), passing ones first, then the twins.
pub static CONFIGS: [Config; 18] = [
    MAIN,
    STEADY,
    passing("FelixHeadTrimPromotions", PROMOTIONS_BOUNDS),
    passing("FelixHeadTrimCrash", CRASH_BOUNDS),
    FAILOVER,
    passing("FelixHeadTrimLiveness", LIVENESS_BOUNDS),
    passing("FelixHeadTrimCombined", COMBINED_BOUNDS),
    passing("FelixHeadTrimAll", ALL_BOUNDS),
    twin(
        "FelixHeadTrimHiddenTrims",
        &MAIN,
        Switches {
            hidden_trims: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimUntagged",
        &MAIN,
        Switches {
            untagged: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimNoopSkip",
        &MAIN,
        Switches {
            noop_skip: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimRetention",
        &FAILOVER,
        Switches {
            retention: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimReadFromEarliest",
        &MAIN,
        Switches {
            read_from_earliest: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimTailFromRefusal",
        &MAIN,
        Switches {
            tail_from_refusal: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimCompactActive",
        &MAIN,
        Switches {
            compact_active: true,
            ..NO_SWITCH
        },
        "FloorRecordKept",
    ),
    twin(
        "FelixHeadTrimTagAtFloor",
        &MAIN,
        Switches {
            tag_at_floor: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimVisibleTrims",
        &STEADY,
        Switches {
            visible_trims: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimLocalReads",
        &MAIN,
        Switches {
            local_reads: true,
            ..NO_SWITCH
        },
        "NoReadBelowFloor",
    ),
];

/// Looks a configuration up by its full name or its name without the `FelixHeadTrim` prefix
/// (`Main` also names the main configuration).
pub fn lookup(name: &str) -> Option<&'static Config> {
    if name.is_empty() {
        return None;
    }
    CONFIGS.iter().find(|config| {
        config.name == name
            || config.name.strip_prefix(PREFIX) == Some(name)
            || (config.name == PREFIX && name == "Main")
    })
}

/// Every configuration name, for error messages.
pub fn names() -> Vec<&'static str> {
    CONFIGS.iter().map(|config| config.name).collect()
}

/// The twins, in registry order.
pub fn twins() -> impl Iterator<Item = &'static Config> {
    CONFIGS
        .iter()
        .filter(|config| config.expected_violation().is_some())
}

/// The main configuration.
pub fn main_config() -> &'static Config {
    &CONFIGS[0]
}
