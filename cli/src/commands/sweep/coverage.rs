//! What a sweep's summary says of its coverage, judged against the catalog
//! (`felix_audits::coverage::CATALOG`): the behaviours never reached, the ones the rules in force
//! make unreachable (and why), and the problems counted; `--require-coverage` fails the sweep when
//! a reachable behaviour was never reached.

use felix_audits::coverage::{cataloged, Kind, CATALOG};
use felix_core::rules::{Rules, TwinName};
use std::collections::BTreeMap;

/// The rules a sweep's runs were under: a twin's, unless its control runs (every rule on).
pub fn rules_of(twin: Option<TwinName>, control: bool) -> Rules {
    match twin {
        Some(twin) if !control => Rules::twin(twin),
        _ => Rules::default(),
    }
}

/// Every cataloged name with its total (0 when no run counted it), and any name a run counted
/// that the catalog lacks.
pub fn totals(coverage: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut all: BTreeMap<String, u64> = CATALOG
        .iter()
        .map(|entry| (entry.name.to_string(), 0))
        .collect();
    for (name, count) in coverage {
        *all.entry(name.clone()).or_insert(0) += count;
    }
    all
}

/// The coverage verdict of a sweep under `rules`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Reachable behaviours no run reached (and uncataloged names at zero).
    pub never: Vec<String>,
    /// Behaviours the rules make unreachable, with the reason.
    pub unreachable: Vec<(String, &'static str)>,
    /// Behaviours marked unreachable that a run reached anyway: the catalog is wrong.
    pub reached_anyway: Vec<String>,
    /// Problems counted (nonzero only).
    pub problems: Vec<(String, u64)>,
}

impl Verdict {
    pub fn of(coverage: &BTreeMap<String, u64>, rules: &Rules) -> Verdict {
        let mut verdict = Verdict::default();
        for (name, count) in totals(coverage) {
            let entry = cataloged(&name);
            let why = entry.and_then(|entry| (entry.unreachable)(rules));
            match (entry.map(|entry| entry.kind), why) {
                (Some(Kind::Problem), _) => {
                    if count > 0 {
                        verdict.problems.push((name, count));
                    }
                }
                (_, Some(why)) if count == 0 => verdict.unreachable.push((name, why)),
                (_, Some(_)) => verdict.reached_anyway.push(name),
                (_, None) if count == 0 => verdict.never.push(name),
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
            lines.push(format!(
                "  reached though cataloged unreachable (fix the catalog): {}",
                self.reached_anyway.join(" ")
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

    /// A zero is never hit, unreachable or a problem at zero, by the catalog; a problem shows
    /// only when counted; a reached "unreachable" fails the requirement like a missing one.
    #[test]
    fn zeros_are_told_apart() {
        let mut coverage: BTreeMap<String, u64> = CATALOG
            .iter()
            .map(|entry| (entry.name.to_string(), 1))
            .collect();
        coverage.insert("retention_deleted".to_string(), 0);
        coverage.insert("truncate_refused".to_string(), 0);
        coverage.insert("history_unchecked".to_string(), 0);
        let rules = Rules::default();
        let verdict = Verdict::of(&coverage, &rules);
        assert!(verdict.complete(), "{verdict:?}");
        assert_eq!(verdict.unreachable.len(), 2);
        assert!(verdict.problems.is_empty());
        coverage.insert("earliest_read".to_string(), 0);
        coverage.insert("history_unchecked".to_string(), 2);
        let verdict = Verdict::of(&coverage, &rules);
        assert_eq!(verdict.never, vec!["earliest_read".to_string()]);
        assert_eq!(verdict.problems, vec![("history_unchecked".to_string(), 2)]);
        assert!(!verdict.complete());
        coverage.insert("earliest_read".to_string(), 1);
        coverage.insert("retention_deleted".to_string(), 3);
        let verdict = Verdict::of(&coverage, &rules);
        assert_eq!(
            verdict.reached_anyway,
            vec!["retention_deleted".to_string()]
        );
        assert!(!verdict.complete());
        let retention = rules_of(Some(TwinName::Retention), false);
        assert!(Verdict::of(&coverage, &retention).complete());
        // A sim counter no run counted is absent from the runs' maps: still listed.
        coverage.remove("crashes");
        let verdict = Verdict::of(&coverage, &retention);
        assert_eq!(verdict.never, vec!["crashes".to_string()]);
    }
}
