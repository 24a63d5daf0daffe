//! `felix history check FILE.jsonl` as a user runs it on the traces `felix replay --trace`
//! writes: a run with every rule on is linearizable (exit 0), a twin's run that serves an answer
//! no order explains is not (exit 1, naming the operations and their trace steps), and a file
//! that is not a trace is bad input (exit 2).

use super::support::felix;
use std::path::PathBuf;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("felix-history-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir.join(name)
}

fn trace(seed: &str, twin: Option<&str>, name: &str) -> PathBuf {
    let path = temp(name);
    let path_text = path.to_str().expect("a UTF-8 temp path");
    let mut args = vec!["replay", "--seed", seed, "--trace", path_text];
    if let Some(twin) = twin {
        args.extend(["--twin", twin]);
    }
    let (_, _, stderr) = felix(&args);
    assert!(path.exists(), "replay wrote no trace: {stderr}");
    path
}

/// A run with every rule on is linearizable; --json says so in one object.
#[test]
fn a_run_with_every_rule_on_is_linearizable() {
    let path = trace("0", None, "pass.jsonl");
    let file = path.to_str().expect("UTF-8");
    let (code, stdout, stderr) = felix(&["history", "check", file]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(": linearizable ("), "{stdout}");
    let (code, stdout, _) = felix(&["history", "check", file, "--json"]);
    assert_eq!(code, 0);
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(summary["outcome"], "linearizable");
    assert!(summary["operations"].as_u64().unwrap_or(0) > 0, "{stdout}");
}

/// The VisibleTrims twin serves an untagged CursorTooOld whose floor no trim set (seed 1; seed 0
/// first serves a trim record as a write): not linearizable, the operation named with the trace
/// steps of its request and reply.
#[test]
fn a_twin_run_is_not_linearizable() {
    let path = trace("1", Some("VisibleTrims"), "twin.jsonl");
    let file = path.to_str().expect("UTF-8");
    let (code, stdout, stderr) = felix(&["history", "check", file]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("not linearizable at step"), "{stdout}");
    assert!(stdout.contains("(requested at step "), "{stdout}");
    assert!(stdout.contains("never in force"), "{stdout}");
    let (code, stdout, _) = felix(&["history", "check", file, "--json"]);
    assert_eq!(code, 1);
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(summary["outcome"], "not_linearizable");
    assert!(summary["step"].as_u64().is_some(), "{stdout}");
}

/// A file that is not a trace, a missing file and an empty file are bad input, never a panic.
#[test]
fn bad_input_exits_2() {
    let bad = temp("bad.jsonl");
    std::fs::write(&bad, "{\"not\": \"a trace line\"}\n").expect("write");
    let (code, _, stderr) = felix(&["history", "check", bad.to_str().expect("UTF-8")]);
    assert_eq!(code, 2);
    assert!(stderr.contains(":1: not a trace line"), "{stderr}");
    let empty = temp("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    let (code, _, stderr) = felix(&["history", "check", empty.to_str().expect("UTF-8")]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no trace lines"), "{stderr}");
    let (code, _, stderr) = felix(&["history", "check", "/nonexistent/felix.jsonl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read"), "{stderr}");
}
