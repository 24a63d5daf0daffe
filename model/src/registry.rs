//! The one registry of both specs' configurations: a name resolves to one configuration of one
//! spec, FelixHeadTrim's first (its short names win where both specs know one, and a bare `Main`
//! is its main configuration).

use crate::head_trim::config::Config;
use crate::head_trim::spec::FelixHeadTrim;
use crate::paros::config::ParosConfig;
use crate::paros::spec::ParosTrimJump;
use crate::spec::Spec;

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

/// Every spec's main configuration, FelixHeadTrim's first.
pub fn main_configs() -> [AnyConfig; 2] {
    [
        AnyConfig::HeadTrim(FelixHeadTrim::main_config()),
        AnyConfig::Paros(ParosTrimJump::main_config()),
    ]
}
