//! A simulated run in words, for the top of its page: what ran and what the faults did, read from
//! the knobs and the run's own counters, before the full knob line.

use felix_audits::Counter;
use felix_sim::seeded::knobs::Workload;
use felix_sim::RunReport;

/// "3 brokers and 1 replica, 2 felixd holders, 2 readers and a prober; 30.5 s simulated: 252
/// crashes, 60 partitions, ..." (a fault the run never injected is left out).
pub fn run_in_words(report: &RunReport) -> String {
    let knobs = &report.knobs;
    let plural = |count: u64, one: &str, many: &str| {
        format!("{count} {}", if count == 1 { one } else { many })
    };
    let mut cast = vec![plural(u64::from(knobs.brokers), "broker", "brokers")];
    if knobs.replicas > 0 {
        cast.push(plural(u64::from(knobs.replicas), "replica", "replicas"));
    }
    match &knobs.workload {
        Workload::Felixd { holders } => cast.push(plural(
            u64::from(*holders),
            "felixd holder",
            "felixd holders",
        )),
        Workload::Paros { owners, folders } => {
            cast.push(plural(u64::from(*owners), "paros owner", "paros owners"));
            cast.push(plural(u64::from(*folders), "folder", "folders"));
        }
    }
    if knobs.readers > 0 {
        cast.push(plural(u64::from(knobs.readers), "reader", "readers"));
    }
    if knobs.prober {
        cast.push("a prober".to_string());
    }
    let counted = |counter: Counter| report.coverage.count(counter);
    let faults: Vec<String> = [
        (Counter::Crashes, "crash", "crashes"),
        (Counter::Partitions, "partition", "partitions"),
        (Counter::Clogs, "clogged link", "clogged links"),
        (Counter::Pauses, "client pause", "client pauses"),
        (Counter::LeaseMoves, "lease move", "lease moves"),
        (
            Counter::MessagesDropped,
            "message dropped",
            "messages dropped",
        ),
        (
            Counter::MessagesDuplicated,
            "message duplicated",
            "messages duplicated",
        ),
    ]
    .iter()
    .filter(|(counter, _, _)| counted(*counter) > 0)
    .map(|(counter, one, many)| plural(counted(*counter), one, many))
    .collect();
    let faults = if faults.is_empty() {
        "no fault".to_string()
    } else {
        faults.join(", ")
    };
    format!(
        "{}; {:.1} s simulated: {faults}",
        join_words(&cast),
        report.simulated_micros as f64 / 1e6
    )
}

/// "a", "a and b", "a, b and c".
fn join_words(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use felix_sim::RunSpec;

    /// The words name the cluster and only the faults the run's counters saw.
    #[test]
    fn a_run_in_words() {
        let spec = RunSpec::new(23, None);
        let mut report = RunReport::unrun(&spec);
        report.knobs.brokers = 3;
        report.knobs.replicas = 1;
        report.knobs.workload = Workload::Felixd { holders: 2 };
        report.knobs.readers = 0;
        report.knobs.prober = true;
        report.simulated_micros = 30_540_000;
        report.coverage.set(Counter::Crashes, 1);
        report.coverage.set(Counter::Partitions, 60);
        report.coverage.set(Counter::Pauses, 0);
        assert_eq!(
            run_in_words(&report),
            "3 brokers, 1 replica, 2 felixd holders and a prober; 30.5 s simulated: 1 crash, 60 partitions"
        );
        report.coverage = Default::default();
        assert!(run_in_words(&report).ends_with("simulated: no fault"));
    }
}
