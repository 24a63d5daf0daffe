//! `felix check` and `felix explore` as a user runs them: exit codes, text and JSON output.

use super::support::felix;

#[test]
fn an_unknown_configuration_is_bad_input_and_lists_the_names() {
    // Proves an unknown name exits 2 with the list of valid names and no panic.
    let (code, stdout, stderr) = felix(&["check", "NoSuchConfig"]);
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stderr.contains("FelixHeadTrimHiddenTrims"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let (code, _, stderr) = felix(&["explore", "NoSuchConfig"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn zero_threads_is_bad_input() {
    // Proves `--threads 0` is refused with exit 2 rather than hanging or panicking.
    let (code, _, stderr) = felix(&["check", "HiddenTrims", "--threads", "0"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn too_many_threads_is_bad_input() {
    // Proves an absurd `--threads` is refused with exit 2 and a message, not an abort while
    // spawning them.
    let (code, _, stderr) = felix(&["check", "HiddenTrims", "--threads", "100000"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("at most 256"), "{stderr}");
}

#[test]
fn a_twin_exits_1_with_its_shortest_counterexample() {
    // Proves a violated configuration exits 1 and prints the broken invariant and a numbered trace
    // starting at Init; the prefix may be dropped from the name.
    let (code, stdout, stderr) = felix(&["check", "HiddenTrims", "--threads", "1"]);
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("FelixHeadTrimHiddenTrims: VIOLATED StaleTrimRefused"),
        "{stdout}"
    );
    assert!(stdout.contains("shortest counterexample"), "{stdout}");
    assert!(stdout.contains("  0. Init: "), "{stdout}");
    assert!(stdout.contains("  1. "), "{stdout}");
}

#[test]
fn json_output_has_the_documented_fields() {
    // Proves `--json` prints one object per configuration with the documented fields, the trace as a
    // list of steps whose first step is Init.
    let (code, stdout, stderr) = felix(&["check", "--json", "CompactActive", "HiddenTrims"]);
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let first: serde_json::Value = serde_json::from_str(lines[0]).expect("valid JSON");
    assert_eq!(first["config"], "FelixHeadTrimCompactActive");
    assert_eq!(first["outcome"], "violated");
    assert_eq!(first["invariant"], "FloorRecordKept");
    assert!(first["unique_states"].as_u64().is_some_and(|n| n > 0));
    assert!(first["max_depth"].as_u64().is_some_and(|n| n > 0));
    assert!(first["seconds"].as_f64().is_some());
    let trace = first["trace"].as_array().expect("trace is a list");
    assert_eq!(trace[0]["action"], "Init");
    assert!(trace.len() >= 2);
    let second: serde_json::Value = serde_json::from_str(lines[1]).expect("valid JSON");
    assert_eq!(second["config"], "FelixHeadTrimHiddenTrims");
    assert_eq!(second["invariant"], "StaleTrimRefused");
}

#[test]
fn twins_model_holds_every_twin_to_its_invariant() {
    // Proves `felix twins --model --json` prints one object per model twin with the documented
    // fields, every twin breaking exactly its named invariant, and exits 0.
    let (code, stdout, stderr) = felix(&["twins", "--model", "--json"]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("valid JSON"))
        .collect();
    let twins: Vec<&str> = lines.iter().filter_map(|l| l["twin"].as_str()).collect();
    assert_eq!(
        twins,
        [
            "HiddenTrims",
            "Untagged",
            "NoopSkip",
            "Retention",
            "ReadFromEarliest",
            "TailFromRefusal",
            "CompactActive",
            "TagAtFloor",
            "VisibleTrims",
            "LocalReads",
            "JumpResetsTerm",
            "UnfencedTruncate",
            "FloorPastCommit",
            "AckBeforeSync"
        ]
    );
    for line in &lines {
        assert_eq!(line["layer"], "model");
        assert_eq!(line["ok"], true, "{line}");
        if line["twin"] == "AckBeforeSync" {
            // The same state breaks CommittedPrefixAgreement too (`TwinName::breaks_beside`).
            assert_eq!(
                line["found"], "AckedWritesKept+CommittedPrefixAgreement",
                "{line}"
            );
        } else {
            assert_eq!(line["found"], line["expected"], "{line}");
        }
        assert!(line["seeds_to_detect"].is_null());
    }
}

#[test]
fn check_runs_the_second_spec_by_name() {
    // Proves `felix check` resolves ParosTrimJump names (full, and a twin's without the prefix):
    // the main configuration passes with its pinned count (TLC's), a twin exits 1 with its named
    // invariant, --compact gives the same count, and --symmetry and --html (FelixHeadTrim only)
    // are bad input for it, saying why.
    let (code, stdout, stderr) = felix(&["check", "ParosTrimJump", "--json", "--threads", "1"]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("valid JSON");
    assert_eq!(report["config"], "ParosTrimJump");
    assert_eq!(report["outcome"], "pass");
    let pinned = felix_model::pinned::distinct_states("ParosTrimJump").expect("pinned");
    assert_eq!(report["unique_states"], pinned);
    let (code, stdout, _) = felix(&["check", "JumpResetsTerm", "--json"]);
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("valid JSON");
    assert_eq!(report["config"], "ParosTrimJumpJumpResetsTerm");
    assert_eq!(report["invariant"], "TermNeverDecreases");
    let (code, stdout, stderr) = felix(&["check", "ParosTrimJump", "--compact", "--json"]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("valid JSON");
    assert_eq!(report["unique_states"], pinned);
    let (code, _, stderr) = felix(&["check", "ParosTrimJump", "--symmetry"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no symmetry reduction"), "{stderr}");
    let html = std::env::temp_dir().join("felix-check-paros.html");
    let html = html.to_str().expect("a UTF-8 path");
    let (code, _, stderr) = felix(&["check", "JumpResetsTerm", "--html", html]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no ParosTrimJump sequence diagram"),
        "{stderr}"
    );
}
