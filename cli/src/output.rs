//! The one writer of `felix`'s standard output.
//!
//! Every subcommand prints through `line` (or `text`). A reader that closes the pipe early
//! (`felix sweep | head -1`) has taken all it wanted: the command ends quietly with exit 0, never
//! a panic (Rust's `println!` panics on a closed pipe) and never the bad-input code. Any other
//! write error is an environment error: a message on stderr and exit 2.

use crate::exit;
use std::io::Write;

/// Writes `line` and a newline to stdout.
pub fn line(line: &str) {
    write(format_args!("{line}\n"));
}

/// Writes `text` as it is (no newline added) to stdout.
pub fn text(text: &str) {
    write(format_args!("{text}"));
}

fn write(arguments: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_fmt(arguments).and_then(|()| stdout.flush()) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(i32::from(exit::OK));
        }
        eprintln!("felix: error: cannot write to stdout: {error}");
        std::process::exit(i32::from(exit::BAD_INPUT));
    }
}

/// `println!` through `line`: a closed pipe ends the command with exit 0.
macro_rules! out {
    () => {
        $crate::output::line("")
    };
    ($($argument:tt)*) => {
        $crate::output::line(&format!($($argument)*))
    };
}
