//! The configurations of ParosTrimJump: the constants and rule switches of each `.cfg` file.
//!
//! Names are exactly the TLA+ configuration names (`docs/formal/ParosTrimJump<Name>.cfg`). A twin
//! is its base configuration with exactly one switch flipped, and names the invariant it must
//! break; `model/tests/it/paros.rs` holds both facts and ties the registry to the `.cfg` files.

use felix_names::TwinName;

use super::spec::ParosTrimJump;
use crate::spec::{Constants, RuleSwitches, SpecConfig};

/// The rule switches, named for the rule (as the core's `Rules`): `true` is the rule on, the design
/// as shipped; each twin switches exactly one rule off. The TLA+ constants are named for the twin
/// instead (`JumpResetsTerm = TRUE` is `jump_keeps_term: false`); `rules` pairs them
/// (`RuleSwitches::constants` negates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParosSwitches {
    /// A TrimmedTo jump never touches term or vote (off: JumpResetsTerm, it overwrites them with
    /// the sealed term).
    pub jump_keeps_term: bool,
    /// The walk checks a truncate against the writer fence (off: UnfencedTruncate).
    pub truncate_fenced: bool,
    /// A node applies a truncate's floor when its walk reaches it (off: FloorPastCommit, when it
    /// appends it).
    pub floor_after_commit: bool,
    /// A follower answers a replicated record only once it is durable, and a write is
    /// acknowledged only once a majority holds it durably (off: AckBeforeSync, a follower answers
    /// first and any copy counts).
    pub ack_after_sync: bool,
}

impl RuleSwitches for ParosSwitches {
    fn rules(&self) -> Vec<(TwinName, bool)> {
        vec![
            (TwinName::JumpResetsTerm, self.jump_keeps_term),
            (TwinName::UnfencedTruncate, self.truncate_fenced),
            (TwinName::FloorPastCommit, self.floor_after_commit),
            (TwinName::AckBeforeSync, self.ack_after_sync),
        ]
    }
}

/// The bounds of a configuration (TLA+ CONSTANTS), named as in the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParosBounds {
    /// `NumVoters`: voting nodes 1..NumVoters.
    pub voters: u8,
    /// `NumReplicas`: non-voting replicas after the voters.
    pub replicas: u8,
    /// `NumOwners`: writer-token holders 1..NumOwners.
    pub owners: u8,
    /// `MaxWrites`: writes sequenced.
    pub max_writes: u8,
    /// `MaxTruncates`: truncates sequenced.
    pub max_truncates: u8,
    /// `MaxSetLeaders`: SetLeader commands sequenced.
    pub max_setleaders: u8,
    /// `MaxPromotions`: elections.
    pub max_promotions: u8,
    /// `MaxCrashes`: crash-restarts (each drops what a node holds that is not durable).
    pub max_crashes: u8,
}

impl ParosBounds {
    /// `MaxLen`: every slot holds a write, a truncate, a SetLeader or a noop.
    pub fn max_len(&self) -> u8 {
        self.max_writes + self.max_truncates + self.max_setleaders + self.max_promotions
    }

    /// Every node, voters first: `NumVoters + NumReplicas`.
    pub fn nodes(&self) -> u8 {
        self.voters + self.replicas
    }
}

impl Constants for ParosBounds {
    fn constants(&self) -> Vec<(&'static str, u8)> {
        vec![
            ("NumVoters", self.voters),
            ("NumReplicas", self.replicas),
            ("NumOwners", self.owners),
            ("MaxWrites", self.max_writes),
            ("MaxTruncates", self.max_truncates),
            ("MaxSetLeaders", self.max_setleaders),
            ("MaxPromotions", self.max_promotions),
            ("MaxCrashes", self.max_crashes),
        ]
    }
}

/// One configuration: a `.cfg` file.
pub type ParosConfig = SpecConfig<ParosTrimJump>;

const ALL_ON: ParosSwitches = ParosSwitches {
    jump_keeps_term: true,
    truncate_fenced: true,
    floor_after_commit: true,
    ack_after_sync: true,
};

/// `ParosTrimJump.cfg`: three voters, two owners, a write, a truncate, a SetLeader and a
/// promotion, no crash.
const MAIN_BOUNDS: ParosBounds = ParosBounds {
    voters: 3,
    replicas: 0,
    owners: 2,
    max_writes: 1,
    max_truncates: 1,
    max_setleaders: 1,
    max_promotions: 1,
    max_crashes: 0,
};

/// `ParosTrimJumpCrashes.cfg`: the main bounds with one crash and no SetLeader (so that TLC
/// finishes in about two minutes).
const CRASH_BOUNDS: ParosBounds = ParosBounds {
    max_setleaders: 0,
    max_crashes: 1,
    ..MAIN_BOUNDS
};

/// `ParosTrimJumpReplica.cfg`: the main bounds plus a non-voting replica, with no promotion.
const REPLICA_BOUNDS: ParosBounds = ParosBounds {
    replicas: 1,
    max_promotions: 0,
    ..MAIN_BOUNDS
};

const MAIN: ParosConfig = ParosConfig::passing("ParosTrimJump", MAIN_BOUNDS, ALL_ON);
const CRASH: ParosConfig = ParosConfig::passing("ParosTrimJumpCrashes", CRASH_BOUNDS, ALL_ON);

/// Every configuration (one per `.cfg` file), passing ones first, then the twins
/// (`Spec::configs`).
pub static CONFIGS: [ParosConfig; 7] = [
    MAIN,
    ParosConfig::passing("ParosTrimJumpReplica", REPLICA_BOUNDS, ALL_ON),
    CRASH,
    ParosConfig::twin(
        "ParosTrimJumpJumpResetsTerm",
        TwinName::JumpResetsTerm,
        &MAIN,
        ParosSwitches {
            jump_keeps_term: false,
            ..ALL_ON
        },
    ),
    ParosConfig::twin(
        "ParosTrimJumpUnfencedTruncate",
        TwinName::UnfencedTruncate,
        &MAIN,
        ParosSwitches {
            truncate_fenced: false,
            ..ALL_ON
        },
    ),
    ParosConfig::twin(
        "ParosTrimJumpFloorPastCommit",
        TwinName::FloorPastCommit,
        &MAIN,
        ParosSwitches {
            floor_after_commit: false,
            ..ALL_ON
        },
    ),
    ParosConfig::twin(
        "ParosTrimJumpAckBeforeSync",
        TwinName::AckBeforeSync,
        &CRASH,
        ParosSwitches {
            ack_after_sync: false,
            ..ALL_ON
        },
    ),
];
