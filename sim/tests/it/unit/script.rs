//! The unit tests of `felix_sim::script` (sim/src/script/mod.rs).

use std::path::{Path, PathBuf};

use felix_sim::script::*;

/// A bad argument is reported at the block's file and line, after the blocks before it ran.
#[test]
fn bad_argument_names_file_and_line() {
    let text = "Prose.\n\ncluster brokers=3\n----\nx\n\ntick n9\n----\nok\n";
    let error = run_text("bad.txt", text).expect_err("n9 does not exist");
    assert_eq!(error.line, 7);
    assert_eq!(
        error.to_string(),
        "bad.txt:7: bad argument: no node `n9` (this cluster has n0..n2)"
    );
    let error = run_text("bad.txt", "cluster brokers=many\n----\nx\n").expect_err("number");
    assert_eq!(
        error.to_string(),
        "bad.txt:1: bad argument: `brokers` must be a number, got `many`"
    );
    let error = run_text("bad.txt", "cluster color=red\n----\nx\n").expect_err("key");
    assert!(error
        .to_string()
        .starts_with("bad.txt:1: bad argument: `cluster` takes no `color=`"));
}

/// Segments and retention past their sizes are bad arguments, not a core panic: a segment of
/// 2^64 - 1 records ends past the last offset, and retention of 2^64 - 1 segments overflowed the
/// records it keeps (both panicked, found by replacing each number of `scenarios/` in turn).
#[test]
fn segments_and_retention_past_their_sizes_are_bad_arguments() {
    let run = |cluster: &str| {
        let steps = "campaign n0\n----\nx\n\nstabilize\n----\nx\n\nlease h1\n----\nx\n";
        let text = format!("{cluster}\n----\nx\n\n{steps}\nwrite h1 a\n----\nx\n");
        run_text("big.txt", &text)
            .map(|_| ())
            .map_err(|error| error.to_string())
    };
    assert_eq!(
        run("cluster segment=18446744073709551615 twin=CompactActive"),
        Err("big.txt:1: bad argument: segment must be 1..=1048576 records".to_string())
    );
    assert_eq!(
        run("cluster retention=18446744073709551615 twin=Retention"),
        Err("big.txt:1: bad argument: retention must be 0..=1000000 segments".to_string())
    );
    for cluster in [
        "cluster segment=1048576 twin=CompactActive",
        "cluster segment=4 retention=1000000 twin=Retention",
    ] {
        let ran = run(cluster);
        assert!(
            !ran.as_ref()
                .is_err_and(|error| error.contains("bad argument")),
            "{cluster}: {ran:?}"
        );
    }
}

/// An unreadable path is an error naming it, never a panic.
#[test]
fn unreadable_path_is_an_error() {
    let error = run_file(Path::new("/nonexistent/felix/scenario.txt")).expect_err("missing");
    assert_eq!(error.line, 0);
    assert_eq!(
        error.to_string(),
        "/nonexistent/felix/scenario.txt: no such file or directory"
    );
    let error = collect(&[PathBuf::from("/nonexistent/felix")]).expect_err("missing");
    assert!(error.to_string().contains("no such file or directory"));
}

/// /dev/null, a FIFO, a symbolic link loop and a directory given as a file are each named for
/// what they are (never "no such file or directory"), and nothing blocks on the FIFO.
#[test]
fn non_regular_paths_are_named_for_what_they_are() {
    let error = collect(&[PathBuf::from("/dev/null")]).expect_err("device");
    assert_eq!(
        error.to_string(),
        "/dev/null: a device, not a scenario file (a regular *.txt file) or a directory"
    );
    let dir = std::env::temp_dir().join(format!("felix-script-kinds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let fifo = dir.join("fifo.txt");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(status.success());
    let error = collect(std::slice::from_ref(&fifo)).expect_err("fifo");
    assert!(
        error
            .to_string()
            .ends_with(": a FIFO, not a scenario file (a regular *.txt file) or a directory"),
        "{error}"
    );
    let error = run_file(&fifo).expect_err("fifo");
    assert!(error.to_string().contains("a FIFO"), "{error}");
    let error = collect(std::slice::from_ref(&dir)).expect_err("a FIFO named *.txt inside");
    assert!(error.to_string().contains("a FIFO"), "{error}");
    std::fs::remove_file(&fifo).expect("remove fifo");
    let looped = dir.join("loop.txt");
    std::os::unix::fs::symlink(&looped, &looped).expect("symlink loop");
    let error = collect(std::slice::from_ref(&looped)).expect_err("loop");
    assert!(
        error
            .to_string()
            .contains("a symbolic link that does not resolve"),
        "{error}"
    );
    std::fs::remove_file(&looped).expect("remove loop");
    let error = run_file(&dir).expect_err("directory");
    assert!(
        error
            .to_string()
            .ends_with("a directory, not a scenario file"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A mismatch is reported with a diff naming the block, and rewriting fixes it.
#[test]
fn mismatch_diff_and_rewrite() {
    let text = "Prose.\n\ncluster brokers=1\n----\nwrong\n\naudit\n----\nok\n";
    let outcome = run_text("m.txt", text).expect("runs");
    assert!(!outcome.passed());
    let diff = outcome.diff();
    assert!(
        diff.starts_with(
            "m.txt:3: cluster brokers=1\n--- expected\n+++ actual\n-wrong\n+1 brokers (n0)"
        ),
        "{diff}"
    );
    let again = run_text("m.txt", &outcome.rewritten().expect("rewrites")).expect("runs");
    assert!(again.passed(), "{}", again.diff());
}

/// The line diff keeps common lines and marks the others.
#[test]
fn diff_lines_marks_changes() {
    let expected: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let actual: Vec<String> = ["a", "x", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(diff_lines(&expected, &actual), vec![" a", "-b", "+x", " c"]);
}
