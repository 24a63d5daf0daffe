//! `felix`'s standard output: every subcommand prints through `line`, `text` or `out!`, the
//! writer of `felix_node::output` that `felix serve`, `cluster`, `client` and `nemesis` print
//! through too (its doc says what a closed pipe or another write error does).

pub use felix_node::output::{line, text};
