//! Test-only (feature `validation-bite`): a divergence planted for trace validation's bite test
//! (`validate/tests/it/bite.rs`). Switched on for one thread, a node's committed walk applies the
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

thread_local! {
    static EARLY_FENCE: Cell<bool> = const { Cell::new(false) };
}

/// Switches the early fence on or off for runs on this thread: a node's walk moves the writer
/// token to the fence right after its commit index one walk step early, before that fence
/// commits. The old writer is restored before anything reads it (the walk, a suffix truncation, a
/// jump), and sequencing checks fences against the tail writer, so no answer and no history event
/// changes: only the writer the node's fold shows (ParosTrimJump's `writer`), which the model's
/// walk moves only when it reaches the fence. Only trace validation of a paros run can tell.
pub fn set_early_fence(on: bool) {
    EARLY_FENCE.with(|cell| cell.set(on));
}

/// Whether the early fence is on for this thread.
pub(crate) fn early_fence() -> bool {
    EARLY_FENCE.with(Cell::get)
}
