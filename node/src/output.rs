//! The one writer of standard output, for `felix` and `felix-node` alike (`felix-cli` prints
//! through it too: this is the lowest crate of the two that prints).
//!
//! Every subcommand prints through `line` (or `text`), never `println!`, which panics when the
//! reader has closed the pipe (`felix cluster status | head -1`, `felix sweep | head -1`). A
//! closed pipe means the reader took all it wanted: the process stops quietly with exit 0, the
//! status most command-line tools give when the reader went away (not 141, 128 + SIGPIPE: nothing
//! went wrong here, and not 2, which says the user's input was bad). Any other write error (a full
//! disk behind a redirection) is an environment error: a message on stderr and exit 2.
//!
//! `exit` runs no destructors, so the nodes this process runs under a guard (`NodeProcess`,
//! `felix bench cluster`'s) are killed first, as their guards would on drop.

use std::io::Write;

/// The exit status when the reader closed the pipe (module doc).
pub const EXIT_PIPE_CLOSED: i32 = 0;
/// The exit status for any other write error: an environment error.
pub const EXIT_WRITE_FAILED: i32 = 2;

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
    let Err(error) = stdout.write_fmt(arguments).and_then(|()| stdout.flush()) else {
        return;
    };
    drop(stdout);
    crate::process::kill_guarded();
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(EXIT_PIPE_CLOSED);
    }
    eprintln!("felix: error: cannot write to stdout: {error}");
    std::process::exit(EXIT_WRITE_FAILED);
}

/// `println!` through `output::line`: a closed pipe ends the command with exit 0.
#[macro_export]
macro_rules! out {
    () => {
        $crate::output::line("")
    };
    ($($argument:tt)*) => {
        $crate::output::line(&format!($($argument)*))
    };
}
