//! The Felix journal core, sans-IO.
//!
//! One offset space of records (writes, trims, fences, noops), a segmented log store behind one
//! trait, the journal rules evaluated in the sequencing step, Raft-shaped brokers that replicate
//! the log, and the writer/reader clients. Nothing in this crate reads a clock, a random source,
//! a thread, a file or a socket on its own: the driver (the simulator, a test, or a real server)
//! feeds events in and carries out the commands that come out. The file-backed store, which does
//! IO, is a crate of its own (`felix-store`), so the crate graph keeps this one free of it.

pub mod api;
pub mod body_json;
pub mod broker;
pub mod client;
pub mod codec;
pub mod history;
pub mod journal;
pub mod record;
pub mod rules;
pub mod storage;
pub mod words;

pub use record::{Command, Entry, Headers, NodeId, Offset, Term, Token};
pub use rules::{Rules, TwinName};
