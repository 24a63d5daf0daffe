//! `felix scenario` as a user runs it: exit codes for a pass, a mismatch (with its diff), a
//! rewrite, and bad files (file:line message, exit 2, no panic).

use std::path::PathBuf;
use std::process::Command;

fn felix(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_felix"))
        .args(args)
        .output()
        .expect("the felix binary runs");
    (
        output.status.code().expect("felix exits with a code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A scratch file unique to this test process and name.
fn scratch(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "felix-scenario-cli-{}-{name}.txt",
        std::process::id()
    ));
    std::fs::write(&path, text).expect("the temp dir is writable");
    path
}

#[test]
fn a_mismatch_exits_1_with_a_diff_and_rewrite_fixes_it() {
    // Proves a wrong expectation fails with exit 1 and a -/+ diff naming file:line, that
    // --rewrite writes the actual output (exit 0), and that the file then passes.
    let path = scratch("mismatch", "Prose.\n\ncluster brokers=1\n----\nwrong\n");
    let shown = path.display().to_string();
    let (code, stdout, stderr) = felix(&["scenario", &shown]);
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains(&format!("{shown}:3: cluster brokers=1")),
        "{stdout}"
    );
    assert!(
        stdout.contains("-wrong\n+1 brokers (n0), segments of 4 records"),
        "{stdout}"
    );
    let (code, _, stderr) = felix(&["scenario", "--rewrite", &shown]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = felix(&["scenario", &shown]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn bad_files_exit_2_with_file_and_line() {
    // Proves an unknown verb, a missing `----`, a bad argument and an unreadable path are each
    // reported as file:line (or file) on stderr with exit 2, never a panic.
    let cases = [
        (
            "verb",
            "cluster\n----\nx\n\nfly n0\n----\nok\n",
            ":5: unknown verb `fly`",
        ),
        (
            "separator",
            "cluster\n----\nx\n\naudit\nok\n",
            ":5: missing `----` after `audit`",
        ),
        (
            "argument",
            "cluster brokers=x\n----\nok\n",
            ":1: bad argument: `brokers` must be a number",
        ),
    ];
    for (name, text, expected) in cases {
        let path = scratch(name, text);
        let shown = path.display().to_string();
        let (code, stdout, stderr) = felix(&["scenario", &shown]);
        assert_eq!(code, 2, "{name}: stdout: {stdout}\nstderr: {stderr}");
        assert!(
            stderr.contains(&format!("{shown}{expected}")),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        let _ = std::fs::remove_file(&path);
    }
    let (code, _, stderr) = felix(&["scenario", "/nonexistent/felix-scenario.txt"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/nonexistent/felix-scenario.txt: no such file or directory"));
}
