//! The one registry of both specs' configurations: a name resolves to one configuration of one
//! spec, FelixHeadTrim's first (its short names win where both specs know one, and a bare `Main`
//! is its main configuration).

use crate::check::{self, Progress, Report};
use crate::head_trim::config::Config;
use crate::head_trim::spec::FelixHeadTrim;
use crate::paros::config::ParosConfig;
use crate::paros::spec::ParosTrimJump;
use crate::spec::{Spec, SpecConfig};

/// A configuration of either spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnyConfig {
    /// A FelixHeadTrim configuration.
    HeadTrim(&'static Config),
    /// A ParosTrimJump configuration.
    Paros(&'static ParosConfig),
}

impl AnyConfig {
    /// The configuration's full name, as its `.cfg` file.
    pub fn name(&self) -> &'static str {
        match self {
            AnyConfig::HeadTrim(config) => config.name,
            AnyConfig::Paros(config) => config.name,
        }
    }

    /// Why the search cannot run up to a symmetry of this configuration's spec (`Spec::NO_SYMMETRY`).
    pub fn no_symmetry(&self) -> Option<&'static str> {
        match self {
            AnyConfig::HeadTrim(_) => FelixHeadTrim::NO_SYMMETRY,
            AnyConfig::Paros(_) => ParosTrimJump::NO_SYMMETRY,
        }
    }

    /// Why no sequence diagram can be drawn for this configuration's spec (`Spec::NO_DIAGRAM`).
    pub fn no_diagram(&self) -> Option<&'static str> {
        match self {
            AnyConfig::HeadTrim(_) => FelixHeadTrim::NO_DIAGRAM,
            AnyConfig::Paros(_) => ParosTrimJump::NO_DIAGRAM,
        }
    }

    /// Checks the configuration to completion: Stateright's checker, or with `compact` the lean
    /// search (`check::check_with_progress`, `check::check_compact`). The runner is
    /// instantiated here, in the models' crate, so that their actions inline into the search.
    pub fn check(
        &self,
        threads: usize,
        symmetry: bool,
        compact: bool,
        progress: &mut dyn FnMut(Progress),
    ) -> Report {
        match *self {
            AnyConfig::HeadTrim(config) => run(config, threads, symmetry, compact, progress),
            AnyConfig::Paros(config) => run(config, threads, symmetry, compact, progress),
        }
    }

    /// The spec's name.
    pub fn spec(&self) -> &'static str {
        match self {
            AnyConfig::HeadTrim(_) => FelixHeadTrim::NAME,
            AnyConfig::Paros(_) => ParosTrimJump::NAME,
        }
    }
}

/// Looks a name up in every spec's registry (`Spec::lookup`), FelixHeadTrim's first.
pub fn lookup(name: &str) -> Option<AnyConfig> {
    FelixHeadTrim::lookup(name)
        .map(AnyConfig::HeadTrim)
        .or_else(|| ParosTrimJump::lookup(name).map(AnyConfig::Paros))
}

/// Every configuration name of every spec, for error messages.
pub fn names() -> Vec<&'static str> {
    let mut names = FelixHeadTrim::names();
    names.extend(ParosTrimJump::names());
    names
}

/// One spec's `AnyConfig::check`.
fn run<S: Spec>(
    config: &'static SpecConfig<S>,
    threads: usize,
    symmetry: bool,
    compact: bool,
    progress: &mut dyn FnMut(Progress),
) -> Report {
    if compact {
        check::check_compact(config, threads, symmetry, progress)
    } else {
        check::check_with_progress(config, threads, symmetry, progress)
    }
}
