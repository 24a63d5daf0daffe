//! `felix`: sweep seeds, replay one, run scenarios, check the model, keep the twins failing.
//!
//! Exit codes (README.md, "The `felix` command"): 0 everything held (for `twins`: every twin failed
//! as expected), 1 a violation or an unmet expectation, 2 bad usage or bad input (a clear message,
//! never a panic). Each subcommand lives in its own module under `commands/` and returns an
//! `ExitCode`-like `u8`; what several share is beside this file (`args.rs`, `output.rs`, `exit.rs`,
//! `validation.rs`, `html/`).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc instead of the system allocator: a simulated run allocates and frees small objects
/// (messages, history events, replies) at a high rate, and glibc's malloc/free took about 15% of
/// a sweep's time. The allocator decides no run: traces and hashes are the same with either.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[macro_use]
extern crate felix_node;

mod args;
mod commands;
mod exit;
mod html;
mod output;
mod validation;

use commands::{
    bench, check, conform, explore, history, replay, scenario, shrink, store, sweep, trace, twins,
};

/// Felix: deterministic simulation and model checking of a replicated journal.
#[derive(Parser, Debug)]
#[command(
    name = "felix",
    version,
    about = "Felix: deterministic simulation and model checking of a replicated journal",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    // One variant per working subcommand; see each module for its arguments.
    /// Measure throughput (`felix bench store`: append + read on both log stores; `felix bench
    /// sim`: the simulator's seeds/s, events/s and time inside the core's step).
    Bench(bench::BenchArgs),
    /// Check model configurations with Stateright (exit 1 on a violation).
    Check(check::CheckArgs),
    /// Serve Stateright's Explorer on one model configuration (blocks).
    Explore(explore::ExploreArgs),
    /// Run many seeds of the simulator; print every failing seed with its replay command.
    Sweep(sweep::SweepArgs),
    /// Rerun one seed of the simulator, explain it, optionally write its trace.
    Replay(replay::ReplayArgs),
    /// Run scripted scenarios (datadriven golden files); --rewrite updates expectations.
    Scenario(scenario::ScenarioArgs),
    /// Shrink a failing seed to the smallest scenario that still breaks the twin's invariant.
    Shrink(shrink::ShrinkArgs),
    /// Hold every twin to the invariant it must break (model and/or simulator).
    Twins(twins::TwinsArgs),
    /// Run model paths covering a configuration's state graph on the real core (exit 1 on a
    /// divergence or a violation).
    Conform(conform::ConformArgs),
    /// Look at a file store directory without writing (`check`: damage; `dump`: every record).
    Store(store::StoreArgs),
    /// Render a trace file (`felix trace show FILE.jsonl`).
    Trace(trace::TraceArgs),
    /// Check a trace file's client history for linearizability (`felix history check FILE`).
    History(history::HistoryArgs),
    /// Run one real node over TCP with the file store (`felix-node`, not deterministic).
    Serve(felix_node::serve::ServeArgs),
    /// One append, read, trim or fence against a running cluster.
    Client(felix_node::client_command::ClientArgs),
    /// A local cluster of `felix serve` processes on 127.0.0.1 (`up`, `down`, `status`).
    Cluster(felix_node::cluster::ClusterArgs),
    /// Real processes, faults and clients for a while, one history judged by the audits.
    Nemesis(felix_node::nemesis::NemesisArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code: u8 = match cli.command {
        Command::Bench(args) => bench::run(args),
        Command::Check(args) => check::run(args),
        Command::Explore(args) => explore::run(args),
        Command::Sweep(args) => match args.action {
            Some(sweep::SweepAction::Merge(merge)) => sweep::merge::run(merge),
            None => sweep::run(args),
        },
        Command::Replay(args) => replay::run(args),
        Command::Scenario(args) => scenario::run(args),
        Command::Shrink(args) => shrink::run(args),
        Command::Twins(args) => twins::run(args),
        Command::Conform(args) => conform::run(args),
        Command::Store(args) => store::run(args),
        Command::Trace(args) => trace::run(args),
        Command::History(args) => history::run(args),
        Command::Serve(args) => felix_node::serve::run_serve(args),
        Command::Client(args) => felix_node::client_command::run_client(args),
        Command::Cluster(args) => felix_node::cluster::run_cluster(args),
        Command::Nemesis(args) => felix_node::nemesis::run_nemesis(args),
    };
    ExitCode::from(code)
}
