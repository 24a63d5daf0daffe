//! ParosTrimJump: the second seed (truncation decided by consensus, the trim-point jump) as a
//! Stateright model, mirroring `docs/formal/ParosTrimJump.tla` one to one, so that TLC's
//! distinct-state count equals `unique_state_count()` for every passing configuration (pinned in
//! `model/tests/it/paros.rs`, which also holds the registry to the `.cfg` files).
//!
//! - `config`: one entry per `ParosTrimJump*.cfg`; a twin is its base with one switch on.
//! - `spec`: the state machine (voters, a replica, the writer token, fenced truncates, lazy
//!   floors, compaction, `TrimmedTo`, reads answered as the core answers them).
//! - `properties`: `TermNeverDecreases`, `CommittedPrefixAgreement`, `AckedWritesKept`,
//!   `NoReadBelowFloor` and the `sometimes` coverage checks.
//! - `check`: the breadth-first checker, the twin runner and the shortest-counterexample search,
//!   reporting with `crate::check`'s types.

pub mod check;
pub mod config;
pub mod properties;
pub mod spec;
