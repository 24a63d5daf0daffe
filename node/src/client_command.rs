//! `felix client append|read|trim|fence --cluster ADDRS ...`: one operation against a running
//! cluster, with the simulator's retry rules (`client::Router`).
//!
//! `--cluster` is `ID=HOST:PORT,...`, a plain `HOST:PORT,...` list (nodes 1, 2, ... as
//! `felix cluster up` numbers them), or the directory of a `felix cluster up`. Appends, trims and
//! fences go to the leader (following `NotLeader` hints); a request that got no answer in time has
//! an unknown outcome and is not retried (it may have landed): exit 1 saying so. Reads use the
//! core's `Reader` state machine (its cursor, `Gap` reports, `NotHeld` routing) and print each
//! record with the words the simulator uses.
//!
//! Exit codes: 0 answered (the answer may be a refusal such as `OffsetMismatch`, printed),
//! 1 no answer (unknown outcome, or no node would serve), 2 bad input.

use crate::addresses::{parse_addresses, Addresses};
use crate::client::{route_of, CallError, ClusterClient, Router};
use crate::cluster::ClusterState;
use clap::{Args, Subcommand};
use felix_core::api::{ReadFrom, Reply, Request};
use felix_core::client::{Client, Reader};
use felix_core::record::{Headers, Offset, Token};
use felix_sim::render::describe;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Tries (over every node) before a client gives up on finding a node that serves.
const TRIES_MAX: usize = 50;

/// Arguments of `felix client`.
#[derive(Args, Debug)]
pub struct ClientArgs {
    #[command(subcommand)]
    pub command: ClientCommand,
    /// The cluster: ID=HOST:PORT,..., HOST:PORT,... (nodes 1, 2, ...), or a `cluster up` directory.
    #[arg(long, global = true, default_value = "")]
    pub cluster: String,
    /// Milliseconds to wait for an answer before the outcome is unknown.
    #[arg(long, global = true, default_value_t = 2000)]
    pub timeout_ms: u64,
}

#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// Append a write.
    Append {
        /// The body (text).
        body: String,
        /// Only if the tail (the next free offset) is this.
        #[arg(long)]
        expected_tail: Option<Offset>,
        /// Only if this is the writer fence in force.
        #[arg(long)]
        fence: Option<u64>,
        /// A header KEY=VALUE (repeatable).
        #[arg(long = "header")]
        headers: Vec<String>,
    },
    /// Read committed writes.
    Read {
        /// The first offset, or `earliest` (the floor).
        #[arg(long, default_value = "earliest")]
        from: String,
        /// Stop after this many records.
        #[arg(long, default_value_t = 100)]
        max: usize,
    },
    /// Append a trim asking for a floor.
    Trim {
        #[arg(long)]
        floor: Offset,
        #[arg(long)]
        expected_tail: Option<Offset>,
        #[arg(long)]
        fence: Option<u64>,
        #[arg(long = "header")]
        headers: Vec<String>,
    },
    /// Append a fence record replacing the writer token `old` by `new`.
    Fence {
        #[arg(long)]
        new: u64,
        #[arg(long)]
        old: u64,
    },
    /// A nemesis workload client as a process of its own (started by `felix nemesis`, which
    /// talks to it on its standard input and output: `nemesis/client_process.rs`).
    #[command(hide = true)]
    Workload(crate::nemesis::client_process::WorkloadArgs),
}

/// The cluster's addresses from `--cluster`.
pub fn cluster_addresses(text: &str) -> Result<Addresses, String> {
    if text.is_empty() {
        return Err("--cluster is required (ID=HOST:PORT,... or a cluster directory)".to_string());
    }
    let path = Path::new(text);
    if path.is_dir() {
        let addresses = ClusterState::read(path)?.addresses()?;
        if addresses.is_empty() {
            return Err(format!(
                "{}: the cluster file names no node",
                path.display()
            ));
        }
        return Ok(addresses);
    }
    parse_addresses(text, true).map_err(|error| format!("--cluster: {error}"))
}

fn parse_headers(entries: &[String]) -> Result<Headers, String> {
    let mut map = BTreeMap::new();
    for entry in entries {
        let Some((key, value)) = entry.split_once('=') else {
            return Err(format!("--header {entry:?} is not KEY=VALUE"));
        };
        if key.is_empty() {
            return Err(format!("--header {entry:?} has an empty key"));
        }
        map.insert(key.to_string(), value.to_string());
    }
    Ok(Headers(map))
}

pub fn run_client(args: ClientArgs) -> u8 {
    match client(args) {
        Ok(code) => code,
        Err(message) => crate::bad_input(message),
    }
}

fn client(args: ClientArgs) -> Result<u8, String> {
    let addresses = cluster_addresses(&args.cluster)?;
    if !(1..=600_000).contains(&args.timeout_ms) {
        return Err("--timeout-ms must be between 1 and 600000".to_string());
    }
    let timeout = Duration::from_millis(args.timeout_ms);
    if let ClientCommand::Workload(workload) = &args.command {
        return crate::nemesis::client_process::run_workload(workload, addresses);
    }
    let mut cluster = ClusterClient::new(addresses, timeout);
    let request = match args.command {
        ClientCommand::Workload(_) => return Ok(2),
        ClientCommand::Append {
            body,
            expected_tail,
            fence,
            headers,
        } => Request::Append {
            expected_tail,
            fence: fence.map(Token),
            body: body.into_bytes(),
            headers: parse_headers(&headers)?,
        },
        ClientCommand::Trim {
            floor,
            expected_tail,
            fence,
            headers,
        } => Request::Trim {
            expected_tail,
            fence: fence.map(Token),
            floor,
            headers: parse_headers(&headers)?,
        },
        ClientCommand::Fence { new, old } => Request::Fence {
            new: Token(new),
            old: Token(old),
        },
        ClientCommand::Read { from, max } => {
            let from = if from == "earliest" {
                ReadFrom::Earliest
            } else {
                match from.parse::<Offset>() {
                    Ok(offset) if offset >= 1 => ReadFrom::Offset(offset),
                    _ => {
                        return Err(format!(
                            "--from {from:?} is not an offset (>= 1) or earliest"
                        ))
                    }
                }
            };
            return Ok(read(&mut cluster, from, max));
        }
    };
    Ok(write(&mut cluster, request))
}

/// One append, trim or fence, routed to the leader.
fn write(cluster: &mut ClusterClient, request: Request) -> u8 {
    let nodes: Vec<_> = cluster.addresses().keys().copied().collect();
    let count = nodes.len();
    let mut router = Router::new(nodes, 0, Duration::from_millis(100));
    let mut unreachable = 0;
    for _ in 0..TRIES_MAX {
        let node = router.target();
        let answer = cluster.call(node, request.clone());
        if !matches!(answer, Err(CallError::Unreachable(_))) {
            unreachable = 0;
        }
        match answer {
            Ok(reply) => match route_of(&reply) {
                Some(route) => {
                    let wait = router.follow(route, true);
                    std::thread::sleep(wait);
                }
                None => {
                    out!("node {node}: {}", describe::reply(&reply));
                    return 0;
                }
            },
            Err(CallError::Unreachable(why)) => {
                unreachable += 1;
                if unreachable >= count {
                    out!("no node of the cluster is reachable (last: {why})");
                    return 1;
                }
                router.next();
            }
            Err(error @ CallError::Unknown(_)) => {
                out!("node {node}: {error} (the request may still land)");
                return 1;
            }
        }
    }
    out!("no node took the request after {TRIES_MAX} tries (no leader?)");
    1
}

/// Reads with the core's `Reader` until the tail or `max` records.
fn read(cluster: &mut ClusterClient, from: ReadFrom, max: usize) -> u8 {
    let nodes: Vec<_> = cluster.addresses().keys().copied().collect();
    let router_nodes = nodes.len();
    let mut unreachable = 0;
    let mut router = Router::new(nodes, 0, Duration::from_millis(100));
    // `Earliest` is resolved by one plain read; the reader then keeps the cursor.
    let mut cursor = match from {
        ReadFrom::Offset(offset) => offset,
        ReadFrom::Earliest => 1,
    };
    let mut earliest = matches!(from, ReadFrom::Earliest);
    let mut printed = 0;
    let mut tries = 0;
    let batch = 64u32;
    let mut reader = Reader::new(0, cursor, batch);
    while printed < max && tries < TRIES_MAX {
        let node = router.target();
        let (id, mut request) = match reader.next_request() {
            Some(next) => next,
            None => break,
        };
        if earliest {
            request = Request::Read {
                from: ReadFrom::Earliest,
                max_records: batch,
            };
        }
        match cluster.call(node, request) {
            Ok(reply) => {
                unreachable = 0;
                if earliest {
                    if let Reply::Records { records, next } = &reply {
                        earliest = false;
                        // Restart the reader where the first record (or the answer) begins.
                        cursor = records.first().map_or(*next, |record| record.offset);
                        reader = Reader::new(0, cursor.max(1), batch);
                        let count = records.len();
                        for record in records.iter().take(max - printed) {
                            out!("{}", describe::read_record(record));
                            printed += 1;
                        }
                        reader = if count > 0 {
                            Reader::new(0, (*next).max(1), batch)
                        } else {
                            reader
                        };
                        if count < batch as usize {
                            break;
                        }
                        continue;
                    }
                }
                let refused = route_of(&reply).is_some();
                let step = reader.on_reply(id, reply.clone());
                for event in &step.events {
                    if let felix_core::history::Event::Gap { from, to, .. } = event {
                        out!("gap: offsets {from}..{to} were trimmed (moved to the floor)");
                    }
                }
                let delivered = step.delivered.len();
                for record in step.delivered.iter().take(max - printed) {
                    out!("{}", describe::read_record(record));
                    printed += 1;
                }
                if refused {
                    tries += 1;
                    std::thread::sleep(router.follow(step.route, true));
                    continue;
                }
                if let Reply::Records { .. } = reply {
                    if delivered < batch as usize {
                        break; // reached the tail
                    }
                } else if step.events.is_empty() {
                    out!("node {node}: {}", describe::reply(&reply));
                    return 0;
                }
            }
            Err(error) => {
                reader.on_unknown(id);
                tries += 1;
                unreachable += usize::from(matches!(error, CallError::Unreachable(_)));
                if unreachable >= router_nodes {
                    out!("no node of the cluster is reachable (last: {error})");
                    return 1;
                }
                router.next();
            }
        }
    }
    if tries >= TRIES_MAX {
        out!("no node served the read after {TRIES_MAX} tries");
        return 1;
    }
    out!("({printed} records, next offset {})", reader.cursor());
    0
}
