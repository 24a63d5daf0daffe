//! Counterexamples first: every FelixHeadTrim twin's shortest counterexample run on the core,
//! once with the twin's rule off in the core too, once with every rule on.
//!
//! With the rule off, the core must break the twin's named invariant on that path (the audits
//! judge the scripted history). With every rule on, the path is held to the model of the twin's
//! base configuration: it runs until that model refuses an action (the rule's own effect: a
//! retired holder does not write), and what ran must neither diverge nor break an invariant.

use super::{run_path, PathRun};
use felix_core::rules::{Invariant, Layer, TwinName};
use felix_core::Rules;
use felix_model::check::shortest_counterexample_actions;
use felix_model::config::{self, Config};
use felix_model::spec::Action;

/// One twin's counterexample on the core.
#[derive(Clone, Debug)]
pub struct TwinConform {
    /// The twin's configuration.
    pub config: &'static Config,
    /// The twin.
    pub twin: TwinName,
    /// The invariant it must break (the same in the model and the simulator).
    pub expected: Invariant,
    /// The model's shortest counterexample.
    pub path: Vec<Action>,
    /// The path on the core with the twin's rule off; None when the core has no such switch.
    pub with_twin: Option<PathRun>,
    /// The path on the core with every rule on, held to the base configuration's model.
    pub every_rule_on: PathRun,
}

impl TwinConform {
    /// The core with the twin broke the named invariant, and did not diverge from the twin's
    /// model on the way (None: no core switch, nothing to judge).
    pub fn twin_ok(&self) -> Option<bool> {
        self.with_twin
            .as_ref()
            .map(|run| run.divergence.is_none() && run.broken().contains(&self.expected.name()))
    }

    /// Every rule on: no divergence and no violation.
    pub fn control_ok(&self) -> bool {
        self.every_rule_on.divergence.is_none() && self.every_rule_on.violations.is_empty()
    }

    /// The one known gap between the model and the core, when it is what stopped the twin's
    /// half: a divergence after a `Retain`. The model's `Retain` may delete the segment that
    /// holds a log's last record; the core's retention never deletes that segment, so the
    /// holder's next read sees a record the model deleted, and the path cannot be followed.
    pub fn gap(&self) -> Option<&'static str> {
        let run = self.with_twin.as_ref()?;
        let divergence = run.divergence.as_ref()?;
        let before = divergence.step.saturating_sub(1).min(self.path.len());
        self.path[..before]
            .iter()
            .any(|action| matches!(action, Action::Retain(_)))
            .then_some(
                "the model's Retain deleted the segment holding the log's last record; the \
                 core's retention never deletes that segment, so the next read differs",
            )
    }

    /// Both halves as expected (a twin without a core switch is judged on its control only).
    pub fn ok(&self) -> bool {
        self.twin_ok() != Some(false) && self.control_ok()
    }
}

/// Runs one FelixHeadTrim twin's counterexample on the core.
pub fn conform_twin(config: &'static Config) -> Result<TwinConform, String> {
    let twin = config
        .twin
        .ok_or_else(|| format!("{} is not a twin", config.name))?;
    let expected = twin.must_break(Layer::HeadTrim);
    let path = shortest_counterexample_actions(config, expected.name())
        .ok_or_else(|| format!("{} has no counterexample to {expected}", config.name))?;
    let base = config
        .base
        .and_then(config::lookup)
        .ok_or_else(|| format!("{} has no base configuration", config.name))?;
    let with_twin = twin
        .expected(Layer::Sim)
        .map(|_| run_path(config, Rules::twin(twin), &path));
    let every_rule_on = run_path(base, Rules::default(), &path);
    Ok(TwinConform {
        config,
        twin,
        expected,
        path,
        with_twin,
        every_rule_on,
    })
}
