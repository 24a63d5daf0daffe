//! The two specs a path can come from, behind one interface (`Spec`): the model, what an edge of
//! its graph is (an action kind from an abstract state class), which steps the core can take, and
//! how a path is run on the core. The graph search, the walks and the cover (`super::walk`) and the
//! counterexample search (`super::search`) are written once over it.

use super::core::Core;
use super::paros::{self, takes as takes_paros};
use super::project::Difference;
use super::{PathRun, Segments};
use felix_core::Rules;
use felix_model::head_trim::config::Config;
use felix_model::head_trim::spec::{Action, FelixHeadTrim, State};
use felix_model::paros::config::ParosConfig;
use felix_model::paros::spec::{
    Action as ParosAction, ParosTrimJump, State as ParosState, NODES_MAX,
};
use felix_model::spec::{Spec as ModelSpec, SpecConfig};
use stateright::Model;
use std::fmt::{self, Display};
use std::hash::Hash;

/// An abstract state class: up to eight facts, one bit each.
pub type Class = u8;

/// One spec as the conformance layer uses it.
pub trait Spec: Copy {
    type State: Clone + Hash + Eq + fmt::Debug + Send + Sync + 'static;
    type Action: Copy + Eq + Display + fmt::Debug + Send + Sync + Into<&'static str>;
    type Model: ModelSpec + Model<State = Self::State, Action = Self::Action>;

    /// The configuration.
    fn config(self) -> &'static SpecConfig<Self::Model>;
    /// The configuration's name.
    fn name(self) -> &'static str {
        self.config().name
    }
    /// The model of the configuration (no symmetry: the core's nodes are not interchangeable).
    fn model(self) -> Self::Model {
        Self::Model::model(self.config(), false)
    }
    /// An action's kind: its name without parameters.
    fn kind(action: &Self::Action) -> &'static str {
        (*action).into()
    }
    /// The facts a class packs after `VOTER_FACTS`, in bit order.
    fn facts(self) -> &'static [&'static str];
    /// A state's class.
    fn class(self, state: &Self::State) -> Class;
    /// Action kinds the core has no verb for, left out of the edges, each with why.
    fn no_core_verb(self) -> &'static [(&'static str, &'static str)];
    /// Whether the core can take `action` from `state` (a model state the core is in): `Err`
    /// says why not. The graph a cover walks and the counterexamples it runs keep to these steps.
    fn takes(self, state: &Self::State, action: &Self::Action) -> Result<(), &'static str>;
    /// The actions the model enables in `state` that the core can take (`takes`), in the model's
    /// order, into `actions` (cleared first).
    fn core_actions(
        self,
        model: &Self::Model,
        state: &Self::State,
        actions: &mut Vec<Self::Action>,
    ) {
        actions.clear();
        model.actions(state, actions);
        actions.retain(|action| self.takes(state, action).is_ok());
    }
    /// Whether `takes` ever refuses in this configuration (then the cover also counts the edges
    /// of the whole graph it leaves out).
    fn filters(self) -> bool;
    /// A core under the spec's rules in the model's `Init`, or why it could not start.
    fn start_core(self) -> Result<Core, String>;
    /// Carries `action` out on the core (deliveries, ticks, syncs, client requests).
    fn apply(self, core: &mut Core, action: Self::Action) -> Result<(), String>;
    /// The first difference between the core and the model state the step led to (`next`).
    fn compare(self, core: &Core, model: &Self::Model, next: &Self::State) -> Option<Difference>;
    /// What the core is held to after the step that led to `next`, in words.
    fn describe_model(self, model: &Self::Model, next: &Self::State) -> String;
    /// The core's state, projected, in words.
    fn describe_core(self, core: &Core) -> String;
    /// After each step's comparison (ParosTrimJump samples the core's nodes for its audits).
    fn after_step(self, _core: &mut Core) {}

    /// Runs `actions` on the core (with the spec's rules), held to the model after each.
    fn run(self, actions: &[Self::Action]) -> PathRun<Self::Action, Self::State> {
        super::drive(self, actions)
    }

    /// A class's facts in words (for reports).
    fn describe_class(self, class: Class) -> String {
        let facts: Vec<&str> = VOTER_FACTS
            .iter()
            .chain(self.facts())
            .enumerate()
            .filter(|(index, _)| class & (1 << index) != 0)
            .map(|(_, fact)| *fact)
            .collect();
        if facts.is_empty() {
            "-".to_string()
        } else {
            facts.join(", ")
        }
    }
}

/// The facts every spec's class begins with, about its voters' Raft-shaped variables.
const VOTER_FACTS: [&str; 5] = [
    "two leaders",
    "terms agree",
    "logs agree",
    "commits agree",
    "floor raised",
];

/// `VOTER_FACTS` of nodes `..n`, from a model state's `leader`, `log`, `term`, `commit` and
/// `floor`.
fn voter_facts<L: PartialEq, const N: usize>(
    n: usize,
    leader: &[bool; N],
    log: &[L; N],
    [term, commit, floor]: [&[u8; N]; 3],
) -> [bool; 5] {
    let same = |values: &[u8]| values[..n].iter().all(|&v| v == values[0]);
    [
        leader[..n].iter().filter(|&&l| l).count() >= 2,
        same(term),
        log[..n].iter().all(|held| *held == log[0]),
        same(commit),
        floor[..n].iter().any(|&f| f > 1),
    ]
}

/// A class: the voter facts, then the spec's own.
fn pack(voters: [bool; 5], own: &[bool]) -> Class {
    voters
        .iter()
        .chain(own)
        .enumerate()
        .fold(0, |bits, (index, &fact)| bits | (u8::from(fact) << index))
}

/// Why the core cannot follow a FelixHeadTrim `Retain` of the segment holding a log's last record.
pub const RETAIN_LAST: &str = "the model's Retain deletes the segment holding the log's last \
     record; the core's retention never deletes that segment";

/// Whether the core can take a FelixHeadTrim action: everything but a `Retain` of the segment
/// that holds the broker's last record.
pub fn takes_head_trim(
    config: &Config,
    state: &State,
    action: &Action,
) -> Result<(), &'static str> {
    match *action {
        Action::Retain(b) => {
            let i = usize::from(b) - 1;
            let seg_last = u16::from(state.start[i]) + u16::from(config.bounds.seg_size) - 1;
            if seg_last >= u16::from(state.log[i].len()) {
                Err(RETAIN_LAST)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// A spec's configuration on the core: the configuration, the core's rules, and its segments.
pub struct OnCore<M: ModelSpec> {
    pub config: &'static SpecConfig<M>,
    pub rules: Rules,
    pub segments: Segments,
}

impl<M: ModelSpec> Clone for OnCore<M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: ModelSpec> Copy for OnCore<M> {}

/// FelixHeadTrim on the core; the cover runs the core with segments it never fills
/// (`Segments::Never`).
pub type HeadTrim = OnCore<FelixHeadTrim>;

impl Spec for HeadTrim {
    type State = State;
    type Action = Action;
    type Model = FelixHeadTrim;

    fn config(self) -> &'static Config {
        self.config
    }

    fn facts(self) -> &'static [&'static str] {
        &["a holder retired", "lease moved"]
    }

    fn class(self, state: &State) -> Class {
        let brokers = usize::from(self.config.bounds.brokers);
        let holders = usize::from(self.config.bounds.holders);
        let numbers = [&state.term, &state.commit, &state.floor];
        let voters = voter_facts(brokers, &state.leader, &state.log, numbers);
        let own = [state.retired[..holders].iter().any(|&r| r), state.lease > 1];
        pack(voters, &own)
    }

    fn no_core_verb(self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "Compact",
                "the core compacts by itself as its floor moves, and the cover's segments never fill",
            ),
            (
                "Retain",
                "the core retains by itself, and the cover's segments never fill",
            ),
        ]
    }

    fn takes(self, state: &State, action: &Action) -> Result<(), &'static str> {
        takes_head_trim(self.config, state, action)
    }

    fn filters(self) -> bool {
        self.config.retention_deletes()
    }

    fn start_core(self) -> Result<Core, String> {
        let bounds = &self.config.bounds;
        let seg_size = match self.segments {
            Segments::Model => u64::from(bounds.seg_size),
            Segments::Never => 1 << 20,
        };
        Core::start(bounds.brokers, bounds.holders, seg_size, self.rules)
    }

    fn apply(self, core: &mut Core, action: Action) -> Result<(), String> {
        core.apply(action)
    }

    fn compare(self, core: &Core, _: &FelixHeadTrim, next: &State) -> Option<Difference> {
        super::project::compare(core, self.config, next)
    }

    fn describe_model(self, _: &FelixHeadTrim, next: &State) -> String {
        super::project::describe_model(next, self.config)
    }

    fn describe_core(self, core: &Core) -> String {
        super::project::describe(core, self.config)
    }
}

/// ParosTrimJump on the core, its segments one record each (`Segments::Model`: the core compacts
/// what the model's `Compact` drops, in the step that moves its floor) or never filled
/// (`Segments::Never`: no compaction, no jump; the states where the model's `Compact` waits).
pub type Paros = OnCore<ParosTrimJump>;

impl Spec for Paros {
    type State = ParosState;
    type Action = ParosAction;
    type Model = ParosTrimJump;

    fn config(self) -> &'static ParosConfig {
        self.config
    }

    fn facts(self) -> &'static [&'static str] {
        &["a node compacted", "a NotHeld range", "writer moved"]
    }

    fn class(self, state: &ParosState) -> Class {
        let nodes = usize::from(self.config.bounds.nodes());
        assert!(nodes <= NODES_MAX);
        let numbers = [&state.term, &state.commit, &state.floor];
        let voters = voter_facts(nodes, &state.leader, &state.log, numbers);
        let own = [
            state.start[..nodes].iter().any(|&s| s > 1),
            (0..nodes).any(|i| state.floor[i] < state.start[i]),
            state.writer[..nodes].iter().any(|&w| w > 1),
        ];
        pack(voters, &own)
    }

    fn no_core_verb(self) -> &'static [(&'static str, &'static str)] {
        &[(
            "Compact",
            "the core compacts by itself, in the step that moves its floor",
        )]
    }

    fn takes(self, state: &ParosState, action: &ParosAction) -> Result<(), &'static str> {
        takes_paros(self.config, self.rules, self.segments, state, action)
    }

    fn filters(self) -> bool {
        true
    }

    fn start_core(self) -> Result<Core, String> {
        let bounds = &self.config.bounds;
        paros::driver::start(bounds.voters, bounds.replicas, self.rules, self.segments)
    }

    fn apply(self, core: &mut Core, action: ParosAction) -> Result<(), String> {
        paros::driver::apply(core, action)
    }

    fn compare(self, core: &Core, model: &ParosTrimJump, next: &ParosState) -> Option<Difference> {
        paros::differs(core, model, self.segments, next)
    }

    fn describe_model(self, model: &ParosTrimJump, next: &ParosState) -> String {
        let expected = paros::expected(model, self.segments, next);
        paros::project::describe_model(&expected, self.config)
    }

    fn describe_core(self, core: &Core) -> String {
        paros::project::describe(core, self.config)
    }

    fn after_step(self, core: &mut Core) {
        paros::driver::sample(core);
    }
}
