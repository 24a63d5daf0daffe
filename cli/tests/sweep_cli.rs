//! The `felix sweep`, `felix replay` and `felix twins` commands as a user runs them: exit codes,
//! bad input, determinism across `--jobs`, trace files.

use std::process::{Command, Output};

fn felix(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_felix"))
        .args(args)
        .output();
    match output {
        Ok(output) => output,
        Err(error) => panic!("could not run felix {args:?}: {error}"),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every malformed argument is a clear message on stderr and exit code 2, never a panic.
#[test]
fn bad_input_exits_2_with_a_message() {
    let cases: &[&[&str]] = &[
        &["sweep", "--seeds", "9..5"],
        &["sweep", "--seeds", "5..5"],
        &["sweep", "--seeds", "x..5"],
        &["sweep", "--seeds", "12"],
        &["sweep", "--seeds", "-3..5"],
        &["sweep", "--twin", "NoSuchTwin"],
        &["sweep", "--shard", "0/4"],
        &["sweep", "--shard", "5/4"],
        &["sweep", "--shard", "banana"],
        &["sweep", "--jobs", "0"],
        &["sweep", "--jobs", "many"],
        &["sweep", "--control"],
        &["replay", "--seed", "abc"],
        &["replay", "--seed", "1", "--twin", "Nope"],
        &[
            "replay",
            "--seed",
            "1",
            "--trace",
            "/nonexistent-dir/felix/trace.jsonl",
        ],
        &["replay"],
        &["replay", "--seed", "1", "--control"],
        &["twins", "--sim", "--budget", "0"],
    ];
    for args in cases {
        let output = felix(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "felix {args:?}: {}",
            text(&output.stderr)
        );
        let stderr = text(&output.stderr);
        assert!(
            !stderr.contains("panicked"),
            "felix {args:?} panicked: {stderr}"
        );
        assert!(!stderr.trim().is_empty(), "felix {args:?} said nothing");
    }
}

/// A sweep gives the same per-seed results and the same sweep hash for any `--jobs`.
#[test]
fn sweep_output_does_not_depend_on_jobs() {
    let run = |jobs: &str| {
        let output = felix(&[
            "sweep",
            "--seeds",
            "0..24",
            "--twin",
            "TailFromRefusal",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert!(matches!(output.status.code(), Some(0) | Some(1)));
        let lines: Vec<serde_json::Value> = text(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or(serde_json::Value::Null))
            .collect();
        assert!(
            lines.iter().all(|line| !line.is_null()),
            "every line is JSON"
        );
        let summary = lines.last().cloned().unwrap_or_default();
        let failures: Vec<serde_json::Value> = lines[..lines.len() - 1].to_vec();
        (
            failures,
            summary["sweep_hash"].clone(),
            summary["failed"].clone(),
            output.status.code(),
        )
    };
    let one = run("1");
    let two = run("2");
    let three = run("3");
    assert_eq!(one, two);
    assert_eq!(one, three);
    assert!(one.1.is_string());
}

/// A failing sweep exits 1 and prints, for each failing seed, the exact replay command; that
/// command reproduces the failure.
#[test]
fn failing_seed_prints_its_replay_command() {
    let output = felix(&[
        "sweep",
        "--seeds",
        "0..40",
        "--twin",
        "TailFromRefusal",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = text(&output.stdout);
    let first: serde_json::Value = stdout
        .lines()
        .next()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_default();
    for key in ["seed", "twin", "violation", "replay"] {
        assert!(!first[key].is_null(), "missing {key}: {first}");
    }
    let replay = first["replay"].as_str().unwrap_or_default().to_string();
    let words: Vec<&str> = replay.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"felix"));
    let again = felix(&words[1..]);
    assert_eq!(again.status.code(), Some(1));
    let violation = first["violation"].as_str().unwrap_or_default();
    assert!(text(&again.stdout).contains(&format!("VIOLATION {violation}")));
}

/// A default sweep of a few seeds passes; replay writes one JSON object per trace line and
/// confirms its own determinism.
#[test]
fn replay_writes_trace_and_checks_determinism() {
    let output = felix(&["sweep", "--seeds", "0..20"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
    let directory = std::env::temp_dir().join(format!("felix-sweep-cli-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&directory);
    let path = directory.join("trace.jsonl");
    let path_text = path.to_string_lossy().into_owned();
    let output = felix(&[
        "replay",
        "--seed",
        "3",
        "--trace",
        &path_text,
        "--check-determinism",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("determinism: same trace hash"), "{stdout}");
    let trace = std::fs::read_to_string(&path).unwrap_or_default();
    let lines: Vec<&str> = trace.lines().collect();
    assert!(lines.len() > 10);
    for (index, line) in lines.iter().enumerate() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        assert_eq!(value["step"].as_u64(), Some(index as u64), "{line}");
    }
    let _ = std::fs::remove_dir_all(&directory);
}
