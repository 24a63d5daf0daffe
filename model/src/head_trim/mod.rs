//! FelixHeadTrim: the first spec (the head trim: trims as records, lazy floors, the tag) as a
//! Stateright model, mirroring `docs/formal/FelixHeadTrim.tla` one to one.
//!
//! - `config`: one entry per `FelixHeadTrim*.cfg`; a twin is its base with one switch off.
//! - `spec`: the state machine (brokers, holders, trims, floors, compaction, reads through a read
//!   index, elections and crashes).
//! - `record`: the records, packed.
//! - `symmetry`: the search up to permutations of the brokers.
//! - `properties`: `TypeOK`, `StaleTrimRefused`, `FloorRecordKept`, `NoReadBelowFloor`,
//!   `ElectionSafety` and the `sometimes` coverage checks (the liveness property
//!   `StaleHolderRetires` is TLC's alone: it needs fairness, which Stateright does not have).

pub mod config;
pub mod properties;
pub mod record;
pub mod spec;
pub mod symmetry;
