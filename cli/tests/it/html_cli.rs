//! `felix replay --html` and `felix check --html` as a user runs them: the page is written, is
//! self-contained, carries the run's lifelines and violation; bad paths and usage exit 2.
//! (The browser test, scripts/browser_check.sh, loads these pages in Chromium.)

use super::support::{felix, lanes, page_data};

/// The diagram data embedded in a page.
fn data(page: &str) -> serde_json::Value {
    page_data(page)
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("felix-html-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir.join(name)
}

#[test]
fn replay_writes_a_self_contained_page_with_the_violation() {
    // Proves `felix replay --html` writes one page with no external resource, the run's
    // lifelines, and the violation at the step the summary names.
    let path = scratch("replay.html");
    let path_text = path.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = felix(&[
        "replay",
        "--seed",
        "2508",
        "--twin",
        "HiddenTrims",
        "--html",
        path_text,
    ]);
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains(&format!("bytes written to {path_text}")),
        "{stdout}"
    );
    let page = std::fs::read_to_string(&path).expect("the page was written");
    // No external resource: no src, no link, no fetch; the only address is the SVG namespace.
    assert!(!page.contains("src=") && !page.contains("<link") && !page.contains("fetch("));
    assert_eq!(
        page.matches("http").count(),
        page.matches("http://www.w3.org/2000/svg").count()
    );
    let data = data(&page);
    // c2 is the prober (a knob of the seed's draw).
    assert_eq!(
        lanes(&data),
        ["lease", "c0", "c1", "c2", "n0", "n1", "n2", "n3"]
    );
    // The twin's own violation; another judge (Linearizable) may be drawn before it.
    let violation = data["violations"]
        .as_array()
        .and_then(|violations| {
            violations
                .iter()
                .find(|violation| violation["invariant"] == "StaleTrimRefused")
        })
        .expect("the twin's violation is drawn");
    let row = violation["row"].as_u64().expect("a row") as usize;
    let step = data["rows"][row]["step"].as_u64().expect("a step");
    assert!(
        stdout.contains(&format!("VIOLATION StaleTrimRefused at step {step}:")),
        "{stdout}"
    );
    // The first violation's why is marked, its own row and the request it answered among them
    // (the steps the summary's why lists), and the first window reaches back to its earliest row.
    let first = data["violations"][0]["row"].as_u64().expect("a row");
    let why: Vec<u64> = data["why"]
        .as_array()
        .expect("why")
        .iter()
        .map(|row| row.as_u64().expect("a row"))
        .collect();
    assert!(why.contains(&first), "{why:?}");
    let section = stdout
        .split("why: ")
        .nth(1)
        .and_then(|rest| rest.split("events leading to").next())
        .expect("the summary's why");
    for row in &why {
        let step = data["rows"][*row as usize]["step"]
            .as_u64()
            .expect("a step");
        assert!(
            section.contains(&format!(" {step} ")),
            "step {step} not in {section}"
        );
    }
    // The page tells the same story as the summary, line for line, under the violation.
    let story: Vec<&str> = data["story"]
        .as_array()
        .expect("story")
        .iter()
        .map(|line| line.as_str().expect("a line"))
        .collect();
    let told: Vec<&str> = stdout
        .lines()
        .skip_while(|line| !line.starts_with("  in short"))
        .skip(1)
        .take_while(|line| line.starts_with("    "))
        .map(str::trim)
        .collect();
    assert!((2..=5).contains(&story.len()), "{story:?}");
    assert_eq!(story, told, "{stdout}");
    let before = data["window"]["before"].as_u64().expect("before");
    assert!(
        before >= first - why[0],
        "window {before} does not reach row {}",
        why[0]
    );
}

#[test]
fn a_control_run_page_has_no_violation() {
    // Proves a run where every invariant held draws a page with no violation (exit 0).
    let path = scratch("control.html");
    let (code, stdout, stderr) = felix(&[
        "replay",
        "--seed",
        "2508",
        "--twin",
        "HiddenTrims",
        "--control",
        "--html",
        path.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let data = data(&std::fs::read_to_string(&path).expect("the page was written"));
    assert_eq!(data["violations"], serde_json::json!([]));
    assert!(!data["rows"].as_array().expect("rows").is_empty());
}

#[test]
fn check_writes_the_counterexample_page() {
    // Proves `felix check --html` writes the counterexample: one row per step, the last one
    // highlighted with the twin's invariant.
    let path = scratch("check.html");
    let (code, stdout, stderr) = felix(&[
        "check",
        "HiddenTrims",
        "--threads",
        "1",
        "--html",
        path.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(code, 1, "stdout: {stdout}\nstderr: {stderr}");
    let data = data(&std::fs::read_to_string(&path).expect("the page was written"));
    assert_eq!(lanes(&data), ["lease", "h1", "h2", "b1", "b2", "b3"]);
    let rows = data["rows"].as_array().expect("rows").len();
    assert_eq!(data["violations"][0]["invariant"], "StaleTrimRefused");
    assert_eq!(data["violations"][0]["row"], rows - 1);
}

#[test]
fn bad_html_paths_and_usage_exit_2() {
    // Proves an unwritable --html path is reported before any work, and --html with two
    // configurations is refused, each with exit 2 and no panic.
    let bad = "/nonexistent-felix-dir/x.html";
    for args in [
        vec!["replay", "--seed", "2508", "--html", bad],
        vec!["check", "HiddenTrims", "--html", bad],
        vec!["check", "HiddenTrims", "Untagged", "--html", "x.html"],
    ] {
        let (code, _, stderr) = felix(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains("--html"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
