//! Felix for real: the sans-IO journal core run as processes over TCP with the file store.
//!
//! - `serve/`: one node (`felix serve`), the event loop that carries out the core `Outbox`'s
//!   duties with sockets, fsync and a monotonic clock;
//! - `frame.rs`: the wire (length-prefixed, versioned, bounded frames);
//! - `client.rs`: a blocking connection to a cluster with the simulator's retry rules
//!   (`felix client`);
//! - `cluster.rs`: local clusters of `felix serve` processes (`felix cluster up|down|status`);
//! - `process.rs`: child processes that are killed when their guard drops;
//! - `nemesis/`: real processes behind fault-injecting proxies, real clients, one recorded
//!   history judged by the same audits (`felix nemesis`);
//! - `bench.rs`: `felix bench cluster`;
//! - `output.rs`: the one writer of stdout (`felix`'s too): a closed pipe ends the process quietly.
//!
//! Nothing in `core`, `sim`, `audits` or `model` depends on this crate. Unlike the simulator,
//! nothing here is deterministic: real time, real scheduling and real sockets decide the run.

#[macro_use]
pub mod output;

pub mod addresses;
pub mod frame;
pub mod serve;

/// Prints a user-facing error and returns exit code 2 (bad input or environment).
pub fn bad_input(message: impl std::fmt::Display) -> u8 {
    eprintln!("felix: error: {message}");
    2
}
pub mod bench;
pub mod client;
pub mod client_command;
pub mod cluster;
pub mod nemesis;
pub mod process;
