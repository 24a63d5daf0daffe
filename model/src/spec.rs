//! The one interface both specs give the runner, the registry and the trace renderer.
//!
//! A spec is a Stateright `Model` built from a configuration (`SpecConfig`: its bounds, and the
//! twin it is if any, which says what it is expected to do), with its invariants and `sometimes`
//! checks named in the model's order and its state rendered as TLC prints it. FelixHeadTrim
//! (`crate::head_trim`) and ParosTrimJump (`crate::paros`) each implement it; `crate::check` runs
//! either, monomorphized.

use std::fmt;
use std::hash::Hash;

use felix_names::{Invariant, TwinName};
use stateright::{Model, Property};

/// A spec: a model of one configuration, with its registry of configurations.
pub trait Spec:
    Model<
        State: Hash + Eq + Clone + fmt::Debug + Send + Sync + 'static,
        Action: Clone + PartialEq + fmt::Debug + fmt::Display + Send + Sync,
    > + Send
    + Sync
    + 'static
{
    /// The constants of a configuration (TLA+ CONSTANTS).
    type Bounds: Constants + Copy + fmt::Debug + PartialEq + Eq + Send + Sync + 'static;

    /// The layer its twins belong to (`felix_names::TwinName::expected`).
    const LAYER: felix_names::Layer;
    /// The spec's name: its TLA+ module, and the prefix of every configuration's name (its
    /// layer's name).
    const NAME: &'static str = Self::LAYER.name();
    /// Whether a bare `Main` names this spec's main configuration (one spec only may say so).
    const MAIN_ALIAS: bool;
    /// Why the search cannot run up to a symmetry of this spec, or `None` if it can.
    const NO_SYMMETRY: Option<&'static str>;
    /// Why no `--html` diagram can be drawn for this spec, or `None` if one can.
    const NO_DIAGRAM: Option<&'static str>;
    /// The `always` properties (the invariants), in the order the model declares them. An
    /// invariant's name is its TLA+ name, its audit's name and the docs' name (one name each).
    const ALWAYS: &'static [(Invariant, Condition<Self>)];
    /// The `sometimes` properties (coverage: states that show the invariants are not vacuous),
    /// in the order the model declares them. TLC has no `sometimes`: these exist only here, as
    /// state predicates over the spec's variables. No variable records why a state came about
    /// (why a holder retired, say): one would split states and break the count equality with TLC.
    const SOMETIMES: &'static [(&'static str, Condition<Self>)];

    /// Every configuration (one per `.cfg` file), passing ones first, then the twins.
    fn configs() -> &'static [SpecConfig<Self>];

    /// The model of a configuration; with `symmetry`, searched up to the spec's symmetry (only
    /// asked where `NO_SYMMETRY` is `None`).
    fn model(config: &'static SpecConfig<Self>, symmetry: bool) -> Self;

    /// A state's variables as TLC prints them, in the spec's order.
    fn variables(config: &SpecConfig<Self>, state: &Self::State) -> Vec<(&'static str, Rendered)>;

    /// Looks a configuration up by its full name or its name without the spec's prefix (and
    /// `Main` where `MAIN_ALIAS`).
    fn lookup(name: &str) -> Option<&'static SpecConfig<Self>> {
        if name.is_empty() {
            return None;
        }
        Self::configs().iter().find(|config| {
            config.name == name
                || config.name.strip_prefix(Self::NAME) == Some(name)
                || (Self::MAIN_ALIAS && config.name == Self::NAME && name == "Main")
        })
    }

    /// Every configuration name, for error messages.
    fn names() -> Vec<&'static str> {
        Self::configs().iter().map(|config| config.name).collect()
    }

    /// The twins, in registry order.
    fn twins() -> impl Iterator<Item = &'static SpecConfig<Self>> {
        Self::configs()
            .iter()
            .filter(|config| config.expected_violation().is_some())
    }

    /// The main configuration.
    fn main_config() -> &'static SpecConfig<Self> {
        &Self::configs()[0]
    }

    /// The invariants, in the model's order.
    fn invariants() -> impl Iterator<Item = Invariant> {
        Self::ALWAYS.iter().map(|&(invariant, _)| invariant)
    }

    /// The `sometimes` properties' names, in the model's order.
    fn coverage() -> impl Iterator<Item = &'static str> {
        Self::SOMETIMES.iter().map(|&(name, _)| name)
    }

    /// Every property of the model (its `Model::properties`): the `always` ones, then the
    /// `sometimes`, each in the model's order (the order the checkers report a state that breaks
    /// two in).
    fn every_property() -> Vec<Property<Self>> {
        let always = Self::ALWAYS
            .iter()
            .map(|&(invariant, condition)| Property::always(invariant.name(), condition));
        let sometimes = Self::SOMETIMES
            .iter()
            .map(|&(name, condition)| Property::sometimes(name, condition));
        always.chain(sometimes).collect()
    }
}

/// A spec's bounds as TLA+ names them: the CONSTANTS of its `.cfg` files.
pub trait Constants {
    /// Every constant as `(TLA+ name, value)`, in the `.cfg` files' order.
    fn constants(&self) -> Vec<(&'static str, u8)>;
}

/// A property's condition: a predicate over a model's state.
pub type Condition<M> = fn(&M, &<M as Model>::State) -> bool;

/// A table of the invariants' conditions, in the order the model declares them.
pub type Invariants<M, const N: usize> = [(Invariant, Condition<M>); N];

/// A table of named coverage conditions (`sometimes`), in the order the model declares them.
pub type Conditions<M, const N: usize> = [(&'static str, Condition<M>); N];

/// One configuration of a spec: a `.cfg` file.
pub struct SpecConfig<S: Spec> {
    /// Full name, as the `.cfg` file (without the extension).
    pub name: &'static str,
    /// For a twin, the configuration it is one switch away from.
    pub base: Option<&'static str>,
    /// The bounds.
    pub bounds: S::Bounds,
    /// For a twin, its name in every layer (`felix-names`): the one rule switched off, and what it
    /// must break (`expected_violation`). A passing configuration has every rule on, holds every
    /// invariant, and has its distinct-state count pinned when small enough for a test.
    pub twin: Option<TwinName>,
}

impl<S: Spec> SpecConfig<S> {
    /// A passing configuration: `bounds`, every rule on.
    pub const fn passing(name: &'static str, bounds: S::Bounds) -> SpecConfig<S> {
        SpecConfig {
            name,
            base: None,
            bounds,
            twin: None,
        }
    }

    /// A twin: `base` with the one rule `twin` names switched off; it must break what
    /// `felix-names` says it breaks in the spec's layer.
    pub const fn twin(name: &'static str, twin: TwinName, base: &SpecConfig<S>) -> SpecConfig<S> {
        if twin.expected(S::LAYER).is_none() {
            panic!("a twin without an invariant in its spec's layer");
        }
        SpecConfig {
            name,
            base: Some(base.name),
            bounds: base.bounds,
            twin: Some(twin),
        }
    }

    /// Whether this configuration is the twin `twin`: the rule it names is off. The model reads
    /// its rules as the TLA+ spec does, each a boolean constant named for the twin that switches
    /// it off (`IF HiddenTrims THEN ...` is `if config.is_twin(HiddenTrims)`).
    pub fn is_twin(&self, twin: TwinName) -> bool {
        self.twin == Some(twin)
    }

    /// The rule switches as the `.cfg` files declare them: every twin of the spec's layer, by
    /// name, in `felix-names`' order, `TRUE` only for this configuration's own twin.
    pub fn switch_constants(&self) -> Vec<(&'static str, bool)> {
        TwinName::in_layer(S::LAYER)
            .map(|twin| (twin.name(), self.is_twin(twin)))
            .collect()
    }

    /// The invariant a twin must break, or `None` for a passing configuration.
    pub fn expected_violation(&self) -> Option<Invariant> {
        self.twin.and_then(|twin| twin.expected(S::LAYER))
    }

    /// The name without the spec's prefix (`Main` for the main configuration).
    pub fn short_name(&self) -> &'static str {
        match self.name.strip_prefix(S::NAME) {
            Some("") | None => "Main",
            Some(rest) => rest,
        }
    }
}

impl<S: Spec> Clone for SpecConfig<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: Spec> Copy for SpecConfig<S> {}

impl<S: Spec> PartialEq for SpecConfig<S> {
    fn eq(&self, other: &Self) -> bool {
        (self.name, self.base, self.twin) == (other.name, other.base, other.twin)
            && self.bounds == other.bounds
    }
}

impl<S: Spec> Eq for SpecConfig<S> {}

impl<S: Spec> fmt::Debug for SpecConfig<S> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("SpecConfig")
            .field("name", &self.name)
            .field("base", &self.base)
            .field("bounds", &self.bounds)
            .field("twin", &self.twin)
            .finish()
    }
}

/// A variable's value as TLC prints it: a scalar, or a function over 1..n (printed as a tuple),
/// kept per component so a trace can name only the components a step changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rendered {
    /// A number or a boolean.
    Scalar(String),
    /// `f[1], f[2], ...`.
    Function(Vec<String>),
}

impl fmt::Display for Rendered {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rendered::Scalar(value) => write!(formatter, "{value}"),
            Rendered::Function(values) => write!(formatter, "<<{}>>", values.join(", ")),
        }
    }
}

/// A function over 1..n whose components print with `Display`.
pub(crate) fn function<T: fmt::Display>(values: &[T]) -> Rendered {
    Rendered::Function(values.iter().map(T::to_string).collect())
}

/// A function over 1..n of booleans, as TLC prints them.
pub(crate) fn booleans(values: &[bool]) -> Rendered {
    Rendered::Function(
        values
            .iter()
            .map(|&value| if value { "TRUE" } else { "FALSE" }.to_string())
            .collect(),
    )
}
