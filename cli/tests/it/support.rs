//! What the CLI tests share: running the built `felix`.

use std::process::Command;

/// Runs the built `felix` with `args`: its exit code, stdout and stderr.
pub fn felix(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_felix"))
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("could not run felix {args:?}: {error}"));
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
