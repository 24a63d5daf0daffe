//! FelixHeadTrim: the first spec (the head trim: trims as records, lazy floors, the tag) as a
//! Stateright model, mirroring `docs/formal/FelixHeadTrim.tla` one to one.
//!
//! - `config`: one entry per `FelixHeadTrim*.cfg`; a twin is its base with one switch off.
//! - `spec`: the state machine (brokers, holders, trims, floors, compaction, reads through a read
//!   index, elections and crashes) and its broker symmetry.
//! - `properties`: `TypeOK`, `StaleTrimRefused`, `FloorRecordKept`, `NoReadBelowFloor`,
//!   `ElectionSafety` and the `sometimes` coverage checks (the liveness property
//!   `StaleHolderRetires` is TLC's alone: it needs fairness, which Stateright does not have).

pub mod config;
pub mod properties;
pub mod spec;
