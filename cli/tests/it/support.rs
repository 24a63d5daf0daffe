//! What the CLI tests share: running the built `felix`.

use std::process::{Command, Output};

/// Runs the built `felix` with `args`: its exit code, stdout and stderr. A felix killed by a
/// signal (no exit code) fails the test.
pub fn felix(args: &[&str]) -> (i32, String, String) {
    let output = felix_output(args);
    (
        output.status.code().expect("felix exits with a code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs the built `felix` with `args`: its whole `Output`.
pub fn felix_output(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_felix"))
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("could not run felix {args:?}: {error}"))
}

/// The diagram data a `--html` page embeds (its `felix-data` script).
pub fn page_data(page: &str) -> serde_json::Value {
    let start = page
        .find(r#"<script id="felix-data" type="application/json">"#)
        .expect("the page embeds its data");
    let rest = &page[start..];
    let open = rest.find('>').expect("the script tag closes") + 1;
    let close = rest.find("</script>").expect("the data script ends");
    serde_json::from_str(&rest[open..close]).expect("the data is JSON")
}

/// The lifelines' names of a page's diagram data.
pub fn lanes(data: &serde_json::Value) -> Vec<String> {
    data["lanes"]
        .as_array()
        .expect("lanes")
        .iter()
        .map(|lane| lane["name"].as_str().unwrap_or_default().to_string())
        .collect()
}
