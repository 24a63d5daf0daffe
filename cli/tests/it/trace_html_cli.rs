//! `felix trace show FILE --html PAGE` as a user runs it: on a `felix nemesis` trace of real
//! processes it draws the real nodes' lifelines (numbered from 1) and highlights the file's
//! violation lines; on a simulated run's trace it draws what `felix replay --html` draws for the
//! same run; a file naming more nodes than a page draws is bad input (exit 2).

use super::support::{felix, lanes, page_data};

/// The diagram data embedded in a page.
fn data(path: &std::path::Path) -> serde_json::Value {
    page_data(&std::fs::read_to_string(path).expect("the page was written"))
}

fn text(path: &std::path::Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
fn a_nemesis_trace_draws_the_real_nodes_and_its_violation() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let run = dir.path().join("run");
    let (code, stdout, stderr) = felix(&[
        "nemesis",
        "--nodes",
        "3",
        "--time",
        "3s",
        "--seed",
        "5",
        "--dir",
        text(&run),
    ]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let trace = run.join("trace.jsonl");
    let page = dir.path().join("run.html");
    let (code, stdout, stderr) = felix(&["trace", "show", text(&trace), "--html", text(&page)]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(
        stdout.contains("n1:"),
        "the text rendering still goes to stdout"
    );
    let drawn = data(&page);
    assert_eq!(
        lanes(&drawn)
            .iter()
            .filter(|lane| lane.starts_with('n'))
            .collect::<Vec<_>>(),
        ["n1", "n2", "n3"]
    );
    assert!(drawn["title"]
        .as_str()
        .is_some_and(|title| title.contains("real processes")));
    assert!(drawn["violations"].as_array().is_some_and(Vec::is_empty));
    // A verdict line naming one of the run's steps is highlighted at that step's row.
    let mut lines: Vec<String> = std::fs::read_to_string(&trace)
        .expect("the trace")
        .lines()
        .map(str::to_string)
        .collect();
    let named = lines.len() as u64 / 2;
    let last: serde_json::Value =
        serde_json::from_str(lines.last().expect("a line")).expect("JSON");
    lines.push(
        serde_json::json!({
            "step": last["step"].as_u64().expect("a step") + 1,
            "time_micros": last["time_micros"],
            "sim": {"violation": {"invariant": "AckedWritesKept", "at_step": named, "clients": [], "detail": "planted"}},
        })
        .to_string(),
    );
    let planted = dir.path().join("planted.jsonl");
    std::fs::write(&planted, lines.join("\n")).expect("the planted trace");
    let (code, _, stderr) = felix(&["trace", "show", text(&planted), "--html", text(&page)]);
    assert_eq!(code, 0, "stderr: {stderr}");
    let drawn = data(&page);
    let violation = &drawn["violations"][0];
    assert_eq!(violation["invariant"], "AckedWritesKept");
    let row = violation["row"].as_u64().expect("a row") as usize;
    assert_eq!(drawn["rows"][row]["step"].as_u64(), Some(named));
}

#[test]
fn a_simulated_trace_draws_what_replay_draws() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("run.jsonl");
    let replayed = dir.path().join("replay.html");
    let (code, _, stderr) = felix(&[
        "replay",
        "--seed",
        "2508",
        "--twin",
        "HiddenTrims",
        "--trace",
        text(&trace),
        "--html",
        text(&replayed),
    ]);
    assert_eq!(code, 1, "the twin fails: {stderr}");
    let shown = dir.path().join("shown.html");
    let (code, _, stderr) = felix(&["trace", "show", text(&trace), "--html", text(&shown)]);
    assert_eq!(code, 0, "stderr: {stderr}");
    let (replayed, shown) = (data(&replayed), data(&shown));
    assert_eq!(lanes(&replayed), lanes(&shown));
    // The file also holds the verdict: one band row per violation line after the run's rows.
    let (replayed_rows, shown_rows) = (
        replayed["rows"].as_array().expect("rows"),
        shown["rows"].as_array().expect("rows"),
    );
    assert_eq!(replayed_rows[..], shown_rows[..replayed_rows.len()]);
    let verdict = &shown_rows[replayed_rows.len()..];
    assert!(!verdict.is_empty());
    assert!(verdict.iter().all(|row| row["text"]
        .as_str()
        .is_some_and(|text| text.starts_with("VIOLATION"))));
    assert_eq!(replayed["violations"], shown["violations"]);
}

#[test]
fn a_trace_naming_too_many_nodes_is_bad_input() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("wide.jsonl");
    let lines = [
        serde_json::json!({"step": 0, "time_micros": 0, "sim": {"started": {"trace_format": 3, "seed": 1, "twin": null, "knobs": {}}}}),
        serde_json::json!({"step": 1, "time_micros": 1, "history": {"Crashed": {"node": 4_000_000_000u64}}}),
    ];
    let text_lines: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    std::fs::write(&trace, text_lines.join("\n")).expect("the trace");
    let page = dir.path().join("wide.html");
    let (code, _, stderr) = felix(&["trace", "show", text(&trace), "--html", text(&page)]);
    assert_eq!(code, 2, "stderr: {stderr}");
    assert!(stderr.contains("at most 64"), "{stderr}");
}
