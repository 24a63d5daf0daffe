//! Test-only (feature `validation-bite`): a divergence planted for trace validation's bite test
//! (`validate/tests/bite.rs`). Switched on for one thread, a node's committed walk applies the
//! floor of the trim right after its commit index one walk step early, before that trim commits,
//! but only when nothing a reader reads lies in between (no write between the floor in force and
//! the early floor). No read, acknowledgement or deletion can tell, so no audit notices; the
//! model's walk (`Replicate`) never does it, so trace validation must.
//! Never compiled into the `felix` binary's normal build; off unless a test turns it on.

use std::cell::Cell;

thread_local! {
    static EARLY_FLOOR: Cell<bool> = const { Cell::new(false) };
}

/// Switches the early floor on or off for runs on this thread.
pub fn set_early_floor(on: bool) {
    EARLY_FLOOR.with(|cell| cell.set(on));
}

/// Whether the early floor is on for this thread.
pub(crate) fn early_floor() -> bool {
    EARLY_FLOOR.with(Cell::get)
}
