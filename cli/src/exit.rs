//! Exit codes shared by every subcommand (README.md, "The `felix` command").

/// Everything held (for `twins`: every twin failed as expected).
pub const OK: u8 = 0;
/// A violation, or an unmet expectation.
pub const VIOLATION: u8 = 1;
/// Bad usage or bad input: a clear message on stderr, never a panic.
pub const BAD_INPUT: u8 = 2;

/// Prints a user-facing error and returns the bad-input exit code.
pub fn bad_input(message: impl std::fmt::Display) -> u8 {
    eprintln!("felix: error: {message}");
    BAD_INPUT
}
