//! felix-model: the Stateright models of the two specs, FelixHeadTrim and ParosTrimJump, their
//! configurations and twins, behind one interface.
//!
//! Each state machine mirrors its TLA+ spec one to one (same variables, actions, guards,
//! constants and switches), so that a trace here reads as a trace there and TLC's distinct-state
//! count equals `unique_state_count()` for every passing configuration (pinned in
//! `docs/formal/README.md`, read through `pinned`). This crate never imports `felix-core`: it
//! checks the design, the simulator checks the code.
//!
//! - `spec`: the `Spec` trait both specs implement (name, configurations, model, invariants,
//!   `sometimes`, rendered variables) and `SpecConfig`, one configuration of a spec.
//! - `head_trim/` (`docs/formal/FelixHeadTrim.tla`) and `paros/` (`docs/formal/ParosTrimJump.tla`),
//!   laid out the same: `config` (one entry per `.cfg` file; a twin is its base with one switch
//!   off), `spec` (the state machine) and `properties` (`always` and `sometimes`).
//! - `registry`: both specs' configurations behind one lookup (`AnyConfig`).
//! - `log`: the packed log both specs keep per node; `quorum`: the promoting quorum of both
//!   specs' `Promote(b, Q)`.
//! - `check`: the one runner, generic over `Spec`: Stateright's breadth-first checker, the compact
//!   search, the twin runner (one thread, stop at the twin's invariant), the
//!   shortest-counterexample search and the Explorer.
//! - `compact`: a lean breadth-first search over any spec's model (fingerprints only), with the
//!   same counts, for configurations beyond Stateright's memory (`felix check --compact`).
//! - `trace`: counterexamples as the action, then the variables it changed.
//!
//! A spec may have a symmetry (`Spec::NO_SYMMETRY` says why not): FelixHeadTrim's searches can
//! run up to broker symmetry (`FelixHeadTrim::with_broker_symmetry`, `felix check --symmetry`):
//! sound, about 3.4 times fewer states, but the counts are then not TLC's.

pub mod check;
pub mod compact;
pub mod head_trim;
pub mod log;
pub mod paros;
pub mod pinned;
pub mod quorum;
pub mod registry;
pub mod spec;
pub mod trace;
