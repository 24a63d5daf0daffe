//! What a sweep's summary says of its coverage, judged against the catalog
//! (`felix_audits::coverage::CATALOG`): the behaviours never reached, the ones the rules in force
//! make unreachable (and why), and the problems counted; `--require-coverage` fails the sweep when
//! a reachable behaviour was never reached.

use felix_audits::counter::Key;
use felix_audits::coverage::Kind;
use felix_audits::{Counter, Counts};
use felix_core::rules::{Rules, TwinName};

/// The rules a sweep's runs were under: a twin's, unless its control runs (every rule on).
pub fn rules_of(twin: Option<TwinName>, control: bool) -> Rules {
    match twin {
        Some(twin) if !control => Rules::twin(twin),
        _ => Rules::default(),
    }
}

/// Every counter with its total (0 when no run counted it), and any count a run named outside
/// the catalog.
pub fn totals(coverage: &Counts) -> Counts {
    let mut all = coverage.clone();
    for counter in Counter::ALL {
        all.add(counter, 0);
    }
    all
}

/// The coverage verdict of a sweep under `rules`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Reachable behaviours no run reached (and names outside the catalog at zero), by name.
    pub never: Vec<String>,
    /// Behaviours the rules make unreachable, with the reason.
    pub unreachable: Vec<(Counter, &'static str)>,
    /// Behaviours marked unreachable that a run reached anyway: the catalog is wrong.
    pub reached_anyway: Vec<Counter>,
    /// Problems counted (nonzero only).
    pub problems: Vec<(Counter, u64)>,
}

impl Verdict {
    /// Walks every count in name order (the order the lists print in).
    pub fn of(coverage: &Counts, rules: &Rules) -> Verdict {
        let mut verdict = Verdict::default();
        for (key, count) in totals(coverage).entries() {
            let counter = match key {
                Key::Counter(counter) => counter,
                Key::Validated(name) => {
                    if count == 0 {
                        verdict.never.push(name);
                    }
                    continue;
                }
            };
            let entry = counter.entry();
            match (entry.kind, (entry.unreachable)(rules)) {
                (Kind::Problem, _) => {
                    if count > 0 {
                        verdict.problems.push((counter, count));
                    }
                }
                (_, Some(why)) if count == 0 => verdict.unreachable.push((counter, why)),
                (_, Some(_)) => verdict.reached_anyway.push(counter),
                (_, None) if count == 0 => verdict.never.push(counter.name().to_string()),
                (_, None) => {}
            }
        }
        verdict
    }

    /// Whether `--require-coverage` holds: every reachable behaviour reached, none marked
    /// unreachable reached.
    pub fn complete(&self) -> bool {
        self.never.is_empty() && self.reached_anyway.is_empty()
    }

    /// The summary lines (after the full coverage line, when shown).
    pub fn lines(&self) -> Vec<String> {
        let never = if self.never.is_empty() {
            "none".to_string()
        } else {
            self.never.join(" ")
        };
        let mut lines = vec![format!("  never hit: {never}")];
        if !self.unreachable.is_empty() {
            let marks: Vec<String> = self
                .unreachable
                .iter()
                .map(|(name, why)| format!("{name} ({why})"))
                .collect();
            lines.push(format!(
                "  unreachable under these rules: {}",
                marks.join("; ")
            ));
        }
        if !self.reached_anyway.is_empty() {
            let reached: Vec<&str> = self.reached_anyway.iter().map(|c| c.name()).collect();
            lines.push(format!(
                "  reached though cataloged unreachable (fix the catalog): {}",
                reached.join(" ")
            ));
        }
        if !self.problems.is_empty() {
            let problems: Vec<String> = self
                .problems
                .iter()
                .map(|(name, count)| format!("{name}={count}"))
                .collect();
            lines.push(format!("  problems counted: {}", problems.join(" ")));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every counter at 1 but `zero` (at 0) and `absent` (never counted).
    fn counts(zero: &[(Counter, u64)], absent: &[Counter]) -> Counts {
        let mut coverage = Counts::default();
        for counter in Counter::ALL
            .iter()
            .filter(|counter| !absent.contains(counter))
        {
            coverage.set(*counter, 1);
        }
        for (counter, count) in zero {
            coverage.set(*counter, *count);
        }
        coverage
    }

    /// A zero is never hit, unreachable or a problem at zero, by the catalog; a problem shows
    /// only when counted; a reached "unreachable" fails the requirement like a missing one.
    #[test]
    fn zeros_are_told_apart() {
        let unreachable = [
            (Counter::RetentionDeleted, 0),
            (Counter::TruncateRefused, 0),
            (Counter::HistoryUnchecked, 0),
        ];
        let rules = Rules::default();
        let verdict = Verdict::of(&counts(&unreachable, &[]), &rules);
        assert!(verdict.complete(), "{verdict:?}");
        assert_eq!(verdict.unreachable.len(), 2);
        assert!(verdict.problems.is_empty());
        let mut short = unreachable.to_vec();
        short.extend([(Counter::EarliestRead, 0), (Counter::HistoryUnchecked, 2)]);
        let mut coverage = counts(&short, &[]);
        // A validation count at zero is listed among them, in name order.
        coverage.add_validated(&felix_audits::Validated {
            steps: 3,
            stutters: 1,
            matched: 2,
            ..Default::default()
        });
        let verdict = Verdict::of(&coverage, &rules);
        assert_eq!(
            verdict.never,
            ["earliest_read", "validated_holder_requests"]
        );
        assert_eq!(verdict.problems, [(Counter::HistoryUnchecked, 2)]);
        assert!(!verdict.complete());
        let reached = [
            (Counter::TruncateRefused, 0),
            (Counter::RetentionDeleted, 3),
        ];
        let coverage = counts(&reached, &[]);
        let verdict = Verdict::of(&coverage, &rules);
        assert_eq!(verdict.reached_anyway, [Counter::RetentionDeleted]);
        assert!(!verdict.complete());
        let retention = rules_of(Some(TwinName::Retention), false);
        assert!(Verdict::of(&coverage, &retention).complete());
        // A sim counter no run counted is absent from the runs' counts: still listed.
        let verdict = Verdict::of(&counts(&reached, &[Counter::Crashes]), &retention);
        assert_eq!(verdict.never, ["crashes"]);
    }
}
