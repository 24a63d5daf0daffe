//! The `felix sweep`, `felix replay` and `felix twins` commands as a user runs them: exit codes,
//! bad input, determinism across `--jobs`, trace files.

use super::support::felix_output as felix;
use std::process::Command;

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

/// Runs felix with its stdout a pipe whose reading end is already closed (a reader like `head`
/// that has gone): the exit code and stderr.
fn felix_into_a_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_felix"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn felix");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait for felix");
    (output.status.code(), text(&output.stderr))
}

/// A closed stdout ends a command quietly with exit 0 (the reader took what it wanted): never a
/// panic, never the bad-input code, whatever the command prints.
#[test]
fn a_closed_stdout_ends_a_command_with_exit_0() {
    let cases: &[&[&str]] = &[
        &["sweep", "--seeds", "0..3"],
        &["sweep", "--seeds", "0..3", "--json"],
        &["replay", "--seed", "1"],
        &["check", "HiddenTrims"],
        &["twins", "--model"],
    ];
    for args in cases {
        let (code, stderr) = felix_into_a_closed_pipe(args);
        assert_eq!(code, Some(0), "felix {args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "felix {args:?}: {stderr}");
    }
}

/// `felix trace show` renders a trace `felix replay --trace` wrote, and refuses (exit 2) a file
/// whose run names a trace format this felix does not read.
#[test]
fn trace_show_reads_its_own_format_and_refuses_another() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("trace.jsonl");
    let path_text = path.to_string_lossy().into_owned();
    let output = felix(&["replay", "--seed", "3", "--trace", &path_text]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let output = felix(&["trace", "show", &path_text]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let trace = std::fs::read_to_string(&path).expect("the trace");
    let first = trace.lines().next().expect("a first line");
    let format = format!(
        "\"trace_format\":{}",
        felix_sim::render::trace::TRACE_FORMAT
    );
    assert!(first.contains(&format), "{first}");
    let future = trace.replacen(&format, "\"trace_format\":99", 1);
    let future_path = directory.path().join("future.jsonl");
    std::fs::write(&future_path, future).expect("write");
    let output = felix(&["trace", "show", &future_path.to_string_lossy()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("trace format 99"), "{stderr}");
}

/// A failing run's trace ends with its verdict: one `violation` line per finding, after
/// `finished`, naming the step of the event the summary names; `trace show` renders it; a clean
/// run's trace has none.
#[test]
fn a_failing_trace_ends_with_its_violation() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("trace.jsonl");
    let path_text = path.to_string_lossy().into_owned();
    let output = felix(&[
        "replay",
        "--seed",
        "0",
        "--twin",
        "CompactActive",
        "--trace",
        &path_text,
    ]);
    let summary = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{summary}");
    let trace = std::fs::read_to_string(&path).expect("the trace");
    let lines: Vec<serde_json::Value> = trace
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let verdicts: Vec<&serde_json::Value> = lines
        .iter()
        .filter_map(|line| line["sim"].get("violation"))
        .collect();
    assert!(!verdicts.is_empty(), "no violation line in the trace");
    let first = verdicts[0];
    assert_eq!(first["invariant"], "FloorRecordKept", "{first}");
    let at = first["at_step"].as_u64().expect("at_step");
    assert!(
        summary.contains(&format!("step {at}")),
        "the summary does not name step {at}: {summary}"
    );
    // The verdict follows the run: every line before it is the run's, and it is last.
    let finished = lines
        .iter()
        .position(|line| line["sim"].get("finished").is_some())
        .expect("a finished line");
    let violation = lines
        .iter()
        .position(|line| line["sim"].get("violation").is_some())
        .expect("a violation line");
    assert!(finished < violation && at < lines[finished]["step"].as_u64().unwrap_or(0) + 1);
    let output = felix(&["trace", "show", &path_text]);
    let shown = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        shown.contains(&format!("VIOLATION FloorRecordKept at step {at}")),
        "{shown}"
    );
    let clean = directory.path().join("clean.jsonl");
    let output = felix(&["replay", "--seed", "3", "--trace", &clean.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let trace = std::fs::read_to_string(&clean).expect("the trace");
    assert!(
        !trace.contains("\"violation\""),
        "a clean run has no verdict line"
    );
}

/// `--fail-fast` stops at the first failing seed in seed order, says so, and prints the command
/// that resumes at the next seed; the same for any `--jobs`.
#[test]
fn fail_fast_stops_at_the_first_failing_seed() {
    for jobs in ["1", "2"] {
        let output = felix(&[
            "sweep",
            "--twin",
            "HiddenTrims",
            "--seeds",
            "0..100",
            "--fail-fast",
            "--jobs",
            jobs,
        ]);
        let stdout = text(&output.stdout);
        assert_eq!(output.status.code(), Some(1), "{stdout}");
        assert_eq!(stdout.matches("FAIL seed").count(), 1, "{stdout}");
        let first = stdout
            .split("FAIL seed ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|seed| seed.parse::<u64>().ok())
            .expect("the failing seed");
        assert!(
            stdout.contains(&format!("after {} of 100 seeds", first + 1)),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "resume: felix sweep --seeds {}..100 --twin HiddenTrims",
                first + 1
            )),
            "{stdout}"
        );
    }
}

/// `--time-budget` runs seeds in order until the budget is spent, then prints the summary of
/// those and the command that resumes at the next one (exit 0: every seed run held).
#[test]
fn a_time_budget_stops_in_order_and_says_where_to_resume() {
    let output = felix(&["sweep", "--seeds", "0..1000000", "--time-budget", "1s"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("the time budget ran out"), "{stdout}");
    assert!(stdout.contains("resume: felix sweep --seeds "), "{stdout}");
    for bad in ["0s", "5", "10x", "200h"] {
        let output = felix(&["sweep", "--time-budget", bad]);
        assert_eq!(output.status.code(), Some(2), "--time-budget {bad}");
    }
}

/// SIGINT stops a sweep between seeds: it prints the summary of the seeds finished so far and
/// exits 130.
#[test]
fn sigint_prints_the_summary_so_far_and_exits_130() {
    let child = Command::new(env!("CARGO_BIN_EXE_felix"))
        .args(["sweep", "--seeds", "0..1000000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn felix");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let output = child.wait_with_output().expect("wait for felix");
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("interrupted (SIGINT) after"), "{stdout}");
    assert!(stdout.contains("sweep hash"), "{stdout}");
    assert!(stdout.contains("resume: felix sweep --seeds "), "{stdout}");
}

/// A twin sweep says per invariant how many seeds broke it, the twin's named one marked; with
/// `--invariant NAME` a seed fails only when it breaks NAME, and the count of failing seeds is
/// that invariant's.
#[test]
fn verdicts_by_invariant() {
    // HiddenTrims' seeds break its StaleTrimRefused and, more often, Linearizable: the named
    // invariant's seeds are a part of the failing ones, in short runs.
    let seeds = ["--twin", "HiddenTrims", "--seeds", "0..60"];
    let plain = text(&felix(&[&["sweep"][..], &seeds[..]].concat()).stdout);
    let named = plain
        .lines()
        .find(|line| line.contains("seeds breaking each invariant:"))
        .and_then(|line| line.split("StaleTrimRefused=").nth(1))
        .and_then(|rest| rest.split(" (named)").next())
        .and_then(|count| count.parse::<u64>().ok())
        .expect("the named invariant's count, marked");
    assert!(named > 0, "{plain}");
    let output = felix(
        &[
            &["sweep"][..],
            &seeds[..],
            &["--invariant", "StaleTrimRefused"][..],
        ]
        .concat(),
    );
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!("60 seeds, {named} failed")),
        "{stdout}"
    );
    assert!(
        plain.contains("60 seeds, ") && !plain.contains(&format!("60 seeds, {named} failed")),
        "the twin's seeds break more than its named invariant: {plain}"
    );
    for line in stdout.lines().filter(|line| line.starts_with("FAIL seed")) {
        assert!(line.contains(": StaleTrimRefused ("), "{line}");
    }
    let output = felix(&["sweep", "--invariant", "NoSuchInvariant"]);
    assert_eq!(output.status.code(), Some(2));
}

/// The summary lists the coverage counters never hit apart; `--coverage never` prints only that
/// list, `--coverage none` neither.
#[test]
fn coverage_never_hit_is_listed_apart() {
    let summary =
        |shown: &str| text(&felix(&["sweep", "--seeds", "0..20", "--coverage", shown]).stdout);
    let full = summary("full");
    assert!(full.contains("  coverage: "), "{full}");
    let never = full
        .lines()
        .find_map(|line| line.strip_prefix("  never hit: "))
        .expect("a never-hit line");
    // Every counter listed as never hit is zero in the full line, and every zero is listed,
    // unless the catalog marks it unreachable under these rules or it counts a problem.
    let unreachable = full
        .lines()
        .find_map(|line| line.strip_prefix("  unreachable under these rules: "))
        .expect("the unreachable line (retention deletes nothing under the default rules)");
    assert!(unreachable.contains("retention_deleted (only trims delete"));
    let zeros: Vec<&str> = full
        .lines()
        .find_map(|line| line.strip_prefix("  coverage: "))
        .expect("the coverage line")
        .split(' ')
        .filter_map(|pair| pair.strip_suffix("=0"))
        .filter(|name| *name != "history_unchecked")
        .filter(|name| !unreachable.contains(&format!("{name} (")))
        .collect();
    let listed: Vec<&str> = if never == "none" {
        Vec::new()
    } else {
        never.split(' ').collect()
    };
    assert_eq!(zeros, listed, "{full}");
    // Twenty seeds reach far from every behaviour: --require-coverage fails them, and says so.
    let required = felix(&["sweep", "--seeds", "0..20", "--require-coverage"]);
    assert_eq!(required.status.code(), Some(1));
    assert!(text(&required.stdout).contains("(--require-coverage): NOT met"));
    let twin = felix(&[
        "sweep",
        "--seeds",
        "0..2",
        "--twin",
        "Untagged",
        "--require-coverage",
    ]);
    assert_eq!(twin.status.code(), Some(2));
    let only = summary("never");
    assert!(
        !only.contains("  coverage: ") && only.contains("  never hit: "),
        "{only}"
    );
    let none = summary("none");
    assert!(
        !none.contains("  coverage: ") && !none.contains("  never hit: "),
        "{none}"
    );
}
