//! The configurations of ParosTrimJump: the constants of each `.cfg` file, and the twin it is.
//!
//! Names are exactly the TLA+ configuration names (`docs/formal/ParosTrimJump<Name>.cfg`). A twin
//! is its base configuration with exactly one rule switched off, and names the invariant it must
//! break; `model/tests/it/paros.rs` holds both facts and ties the registry to the `.cfg` files.
//! The spec's rules, each by the twin that switches it off (a boolean constant in every `.cfg`
//! file, `SpecConfig::is_twin` here):
//! - JumpResetsTerm: a TrimmedTo jump overwrites term and vote with the sealed term (on, it never
//!   touches them);
//! - UnfencedTruncate: the walk does not check a truncate against the writer fence;
//! - FloorPastCommit: a node applies a truncate's floor when it appends it, not when its walk
//!   reaches it;
//! - AckBeforeSync: a follower answers a replicated record before it is durable and any copy
//!   counts toward a write's acknowledgement (on, a write is acknowledged only once a majority
//!   holds it durably).

use felix_names::TwinName;

use super::spec::ParosTrimJump;
use crate::spec::{Constants, SpecConfig};

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

const MAIN: ParosConfig = ParosConfig::passing("ParosTrimJump", MAIN_BOUNDS);
const CRASH: ParosConfig = ParosConfig::passing("ParosTrimJumpCrashes", CRASH_BOUNDS);

/// Every configuration (one per `.cfg` file), passing ones first, then the twins
/// (`Spec::configs`).
pub static CONFIGS: [ParosConfig; 7] = [
    MAIN,
    ParosConfig::passing("ParosTrimJumpReplica", REPLICA_BOUNDS),
    CRASH,
    ParosConfig::twin(
        "ParosTrimJumpJumpResetsTerm",
        TwinName::JumpResetsTerm,
        &MAIN,
    ),
    ParosConfig::twin(
        "ParosTrimJumpUnfencedTruncate",
        TwinName::UnfencedTruncate,
        &MAIN,
    ),
    ParosConfig::twin(
        "ParosTrimJumpFloorPastCommit",
        TwinName::FloorPastCommit,
        &MAIN,
    ),
    ParosConfig::twin(
        "ParosTrimJumpAckBeforeSync",
        TwinName::AckBeforeSync,
        &CRASH,
    ),
];
