//! Rule switches: one per safety rule, every rule on by default.
//!
//! A *twin* is the default configuration with exactly one rule switched off; each twin must break
//! the invariant named in `Twin::invariant`, in every layer that has it (simulator, Stateright
//! model, TLA+). The names are the same everywhere: they live in `felix-names` (`TwinName`,
//! `Invariant`), which the model shares without importing the core.

pub use felix_names::{Invariant, Layer, TwinName};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which safety rules are on. `Rules::default()` is every rule on.
/// Each field is named for the *rule*; `false` switches the rule off (the twin).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rules {
    /// Readers may see trims and CursorTooOld carries the floor-setting trim's headers
    /// (off: HiddenTrims, the design before the fix: readers skip trims, the refusal carries nothing).
    pub trims_visible: bool,
    /// CursorTooOld carries the tag (off: Untagged, FloorTag = 0).
    pub floor_tag: bool,
    /// A no-op trim still checks the tail and the fence (off: NoopSkip).
    pub noop_trim_checks_tail: bool,
    /// Only trims delete: no retention by time or size (off: Retention, deletion regardless of
    /// trims; see `Rules::retention_deletes`).
    pub only_trims_delete: bool,
    /// A refused holder re-reads from its own cursor (off: ReadFromEarliest).
    pub reread_from_cursor: bool,
    /// The tail never comes from a refusal (off: TailFromRefusal).
    pub tail_not_from_refusal: bool,
    /// Compaction never deletes the segment holding the floor-setting trim, nor the active one
    /// (off: CompactActive).
    pub compaction_keeps_floor_record: bool,
    /// A TrimmedTo jump never touches term or vote (off: JumpResetsTerm).
    pub jump_keeps_term: bool,
    /// A truncate is checked against the writer fence (off: UnfencedTruncate).
    pub truncate_fenced: bool,
    /// A floor is applied only when the walk over the committed log reaches its trim
    /// (off: FloorPastCommit).
    pub floor_after_commit: bool,
    /// Acknowledge only when committed on a majority and durable there (off: AckBeforeSync).
    pub ack_after_sync: bool,
    /// A node serves a read only once its committed walk reaches a read index confirmed by the
    /// leader (off: LocalReads, served at once from the node's own committed prefix).
    pub read_index: bool,
    /// The fix is the tag: readers skip trim records and retention stays off (off: VisibleTrims,
    /// the first seed's rejected first fix: no tag, readers see trim records, deletion on).
    pub tag_not_visible_trims: bool,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            trims_visible: true,
            floor_tag: true,
            noop_trim_checks_tail: true,
            only_trims_delete: true,
            reread_from_cursor: true,
            tail_not_from_refusal: true,
            compaction_keeps_floor_record: true,
            jump_keeps_term: true,
            truncate_fenced: true,
            floor_after_commit: true,
            ack_after_sync: true,
            read_index: true,
            tag_not_visible_trims: true,
        }
    }
}

impl Rules {
    /// Whether retention deletes segments regardless of trims: the Retention twin, and the
    /// VisibleTrims twin (the rejected fix ran with deletion on).
    pub fn retention_deletes(&self) -> bool {
        !self.only_trims_delete || !self.tag_not_visible_trims
    }

    /// Whether readers are served trim records (the VisibleTrims twin) rather than skipping them.
    pub fn readers_see_trims(&self) -> bool {
        !self.tag_not_visible_trims
    }
}

/// The expected-to-fail configurations: every rule on but one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Twin {
    HiddenTrims,
    Untagged,
    NoopSkip,
    Retention,
    ReadFromEarliest,
    TailFromRefusal,
    CompactActive,
    JumpResetsTerm,
    UnfencedTruncate,
    FloorPastCommit,
    AckBeforeSync,
    LocalReads,
    VisibleTrims,
}

impl Twin {
    pub const ALL: [Twin; 13] = [
        Twin::HiddenTrims,
        Twin::Untagged,
        Twin::NoopSkip,
        Twin::Retention,
        Twin::ReadFromEarliest,
        Twin::TailFromRefusal,
        Twin::CompactActive,
        Twin::JumpResetsTerm,
        Twin::UnfencedTruncate,
        Twin::FloorPastCommit,
        Twin::AckBeforeSync,
        Twin::LocalReads,
        Twin::VisibleTrims,
    ];

    pub fn name(self) -> &'static str {
        self.named().name()
    }

    /// This twin's name in every layer.
    pub fn named(self) -> TwinName {
        match self {
            Twin::HiddenTrims => TwinName::HiddenTrims,
            Twin::Untagged => TwinName::Untagged,
            Twin::NoopSkip => TwinName::NoopSkip,
            Twin::Retention => TwinName::Retention,
            Twin::ReadFromEarliest => TwinName::ReadFromEarliest,
            Twin::TailFromRefusal => TwinName::TailFromRefusal,
            Twin::CompactActive => TwinName::CompactActive,
            Twin::JumpResetsTerm => TwinName::JumpResetsTerm,
            Twin::UnfencedTruncate => TwinName::UnfencedTruncate,
            Twin::FloorPastCommit => TwinName::FloorPastCommit,
            Twin::AckBeforeSync => TwinName::AckBeforeSync,
            Twin::LocalReads => TwinName::LocalReads,
            Twin::VisibleTrims => TwinName::VisibleTrims,
        }
    }

    /// Parses a twin name; the `FelixHeadTrim` prefix may be dropped or kept.
    pub fn parse(text: &str) -> Option<Twin> {
        let name = text.strip_prefix("FelixHeadTrim").unwrap_or(text);
        Twin::ALL.into_iter().find(|twin| twin.name() == name)
    }

    /// The invariant this twin must break in the simulator (DESIGN.md, "Rules, switches and
    /// twins"; `TwinName::expected` holds every layer's).
    pub fn invariant(self) -> Invariant {
        match self.named().expected(Layer::Sim) {
            Some(invariant) => invariant,
            None => unreachable!("{self} is a simulator twin without a simulator invariant"),
        }
    }

    /// The rules with exactly this one switched off.
    pub fn rules(self) -> Rules {
        let mut rules = Rules::default();
        match self {
            Twin::HiddenTrims => rules.trims_visible = false,
            Twin::Untagged => rules.floor_tag = false,
            Twin::NoopSkip => rules.noop_trim_checks_tail = false,
            Twin::Retention => rules.only_trims_delete = false,
            Twin::ReadFromEarliest => rules.reread_from_cursor = false,
            Twin::TailFromRefusal => rules.tail_not_from_refusal = false,
            Twin::CompactActive => rules.compaction_keeps_floor_record = false,
            Twin::JumpResetsTerm => rules.jump_keeps_term = false,
            Twin::UnfencedTruncate => rules.truncate_fenced = false,
            Twin::FloorPastCommit => rules.floor_after_commit = false,
            Twin::AckBeforeSync => rules.ack_after_sync = false,
            Twin::LocalReads => rules.read_index = false,
            Twin::VisibleTrims => rules.tag_not_visible_trims = false,
        }
        rules
    }
}

impl fmt::Display for Twin {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every twin is exactly one switch away from the default rules.
    #[test]
    fn every_twin_switches_exactly_one_rule_off() {
        let all_on = serde_json_free_count(Rules::default());
        assert_eq!(all_on, 0);
        for twin in Twin::ALL {
            assert_eq!(serde_json_free_count(twin.rules()), 1, "{twin}");
            assert_eq!(Twin::parse(twin.name()), Some(twin));
            assert_eq!(Twin::parse(&format!("FelixHeadTrim{twin}")), Some(twin));
        }
        assert_eq!(Twin::parse("NoSuchTwin"), None);
    }

    /// The core's twins are exactly the simulator's twins in `felix-names`, each under its own
    /// name (TagAtFloor is the model's only: the simulator cannot express it).
    #[test]
    fn the_twins_are_the_simulator_layer_of_the_shared_names() {
        let core: Vec<TwinName> = Twin::ALL.into_iter().map(Twin::named).collect();
        let shared: Vec<TwinName> = TwinName::in_layer(Layer::Sim).collect();
        assert_eq!(core, shared);
        for twin in Twin::ALL {
            assert_eq!(twin.name(), format!("{twin:?}"));
            assert_eq!(Some(twin.invariant()), twin.named().expected(Layer::Sim));
        }
    }

    fn serde_json_free_count(rules: Rules) -> usize {
        let Rules {
            trims_visible,
            floor_tag,
            noop_trim_checks_tail,
            only_trims_delete,
            reread_from_cursor,
            tail_not_from_refusal,
            compaction_keeps_floor_record,
            jump_keeps_term,
            truncate_fenced,
            floor_after_commit,
            ack_after_sync,
            read_index,
            tag_not_visible_trims,
        } = rules;
        [
            trims_visible,
            floor_tag,
            noop_trim_checks_tail,
            only_trims_delete,
            reread_from_cursor,
            tail_not_from_refusal,
            compaction_keeps_floor_record,
            jump_keeps_term,
            truncate_fenced,
            floor_after_commit,
            ack_after_sync,
            read_index,
            tag_not_visible_trims,
        ]
        .iter()
        .filter(|on| !**on)
        .count()
    }
}
