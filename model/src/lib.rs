//! felix-model: the Stateright model of FelixHeadTrim, its configurations and twins.
//!
//! The state machine (`spec`) mirrors `docs/formal/FelixHeadTrim.tla` one to one (same variables,
//! actions, guards, constants and switches), so that a trace here reads as a trace there and TLC's
//! distinct-state count equals `unique_state_count()` for every passing configuration (pinned in
//! `tests/pinned_counts.rs`; `tests/cfg_files.rs` holds the registry to the `.cfg` files). This
//! crate never imports `felix-core`: it checks the design, the simulator checks the code.
//!
//! - `config`: one entry per `.cfg` file; a twin is its base with one switch on.
//! - `properties`: `TypeOK`, `StaleTrimRefused`, `FloorRecordKept`, `NoReadBelowFloor` and the
//!   `sometimes` coverage checks (the liveness property `StaleHolderRetires` is TLC's alone: it
//!   needs fairness, which Stateright does not have).
//! - `check`: Stateright's breadth-first checker, the twin runner (one thread, stop at the
//!   twin's invariant) and the shortest-counterexample search.
//! - `compact`: a lean breadth-first search over the same model (fingerprints only), with the
//!   same counts, for configurations beyond Stateright's memory (`felix check --compact`).
//! - `trace`: counterexamples as the action, then the variables it changed.
//! - `paros`: the second spec, ParosTrimJump (`docs/formal/ParosTrimJump.tla`), laid out the same
//!   way: truncation decided by consensus, lazy floors and the `TrimmedTo` jump.
//!
//! Both searches can run up to broker symmetry (`FelixHeadTrim::with_broker_symmetry`, `felix
//! check --symmetry`): sound, about 3.4 times fewer states, but the counts are then not TLC's.

pub mod check;
pub mod compact;
pub mod config;
pub mod paros;
pub mod pinned;
pub mod properties;
pub mod spec;
pub mod trace;
