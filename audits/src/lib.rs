//! Felix audits: one module per invariant, each a pure function from a run's history to the
//! violations it finds.
//!
//! # The history model
//!
//! A run's history is the `Vec<felix_core::history::Event>` the driver records, in the order
//! things happened. Nodes (brokers and replicas) contribute what they did to their own state
//! (`PromiseChanged`, `Committed`, `FloorApplied`, `SegmentsDeleted`, `Jumped`, sampled
//! `NodeState`s, crashes and restarts); the driver adds what clients saw (`Requested`, `Replied`,
//! `HolderRetired`, `Gap`, `Folded`, `CheckpointRestored`) and the run's phase markers
//! (`PhaseChanged`). An audit never sees the simulator, only this list: the *step* of a violation
//! is the index of the event at which it was detected, so a failing seed points at one line of
//! its trace.
//!
//! The cluster's *committed log* is reconstructed from `Committed` events: the record at offset
//! `o` is the one in the first `Committed` event for `o` (any node). A later, different commit at
//! the same offset is CommittedPrefixAgreement's business; every other audit reads the first.
//!
//! # Unknown, never failed
//!
//! A client whose request timed out, whose reply was dropped, or whose broker crashed never learns
//! the outcome: the history simply has no `Replied` for it. Audits treat such an operation as
//! *unknown*: it may or may not have landed, and either is correct. Only an acknowledgement
//! (`Replied` with `Appended`) is a promise an audit holds the cluster to; a refusal is a promise
//! that nothing was written, and a missing reply promises nothing.
//!
//! # What the audits need from the driver
//!
//! - `Committed` events on (`BrokerConfig::observe_commits`): the committed log is built from
//!   them; without them most audits have nothing to judge.
//! - A node's `Committed` for a trim before the `FloorApplied` it causes, and both before any
//!   `NodeState` that shows the new floor (the broker's output order; the driver keeps it).
//! - A `NodeState` of a node after each step that changed it (at least: floors, leadership,
//!   promises), and one of every live node right before `PhaseChanged { phase: End }`.
//! - `Requested` for every read sent (NoReadBelowFloor matches replies to them), and `Replied`
//!   for every reply a client received, in the order received.
//!
//! # Cost
//!
//! The simulator runs every audit on every seed of a sweep, so each audit is one or two linear
//! passes with `BTreeMap`/`Vec` state (O(n log n) at worst), never a scan per event. Nothing here
//! iterates a `HashMap`, so the report is deterministic.
//!
//! # Entry points
//!
//! `audit(&history) -> Report` runs every invariant a history alone can judge (Progress and
//! CommittedDurable need times or voters: `felix_sim::judge`) and the coverage counters (among them
//! `history_checked`/`history_unchecked`: whether the Linearizable checker settled the history
//! within its budget; its sequential specification is tabled in `linearizable`'s doc); `INVARIANTS`
//! lists the invariant names (the same names as in TLA+, Stateright, twins and docs); each module's
//! `check` is public for callers that want one invariant. `synthetic::correct_history` draws
//! correct histories from a trivial reference cluster (property tests, `examples/audit_bench.rs`).

pub mod acked_writes_kept;
pub mod committed_durable;
pub mod committed_prefix_agreement;
pub mod convergence;
pub mod counter;
pub mod coverage;
pub mod election_safety;
pub mod floor_record_kept;
pub mod fnv;
pub mod fold_agreement;
pub mod linearizable;
pub mod log;
pub mod log_terms;
pub mod log_terms_monotone;
pub mod no_read_below_floor;
pub mod probes;
pub mod progress;
pub mod promise_durable;
pub mod recovery_faithful;
pub mod splitmix;
pub mod stale_trim_refused;
pub mod synthetic;
pub mod term_never_decreases;
pub mod validated;
pub mod witness;

pub use counter::{Counter, Counts};
pub use coverage::{coverage, Coverage};
pub use validated::Validated;

use felix_core::api::ClientId;
use felix_core::history::Event;
use serde::Serialize;
use std::fmt;

pub use felix_names::Invariant;

/// Each invariant the audits judge (`felix-names` spells it for TLA+, Stateright, the docs and
/// `TwinName::expected`).
pub const STALE_TRIM_REFUSED: Invariant = Invariant::StaleTrimRefused;
pub const FLOOR_RECORD_KEPT: Invariant = Invariant::FloorRecordKept;
pub const NO_READ_BELOW_FLOOR: Invariant = Invariant::NoReadBelowFloor;
pub const ACKED_WRITES_KEPT: Invariant = Invariant::AckedWritesKept;
pub const COMMITTED_PREFIX_AGREEMENT: Invariant = Invariant::CommittedPrefixAgreement;
pub const TERM_NEVER_DECREASES: Invariant = Invariant::TermNeverDecreases;
pub const FOLD_AGREEMENT: Invariant = Invariant::FoldAgreement;
pub const CONVERGENCE: Invariant = Invariant::Convergence;
pub const ELECTION_SAFETY: Invariant = Invariant::ElectionSafety;
pub const LINEARIZABLE: Invariant = Invariant::Linearizable;
pub const PROMISE_DURABLE: Invariant = Invariant::PromiseDurable;
pub const RECOVERY_FAITHFUL: Invariant = Invariant::RecoveryFaithful;
pub const COMMITTED_DURABLE: Invariant = Invariant::CommittedDurable;
pub const LOG_TERMS_MONOTONE: Invariant = Invariant::LogTermsMonotone;
pub const PROGRESS: Invariant = Invariant::Progress;

/// Every invariant the audits judge, in `Invariant::ALL` order.
pub const INVARIANTS: [Invariant; 15] = [
    STALE_TRIM_REFUSED,
    FLOOR_RECORD_KEPT,
    NO_READ_BELOW_FLOOR,
    ACKED_WRITES_KEPT,
    COMMITTED_PREFIX_AGREEMENT,
    TERM_NEVER_DECREASES,
    FOLD_AGREEMENT,
    CONVERGENCE,
    ELECTION_SAFETY,
    LINEARIZABLE,
    PROMISE_DURABLE,
    RECOVERY_FAITHFUL,
    COMMITTED_DURABLE,
    LOG_TERMS_MONOTONE,
    PROGRESS,
];

/// One broken invariant, found at one event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The invariant, one of `INVARIANTS` (serialized as its name).
    #[serde(serialize_with = "serialize_name")]
    pub invariant: Invariant,
    /// The index in the history of the event at which the violation was detected.
    pub step: usize,
    /// What happened, in a sentence naming the nodes, clients and offsets involved. Other events
    /// it names are `step_ref`s: read it through `render` or `text`.
    pub message: String,
    /// The clients the sentence names, as data (a "why" keeps their events and leaves out the
    /// other clients'); empty where the violation names none.
    pub clients: Vec<ClientId>,
}

/// Opens and closes a `step_ref` inside a message (characters no sentence of the audits uses).
const STEP_OPEN: char = '\u{27e6}';
const STEP_CLOSE: char = '\u{27e7}';

/// A reference to history event `index` inside a violation's message, read "step N". The audits
/// see only the history, so they name an event by its index there; whoever maps history events to
/// trace steps (the simulator's judge, `felix history check`, the nemesis) renders the reference as
/// that event's trace step (`Violation::render`), so that the message names the same step as the
/// summary, `trace show`, the JSONL and the page. Unmapped (`Violation::text`, `Display`), N is
/// the history index, the audits' own numbering.
pub fn step_ref(index: usize) -> String {
    format!("step {STEP_OPEN}{index}{STEP_CLOSE}")
}

/// `message` with every `step_ref` in it rendered through `step` (history index to step).
pub fn render_steps(message: &str, step: &dyn Fn(usize) -> u64) -> String {
    let mut text = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find(STEP_OPEN) {
        text.push_str(&rest[..open]);
        let after = &rest[open + STEP_OPEN.len_utf8()..];
        let Some(close) = after.find(STEP_CLOSE) else {
            break;
        };
        match after[..close].parse::<usize>() {
            Ok(index) => text.push_str(&step(index).to_string()),
            Err(_) => text.push_str(&after[..close]),
        }
        rest = &after[close + STEP_CLOSE.len_utf8()..];
    }
    text.push_str(rest);
    text
}

impl Violation {
    /// The message with its step references rendered through `step` (history index to trace
    /// step); see `step_ref`.
    pub fn render(&self, step: &dyn Fn(usize) -> u64) -> String {
        render_steps(&self.message, step)
    }

    /// The message in the history's own numbering (each step reference is a history index).
    pub fn text(&self) -> String {
        self.render(&|index| index as u64)
    }

    pub fn new(invariant: Invariant, step: usize, message: String) -> Violation {
        assert!(
            INVARIANTS.contains(&invariant),
            "unknown invariant {invariant}"
        );
        Violation {
            invariant,
            step,
            message,
            clients: Vec::new(),
        }
    }

    /// The violation naming `clients` (in the order the sentence names them).
    pub fn with_clients(mut self, clients: Vec<ClientId>) -> Violation {
        self.clients = clients;
        self
    }
}

fn serialize_name<S: serde::Serializer>(
    invariant: &Invariant,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(invariant.name())
}

impl fmt::Display for Violation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} at step {}: {}",
            self.invariant,
            self.step,
            self.text()
        )
    }
}

/// What the audits found in one history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Every violation, ordered by step (then by invariant, in `INVARIANTS` order).
    pub violations: Vec<Violation>,
    /// How often the paths the invariants guard were taken (so a pass is not vacuous).
    pub coverage: Coverage,
}

impl Report {
    /// True when no invariant was broken.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// The first violation by step, if any.
    pub fn first(&self) -> Option<&Violation> {
        self.violations.first()
    }

    /// Whether `invariant` was broken anywhere in the history.
    pub fn violates(&self, invariant: Invariant) -> bool {
        self.violations
            .iter()
            .any(|violation| violation.invariant == invariant)
    }
}

/// Runs one invariant's audit over one history, and no coverage counter: for a caller that asks
/// only whether this invariant breaks (the shrinker's tries), at the cost of that one audit.
pub fn audit_one(history: &[Event], invariant: Invariant) -> Report {
    let violations = match invariant {
        Invariant::StaleTrimRefused => stale_trim_refused::check(history),
        Invariant::FloorRecordKept => floor_record_kept::check(history),
        Invariant::NoReadBelowFloor => no_read_below_floor::check(history),
        Invariant::AckedWritesKept => acked_writes_kept::check(history),
        Invariant::CommittedPrefixAgreement => committed_prefix_agreement::check(history),
        Invariant::TermNeverDecreases => term_never_decreases::check(history),
        Invariant::FoldAgreement => fold_agreement::check(history),
        Invariant::Convergence => convergence::check(history),
        Invariant::ElectionSafety => election_safety::check(history),
        Invariant::Linearizable => linearizable::check_with_verdict(history).0,
        Invariant::PromiseDurable => promise_durable::check(history),
        Invariant::RecoveryFaithful => recovery_faithful::check(history),
        Invariant::LogTermsMonotone => log_terms_monotone::check(history),
        // Judged from the history and its times under the run's bounds (`progress::check`, run
        // by the simulator's judge): a history alone holds no time.
        Invariant::Progress => Vec::new(),
        // Judged from the history under the run's voters (`committed_durable::check`, run by the
        // simulator's judge): a history alone does not say which nodes vote.
        Invariant::CommittedDurable => Vec::new(),
        // Not an audit's: nothing in a history to judge.
        Invariant::StaleHolderRetires
        | Invariant::TypeOk
        | Invariant::EventBudget
        | Invariant::Panic
        | Invariant::TraceValidation
        | Invariant::Conformance => Vec::new(),
    };
    Report {
        violations,
        coverage: Coverage::default(),
    }
}

/// Runs every invariant a history alone can judge (not Progress nor CommittedDurable) and the
/// coverage counters over one history.
pub fn audit(history: &[Event]) -> Report {
    let mut violations = Vec::new();
    violations.extend(stale_trim_refused::check(history));
    violations.extend(floor_record_kept::check(history));
    violations.extend(no_read_below_floor::check(history));
    violations.extend(acked_writes_kept::check(history));
    violations.extend(committed_prefix_agreement::check(history));
    violations.extend(term_never_decreases::check(history));
    violations.extend(fold_agreement::check(history));
    violations.extend(convergence::check(history));
    violations.extend(election_safety::check(history));
    violations.extend(promise_durable::check(history));
    violations.extend(recovery_faithful::check(history));
    violations.extend(log_terms_monotone::check(history));
    let (linearizable, verdict) = linearizable::check_with_verdict(history);
    violations.extend(linearizable);
    violations.sort_by_key(|violation| (violation.step, invariant_rank(violation.invariant)));
    let mut coverage = coverage(history);
    coverage.count_history_check(&verdict);
    Report {
        violations,
        coverage,
    }
}

fn invariant_rank(invariant: Invariant) -> usize {
    INVARIANTS
        .iter()
        .position(|known| *known == invariant)
        .unwrap_or(INVARIANTS.len())
}

#[cfg(test)]
pub(crate) mod test_support;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use felix_core::rules::{Layer, TwinName};

    /// Every twin names an invariant the audits judge, and the names are distinct.
    #[test]
    fn invariants_cover_every_twin() {
        for twin in TwinName::in_layer(Layer::Sim) {
            assert!(INVARIANTS.contains(&twin.must_break(Layer::Sim)), "{twin}");
        }
        let mut names = INVARIANTS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), INVARIANTS.len());
    }

    /// A clean history gives an empty report; a history breaking two invariants gives both,
    /// ordered by step, each named.
    #[test]
    fn audit_merges_and_orders_violations() {
        let clean = vec![
            committed(0, write(1, 1, 1)),
            write_acked(1, 1, 1),
            committed(1, write(1, 1, 1)),
            state(0, 1, true, 0, 1),
            state(1, 1, false, 0, 1),
            end(),
        ];
        let report = audit(&clean);
        assert!(report.ok(), "{:?}", report.violations);
        assert_eq!(report.first(), None);

        let broken = vec![
            committed(0, write(1, 1, 2)),
            committed(0, write(2, 1, 1)),
            committed(1, write(1, 2, 2)),
            state(0, 1, true, 0, 2),
            state(1, 1, false, 0, 1),
            end(),
        ];
        let report = audit(&broken);
        let found: Vec<(usize, Invariant)> = report
            .violations
            .iter()
            .map(|violation| (violation.step, violation.invariant))
            .collect();
        assert_eq!(
            found,
            vec![
                (1, STALE_TRIM_REFUSED),
                (2, COMMITTED_PREFIX_AGREEMENT),
                (5, CONVERGENCE),
            ]
        );
        assert!(report.violates(CONVERGENCE));
        assert!(!report.violates(FOLD_AGREEMENT));
        assert_eq!(
            report.first().map(ToString::to_string).as_deref(),
            Some(
                "StaleTrimRefused at step 1: committed write at offset 2 from holder epoch 1 \
                 follows the committed write at offset 1 from newer epoch 2"
            )
        );
    }
}
