//! `felix sweep --guided`, `felix replay --knobs` and `felix twins --unbiased` as a user runs
//! them: a campaign's output does not depend on `--jobs`, every finding replays from the command
//! printed with it, and malformed arguments exit 2.

use super::support::felix_output as felix;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The words of a printed replay command, as a shell would pass them (single quotes removed).
fn shell_words(command: &str) -> Vec<String> {
    command
        .split_whitespace()
        .map(|word| word.trim_matches('\'').to_string())
        .collect()
}

/// Every malformed argument of the new flags is a clear message and exit code 2.
#[test]
fn bad_input_exits_2_with_a_message() {
    let cases: &[&[&str]] = &[
        &["sweep", "--guided", "--shard", "1/2"],
        &["sweep", "--guided", "--twin", "Untagged", "--control"],
        &["replay", "--seed", "1", "--knobs", "{not json"],
        &["replay", "--seed", "1", "--knobs", "{\"brokers\":3}"],
        &["twins", "--sim", "--search", "guided"],
        &["twins", "--sim", "--unbiased", "--search", "sideways"],
        // Flags that would do nothing where given.
        &["replay", "--seed", "3", "--unbiased"],
        &["twins", "--model", "--median-max", "0"],
        &["twins", "--model", "--unbiased"],
        &["twins", "--search", "guided"],
        // Continuations: a fork is STEP:BRANCH, and branching follows a guided campaign.
        &["replay", "--seed", "1", "--fork", "12"],
        &["replay", "--seed", "1", "--fork", "a:1"],
        &["replay", "--seed", "1", "--fork", "12:-1"],
        &["replay", "--seed", "1", "--fork", "12:99999999"],
        &["sweep", "--seeds", "0..4", "--branches"],
        &[
            "twins",
            "--sim",
            "--unbiased",
            "--search",
            "plain",
            "--branches",
        ],
    ];
    for args in cases {
        let output = felix(args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "felix {args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "felix {args:?}: {stderr}");
        assert!(!stderr.trim().is_empty(), "felix {args:?} said nothing");
        // Refused before anything ran: nothing on stdout (no model twins checked first).
        assert!(
            output.stdout.is_empty(),
            "felix {args:?}: {}",
            text(&output.stdout)
        );
    }
}

/// A guided campaign prints the same findings and summary for any `--jobs`, and the first
/// finding's replay command (a mutant's knobs in full when a mutation chose them) reproduces it.
#[test]
fn guided_campaigns_are_deterministic_and_replayable() {
    let run = |jobs: &str| {
        let output = felix(&[
            "sweep",
            "--guided",
            "--seeds",
            "0..96",
            "--twin",
            "TailFromRefusal",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
        let lines: Vec<serde_json::Value> = text(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .map(|mut value: serde_json::Value| {
                if let Some(object) = value.as_object_mut() {
                    object.remove("seconds");
                }
                value
            })
            .collect();
        lines
    };
    let one = run("1");
    assert_eq!(one, run("3"));
    let summary = one.last().cloned().unwrap_or_default();
    assert_eq!(summary["guided"], true);
    assert_eq!(summary["seeds"], 96);
    assert!(summary["mutants"].as_u64().unwrap_or(0) > 0, "{summary}");
    let findings: Vec<&serde_json::Value> = one
        .iter()
        .filter(|value| value["violation"].is_string())
        .collect();
    assert!(!findings.is_empty());
    // A mutant's finding: its replay carries the knobs in full (--knobs JSON).
    let mutant = findings
        .iter()
        .find(|value| value["replay"].as_str().unwrap_or("").contains("--knobs"));
    assert!(
        mutant.is_some(),
        "no mutant among {} findings",
        findings.len()
    );
    assert_replays(mutant.copied().unwrap_or_default());
}

/// A finding's printed replay command, run as a shell would run it, fails with the same
/// violation and the same trace hash.
fn assert_replays(finding: &serde_json::Value) {
    let words = shell_words(finding["replay"].as_str().unwrap_or_default());
    assert_eq!(
        words.first().map(String::as_str),
        Some("felix"),
        "{finding}"
    );
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let again = felix(&args);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again.stderr));
    let stdout = text(&again.stdout);
    let violation = finding["violation"].as_str().unwrap_or_default();
    assert!(
        stdout.contains(&format!("VIOLATION {violation}")),
        "{stdout}"
    );
    let hash = finding["trace_hash"].as_str().unwrap_or_default();
    assert!(stdout.contains(&format!("trace hash {hash}")), "{stdout}");
}

/// `felix twins --unbiased --start S` hunts from seed S (every catching seed lies in
/// S..S+budget), and `--median-max` fails a search whose median is above it, saying so.
#[test]
fn twins_start_and_median_max() {
    let output = felix(&[
        "twins",
        "--sim",
        "--unbiased",
        "--search",
        "plain",
        "--budget",
        "4",
        "--start",
        "500",
        "--median-max",
        "0",
        "--json",
        "--jobs",
        "2",
    ]);
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    let mut caught = 0;
    let mut collateral_seen = false;
    for line in stdout.lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        if let Some(seed) = value["plain"]["seed"].as_u64() {
            assert!((500..504).contains(&seed), "{line}");
            caught += 1;
            // The collateral findings of the catching run: other invariants only, each of them
            // broken in that run as its replay shows.
            let collateral = value["plain"]["collateral"].as_array().expect("collateral");
            assert!(!collateral.contains(&value["expected"]), "{line}");
            if !collateral.is_empty() {
                // The replay's trace ends with one verdict line per finding.
                let replay = value["plain"]["replay"].as_str().expect("replay");
                let dir = tempfile::tempdir().expect("tempdir");
                let trace = dir.path().join("run.jsonl");
                let mut args: Vec<&str> = replay.split_whitespace().skip(1).collect();
                args.extend(["--trace", trace.to_str().expect("a UTF-8 path")]);
                felix(&args);
                let shown = std::fs::read_to_string(&trace).expect("the trace");
                for invariant in collateral {
                    let verdict =
                        format!("\"invariant\":\"{}\"", invariant.as_str().expect("a name"));
                    assert!(shown.contains(&verdict), "{replay}: no {verdict} line");
                }
                collateral_seen = true;
            }
        }
    }
    assert!(caught > 0, "no twin caught in 500..504: {stdout}");
    assert!(
        collateral_seen,
        "no catching run broke a second invariant: {stdout}"
    );
    assert!(stderr.contains("FAILED, above --median-max 0"), "{stderr}");
}

/// A branching campaign (`--branches`) follows a first hit with continuations, and a failing
/// continuation's printed command (`--fork STEP:BRANCH`) replays it: the same violation and the
/// same trace hash.
#[test]
fn a_failing_continuation_replays_from_its_command() {
    let output = felix(&[
        "sweep",
        "--guided",
        "--branches",
        "--seeds",
        "0..96",
        "--twin",
        "HiddenTrims",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let lines: Vec<serde_json::Value> = text(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let summary = lines.last().cloned().unwrap_or_default();
    assert_eq!(summary["branching"], true);
    assert!(
        summary["continuations"].as_u64().unwrap_or(0) > 0,
        "{summary}"
    );
    let finding = lines
        .iter()
        .find(|value| value["replay"].as_str().unwrap_or("").contains("--fork"))
        .cloned()
        .expect("a failing continuation");
    assert_replays(&finding);
}
