//! `felix conform` and `felix twins --conform`: model paths run on the real core.

use super::support::felix;

/// A small configuration's graph is covered edge for edge on the core with no divergence, and
/// the same seed gives the same report.
#[test]
fn conform_covers_the_crash_configuration_without_divergence() {
    let (code, stdout, stderr) = felix(&["conform", "Crash", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(report["conforms"], true);
    assert_eq!(report["failed"].as_array().map(Vec::len), Some(0));
    let total = report["edges_total"].as_u64().expect("edges_total");
    assert!(total > 100, "{report}");
    assert_eq!(report["edges_covered"].as_u64(), Some(total), "{report}");
    let (_, again, _) = felix(&["conform", "Crash", "--json"]);
    let again: serde_json::Value = serde_json::from_str(again.trim()).expect("JSON");
    for key in ["paths", "actions", "edges_covered", "missed"] {
        assert_eq!(report[key], again[key], "{key} differs between two runs");
    }
}

/// ParosTrimJump's main configuration: both covers (a core that compacts as the model does, one
/// that never compacts) take every edge of their graph with no divergence, and together at least
/// 95% of the whole graph's edges; every edge left out has a reason.
#[test]
fn conform_covers_paros_trim_jump_without_divergence() {
    let (code, stdout, stderr) = felix(&["conform", "ParosTrimJump", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(report["conforms"], true, "{report}");
    let covers = report["covers"].as_array().expect("covers");
    assert_eq!(covers.len(), 2);
    for cover in covers {
        assert_eq!(cover["edges_covered"], cover["edges_total"], "{cover}");
        assert_eq!(cover["failed"].as_array().map(Vec::len), Some(0), "{cover}");
    }
    let total = report["edges_total"].as_u64().expect("edges_total");
    let covered = report["edges_covered"].as_u64().expect("edges_covered");
    assert!(100 * covered >= 95 * total, "{report}");
    for rest in report["rest"].as_array().expect("rest") {
        assert!(!rest["why"].as_array().expect("why").is_empty(), "{rest}");
    }
}

/// Every twin's counterexample on the core: the core with the twin breaks the invariant (or is
/// the named gap, or has no switch), and with every rule on every path holds.
#[test]
fn twins_conform_table() {
    let (code, stdout, stderr) = felix(&["twins", "--conform", "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per twin"))
        .collect();
    assert_eq!(rows.len(), 14);
    for row in &rows {
        let verdict = row["verdict"].as_str().expect("verdict");
        assert!(!verdict.starts_with("FAIL"), "{row}");
        assert_eq!(row["every_rule_on_broken"], serde_json::json!([]), "{row}");
        if verdict == "ok" {
            let broken = row["with_twin_broken"]
                .as_array()
                .expect("with_twin_broken");
            assert!(broken.contains(&row["must_break"]), "{row}");
        }
    }
    let caught = rows.iter().filter(|row| row["verdict"] == "ok").count();
    // FelixHeadTrim: 9 (TagAtFloor has no switch; VisibleTrims under another configuration's
    // bounds); ParosTrimJump: 4 (AckBeforeSync through a crash).
    assert_eq!(caught, 13, "{stdout}");
    let gaps: Vec<&str> = rows
        .iter()
        .filter(|row| row["verdict"] == "gap")
        .map(|row| row["twin"].as_str().expect("twin"))
        .collect();
    assert!(gaps.is_empty(), "{gaps:?}");
    let other_bounds: Vec<&str> = rows
        .iter()
        .filter(|row| !row["bounds_of"].is_null())
        .map(|row| row["twin"].as_str().expect("twin"))
        .collect();
    assert_eq!(other_bounds, ["VisibleTrims"]);
}

/// Bad input is exit 2 with a message, never a panic.
#[test]
fn conform_refuses_bad_input() {
    for args in [
        &["conform", "NoSuchConfig"][..],
        &["conform", "ParosTrimJump", "--paths", "0"],
        &["conform", "TagAtFloor"],
        &["conform", "Main", "--paths", "0"],
        &["conform", "Main", "--paths", "many"],
        &["twins", "--conform", "--sim"],
    ] {
        let (code, _, stderr) = felix(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
