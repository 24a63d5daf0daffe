//! felix-node's integration tests, one binary (one link step) with a module per concern. Every
//! node they start is a `felix-node serve` child process on 127.0.0.1 held by a guard that kills
//! it on drop (`support.rs`), whatever the test does.

mod bad_input;
mod closed_pipe;
mod cluster_cli;
mod frame_fuzz;
mod guards;
mod kill_nine;
mod nemesis_parts;
mod nemesis_short;
mod support;
mod torn_write;
mod wire;
