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
    /// Compaction may delete the segment holding the floor-setting trim.
    pub compact_active: bool,
}

impl Switches {
    /// The switches that are on, by their TLA+ constant names.
    pub fn names_on(&self) -> Vec<&'static str> {
        let all = [
            ("HiddenTrims", self.hidden_trims),
            ("Untagged", self.untagged),
            ("NoopSkip", self.noop_skip),
            ("Retention", self.retention),
            ("ReadFromEarliest", self.read_from_earliest),
            ("TailFromRefusal", self.tail_from_refusal),
            ("CompactActive", self.compact_active),
        ];
        all.iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect()
    }
}

/// The bounds of a configuration (TLA+ CONSTANTS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// Number of lease holders (epochs 1..holders).
    pub holders: u8,
    /// Writes (fenced writes included) over the whole run.
    pub writes_max: u8,
    /// Trims (no-op trims included) over the whole run.
    pub trims_max: u8,
    /// Records per segment.
    pub segment_records: u8,
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
};

const MAIN_BOUNDS: Bounds = Bounds {
    holders: 2,
    writes_max: 3,
    trims_max: 3,
    segment_records: 1,
};

const MAIN: Config = Config {
    name: "FelixHeadTrim",
    base: None,
    bounds: MAIN_BOUNDS,
    switches: NO_SWITCH,
    expectation: Expectation::Pass,
};

const fn twin(name: &'static str, switches: Switches, invariant: &'static str) -> Config {
    Config {
        name,
        base: Some("FelixHeadTrim"),
        bounds: MAIN_BOUNDS,
        switches,
        expectation: Expectation::Violates(invariant),
    }
}

/// Every configuration, passing ones first, then the twins.
pub static CONFIGS: [Config; 8] = [
    MAIN,
    twin(
        "FelixHeadTrimHiddenTrims",
        Switches {
            hidden_trims: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimUntagged",
        Switches {
            untagged: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimNoopSkip",
        Switches {
            noop_skip: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimRetention",
        Switches {
            retention: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimReadFromEarliest",
        Switches {
            read_from_earliest: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimTailFromRefusal",
        Switches {
            tail_from_refusal: true,
            ..NO_SWITCH
        },
        "StaleTrimRefused",
    ),
    twin(
        "FelixHeadTrimCompactActive",
        Switches {
            compact_active: true,
            ..NO_SWITCH
        },
        "FloorRecordKept",
    ),
];

/// Looks a configuration up by its full name or its name without the `FelixHeadTrim` prefix
/// (`Main` also names the main configuration).
pub fn lookup(name: &str) -> Option<&'static Config> {
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
