//! `felix-node`: the node's subcommands alone (serve, client, cluster, nemesis, bench-cluster),
//! a binary of this crate so that its integration tests can start real nodes without building the
//! whole `felix` CLI. `felix` offers the same subcommands.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "felix-node", about = "A Felix node and its tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one node.
    Serve(felix_node::serve::ServeArgs),
    /// One operation against a cluster.
    Client(felix_node::client_command::ClientArgs),
    /// A local cluster.
    Cluster(felix_node::cluster::ClusterArgs),
    /// Real processes, faults and clients, judged by the audits.
    Nemesis(felix_node::nemesis::NemesisArgs),
    /// `felix bench cluster`.
    BenchCluster(felix_node::bench::ClusterBenchArgs),
}

fn main() -> ExitCode {
    let code = match Cli::parse().command {
        Command::Serve(args) => felix_node::serve::run_serve(args),
        Command::Client(args) => felix_node::client_command::run_client(args),
        Command::Cluster(args) => felix_node::cluster::run_cluster(args),
        Command::Nemesis(args) => felix_node::nemesis::run_nemesis(args),
        Command::BenchCluster(args) => felix_node::bench::run_bench_cluster(args),
    };
    ExitCode::from(code)
}
