//! `felix scenario` as a user runs it: exit codes for a pass, a mismatch (with its diff), a
//! rewrite, and bad files (file:line message, exit 2, no panic).

use super::support::felix;
use std::path::PathBuf;
use std::process::Command;

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
    // Proves an unknown verb, a missing `----`, a bad argument (a number; a name `stabilize hold=`
    // does not know) and an unreadable path are each reported as file:line (or file) on stderr
    // with exit 2, never a panic.
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
        (
            "hold",
            "cluster\n----\nx\n\nstabilize hold=h9\n----\nok\n",
            ":5: bad argument: `h9` is neither a node nor a client",
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

#[test]
fn scenario_traps_are_errors_and_rewrite_keeps_every_command() {
    // Proves two traps of the scenario format exit 2 with file:line: an empty expectation not closed by a
    // blank line (its `----` swallowed the next command), with and without --rewrite, leaving the
    // file untouched; and a file without any command (empty, prose only) instead of "1 passed".
    let swallowing = "Prose.\n\ncluster brokers=1\n----\n# then\naudit\n----\nok\n";
    let path = scratch("swallow", swallowing);
    let shown = path.display().to_string();
    for rewrite in [false, true] {
        let mut args = vec!["scenario"];
        if rewrite {
            args.push("--rewrite");
        }
        args.push(&shown);
        let (code, stdout, stderr) = felix(&args);
        assert_eq!(
            code, 2,
            "rewrite {rewrite}: stdout: {stdout}\nstderr: {stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "{shown}:7: a `----` line inside the expected output of `cluster brokers=1` (line 3)"
            )),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&path).expect("read"), swallowing);
    }
    let _ = std::fs::remove_file(&path);
    for (name, text) in [("empty", ""), ("prose", "Only prose.\nNo command.\n")] {
        let path = scratch(name, text);
        let shown = path.display().to_string();
        let (code, stdout, stderr) = felix(&["scenario", &shown]);
        assert_eq!(code, 2, "{name}: stdout: {stdout}\nstderr: {stderr}");
        assert!(
            stderr.contains(&format!("{shown}: no command in the file")),
            "{stderr}"
        );
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn non_regular_paths_are_named_not_missing() {
    // Proves /dev/null, a FIFO, a symbolic link loop and a directory holding a FIFO named *.txt
    // exit 2 naming what they are, never "no such file or directory", and never block.
    let (code, _, stderr) = felix(&["scenario", "/dev/null"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("/dev/null: a device, not a scenario file"),
        "{stderr}"
    );
    let dir = std::env::temp_dir().join(format!("felix-scenario-kinds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let fifo = dir.join("pipe.txt");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    for target in [&fifo, &dir] {
        let (code, _, stderr) = felix(&["scenario", target.to_str().expect("utf-8")]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("pipe.txt: a FIFO"), "{stderr}");
    }
    std::fs::remove_file(&fifo).expect("remove fifo");
    let looped = dir.join("loop.txt");
    std::os::unix::fs::symlink(&looped, &looped).expect("symlink loop");
    let (code, _, stderr) = felix(&["scenario", looped.to_str().expect("utf-8")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("a symbolic link that does not resolve"),
        "{stderr}"
    );
    assert!(!stderr.contains("no such file"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
