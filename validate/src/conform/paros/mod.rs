//! ParosTrimJump paths on the real core: the second spec, run as FelixHeadTrim's are
//! (`crate::conform`): each action carried out by the scripted driver (`driver`), the core's nodes
//! projected and compared with the model's next state (`project`), every audit on the history at
//! the end; and every twin's counterexample (`twins`).
//!
//! Where the core does strictly less than the model, the path stops with a `gap` (`takes`): the
//! core checks a write's, a truncate's and a SetLeader's fence against the token at its tail when
//! it sequences them, and refuses them there (`FenceMismatch`); the model sequences them and lets
//! its walk ignore them. The core compacts in the step that moves its floor; the model's `Compact`
//! is a step of its own, which a path must take before any other.

pub mod driver;
pub mod project;

use super::core::Core;
use super::project::Difference;
use super::spec::Spec as _;
use super::{PathRun, Segments};
use felix_core::Rules;
use felix_model::paros::config::ParosConfig;
use felix_model::paros::spec::{Action, Kind, ParosTrimJump, State};
use stateright::Model;

/// A model `Compact` waits while another action is taken.
pub const LAZY_COMPACT: &str = "the model's Compact is pending; the core compacted in the step \
     that moved its floor, so it cannot take another action first";
/// A write fenced by a token that is not the writer at the leader's tail.
pub const WRITE_FENCE: &str = "the core refuses a write whose fence is not the token at its tail \
     (FenceMismatch); the model sequences it and never acknowledges it";
/// A truncate fenced by a token that is not the writer at the leader's tail.
pub const TRUNCATE_FENCE: &str = "the core refuses a truncate whose fence is not the token at \
     its tail when it sequences it (FenceMismatch); the model sequences it and its walk refuses it";
/// A SetLeader whose old token is not the writer at the leader's tail.
pub const SET_LEADER_FENCE: &str = "the core refuses a SetLeader whose old token is not the one \
     at its tail (FenceMismatch); the model sequences it and its walk ignores it";

/// A jump to a node of an older term.
pub const JUMP_TERM: &str = "the core's leader learns that a node lags below its first held \
     offset only from the node's refusal of an AppendEntries, which carries the leader's term: the \
     node takes that term before it jumps; the model's TrimmedTo leaves an older term as it is";

/// A replication that overwrites a record the follower committed.
pub const COMMITTED_SLOT: &str = "the core never drops a record it committed: it refuses an \
     AppendEntries that conflicts at or below its commit index; the model's Replicate overwrites \
     it (reachable only once a twin has broken agreement)";

/// A compaction or a jump on a core that never compacts.
pub const NEVER_COMPACTS: &str = "the core runs with segments it never fills: it never compacts, \
     so its leaders never send TrimmedTo";

/// The writer token at node `l`'s tail: its walk's, moved by every SetLeader it holds above its
/// commit index (the core's `Journal::tail_writer`).
pub fn tail_writer(state: &State, l: u8) -> u8 {
    let i = usize::from(l) - 1;
    let mut writer = state.writer[i];
    for slot in (state.commit[i] + 1)..=state.last_index(l) {
        let record = state.rec(l, slot);
        if record.k == Kind::SetLeader && record.o == writer + 1 {
            writer = record.o;
        }
    }
    writer
}

/// Whether the core (under `rules`) can take `action` from `state`: `Err` says why not.
pub fn takes(
    config: &'static ParosConfig,
    rules: Rules,
    segments: Segments,
    state: &State,
    action: &Action,
) -> Result<(), &'static str> {
    match segments {
        Segments::Never if matches!(action, Action::Compact(_) | Action::TrimmedTo(..)) => {
            return Err(NEVER_COMPACTS)
        }
        Segments::Model
            if !matches!(action, Action::Compact(_))
                && !settled(&ParosTrimJump::new(config), state) =>
        {
            return Err(LAZY_COMPACT)
        }
        _ => {}
    }
    match *action {
        Action::Write(o, l) if o != tail_writer(state, l) => Err(WRITE_FENCE),
        Action::Truncate(o, l) if rules.truncate_fenced && o != tail_writer(state, l) => {
            Err(TRUNCATE_FENCE)
        }
        Action::SetLeader(o, l) if o - 1 != tail_writer(state, l) => Err(SET_LEADER_FENCE),
        Action::TrimmedTo(l, f)
            if state.term[usize::from(f) - 1] != state.term[usize::from(l) - 1] =>
        {
            Err(JUMP_TERM)
        }
        Action::Replicate(_, f) if drops_committed(config, state, action, f) => Err(COMMITTED_SLOT),
        _ => Ok(()),
    }
}

/// Whether `action` changes a record node `f` holds at or below its commit index.
fn drops_committed(config: &'static ParosConfig, state: &State, action: &Action, f: u8) -> bool {
    let Some(next) = ParosTrimJump::new(config).next_state(state, *action) else {
        return false;
    };
    let committed = state.commit[usize::from(f) - 1].min(state.last_index(f));
    (state.start[usize::from(f) - 1]..=committed)
        .any(|slot| !next.holds(f, slot) || next.rec(f, slot) != state.rec(f, slot))
}

/// `state` with every `Compact` it enables taken, in node order: what the core holds after the
/// step that led there (it compacts in that step).
pub fn compacted(model: &ParosTrimJump, state: &State) -> State {
    let mut state = state.clone();
    for n in 1..=model.config.bounds.nodes() {
        if let Some(next) = model.next_state(&state, Action::Compact(n)) {
            state = next;
        }
    }
    state
}

/// The model state the core is held to after the step that led to `next`: on a core that
/// compacts, `next` with every `Compact` it enables taken (the core compacts in the step); on one
/// that never compacts, `next` as it is.
pub(crate) fn expected(model: &ParosTrimJump, segments: Segments, next: &State) -> State {
    match segments {
        Segments::Model => compacted(model, next),
        Segments::Never => next.clone(),
    }
}

/// The first difference between the core and the model after the step that led to `next`. A
/// compacting core that did not compact is held to `next` itself, which is a state of the model too
/// (a `Compact` may wait: the FloorPastCommit twin's leader moves its floor at append, and its walk
/// then has nothing to compact for).
pub(crate) fn differs(
    core: &Core,
    model: &ParosTrimJump,
    segments: Segments,
    next: &State,
) -> Option<Difference> {
    let config = model.config;
    project::compare(core, config, &expected(model, segments, next))
        .filter(|_| segments == Segments::Never || project::compare(core, config, next).is_some())
}

/// Whether `state` is one the core can be in after a step: no `Compact` waits.
pub fn settled(model: &ParosTrimJump, state: &State) -> bool {
    (1..=model.config.bounds.nodes()).all(|n| !model.enabled(state, Action::Compact(n)))
}

/// Runs `actions` from the model's `Init` on a core under `rules`, holding it to the model of
/// `config` after every action.
pub fn run_path(
    config: &'static ParosConfig,
    rules: Rules,
    segments: Segments,
    actions: &[Action],
) -> PathRun<Action, State> {
    super::spec::Paros {
        config,
        rules,
        segments,
    }
    .run(actions)
}
