use felix_core::rules::Invariant;
use felix_sim::judge::in_order;
use felix_sim::Finding;

fn finding(invariant: Invariant, step: Option<u64>) -> Finding {
    Finding {
        invariant,
        step,
        clients: Vec::new(),
        detail: String::new(),
    }
}

fn order(findings: &[Finding]) -> Vec<(Invariant, Option<u64>)> {
    findings.iter().map(|f| (f.invariant, f.step)).collect()
}

#[test]
fn a_panic_comes_first_and_a_divergence_sits_among_the_violations_by_step() {
    // Proves the module doc's order with every kind of finding at once: the panic (at the run's
    // last step, the largest) stays first, and the observer's divergence goes among the audits'
    // violations by its step. The divergence was once placed by a `partition_point` over a list
    // the panic led, which is no partition: with no audit violation it went before the panic.
    let violations = vec![
        finding(Invariant::StaleTrimRefused, Some(10)),
        finding(Invariant::Linearizable, Some(50)),
        finding(Invariant::AckedWritesKept, Some(70)),
    ];
    let ordered = in_order(
        violations,
        Some(finding(Invariant::Panic, Some(100))),
        Some(finding(Invariant::TraceValidation, Some(30))),
        Some(finding(Invariant::EventBudget, Some(100))),
    );
    assert_eq!(
        order(&ordered),
        [
            (Invariant::Panic, Some(100)),
            (Invariant::StaleTrimRefused, Some(10)),
            (Invariant::TraceValidation, Some(30)),
            (Invariant::Linearizable, Some(50)),
            (Invariant::AckedWritesKept, Some(70)),
            (Invariant::EventBudget, Some(100)),
        ]
    );
    // No audit saw anything: the divergence still comes after the panic.
    let ordered = in_order(
        Vec::new(),
        Some(finding(Invariant::Panic, Some(100))),
        Some(finding(Invariant::TraceValidation, Some(30))),
        None,
    );
    assert_eq!(
        order(&ordered),
        [
            (Invariant::Panic, Some(100)),
            (Invariant::TraceValidation, Some(30)),
        ]
    );
}

#[test]
fn a_divergence_at_the_last_step_still_comes_before_the_budget() {
    // Proves the budget stays last even when the divergence is at the step the budget cut.
    let ordered = in_order(
        vec![finding(Invariant::Linearizable, Some(40))],
        None,
        Some(finding(Invariant::TraceValidation, Some(90))),
        Some(finding(Invariant::EventBudget, Some(90))),
    );
    assert_eq!(
        order(&ordered),
        [
            (Invariant::Linearizable, Some(40)),
            (Invariant::TraceValidation, Some(90)),
            (Invariant::EventBudget, Some(90)),
        ]
    );
}

#[test]
fn a_divergence_with_no_step_leads_the_violations() {
    // Proves a step-less divergence is placed before the violations, after a panic.
    let ordered = in_order(
        vec![finding(Invariant::Linearizable, Some(5))],
        Some(finding(Invariant::Panic, None)),
        Some(finding(Invariant::TraceValidation, None)),
        None,
    );
    assert_eq!(
        order(&ordered),
        [
            (Invariant::Panic, None),
            (Invariant::TraceValidation, None),
            (Invariant::Linearizable, Some(5)),
        ]
    );
}
