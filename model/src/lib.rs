//! felix-model: the Stateright model of FelixHeadTrim, its configurations and twins.
//!
//! The state machine mirrors `docs/formal/FelixHeadTrim.tla` one to one (same variables, actions,
//! guards, constants and switches), so that a trace here reads as a trace there and TLC's
//! distinct-state count equals `unique_state_count()` for every passing configuration. This crate
//! never imports `felix-core`: it checks the design, the simulator checks the code.

pub mod check;
pub mod compact;
pub mod config;
pub mod properties;
pub mod spec;
pub mod trace;
