//! Counterexamples first: every twin's shortest counterexample run on the core, once with the
//! twin's rule off in the core too, once with every rule on; for FelixHeadTrim (`conform_twin`)
//! and ParosTrimJump (`conform_paros_twin`).
//!
//! The path is the model's shortest counterexample when the core can take every step of it
//! (`Spec::takes`); otherwise the shortest counterexample whose every step the core can take
//! (`search::shortest_followable`: a breadth-first search of the twin's model that never takes a
//! step the core cannot), and the row says so. With the rule off, the core must break the twin's
//! named invariant on that path (the audits judge the scripted history). With every rule on, the
//! path is held to the model of the twin's base configuration: it runs until that model refuses an
//! action (the rule's own effect: a retired holder does not write) or the core refuses one it
//! checks earlier than the model (a gap, named), and what ran must neither diverge nor break an
//! invariant.

use super::search::{
    followable, shortest_followable, shortest_followable_within, shortest_in_model, Found,
};
use super::spec::{HeadTrim, OnCore, Paros, Spec};
use super::{PathRun, Segments};
use felix_core::rules::{Invariant, Layer, TwinName};
use felix_core::Rules;
use felix_model::check::shortest_counterexample_actions;
use felix_model::head_trim::config::Config;
use felix_model::head_trim::spec::{Action, FelixHeadTrim, State};
use felix_model::paros::config::ParosConfig;
use felix_model::spec::{Spec as ModelSpec, SpecConfig};

/// One twin's counterexample on the core.
#[derive(Clone, Debug)]
pub struct TwinConform<A = Action, S = State> {
    /// The twin's configuration.
    pub config: &'static str,
    /// The twin.
    pub twin: TwinName,
    /// The invariant it must break in the model's layer.
    pub expected: Invariant,
    /// The length of the model's own shortest counterexample.
    pub model_shortest: usize,
    /// The path run on the core: the model's shortest counterexample, or the shortest the core can
    /// follow.
    pub path: Vec<A>,
    /// The passing configuration whose bounds the path was found in, where the twin's own bounds
    /// hold none the core can follow (None: the twin's own bounds).
    pub bounds_of: Option<&'static str>,
    /// The path on the core with the twin's rule off; None when the core has no such switch.
    pub with_twin: Option<PathRun<A, S>>,
    /// The path on the core with every rule on, held to the base configuration's model.
    pub every_rule_on: PathRun<A, S>,
    /// Why the twin's half cannot break the invariant on the core, where it cannot (a known gap
    /// between the model and the core, never a pass).
    pub gap: Option<String>,
}

impl<A, S> TwinConform<A, S> {
    /// The core with the twin broke the named invariant, and neither diverged from the twin's
    /// model nor stopped at a gap on the way (None: no core switch, nothing to judge).
    pub fn twin_ok(&self) -> Option<bool> {
        self.with_twin.as_ref().map(|run| {
            run.divergence.is_none() && run.gap.is_none() && run.broken().contains(&self.expected)
        })
    }

    /// Every rule on: no divergence and no violation.
    pub fn control_ok(&self) -> bool {
        self.every_rule_on.divergence.is_none() && self.every_rule_on.violations.is_empty()
    }

    /// Both halves as expected (a twin without a core switch is judged on its control only).
    pub fn ok(&self) -> bool {
        self.twin_ok() != Some(false) && self.control_ok()
    }
}

/// A twin configuration as its spec's registry gives it: the twin, the invariant it must break in
/// its spec's layer, and the passing configuration its row's control runs under.
struct Twin<M: ModelSpec> {
    config: &'static SpecConfig<M>,
    twin: TwinName,
    expected: Invariant,
    base: &'static SpecConfig<M>,
}

impl<M: ModelSpec> Twin<M>
where
    OnCore<M>: Spec<Action = M::Action, State = M::State>,
{
    fn of(config: &'static SpecConfig<M>) -> Result<Twin<M>, String> {
        let twin = config
            .twin
            .ok_or_else(|| format!("{} is not a twin", config.name))?;
        let base = config
            .base
            .and_then(M::lookup)
            .ok_or_else(|| format!("{} has no base configuration", config.name))?;
        Ok(Twin {
            config,
            twin,
            expected: twin.must_break(M::LAYER),
            base,
        })
    }

    /// The twin's row: `path` (the model's shortest counterexample is `model_shortest` long) with
    /// its run with the twin's rule off, and its control: `path` on the core with every rule on,
    /// held to the base configuration's model.
    fn row(
        self,
        model_shortest: usize,
        path: Vec<M::Action>,
        bounds_of: Option<&'static str>,
        with_twin: Option<PathRun<M::Action, M::State>>,
        gap: Option<String>,
    ) -> TwinConform<M::Action, M::State> {
        let every_rule_on = OnCore {
            config: self.base,
            rules: Rules::default(),
            segments: Segments::Model,
        }
        .run(&path);
        TwinConform {
            config: self.config.name,
            twin: self.twin,
            expected: self.expected,
            model_shortest,
            path,
            bounds_of,
            with_twin,
            every_rule_on,
            gap,
        }
    }
}

/// The path for a twin: the model's own shortest counterexample if the core can follow it, else
/// the shortest one it can; with the gap when there is none.
fn path_for<S: Spec>(
    spec: S,
    invariant: Invariant,
    model_path: Vec<S::Action>,
) -> (Vec<S::Action>, Option<String>) {
    if followable(spec, &model_path) {
        return (model_path, None);
    }
    match shortest_followable(spec, invariant) {
        Found::Path(path) => (path, None),
        Found::None(states) => (
            model_path,
            Some(format!(
                "no counterexample the core can follow: every one of the {states} states reached \
                 by steps the core can take keeps {invariant}"
            )),
        ),
        Found::TooMany => (
            model_path,
            Some(format!(
                "no counterexample the core can follow within {} states",
                super::search::STATES_MAX
            )),
        ),
    }
}

/// Runs one FelixHeadTrim twin's counterexample on the core.
pub fn conform_twin(config: &'static Config) -> Result<TwinConform, String> {
    let mut twin = Twin::of(config)?;
    let expected = twin.expected;
    let model_path = shortest_counterexample_actions(config, expected)
        .ok_or_else(|| format!("{} has no counterexample to {expected}", config.name))?;
    let switch = twin.twin.expected(Layer::Sim).is_some();
    let rules = if switch {
        Rules::twin(twin.twin)
    } else {
        Rules::default()
    };
    let spec = HeadTrim {
        config,
        rules,
        segments: Segments::Model,
    };
    let model_shortest = model_path.len();
    let (mut path, mut gap) = path_for(spec, expected, model_path);
    let (mut spec, mut bounds_of) = (spec, None);
    if gap.is_some() {
        if let Some((other, other_path)) = followable_in_other_bounds(config, rules, expected) {
            spec.config = leak_with_bounds(config, other);
            (path, gap, twin.base, bounds_of) = (other_path, None, other, Some(other.name));
        }
    }
    let with_twin = switch.then(|| spec.run(&path));
    Ok(twin.row(model_shortest, path, bounds_of, with_twin, gap))
}

/// `twin` (the rule it switches off, and so what it must break) with `other`'s bounds, based on
/// `other`. Leaked: a model's configuration is `'static`, and this is built at most once per
/// passing configuration for a twin whose own bounds hold no path the core can follow.
fn leak_with_bounds(twin: &'static Config, other: &'static Config) -> &'static Config {
    Box::leak(Box::new(Config {
        base: Some(other.name),
        bounds: other.bounds,
        ..*twin
    }))
}

/// Where a twin's own bounds hold no counterexample the core can follow: the shortest one under
/// the bounds of any passing configuration (the first in the registry's order among the
/// shortest), with that configuration. The twin's rule and invariant are the same; only the
/// bounds grow, so the path still shows the twin's rule off, in a world the core can reach.
fn followable_in_other_bounds(
    twin: &'static Config,
    rules: Rules,
    expected: Invariant,
) -> Option<(&'static Config, Vec<Action>)> {
    let mut best: Option<(&'static Config, Vec<Action>)> = None;
    for other in FelixHeadTrim::configs() {
        if other.twin.is_some() || other.bounds == twin.bounds {
            continue;
        }
        let spec = HeadTrim {
            config: leak_with_bounds(twin, other),
            rules,
            segments: Segments::Model,
        };
        // Only a strictly shorter path can win: no need to search deeper than that.
        let steps_max = best
            .as_ref()
            .map_or(usize::MAX, |(_, path)| path.len().saturating_sub(1));
        if let Found::Path(path) = shortest_followable_within(spec, expected, steps_max) {
            best = Some((other, path));
        }
    }
    best
}

/// A ParosTrimJump twin whose core switch cannot break the model's named invariant on any of the
/// model's paths, why, and what the core must break on the path instead (None: it must hold).
pub struct KnownGap {
    pub twin: TwinName,
    pub why: &'static str,
    pub breaks_instead: Option<Invariant>,
}

/// The known gaps between ParosTrimJump's twins and the core's switches: none today
/// (AckBeforeSync was one until the model had crashes and durability).
pub const PAROS_GAPS: [KnownGap; 0] = [];

/// The ParosTrimJump row type.
pub type ParosTwinConform =
    TwinConform<felix_model::paros::spec::Action, felix_model::paros::spec::State>;

/// Runs one ParosTrimJump twin's counterexample on the core.
pub fn conform_paros_twin(config: &'static ParosConfig) -> Result<ParosTwinConform, String> {
    let twin = Twin::of(config)?;
    let expected = twin.expected;
    let spec = Paros {
        config,
        rules: Rules::twin(twin.twin),
        segments: Segments::Model,
    };
    let model_path = match shortest_in_model(spec, expected) {
        Found::Path(path) => path,
        _ => {
            return Err(format!(
                "{} has no counterexample to {expected}",
                config.name
            ))
        }
    };
    let model_shortest = model_path.len();
    let (path, mut gap) = path_for(spec, expected, model_path);
    let with_twin = spec.run(&path);
    // A known gap stands only where the twin's half ran whole, without breaking the named
    // invariant, and broke exactly what the gap says it breaks instead.
    if let Some(known) = PAROS_GAPS.iter().find(|known| known.twin == twin.twin) {
        let broken = with_twin.broken();
        if gap.is_none()
            && with_twin.divergence.is_none()
            && with_twin.gap.is_none()
            && with_twin.actions_run == path.len()
            && broken.iter().copied().eq(known.breaks_instead)
        {
            gap = Some(known.why.to_string());
        }
    }
    Ok(twin.row(model_shortest, path, None, Some(with_twin), gap))
}
