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
