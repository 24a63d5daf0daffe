//! ParosTrimJump: the second spec (truncation decided by consensus, the trim-point jump) as a
//! Stateright model, mirroring `docs/formal/ParosTrimJump.tla` one to one, laid out as
//! `crate::head_trim`.
//!
//! - `config`: one entry per `ParosTrimJump*.cfg`; a twin is its base with one switch off.
//! - `spec`: the state machine (voters, a replica, the writer token, fenced truncates, lazy
//!   floors, compaction, `TrimmedTo`, durability and crashes, reads answered as the core answers
//!   them).
//! - `record`: the records and the set of acknowledged writes, packed.
//! - `properties`: `TermNeverDecreases`, `CommittedPrefixAgreement`, `AckedWritesKept`,
//!   `NoReadBelowFloor`, `ElectionSafety` and the `sometimes` coverage checks.

pub mod config;
pub mod properties;
pub mod record;
pub mod spec;
