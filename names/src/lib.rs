//! The names every layer shares: the invariants, the twins, and the invariant each twin must
//! break in each layer (README.md, "Twins and invariants"; docs/invariants.md).
//!
//! This crate has no dependencies, so the core, the audits, the model (which never imports the
//! core) and the CLI all spell a name through it: a typo is a compile error, and a twin or
//! invariant added in one layer but not named here does not build. The strings are the ones
//! TLA+, Stateright, the audits, the docs and every output use; `name` is the only place they
//! are written.

use std::fmt;

/// A property a run or a state graph is judged by. The journal's invariants (one doc line each
/// below), the model's `TypeOK`, and the three findings the simulator reports in the same
/// place as an invariant (`EventBudget`: a run that hit the event budget, a livelock; `Panic`: an
/// assert fired; `TraceValidation`: a step the model cannot make; `Conformance`: a model action
/// the core, driven through it, does not follow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// No committed write or trim from one holder follows a committed write from a newer holder.
    StaleTrimRefused,
    /// The serving leader's floor is always the one its trim records set, deleted ones included.
    FloorRecordKept,
    /// No reader is ever served a record below the floor of a trim acknowledged before the read.
    NoReadBelowFloor,
    /// Every acknowledged write at or above the floor stays in the committed log.
    AckedWritesKept,
    /// No two nodes hold different records at a committed offset.
    CommittedPrefixAgreement,
    /// A node's term (its promise) and vote never go back, jumps included.
    TermNeverDecreases,
    /// Every client folds the same record to the same state.
    FoldAgreement,
    /// Liveness: after faults heal, every live node reaches the committed prefix in time.
    Convergence,
    /// No two nodes become leader in the same term.
    ElectionSafety,
    /// The journal, as its clients see it, is linearizable against its sequential specification.
    Linearizable,
    /// A message that carries a term or a vote leaves a node only once that promise is durable.
    PromiseDurable,
    /// A restarted node's store reads back what its disk held durably plus a prefix of the ops it
    /// took since its last sync: nothing synced lost, nothing durably removed brought back.
    RecoveryFaithful,
    /// A record is first taken as committed only when a majority of the voters hold it durably.
    CommittedDurable,
    /// Along a node's log, from its sealed base on, record terms never decrease.
    LogTermsMonotone,
    /// Liveness, in time: after faults heal, every lagging node catches up and every client with
    /// work gets an answer within a bound derived from the run's own knobs.
    Progress,
    /// Liveness, in the model: a holder whose lease moved eventually retires or never again
    /// lands a record.
    StaleHolderRetires,
    /// The model's (and the TLA+ spec's) type invariant: every variable in its domain.
    TypeOk,
    /// A simulator finding: the run hit its event budget (a livelock).
    EventBudget,
    /// A simulator finding: the core or the simulator panicked (an assert fired).
    Panic,
    /// A trace-validation finding: a step of a simulated run that the model's own actions cannot
    /// make (a divergence of the code from the design).
    TraceValidation,
    /// A conformance finding: the real core, driven through a path of the model's actions, ends
    /// an action in a state other than the model's next state (or cannot be driven to take it).
    Conformance,
}

impl Invariant {
    /// Every name, the journal's invariants first (in the order of the README's tables).
    pub const ALL: [Invariant; 21] = [
        Invariant::StaleTrimRefused,
        Invariant::FloorRecordKept,
        Invariant::NoReadBelowFloor,
        Invariant::AckedWritesKept,
        Invariant::CommittedPrefixAgreement,
        Invariant::TermNeverDecreases,
        Invariant::FoldAgreement,
        Invariant::Convergence,
        Invariant::StaleHolderRetires,
        Invariant::ElectionSafety,
        Invariant::Linearizable,
        Invariant::PromiseDurable,
        Invariant::RecoveryFaithful,
        Invariant::CommittedDurable,
        Invariant::LogTermsMonotone,
        Invariant::Progress,
        Invariant::TypeOk,
        Invariant::EventBudget,
        Invariant::Panic,
        Invariant::TraceValidation,
        Invariant::Conformance,
    ];

    /// The name, exactly as in TLA+, Stateright, the audits, the docs and every output.
    pub const fn name(self) -> &'static str {
        match self {
            Invariant::StaleTrimRefused => "StaleTrimRefused",
            Invariant::FloorRecordKept => "FloorRecordKept",
            Invariant::NoReadBelowFloor => "NoReadBelowFloor",
            Invariant::AckedWritesKept => "AckedWritesKept",
            Invariant::CommittedPrefixAgreement => "CommittedPrefixAgreement",
            Invariant::TermNeverDecreases => "TermNeverDecreases",
            Invariant::FoldAgreement => "FoldAgreement",
            Invariant::Convergence => "Convergence",
            Invariant::ElectionSafety => "ElectionSafety",
            Invariant::Linearizable => "Linearizable",
            Invariant::PromiseDurable => "PromiseDurable",
            Invariant::RecoveryFaithful => "RecoveryFaithful",
            Invariant::CommittedDurable => "CommittedDurable",
            Invariant::LogTermsMonotone => "LogTermsMonotone",
            Invariant::Progress => "Progress",
            Invariant::StaleHolderRetires => "StaleHolderRetires",
            Invariant::TypeOk => "TypeOK",
            Invariant::EventBudget => "EventBudget",
            Invariant::Panic => "Panic",
            Invariant::TraceValidation => "TraceValidation",
            Invariant::Conformance => "Conformance",
        }
    }

    /// The names of `invariants`, in their order: how a list of them is printed or serialized.
    pub fn names(invariants: &[Invariant]) -> Vec<&'static str> {
        invariants
            .iter()
            .map(|invariant| invariant.name())
            .collect()
    }

    /// The invariant with this exact name.
    pub fn parse(text: &str) -> Option<Invariant> {
        Invariant::ALL
            .into_iter()
            .find(|invariant| invariant.name() == text)
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.pad(self.name())
    }
}

impl AsRef<str> for Invariant {
    fn as_ref(&self) -> &str {
        self.name()
    }
}

// Comparisons with names read back from output (JSON, a finding's text, a property's name).
impl PartialEq<str> for Invariant {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for Invariant {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl PartialEq<Invariant> for str {
    fn eq(&self, other: &Invariant) -> bool {
        self == other.name()
    }
}

impl PartialEq<Invariant> for &str {
    fn eq(&self, other: &Invariant) -> bool {
        *self == other.name()
    }
}

impl PartialEq<Invariant> for String {
    fn eq(&self, other: &Invariant) -> bool {
        self == other.name()
    }
}

/// A layer that checks twins. The model and TLA+ share a layer per spec: both explore the same
/// state machine and must agree state for state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// The seeded simulator running the real core (and the scenario driver, over the same code).
    Sim,
    /// FelixHeadTrim: the Stateright model (`model/src/`) and `docs/formal/FelixHeadTrim.tla`.
    HeadTrim,
    /// ParosTrimJump: the Stateright model (`model/src/paros/`) and
    /// `docs/formal/ParosTrimJump.tla`.
    Paros,
    /// Trace validation: the simulator's runs with every step held to a model's actions
    /// (`felix sweep --validate`). Its twins are slips no audit sees (every answer stays right),
    /// so only the model's step-by-step view of the node's state can catch them.
    Validation,
}

impl Layer {
    pub const ALL: [Layer; 4] = [Layer::Sim, Layer::HeadTrim, Layer::Paros, Layer::Validation];

    /// The spec's name (the prefix of its configurations), or `sim`.
    pub const fn name(self) -> &'static str {
        match self {
            Layer::Sim => "sim",
            Layer::HeadTrim => "FelixHeadTrim",
            Layer::Paros => "ParosTrimJump",
            Layer::Validation => "validation",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.pad(self.name())
    }
}

/// A twin: the default configuration with exactly one rule off, by the name every layer uses
/// (`--twin <Name>`, `FelixHeadTrim<Name>.cfg`, `ParosTrimJump<Name>.cfg`). Which layers have it,
/// and what it must break there, is `TwinName::expected`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TwinName {
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
    TagAtFloor,
    VoteBeforePersist,
    UnconfirmedReads,
    StaleVotes,
    LazyCatchUp,
    StaleSuffix,
    EarlyFloor,
    EarlyFence,
}

impl TwinName {
    /// Every twin of every layer, in the order of the README's table.
    pub const ALL: [TwinName; 21] = [
        TwinName::HiddenTrims,
        TwinName::Untagged,
        TwinName::NoopSkip,
        TwinName::Retention,
        TwinName::ReadFromEarliest,
        TwinName::TailFromRefusal,
        TwinName::CompactActive,
        TwinName::JumpResetsTerm,
        TwinName::UnfencedTruncate,
        TwinName::FloorPastCommit,
        TwinName::AckBeforeSync,
        TwinName::LocalReads,
        TwinName::VisibleTrims,
        TwinName::TagAtFloor,
        TwinName::VoteBeforePersist,
        TwinName::UnconfirmedReads,
        TwinName::StaleVotes,
        TwinName::LazyCatchUp,
        TwinName::StaleSuffix,
        TwinName::EarlyFloor,
        TwinName::EarlyFence,
    ];

    /// The name, exactly as every layer and output spells it.
    pub const fn name(self) -> &'static str {
        match self {
            TwinName::HiddenTrims => "HiddenTrims",
            TwinName::Untagged => "Untagged",
            TwinName::NoopSkip => "NoopSkip",
            TwinName::Retention => "Retention",
            TwinName::ReadFromEarliest => "ReadFromEarliest",
            TwinName::TailFromRefusal => "TailFromRefusal",
            TwinName::CompactActive => "CompactActive",
            TwinName::JumpResetsTerm => "JumpResetsTerm",
            TwinName::UnfencedTruncate => "UnfencedTruncate",
            TwinName::FloorPastCommit => "FloorPastCommit",
            TwinName::AckBeforeSync => "AckBeforeSync",
            TwinName::LocalReads => "LocalReads",
            TwinName::VisibleTrims => "VisibleTrims",
            TwinName::TagAtFloor => "TagAtFloor",
            TwinName::VoteBeforePersist => "VoteBeforePersist",
            TwinName::UnconfirmedReads => "UnconfirmedReads",
            TwinName::StaleVotes => "StaleVotes",
            TwinName::LazyCatchUp => "LazyCatchUp",
            TwinName::StaleSuffix => "StaleSuffix",
            TwinName::EarlyFloor => "EarlyFloor",
            TwinName::EarlyFence => "EarlyFence",
        }
    }

    /// The twin with this exact name.
    pub fn parse(text: &str) -> Option<TwinName> {
        TwinName::ALL.into_iter().find(|twin| twin.name() == text)
    }

    /// The invariant this twin must break in `layer`, or `None` where the layer has no such twin
    /// (README.md "Twins and invariants"). One twin breaks different invariants in different
    /// layers: UnfencedTruncate breaks FoldAgreement in the simulator, where clients fold, and
    /// AckedWritesKept in ParosTrimJump, which has no folds.
    pub const fn expected(self, layer: Layer) -> Option<Invariant> {
        use Invariant::*;
        use Layer::*;
        match (self, layer) {
            (
                TwinName::HiddenTrims
                | TwinName::Untagged
                | TwinName::NoopSkip
                | TwinName::Retention
                | TwinName::ReadFromEarliest
                | TwinName::TailFromRefusal
                | TwinName::VisibleTrims,
                Sim | HeadTrim,
            ) => Some(StaleTrimRefused),
            (TwinName::CompactActive, Sim | HeadTrim) => Some(FloorRecordKept),
            (TwinName::LocalReads, Sim | HeadTrim) => Some(NoReadBelowFloor),
            (TwinName::TagAtFloor, HeadTrim) => Some(StaleTrimRefused),
            (TwinName::JumpResetsTerm, Sim | Paros) => Some(TermNeverDecreases),
            (TwinName::UnfencedTruncate, Sim) => Some(FoldAgreement),
            (TwinName::UnfencedTruncate, Paros) => Some(AckedWritesKept),
            (TwinName::FloorPastCommit | TwinName::AckBeforeSync, Sim | Paros) => {
                Some(AckedWritesKept)
            }
            (TwinName::VoteBeforePersist, Sim) => Some(PromiseDurable),
            (TwinName::UnconfirmedReads, Sim) => Some(Linearizable),
            (TwinName::StaleVotes, Sim) => Some(ElectionSafety),
            (TwinName::LazyCatchUp, Sim) => Some(Progress),
            (TwinName::StaleSuffix, Sim) => Some(LogTermsMonotone),
            (TwinName::EarlyFloor | TwinName::EarlyFence, Validation) => Some(TraceValidation),
            _ => None,
        }
    }

    /// Invariants this twin breaks in `layer` at the same depth as its named one, which the
    /// layer's checkers therefore find beside it (`expected` stays the one it is held to).
    /// AckBeforeSync in ParosTrimJump: the leader that acknowledged the lost write still holds
    /// it committed when a new leader commits another record at its slot, so the state that
    /// breaks AckedWritesKept there breaks CommittedPrefixAgreement too (the core does the same).
    pub const fn breaks_beside(self, layer: Layer) -> &'static [Invariant] {
        match (self, layer) {
            (TwinName::AckBeforeSync, Layer::Paros) => &[Invariant::CommittedPrefixAgreement],
            _ => &[],
        }
    }

    /// The invariant this twin must break in `layer`. Panics where the layer has no such twin: a
    /// caller holds a twin of the layer (one of `in_layer`, or parsed by `parse_in`), so that is a
    /// bug of the caller, not an input.
    pub const fn must_break(self, layer: Layer) -> Invariant {
        match self.expected(layer) {
            Some(invariant) => invariant,
            None => panic!("this twin has no switch in this layer"),
        }
    }

    /// The twin `layer` has by this name. A configuration's name names its twin too
    /// (`FelixHeadTrimUntagged`, `ParosTrimJumpAckBeforeSync`).
    pub fn parse_in(layer: Layer, text: &str) -> Option<TwinName> {
        let name = [Layer::HeadTrim, Layer::Paros]
            .into_iter()
            .find_map(|spec| text.strip_prefix(spec.name()))
            .unwrap_or(text);
        TwinName::parse(name).filter(|twin| twin.expected(layer).is_some())
    }

    /// The twins `layer` has, in `ALL` order.
    pub fn in_layer(layer: Layer) -> impl Iterator<Item = TwinName> {
        TwinName::ALL
            .into_iter()
            .filter(move |twin| twin.expected(layer).is_some())
    }
}

impl fmt::Display for TwinName {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are distinct and parse back to themselves; an unknown name parses to nothing.
    #[test]
    fn names_are_distinct_and_parse_back() {
        for invariant in Invariant::ALL {
            assert_eq!(Invariant::parse(invariant.name()), Some(invariant));
            assert_eq!(invariant.to_string(), invariant.name());
        }
        // Tables pad names (`felix twins`): Display honours width and alignment.
        assert_eq!(format!("[{:<8}]", Invariant::Panic), "[Panic   ]");
        assert_eq!(format!("[{:>7}]", TwinName::Untagged), "[Untagged]");
        for twin in TwinName::ALL {
            assert_eq!(TwinName::parse(twin.name()), Some(twin));
        }
        let mut invariants: Vec<_> = Invariant::ALL.iter().map(|i| i.name()).collect();
        invariants.sort_unstable();
        invariants.dedup();
        assert_eq!(invariants.len(), Invariant::ALL.len());
        let mut twins: Vec<_> = TwinName::ALL.iter().map(|t| t.name()).collect();
        twins.sort_unstable();
        twins.dedup();
        assert_eq!(twins.len(), TwinName::ALL.len());
        assert_eq!(Invariant::parse("Stale"), None);
        assert_eq!(TwinName::parse("hiddentrims"), None);
    }

    /// Every twin lives in at least one layer and breaks an invariant of the journal there (never
    /// a simulator finding or the type invariant); the table's counts per layer hold.
    #[test]
    fn every_twin_breaks_a_journal_invariant_somewhere() {
        for twin in TwinName::ALL {
            let layers: Vec<_> = Layer::ALL
                .into_iter()
                .filter_map(|layer| twin.expected(layer))
                .collect();
            assert!(!layers.is_empty(), "{twin}");
            // The validation layer's twins break no audit: trace validation is their judge.
            if twin.expected(Layer::Validation).is_some() {
                assert_eq!(layers, [Invariant::TraceValidation], "{twin}");
                continue;
            }
            for invariant in layers {
                assert!(
                    !matches!(
                        invariant,
                        Invariant::TypeOk
                            | Invariant::EventBudget
                            | Invariant::Panic
                            | Invariant::TraceValidation
                            | Invariant::Conformance
                    ),
                    "{twin}: {invariant}"
                );
            }
        }
        assert_eq!(TwinName::in_layer(Layer::Sim).count(), 18);
        assert_eq!(TwinName::in_layer(Layer::HeadTrim).count(), 10);
        assert_eq!(TwinName::in_layer(Layer::Paros).count(), 4);
        assert_eq!(TwinName::in_layer(Layer::Validation).count(), 2);
        assert_eq!(
            TwinName::UnfencedTruncate.expected(Layer::Sim),
            Some(Invariant::FoldAgreement)
        );
        assert_eq!(
            TwinName::UnfencedTruncate.expected(Layer::Paros),
            Some(Invariant::AckedWritesKept)
        );
        assert_eq!(TwinName::TagAtFloor.expected(Layer::Sim), None);
        assert_eq!(
            TwinName::FloorPastCommit.must_break(Layer::Sim),
            Invariant::AckedWritesKept
        );
    }

    /// A layer's twin parses by its name or its configuration's; another layer's does not.
    #[test]
    fn a_layer_parses_only_its_own_twins() {
        for layer in Layer::ALL {
            for twin in TwinName::in_layer(layer) {
                assert_eq!(TwinName::parse_in(layer, twin.name()), Some(twin));
                let config = format!("FelixHeadTrim{twin}");
                assert_eq!(TwinName::parse_in(layer, &config), Some(twin));
            }
        }
        assert_eq!(TwinName::parse_in(Layer::Sim, "TagAtFloor"), None);
        assert_eq!(TwinName::parse_in(Layer::Sim, "EarlyFloor"), None);
        assert_eq!(
            TwinName::parse_in(Layer::Validation, "EarlyFence"),
            Some(TwinName::EarlyFence)
        );
        assert_eq!(
            TwinName::parse_in(Layer::HeadTrim, "TagAtFloor"),
            Some(TwinName::TagAtFloor)
        );
        assert_eq!(TwinName::parse_in(Layer::Sim, "NoSuchTwin"), None);
        assert_eq!(TwinName::parse_in(Layer::Sim, "FelixHeadTrim"), None);
    }

    /// A name compares equal to its text from either side, and to nothing else.
    #[test]
    fn an_invariant_compares_with_its_text() {
        assert!(Invariant::TypeOk == "TypeOK");
        assert!("FoldAgreement" == Invariant::FoldAgreement);
        let found: String = ["Pa", "nic"].concat();
        assert!(found == Invariant::Panic);
        assert!(Invariant::Panic != "EventBudget");
    }
}
