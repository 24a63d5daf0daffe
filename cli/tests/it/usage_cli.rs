//! What README.md promises about the `felix` command, held against the binary: the synopsis
//! names every flag each subcommand accepts (and only those), `sweep --json` prints one object
//! per failing seed plus a summary, and the exit codes of two traps (a `--shard` that selects
//! no seed, a `bench store --dir` that cannot be made) exit 2 with a message.

use super::support::felix;
use std::collections::BTreeSet;

/// The `--flags` in `text`, without `--help` and `--version`.
fn flags(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .filter(|word| *word != "--help" && *word != "--version")
        .map(str::to_string)
        .collect()
}

/// The synopsis block of README.md: one `felix <command> ...` line per subcommand.
fn synopsis() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let section = readme
        .split("## The `felix` command")
        .nth(1)
        .expect("the README has a section on the felix command");
    let block = section.split("```").nth(1).expect("a synopsis block");
    let mut lines: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        if let Some(rest) = line.trim().strip_prefix("felix ") {
            let (command, usage) = rest.trim().split_once(' ').unwrap_or((rest.trim(), ""));
            lines.push((command.to_string(), usage.to_string()));
        } else if let Some((_, usage)) = lines.last_mut() {
            // An indented continuation of the line above.
            usage.push(' ');
            usage.push_str(line.trim());
        }
    }
    lines
}

/// The options a clap help text lists: the first `--flag` of each line that starts with `-`.
fn help_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter(|line| line.trim_start().starts_with('-'))
        .filter_map(|line| flags(line.split("  ").find(|part| part.contains("--"))?).pop_first())
        .filter(|flag| flag != "--help" && flag != "--version")
        .collect()
}

/// The subcommands a clap help text lists under `Commands:` (without `help`).
fn help_commands(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .map(str::to_string)
        .collect()
}

/// The help text a synopsis line describes. A command with flags of its own besides its actions
/// (sweep): `felix sweep merge ...`, naming one action, is that action's; `felix sweep [--seeds
/// ...]` the command's own. Otherwise a line that names its actions (store, bench, client) is
/// every action's.
fn help(command: &str, usage: &str) -> String {
    let (code, top, stderr) = felix(&[command, "--help"]);
    assert_eq!(code, 0, "felix {command} --help: {stderr}");
    let actions = help_commands(&top);
    if actions.is_empty() {
        return top;
    }
    if !help_flags(&top).is_empty() {
        let words: Vec<&str> = usage.split_whitespace().collect();
        let first = words.first().copied().unwrap_or("");
        let named = words.iter().filter(|word| actions.contains(**word)).count();
        if actions.contains(first) && named == 1 {
            let (code, stdout, stderr) = felix(&[command, first, "--help"]);
            assert_eq!(code, 0, "felix {command} {first} --help: {stderr}");
            return stdout;
        }
        if first.starts_with('[') || first.starts_with('-') {
            return top;
        }
    }
    let mut text = String::new();
    for action in &actions {
        let (code, stdout, stderr) = felix(&[command, action, "--help"]);
        assert_eq!(code, 0, "felix {command} {action} --help: {stderr}");
        text.push_str(&stdout);
    }
    text
}

#[test]
fn the_readme_synopsis_matches_every_subcommand_and_flag() {
    // Proves the README synopsis lists every subcommand of `felix --help` and, for each, exactly
    // the flags its --help lists (it used to lack `sweep --control` and `twins --jobs`).
    let lines = synopsis();
    let listed: BTreeSet<&str> = lines.iter().map(|(command, _)| command.as_str()).collect();
    let (code, top, _) = felix(&["--help"]);
    assert_eq!(code, 0);
    let commands = help_commands(&top);
    assert!(commands.contains("store"), "{top}");
    for command in &commands {
        assert!(
            listed.contains(command.as_str()),
            "README synopsis lacks `felix {command}`"
        );
    }
    for (command, usage) in &lines {
        assert!(
            commands.contains(command),
            "README lists unknown `felix {command}`"
        );
        assert_eq!(
            flags(usage),
            help_flags(&help(command, usage)),
            "README synopsis of `felix {command}` against its --help"
        );
    }
}

#[test]
fn sweep_json_prints_one_object_per_failing_seed_then_a_summary() {
    // Proves what the README says: with --json, a sweep prints one line per failing seed (never
    // one per seed) and then one summary line, every line a JSON object.
    let (code, stdout, stderr) = felix(&[
        "sweep",
        "--seeds",
        "0..40",
        "--twin",
        "TailFromRefusal",
        "--json",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let summary = lines.last().expect("a summary line");
    assert_eq!(summary["seeds"], 40);
    let failed = summary["failed"].as_u64().expect("failed count");
    assert!((1..40).contains(&failed), "{summary}");
    assert_eq!(lines.len() as u64, failed + 1);
    for line in &lines[..lines.len() - 1] {
        assert!(
            line["seed"].is_u64() && line["replay"].is_string(),
            "{line}"
        );
    }
    let (code, stdout, _) = felix(&["sweep", "--seeds", "0..3", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.lines().count(),
        1,
        "a clean sweep prints only its summary"
    );
}

#[test]
fn a_shard_that_selects_no_seed_is_bad_input() {
    // Proves `--shard 3/4` over a range of two seeds exits 2 and says why, instead of a silent,
    // empty pass; a shard that selects one seed still runs.
    let (code, stdout, stderr) = felix(&["sweep", "--seeds", "10..12", "--shard", "3/4"]);
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.contains("--shard 3/4 selects no seed of 10..12"),
        "{stderr}"
    );
    let (code, _, stderr) = felix(&["sweep", "--seeds", "10..12", "--shard", "2/4", "--json"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn bench_store_with_a_directory_that_cannot_be_made_is_bad_input() {
    // Proves `bench store --dir /proc/x` (no such directory can be created) exits 2 with the
    // reason, where it used to exit 1 as if the store had failed.
    let (code, stdout, stderr) = felix(&[
        "bench",
        "store",
        "--records",
        "10",
        "--dir",
        "/proc/felix-no-such-dir/x",
    ]);
    assert_eq!(code, 2, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.contains("cannot create /proc/felix-no-such-dir/x"),
        "{stderr}"
    );
}

/// `felix shrink` refuses bad input with exit 2 and a message: no twin, a bad seed, a budget of
/// zero, a seed that does not break the twin's invariant, a fork that is not `STEP:BRANCH` or names
/// a branch over the most.
#[test]
fn shrink_refuses_bad_input() {
    let felix = env!("CARGO_BIN_EXE_felix");
    for args in [
        vec!["shrink", "--seed", "3"],
        vec!["shrink", "--seed", "x", "--twin", "HiddenTrims"],
        vec!["shrink", "--seed", "3", "--twin", "Nope"],
        vec![
            "shrink",
            "--seed",
            "30",
            "--twin",
            "HiddenTrims",
            "--budget",
            "0",
        ],
        vec![
            "shrink",
            "--seed",
            "2",
            "--twin",
            "CompactActive",
            "--out",
            "/nonexistent/dir/x.txt",
        ],
        vec![
            "shrink",
            "--seed",
            "0",
            "--twin",
            "CompactActive",
            "--invariant",
            "Nope",
        ],
        vec![
            "shrink",
            "--seed",
            "0",
            "--twin",
            "CompactActive",
            "--knobs",
            "{",
        ],
        vec![
            "shrink",
            "--seed",
            "0",
            "--twin",
            "CompactActive",
            "--unbiased",
            "--knobs",
            "{}",
        ],
        vec![
            "shrink",
            "--seed",
            "0",
            "--twin",
            "CompactActive",
            "--fork",
            "50:x",
        ],
        vec![
            "shrink",
            "--seed",
            "0",
            "--twin",
            "CompactActive",
            "--fork",
            "50:2000000",
        ],
    ] {
        let output = std::process::Command::new(felix)
            .args(&args)
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!output.stderr.is_empty(), "{args:?}");
    }
}

/// `felix shrink` takes the flags a printed replay command has: the unbiased gate's
/// `felix replay --seed 0 --twin CompactActive --unbiased` shrinks with `shrink` in its place, and
/// the scenario's header repeats the command; `--invariant` keeps a finding the run has.
#[test]
fn shrink_takes_the_unbiased_replay_command() {
    let felix = env!("CARGO_BIN_EXE_felix");
    let directory = tempfile::tempdir().expect("tempdir");
    let out = directory.path().join("x.txt");
    let output = std::process::Command::new(felix)
        .args([
            "shrink",
            "--seed",
            "0",
            "--twin",
            "CompactActive",
            "--unbiased",
        ])
        .args(["--invariant", "FloorRecordKept", "--budget", "60", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("breaks FloorRecordKept"), "{stdout}");
    let scenario = std::fs::read_to_string(&out).expect("the scenario");
    assert!(
        scenario.contains("--twin CompactActive --unbiased --invariant FloorRecordKept"),
        "{scenario}"
    );
    let output = std::process::Command::new(felix)
        .arg("scenario")
        .arg(&out)
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// `felix shrink` takes a continuation's replay command with `shrink` in its place: `felix replay
/// --seed 0 --twin CompactActive --unbiased --fork 50:1` is the run it shrinks (its event count is
/// the one the replay prints, not the unforked run's), the scenario's header repeats `--fork`, and
/// the scenario passes.
#[test]
fn shrink_takes_a_fork_replay_command() {
    let felix = env!("CARGO_BIN_EXE_felix");
    let run = ["--seed", "0", "--twin", "CompactActive", "--unbiased"];
    let fork = ["--fork", "50:1"];
    let replayed = std::process::Command::new(felix)
        .arg("replay")
        .args(run)
        .args(fork)
        .output()
        .expect("runs");
    let replayed = String::from_utf8_lossy(&replayed.stdout).to_string();
    let events = |text: &str, after: &str| -> Option<u64> {
        let rest = &text[text.find(after)? + after.len()..];
        rest.split_whitespace().next()?.parse().ok()
    };
    // The replay's `N events, M trace lines, ..., trace hash H` line.
    let forked = replayed
        .lines()
        .find(|line| line.contains(" events, ") && line.contains("trace hash"))
        .and_then(|line| line.split_whitespace().next()?.parse::<u64>().ok())
        .expect("the replay's event count");
    let directory = tempfile::tempdir().expect("tempdir");
    let out = directory.path().join("x.txt");
    let output = std::process::Command::new(felix)
        .arg("shrink")
        .args(run)
        .args(fork)
        .args(["--budget", "60", "--out"])
        .arg(&out)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert_eq!(events(&stdout, "; events "), Some(forked), "{stdout}");
    let scenario = std::fs::read_to_string(&out).expect("the scenario");
    assert!(
        scenario.contains("--twin CompactActive --unbiased --fork 50:1 --budget 60"),
        "{scenario}"
    );
    let output = std::process::Command::new(felix)
        .arg("scenario")
        .arg(&out)
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Knobs that would overflow a run's times (a safety phase of 2^64 - 1 microseconds, which
/// panicked with an overflow) are refused with the knob's name and exit 2, by `replay` and
/// `shrink` alike.
#[test]
fn knobs_past_their_sizes_exit_2_naming_the_knob() {
    let mut knobs =
        serde_json::to_value(felix_sim::seeded::knobs::Knobs::draw(7, None)).expect("JSON");
    knobs["safety_micros"] = serde_json::Value::from(u64::MAX);
    let knobs = knobs.to_string();
    for args in [
        vec!["replay", "--seed", "7", "--knobs", &knobs],
        vec![
            "shrink",
            "--seed",
            "7",
            "--twin",
            "CompactActive",
            "--knobs",
            &knobs,
        ],
    ] {
        let (code, _, stderr) = felix(&args);
        assert_eq!(code, 2, "{}: {stderr}", args[0]);
        assert!(
            stderr.contains("safety_micros: at most 3600000000"),
            "{}: {stderr}",
            args[0]
        );
    }
}
