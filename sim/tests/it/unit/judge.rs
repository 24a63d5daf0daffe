use felix_core::rules::Invariant;
use felix_sim::judge::in_order;
use felix_sim::Finding;
use Invariant::{
    AckedWritesKept, EventBudget, Linearizable, Panic, StaleTrimRefused, TraceValidation,
};

/// A finding of `invariant` at `step`, with no clients and no words.
fn at(invariant: Invariant, step: Option<u64>) -> Finding {
    Finding {
        invariant,
        step,
        clients: Vec::new(),
        detail: String::new(),
    }
}

/// `in_order`'s answer for the findings given, as (invariant, step) pairs.
fn ordered(
    violations: &[(Invariant, Option<u64>)],
    [panic, observed, budget]: [Option<Option<u64>>; 3],
) -> Vec<(Invariant, Option<u64>)> {
    let findings = in_order(
        violations
            .iter()
            .map(|&(invariant, step)| at(invariant, step))
            .collect(),
        panic.map(|step| at(Invariant::Panic, step)),
        observed.map(|step| at(Invariant::TraceValidation, step)),
        budget.map(|step| at(Invariant::EventBudget, step)),
    );
    findings.iter().map(|f| (f.invariant, f.step)).collect()
}

#[test]
fn a_panic_comes_first_and_a_divergence_sits_among_the_violations_by_step() {
    // Proves the module doc's order with every kind of finding at once: the panic (at the run's
    // last step, the largest) stays first, and the observer's divergence goes among the audits'
    // violations by its step. The divergence was once placed by a `partition_point` over a list
    // the panic led, which is no partition: with no audit violation it went before the panic.
    let violations = [
        (StaleTrimRefused, Some(10)),
        (Linearizable, Some(50)),
        (AckedWritesKept, Some(70)),
    ];
    assert_eq!(
        ordered(
            &violations,
            [Some(Some(100)), Some(Some(30)), Some(Some(100))]
        ),
        [
            (Panic, Some(100)),
            (StaleTrimRefused, Some(10)),
            (TraceValidation, Some(30)),
            (Linearizable, Some(50)),
            (AckedWritesKept, Some(70)),
            (EventBudget, Some(100)),
        ]
    );
    // No audit saw anything: the divergence still comes after the panic.
    assert_eq!(
        ordered(&[], [Some(Some(100)), Some(Some(30)), None]),
        [(Panic, Some(100)), (TraceValidation, Some(30))]
    );
}

#[test]
fn a_divergence_at_the_last_step_still_comes_before_the_budget() {
    // Proves the budget stays last even when the divergence is at the step the budget cut.
    assert_eq!(
        ordered(
            &[(Linearizable, Some(40))],
            [None, Some(Some(90)), Some(Some(90))]
        ),
        [
            (Linearizable, Some(40)),
            (TraceValidation, Some(90)),
            (EventBudget, Some(90)),
        ]
    );
}

#[test]
fn a_divergence_with_no_step_leads_the_violations() {
    // Proves a step-less divergence is placed before the violations, after a panic.
    assert_eq!(
        ordered(&[(Linearizable, Some(5))], [Some(None), Some(None), None]),
        [
            (Panic, None),
            (TraceValidation, None),
            (Linearizable, Some(5))
        ]
    );
}
