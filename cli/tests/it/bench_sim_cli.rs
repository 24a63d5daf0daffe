//! `felix bench sim`: it reports every figure it promises, its timed pass runs the seeds exactly
//! as the plain pass does, and bad input exits 2 with a message.

use super::support::felix;

#[test]
fn bench_sim_json_reports_rates_and_the_step_share() {
    // Proves `bench sim --json` prints one object with seeds/s, events/s and the share of time
    // inside Broker::step, that the timers left the runs alone (same sweep hash), and that its
    // sweep hash is the one `felix sweep` gives for the same seeds.
    let (code, stdout, stderr) = felix(&["bench", "sim", "--seeds", "3..6", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let figures: serde_json::Value = serde_json::from_str(lines[0]).expect("a JSON object");
    assert_eq!(figures["runs"], 3);
    assert_eq!(figures["same_runs_timed"], true);
    assert!(figures["events"].as_u64().unwrap_or(0) > 0, "{figures}");
    assert!(
        figures["broker_steps"].as_u64().unwrap_or(0) > 0,
        "{figures}"
    );
    for rate in ["seeds_per_second", "events_per_second"] {
        assert!(
            figures[rate].as_f64().unwrap_or(0.0) > 0.0,
            "{rate}: {figures}"
        );
    }
    let share = figures["broker_step_share_percent"]
        .as_f64()
        .expect("a step share");
    assert!(share > 0.0 && share < 100.0, "{figures}");
    let (_, sweep, _) = felix(&["sweep", "--seeds", "3..6", "--json", "--jobs", "1"]);
    let summary: serde_json::Value =
        serde_json::from_str(sweep.lines().last().expect("a summary")).expect("JSON");
    assert_eq!(summary["sweep_hash"], figures["sweep_hash"]);
    assert_eq!(summary["events"], figures["events"]);
}

#[test]
fn bench_sim_text_names_the_core_step() {
    // Proves the readable output names the rates and the core's step.
    let (code, stdout, stderr) = felix(&["bench", "sim", "--seeds", "0..2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("seeds/s"), "{stdout}");
    assert!(stdout.contains("events/s"), "{stdout}");
    assert!(
        stdout.contains("inside the core's Broker::step"),
        "{stdout}"
    );
}

#[test]
fn bench_sim_bad_input_exits_2() {
    // Proves a malformed range and an unknown twin are bad input, not a panic.
    for args in [
        &["bench", "sim", "--seeds", "5"][..],
        &["bench", "sim", "--twin", "NoSuchTwin"][..],
    ] {
        let (code, _, stderr) = felix(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
    }
}
