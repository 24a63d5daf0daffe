//! Paros runs held to the ParosTrimJump model (`felix_model::paros`,
//! `docs/formal/ParosTrimJump.tla`).
//!
//! The projection: each voter as `term`, `leader`, `log` (each record as kind, owner fence `o`,
//! term, `up_to`), `start`, `commit`, `writer`, `floor`, and `sterm` (the sealed base term) read
//! from the real core `Broker` after every event; a jump's sender as the sealed state it sent
//! (`writer`, `floor`, `base_term`). A `Fence { new, old }` is the model's `SetLeader`, a trim its
//! `Truncate` (the trim's fence is `o`, its floor `up_to`), a write its `Write`, the noop its noop.
//! Not projected: `vote` (the model's votes follow its own actions in every window), the
//! history variables (`high`, `decided`, `acked`: the invariants', not a node's), the sealed
//! `swriter` and `sfloor` of a node that is not a jump's sender, and a write's owner `o` (the
//! core's record does not carry the fence its write was checked against at sequencing: a write
//! projects with `o = 0`, so the model's `acked`, unprojected, never takes it).
//!
//! The checker, as `crate::head_trim::checker` for FelixHeadTrim: each step a fixed chain of the
//! model's own actions through `ParosTrimJump::next_state` (no second copy of the spec) on a
//! window:
//!
//! | the node | model actions |
//! |---|---|
//! | stays leader, same term | `Write` / `Truncate` / `SetLeader` per appended record, then `Replicate(b, ·)` for its commit |
//! | becomes leader | `Promote(b, Q)` (the noop), then as above |
//! | stops leading, higher term | `StepDown(b, ·)`, then as a follower |
//! | follower | `Replicate(·, b)` once per record the step moved (at least once) |
//! | jumps to a trim point | `TrimmedTo(·, b)` (then `Replicate(·, b)` if the step moved more) |
//! | first held offset rises | `Compact(b)` (once: the model compacts to `min(floor, commit + 1)`) |
//!
//! `k` is 1 + the records moved + one `Replicate` per further window of a long leader commit +
//! at most one `Compact`; stuttering allowed. Steps that need more records in one window than
//! `MaxLen` are counted (`long_window`, `long_suffix`), as for FelixHeadTrim. Windows rename
//! offsets by a shift (or an order- and successor-preserving `Renaming` where the action compares
//! offsets with floors: `Compact`, `TrimmedTo`), terms, floors and tokens order-preservingly. A
//! token renaming keeps every fence's `new` the successor of its `old` (the model's
//! `SetLeader { new: o, old: o - 1 }`); tokens that branch (two fences naming the same `old`
//! in one window) do not fit and are counted as out of bounds.
//!
//! What the model leaves out, each hidden by a named rule and counted (`Abstraction`):
//! - `truncate_up_to`: the model's `Truncate` is up to its own slot; a core trim asks for a floor
//!   at or below its own offset (a checkpoint's start). Matched as `Truncate(o, b)` with the
//!   record keeping the core's floor; every later use of it (walks, `Compact`, `TrimmedTo`) is
//!   the model's. A floor above its own offset is a divergence.
//! - `run_tail`: a checkpoint run's records are conditional on the tail; the model's appends
//!   have none (the tail check is the owner's).
//! - `segments`: the core compacts whole segments, the model to `min(floor, commit + 1)` at once:
//!   a compaction is matched when the model's `Compact` deletes at least what the core deleted.
//! - `sealed_floor`: the core seals the floor in force, which a trim at or above the point may
//!   have set; the model seals the fold below the point. The sender's sealed floor is read clamped
//!   to the point, as the core's jumper takes it (a floor set by no trim, `NotHeld` below it).
//! - `jump_in_agreement` (not checked): the core's leader sends `TrimmedTo` on its belief about
//!   the follower; a follower that already agrees at the point jumps in the core, while the
//!   model's `TrimmedTo` is enabled only for a follower that cannot be replicated to. The jumped
//!   state is the new baseline (its term still may not fall).
//! - `unseen_sender` (not checked): a jump whose `TrimmedTo` was not seen sent.
//! - `unfenced` (not checked): a trim without a fence.
//!
//! Not seen by this model at all: when a write is acknowledged (`AckBeforeSync`: `acked` is a
//! history variable, not a node's), reads (the model's `ReadAnswer`), and durability (a window
//! counts every record a node holds as durable, `durable`; a crash sets a baseline).
//!
//! The ghosts of `crate::head_trim::checker` stand for hidden senders the same way: a follower's
//! sender is the follower after the step (its log, commit and term), a leader's acknowledging
//! majority its log up to the new commit, a jump's sender the point and the sealed state it sent,
//! at the jumper's term (a `TrimmedTo` carries no term; the model's guard wants the sender's at
//! least the jumper's).

//! Laid out as `crate::head_trim`: `projection` (a node's variables, read off the core),
//! `window` (a few nodes as one small model state, values renamed into its bounds) and `checker`
//! (a step as a chain of the model's actions, `crate::steps`).

pub mod checker;
pub mod projection;
pub mod window;

pub use checker::check;
pub use projection::{ParosNode, ParosRecord, Sent};
pub use window::PAROS_WINDOW;
