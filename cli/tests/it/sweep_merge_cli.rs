//! `felix sweep merge`: the shards of a sweep, merged, are the unsharded sweep: the same failing
//! seeds in seed order, the same summary and sweep hash (only the wall-time fields differ).

use super::support::felix;
use serde_json::Value;

/// The lines of a `--json` output, the summary's wall-time fields removed.
fn comparable(stdout: &str) -> Vec<Value> {
    let mut lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let summary = lines
        .last_mut()
        .expect("a summary")
        .as_object_mut()
        .unwrap();
    for key in [
        "seconds",
        "seeds_per_second",
        "events_per_second",
        "simulated_to_wall",
        "jobs",
    ] {
        summary.remove(key).expect("a wall-time field");
    }
    lines
}

fn shards(dir: &std::path::Path, args: &[&str], n: u64) -> Vec<String> {
    (1..=n)
        .map(|k| {
            let shard = format!("{k}/{n}");
            let mut all = args.to_vec();
            all.extend(["--json", "--shard", &shard]);
            let (_, stdout, stderr) = felix(&all);
            assert!(stderr.is_empty(), "{stderr}");
            let path = dir.join(format!("shard-{k}.json"));
            std::fs::write(&path, stdout).unwrap();
            path.display().to_string()
        })
        .collect()
}

#[test]
fn four_merged_shards_are_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["sweep", "--seeds", "3..43", "--twin", "NoopSkip"];
    let (code, whole, _) = felix(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 1, "the twin fails some seeds: {whole}");
    let files = shards(dir.path(), &args, 4);
    // Any order of the files.
    let mut merge = vec!["sweep", "merge"];
    merge.extend(files.iter().rev().map(String::as_str));
    let (code, merged, stderr) = felix(&merge);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(comparable(&merged), comparable(&whole));
    let failing = comparable(&merged).len() - 1;
    assert!(failing >= 2, "the test needs failing seeds: {failing}");
    // The default swarm, every rule on: exit 0, and coverage can be required of the merge.
    let args = ["sweep", "--seeds", "0..30"];
    let (_, whole, _) = felix(&[&args[..], &["--json"]].concat());
    let files = shards(dir.path(), &args, 3);
    let mut merge = vec!["sweep", "merge"];
    merge.extend(files.iter().map(String::as_str));
    let (code, merged, stderr) = felix(&merge);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(comparable(&merged), comparable(&whole));
}

/// Validated shards merge into the validated sweep: trace validation's counts, read back from
/// the shards' names into its tally and summed, print as the unsharded sweep prints them.
#[test]
fn merged_validation_counts_are_the_unsharded_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["sweep", "--seeds", "0..8", "--validate"];
    let (code, whole, _) = felix(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{whole}");
    let files = shards(dir.path(), &args, 2);
    let mut merge = vec!["sweep", "merge"];
    merge.extend(files.iter().map(String::as_str));
    let (code, merged, stderr) = felix(&merge);
    assert_eq!(code, 0, "{stderr}");
    let merged = comparable(&merged);
    assert_eq!(merged, comparable(&whole));
    let coverage = merged.last().unwrap()["coverage"].as_object().unwrap();
    let steps = coverage.get("validated_steps").and_then(Value::as_u64);
    assert!(steps.is_some_and(|steps| steps > 0), "{coverage:?}");
}

#[test]
fn what_is_not_one_whole_sweep_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = shards(dir.path(), &["sweep", "--seeds", "0..12"], 3);
    let other = dir.path().join("other.json");
    let (_, stdout, _) = felix(&["sweep", "--seeds", "0..13", "--json", "--shard", "3/3"]);
    std::fs::write(&other, stdout).unwrap();
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "not json\n").unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, "").unwrap();
    // A name no count has, where trace validation's counts are named.
    let unknown = dir.path().join("unknown.json");
    let shard = std::fs::read_to_string(&files[2]).unwrap();
    let renamed = shard.replace(r#""ack_sent":"#, r#""validated_bogus":1,"ack_sent":"#);
    assert_ne!(renamed, shard);
    std::fs::write(&unknown, renamed).unwrap();
    let (a, b, c) = (files[0].as_str(), files[1].as_str(), files[2].as_str());
    let (other, garbage, cut, unknown) = (
        other.to_str().unwrap(),
        garbage.to_str().unwrap(),
        cut.to_str().unwrap(),
        unknown.to_str().unwrap(),
    );
    for (files, says) in [
        (vec![a, b], "exactly once"),
        (vec![a, b, c, c], "exactly once"),
        (vec![a, b, other], "range differ"),
        (vec![a, b, garbage], "not a line of `felix sweep --json`"),
        (vec![a, b, cut], "no summary line"),
        (vec![a, b, unknown], "unknown count \"validated_bogus\""),
        (vec![a, b, "/no/such/file"], "/no/such/file"),
    ] {
        let mut merge = vec!["sweep", "merge"];
        merge.extend(files);
        let (code, stdout, stderr) = felix(&merge);
        assert_eq!(code, 2, "{merge:?}: {stdout}");
        assert!(stderr.contains(says), "{merge:?}: {stderr}");
        assert!(stdout.is_empty(), "{merge:?} printed {stdout}");
    }
}
