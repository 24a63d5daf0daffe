//! `felix replay ... --store-dir DIR`: a simulated cluster's disks as real file stores, read by
//! `felix store check` and `felix store dump` as a real node's are; and a DIR that holds anything
//! is refused before the run, with nothing written.

use super::support::felix;
use std::path::Path;

fn path_arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

/// The `trace hash` line of a replay's output.
fn trace_hash(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|line| line.contains("trace hash"))
        .expect("a trace hash line")
}

/// Replays `args` with `--store-dir`, checks the run is the one without it, and that every node's
/// directory holds a store `felix store check` opens cleanly. Returns the replay's stdout.
fn replay_with_stores(args: &[&str], dir: &Path, expected_code: i32, nodes: usize) -> String {
    let (plain_code, plain, _) = felix(args);
    let mut with_dir = args.to_vec();
    with_dir.extend(["--store-dir", path_arg(dir)]);
    let (code, stdout, stderr) = felix(&with_dir);
    assert_eq!(code, expected_code, "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(plain_code, code);
    assert_eq!(trace_hash(&plain), trace_hash(&stdout), "the same run");
    assert!(
        stdout.contains(&format!("stores: {nodes} node disks written to")),
        "{stdout}"
    );
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the store directory")
        .map(|item| {
            item.expect("item")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    let expected: Vec<String> = (0..nodes).map(|node| format!("n{node}")).collect();
    assert_eq!(names, expected);
    for name in &names {
        let node = dir.join(name);
        let (code, check, stderr) = felix(&["store", "check", path_arg(&node)]);
        assert_eq!(code, 0, "{name}: {check}\n{stderr}");
        assert!(check.contains("repairs: none"), "{name}: {check}");
        assert!(check.contains("torn tail: none"), "{name}: {check}");
    }
    stdout
}

#[test]
fn a_failing_runs_disks_open_as_stores() {
    // AckBeforeSync seed 23 breaks PromiseDurable first (a follower acknowledges before its
    // sync) and CommittedDurable next (its leader counts it: offset 2 of term 1, at step 52); its
    // four disks (three brokers and a replica) end agreeing (the run healed) and each holds offset
    // 2 as the noop of term 5 that replaced the term-1 record taken as committed there.
    let dir = tempfile::tempdir().expect("tempdir");
    let stores = dir.path().join("stores");
    let args = ["replay", "--seed", "23", "--twin", "AckBeforeSync"];
    let stdout = replay_with_stores(&args, &stores, 1, 4);
    assert!(
        stdout.contains("VIOLATION PromiseDurable at step 37"),
        "{stdout}"
    );
    assert!(
        stdout.contains("VIOLATION CommittedDurable at step 39"),
        "{stdout}"
    );
    for node in ["n0", "n1", "n2", "n3"] {
        let line = format!("  {}  node", stores.join(node).display());
        assert!(stdout.contains(&line), "missing {line:?} in {stdout}");
        let (code, dump, stderr) =
            felix(&["store", "dump", path_arg(&stores.join(node)), "--from", "2"]);
        assert_eq!(code, 0, "{stderr}");
        assert!(dump.contains("2@5 noop"), "{node}: {dump}");
    }
}

#[test]
fn a_compacted_disk_keeps_its_sealed_state() {
    // NoopSkip seed 3 passes; its five nodes trimmed and deleted segments below the floor, so
    // each store starts mid-log (at or below the sealed floor) with the sealed state the deleted
    // records folded to, based on the record just before its first.
    let dir = tempfile::tempdir().expect("tempdir");
    let args = ["replay", "--seed", "3", "--twin", "NoopSkip"];
    replay_with_stores(&args, dir.path(), 0, 5);
    let (code, check, _) = felix(&["store", "check", path_arg(&dir.path().join("n4"))]);
    assert_eq!(code, 0);
    let number_after = |label: &str| -> u64 {
        let rest = check
            .split(label)
            .nth(1)
            .unwrap_or_else(|| panic!("{label}: {check}"));
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("{label}: {check}"))
    };
    let floor = number_after("floor (sealed): ");
    let first = number_after("log: offsets ");
    assert!(1 < first && first <= floor, "{check}");
    assert!(
        check.contains(&format!("sealed: base {}@", first - 1)),
        "{check}"
    );
}

#[test]
fn a_directory_holding_anything_is_refused_before_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kept = dir.path().join("keep.txt");
    std::fs::write(&kept, b"mine").expect("write");
    let args = ["replay", "--seed", "3", "--store-dir", path_arg(dir.path())];
    let (code, stdout, stderr) = felix(&args);
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("not empty"), "{stderr}");
    assert!(stdout.is_empty(), "refused before the run: {stdout}");
    assert_eq!(std::fs::read(&kept).expect("kept"), b"mine");
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
    let args = ["replay", "--seed", "3", "--store-dir", path_arg(&kept)];
    let (code, _, stderr) = felix(&args);
    assert_eq!(code, 2);
    assert!(stderr.contains("--store-dir"), "{stderr}");
    assert_eq!(std::fs::read(&kept).expect("kept"), b"mine");
}
