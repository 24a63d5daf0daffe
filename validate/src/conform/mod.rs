//! From the model to the code: a path of FelixHeadTrim actions run on the real core, one action
//! at a time, the core's projected state held to the model's next state after each.
//!
//! Trace validation (`crate::Validator`) goes from the code to the model: it checks that what a
//! simulated run happened to do is a behaviour of the model. This goes the other way: the model
//! chooses the schedule (a twin's shortest counterexample, or a walk over the configuration's
//! state graph, `walk`), and the scripted driver (`felix_sim::script::env`) makes the core take it:
//! - `core`: each action as deliveries, ticks, syncs and client requests (the action-to-verb
//!   table is in docs/formal/README.md, "From the model to the code");
//! - `project`: the core's brokers and the driver's holders read as the model's variables and
//!   compared with the model's state, the first difference named;
//! - the history the driver records is judged by every audit at the end of the path.
//!
//! A path stops at the first action the model refuses (its guard does not hold: a path taken from
//! another configuration, as a twin's counterexample replayed with every rule on) or the first
//! divergence; the audits judge what ran. A divergence is the `Conformance` finding.

pub mod core;
pub mod paros;
pub mod project;
pub mod search;
pub mod spec;
pub mod twins;
pub mod walk;

use felix_audits::Violation;
use felix_core::rules::Invariant;
use felix_core::Rules;
use felix_model::head_trim::config::Config;
use felix_model::head_trim::spec::{Action, State};
use project::Difference;
use spec::Spec as _;
use stateright::Model;

/// An action after which the core is not in the model's next state, or which the core could not
/// be driven to take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The action's position in the path, from 1.
    pub step: usize,
    /// The action, as the spec writes it.
    pub action: String,
    /// The first variable that differs, or why the driver could not carry the action out.
    pub what: String,
    /// The model's next state, in the words of `project::describe_model`.
    pub model_state: String,
    /// The core's state after the action, projected.
    pub core_state: String,
}

impl Divergence {
    /// One sentence: the `Conformance` finding's message.
    pub fn describe(&self) -> String {
        format!(
            "step {} {}: {}; model: {}; core: {}",
            self.step, self.action, self.what, self.model_state, self.core_state
        )
    }
}

/// What one path did on the core (FelixHeadTrim's actions and states by default; ParosTrimJump's
/// paths use the same type with its own).
#[derive(Clone, Debug)]
pub struct PathRun<A = Action, S = State> {
    /// Actions the core took (and the model agreed with, up to a divergence).
    pub actions_run: usize,
    /// The first action the model refused, with its position from 1 (the path goes no further).
    pub refused: Option<(usize, A)>,
    /// The first action the core cannot take (`spec::Spec::takes`), with its position from 1 and
    /// why (the path goes no further): a known gap between the model and the core, not a pass.
    pub gap: Option<(usize, A, &'static str)>,
    /// The first divergence, if any (the path goes no further).
    pub divergence: Option<Divergence>,
    /// Every audit's violations on the core's history.
    pub violations: Vec<Violation>,
    /// The model states the path went through, `Init` first (one per action run, plus one).
    pub states: Vec<S>,
}

impl<A, S: Clone> PathRun<A, S> {
    /// A run that has taken no action yet, at `model`'s initial state (each model has one).
    pub fn from_init<M: stateright::Model<State = S, Action = A>>(model: &M) -> (PathRun<A, S>, S) {
        let state = model
            .init_states()
            .into_iter()
            .next()
            .expect("the model has an initial state");
        let run = PathRun {
            actions_run: 0,
            refused: None,
            gap: None,
            divergence: None,
            violations: Vec::new(),
            states: vec![state.clone()],
        };
        (run, state)
    }
}

impl<A, S> PathRun<A, S> {
    /// The invariants the audits found broken, each once, in the order found.
    pub fn broken(&self) -> Vec<Invariant> {
        let mut broken: Vec<Invariant> = Vec::new();
        for violation in &self.violations {
            if !broken.contains(&violation.invariant) {
                broken.push(violation.invariant);
            }
        }
        broken
    }
}

/// Runs `actions` from the model's `Init` on a core under `rules`, holding it to the model of
/// `config` after every action.
pub fn run_path(config: &'static Config, rules: Rules, actions: &[Action]) -> PathRun {
    run_path_in(config, rules, Segments::Model, actions)
}

/// How big the core's segments are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segments {
    /// The model's `SegSize` (ParosTrimJump: one record): the core compacts (eagerly, as its
    /// floor moves) where the model's `Compact` could.
    Model,
    /// Too big to ever fill on a model path: the core never compacts, so a lagging follower is
    /// always caught up by `AppendEntries` (the model's `Replicate`), never by a `TrimmedTo` jump
    /// (which FelixHeadTrim does not have; ParosTrimJump's paths on such a core never take one).
    Never,
}

/// `run_path` with the core's segments chosen.
pub fn run_path_in(
    config: &'static Config,
    rules: Rules,
    segments: Segments,
    actions: &[Action],
) -> PathRun {
    spec::HeadTrim {
        config,
        rules,
        segments,
    }
    .run(actions)
}

/// Runs `actions` from the model's `Init` on the spec's core, one at a time: a path stops at the
/// first action the model refuses, the first the core cannot take (a gap), or the first
/// divergence; every audit judges the history of what ran.
pub(crate) fn drive<S: spec::Spec>(spec: S, actions: &[S::Action]) -> PathRun<S::Action, S::State> {
    let model = spec.model();
    let (mut run, mut state) = PathRun::from_init(&model);
    let mut core = match spec.start_core() {
        Ok(core) => core,
        Err(error) => {
            run.divergence = Some(Divergence {
                step: 0,
                action: "Init".to_string(),
                what: error,
                model_state: spec.describe_model(&model, &state),
                core_state: String::new(),
            });
            return run;
        }
    };
    if let Some(difference) = spec.compare(&core, &model, &state) {
        let model_state = spec.describe_model(&model, &state);
        let core_state = spec.describe_core(&core);
        run.divergence = Some(diverged_with(
            0,
            "Init",
            difference,
            model_state,
            core_state,
        ));
    }
    for (index, &action) in actions.iter().enumerate() {
        if run.divergence.is_some() {
            break;
        }
        let Some(next) = model.next_state(&state, action) else {
            run.refused = Some((index + 1, action));
            break;
        };
        if let Err(why) = spec.takes(&state, &action) {
            run.gap = Some((index + 1, action, why));
            break;
        }
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            spec.apply(&mut core, action)
        }));
        let driven = match outcome {
            Ok(driven) => driven,
            Err(_) => Err("the core panicked".to_string()),
        };
        run.actions_run = index + 1;
        let difference = match driven {
            Err(reason) => Some(Difference {
                variable: format!("the driver: {reason}"),
                model: String::new(),
                core: String::new(),
            }),
            Ok(()) => spec.compare(&core, &model, &next),
        };
        spec.after_step(&mut core);
        if let Some(difference) = difference {
            let model_state = spec.describe_model(&model, &next);
            let core_state = spec.describe_core(&core);
            run.divergence = Some(diverged_with(
                index + 1,
                &action.to_string(),
                difference,
                model_state,
                core_state,
            ));
        }
        state = next;
        run.states.push(state.clone());
    }
    run.violations = felix_audits::audit(&core.env.history).violations;
    run
}

pub(crate) fn diverged_with(
    step: usize,
    action: &str,
    difference: Difference,
    model_state: String,
    core_state: String,
) -> Divergence {
    let what = if difference.model.is_empty() && difference.core.is_empty() {
        difference.variable
    } else {
        format!(
            "{} is {} in the model, {} in the core",
            difference.variable, difference.model, difference.core
        )
    };
    Divergence {
        step,
        action: action.to_string(),
        what,
        model_state,
        core_state,
    }
}
