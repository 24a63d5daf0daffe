//! Rule switches: one per rule (the safety rules, and `catch_up_at_once`, a liveness rule that
//! Progress judges), every rule on by default.
//!
//! A *twin* is the default configuration with exactly one rule switched off; each twin must break
//! the invariant named in `TwinName::expected`, in every layer that has it (simulator, Stateright
//! model, TLA+, trace validation: `felix-validate`, `felix sweep --validate`). The names are the
//! same everywhere: they live in `felix-names` (`TwinName`, `Invariant`), which the model shares
//! without importing the core.

pub use felix_names::{Invariant, Layer, TwinName};
use serde::{Deserialize, Serialize};

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
    /// A vote is sent only after the promise it grants is persisted: the node's outputs put the
    /// `Persist` first, so the driver holds the vote until it is durable (off: VoteBeforePersist,
    /// the vote goes out ahead of its persist and a crash can forget it).
    pub vote_after_persist: bool,
    /// A leader serves a read at its commit index only once a majority answered a probe round sent
    /// after the read arrived (off: UnconfirmedReads, served at once: a deposed leader that has not
    /// heard of its successor serves reads that miss writes the successor acknowledged).
    pub read_index_confirmed: bool,
    /// A candidate counts only votes granted in its current term (off: StaleVotes, a vote granted
    /// to it in an earlier term's campaign counts for the current one, and a voter that has since
    /// voted for another candidate of this term elects two leaders).
    pub votes_of_current_term: bool,
    /// A leader whose follower accepted a batch and is still behind sends the next batch at once
    /// (off: LazyCatchUp, the next batch waits for the next heartbeat or the next client write:
    /// a lagging follower catches up one batch per heartbeat, slowly but surely, so only the
    /// Progress judge's bound sees it).
    pub catch_up_at_once: bool,
    /// A jump keeps the node's records past the trim point only when its record at the point's
    /// base has the sealed base's term, so they follow that base in the leader's log (off:
    /// StaleSuffix, kept whenever the node holds any: a suffix written in an older term sits
    /// above a base of a newer one until the leader's next append repairs it, and only the
    /// LogTermsMonotone judge, which walks each log after every step, sees it).
    pub jump_checks_base_term: bool,
    /// The walk applies a trim's floor when it reaches that trim, not one step before (off:
    /// EarlyFloor, a twin of the validation layer: the floor of an unfenced trim held right after
    /// the commit index applies a walk step early, only when no write lies in between, so no read,
    /// acknowledgement or deletion can tell; only trace validation, which holds the node's floor
    /// to the model's walk, sees it).
    pub floor_at_its_trim: bool,
    /// The walk moves the writer token when it reaches a fence, not one step before (off:
    /// EarlyFence, a twin of the validation layer: the token of a fence held right after the
    /// commit index shows a step early and the old one is restored before anything reads it, so
    /// no answer changes; only trace validation of a paros run, which holds the node's writer to
    /// ParosTrimJump's walk, sees it).
    pub writer_at_its_fence: bool,
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
            vote_after_persist: true,
            read_index_confirmed: true,
            votes_of_current_term: true,
            catch_up_at_once: true,
            jump_checks_base_term: true,
            floor_at_its_trim: true,
            writer_at_its_fence: true,
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

impl Rules {
    /// The rules of `twin`: every rule on but the one the twin switches off. Only the simulator's
    /// and the validation layer's twins have a switch in the core (`TwinName::in_layer(Layer::Sim)`
    /// and `Layer::Validation`; a parsed `--twin` is one); another twin is a caller's bug.
    pub fn twin(twin: TwinName) -> Rules {
        let mut rules = Rules::default();
        match twin {
            TwinName::HiddenTrims => rules.trims_visible = false,
            TwinName::Untagged => rules.floor_tag = false,
            TwinName::NoopSkip => rules.noop_trim_checks_tail = false,
            TwinName::Retention => rules.only_trims_delete = false,
            TwinName::ReadFromEarliest => rules.reread_from_cursor = false,
            TwinName::TailFromRefusal => rules.tail_not_from_refusal = false,
            TwinName::CompactActive => rules.compaction_keeps_floor_record = false,
            TwinName::JumpResetsTerm => rules.jump_keeps_term = false,
            TwinName::UnfencedTruncate => rules.truncate_fenced = false,
            TwinName::FloorPastCommit => rules.floor_after_commit = false,
            TwinName::AckBeforeSync => rules.ack_after_sync = false,
            TwinName::LocalReads => rules.read_index = false,
            TwinName::VisibleTrims => rules.tag_not_visible_trims = false,
            TwinName::VoteBeforePersist => rules.vote_after_persist = false,
            TwinName::UnconfirmedReads => rules.read_index_confirmed = false,
            TwinName::StaleVotes => rules.votes_of_current_term = false,
            TwinName::LazyCatchUp => rules.catch_up_at_once = false,
            TwinName::StaleSuffix => rules.jump_checks_base_term = false,
            TwinName::EarlyFloor => rules.floor_at_its_trim = false,
            TwinName::EarlyFence => rules.writer_at_its_fence = false,
            TwinName::TagAtFloor => {
                panic!("{twin} is not a simulator twin: the core has no switch for it")
            }
        }
        rules
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
        for twin in TwinName::in_layer(Layer::Sim).chain(TwinName::in_layer(Layer::Validation)) {
            assert_eq!(serde_json_free_count(Rules::twin(twin)), 1, "{twin}");
        }
    }

    /// Every simulator twin switches off a rule of its own: no two twins share a switch.
    #[test]
    fn every_simulator_twin_has_a_switch_of_its_own() {
        let twins: Vec<Rules> = TwinName::in_layer(Layer::Sim)
            .chain(TwinName::in_layer(Layer::Validation))
            .map(Rules::twin)
            .collect();
        for (index, rules) in twins.iter().enumerate() {
            assert!(!twins[..index].contains(rules), "{rules:?}");
        }
        assert_eq!(twins.len(), 20);
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
            vote_after_persist,
            read_index_confirmed,
            votes_of_current_term,
            catch_up_at_once,
            jump_checks_base_term,
            floor_at_its_trim,
            writer_at_its_fence,
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
            vote_after_persist,
            read_index_confirmed,
            votes_of_current_term,
            catch_up_at_once,
            jump_checks_base_term,
            floor_at_its_trim,
            writer_at_its_fence,
        ]
        .iter()
        .filter(|on| !**on)
        .count()
    }
}
