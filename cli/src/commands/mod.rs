//! One module per `felix` subcommand (`main.rs` dispatches): each parses its own arguments and
//! has a `run` that returns the exit code. A subcommand's helpers live inside its module
//! (`sweep/`: the summary, coverage verdict, shard merge and guided campaign; `twins/`: the model
//! and validation layers; `bench/`: the simulator's benchmark; `replay/`: `--store-dir`).

pub mod bench;
pub mod check;
pub mod conform;
pub mod explore;
pub mod history;
pub mod replay;
pub mod scenario;
pub mod shrink;
pub mod store;
pub mod sweep;
pub mod trace;
pub mod twins;
