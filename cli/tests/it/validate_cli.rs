//! `felix sweep --validate` and `felix replay --validate` as a user runs them: a clean run names
//! the model actions its steps matched and counts them; a divergence fails with exit 1 and prints
//! the step, the projections before and after and the actions tried.

use super::support::felix_output as felix;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A clean seed validates: exit 0, the readable trace names model actions, the counts are printed.
/// (The first seed of 0..20 that passes: no seed is pinned.)
#[test]
fn replay_validate_names_the_matched_actions() {
    let passing = (0..20u64).map(|seed| seed.to_string()).find_map(|seed| {
        let output = felix(&["replay", "--seed", &seed, "--validate", "--all"]);
        (output.status.code() == Some(0)).then_some(output)
    });
    let Some(output) = passing else {
        panic!("no seed of 0..20 passes with --validate")
    };
    let stdout = text(&output.stdout);
    assert!(stdout.contains("= model: node"), "{stdout}");
    assert!(stdout.contains("Replicate("), "{stdout}");
    assert!(stdout.contains("Promote("), "{stdout}");
    assert!(stdout.contains("validated: "), "{stdout}");
}

/// A paros run is held to ParosTrimJump: its trace names the fence as `SetLeader` and the
/// summary counts the steps under that model. (The first paros seed of 0..40: no seed is pinned.)
#[test]
fn replay_validate_holds_a_paros_run_to_paros_trim_jump() {
    let paros = (0..40u64).map(|seed| seed.to_string()).find_map(|seed| {
        let output = felix(&["replay", "--seed", &seed, "--validate", "--all"]);
        let stdout = text(&output.stdout);
        (output.status.code() == Some(0) && stdout.contains("validated by ParosTrimJump"))
            .then_some(stdout)
    });
    let Some(stdout) = paros else {
        panic!("no paros seed of 0..40 passes with --validate")
    };
    assert!(
        stdout.contains("validated trace against ParosTrimJump"),
        "{stdout}"
    );
    assert!(stdout.contains("SetLeader("), "{stdout}");
    assert!(!stdout.contains("validated by FelixHeadTrim"), "{stdout}");
}

/// A Retention twin run deletes past the floor: the model's `Compact` forbids it, so validation
/// fails the run (exit 1) and explains the step, where the same run without `--validate` passes
/// (the first such seed of 0..20: no seed is pinned).
#[test]
fn replay_validate_reports_a_divergence() {
    let caught = (0..20u64).map(|seed| seed.to_string()).find_map(|seed| {
        let plain = felix(&["replay", "--seed", &seed, "--twin", "Retention"]);
        if plain.status.code() != Some(0) {
            return None;
        }
        let output = felix(&[
            "replay",
            "--seed",
            &seed,
            "--twin",
            "Retention",
            "--validate",
        ]);
        (output.status.code() == Some(1)).then_some((seed, output))
    });
    let Some((seed, output)) = caught else {
        panic!("no Retention seed of 0..20 passes plain and diverges with --validate")
    };
    let stdout = text(&output.stdout);
    let replay = format!("replay: felix replay --seed {seed} --twin Retention");
    for expected in [
        "VIOLATION TraceValidation",
        "is not enabled in the model",
        "before: ",
        "after:  ",
        "tried: ",
        replay.as_str(),
    ] {
        assert!(
            stdout.contains(expected),
            "{expected:?} missing from:\n{stdout}"
        );
    }
}

/// A validated sweep counts validated steps and matched actions; `--guided` refuses the flag.
#[test]
fn sweep_validate_counts_steps_and_actions() {
    let output = felix(&["sweep", "--seeds", "0..8", "--validate", "--jobs", "1"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("validated: "), "{stdout}");
    assert!(stdout.contains("matched to model actions"), "{stdout}");
    let failing = felix(&[
        "sweep",
        "--seeds",
        "0..3",
        "--twin",
        "Retention",
        "--validate",
    ]);
    assert_eq!(failing.status.code(), Some(1));
    assert!(text(&failing.stdout).contains("TraceValidation"));
    let guided = felix(&["sweep", "--seeds", "0..3", "--guided", "--validate"]);
    assert_eq!(guided.status.code(), Some(2));
    assert!(!text(&guided.stderr).contains("panicked"));
}
