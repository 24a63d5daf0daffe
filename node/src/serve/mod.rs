//! `felix serve`: one real node. The same `Broker::step` and core `Outbox` the simulator drives,
//! with TCP instead of the simulated network (`net.rs`), the file store with fsync and group
//! commit instead of the memory disk, a monotonic clock for ticks and an OS-seeded generator for
//! election timeouts (`event_loop.rs`), and an event log instead of the simulator's history
//! (`event_log.rs`).
//!
//! Directory layout (`--dir DIR`): `DIR/store/` the file store, `DIR/events.jsonl` the observed
//! events (appended across restarts). A store that recovery finds damaged (`StoreError::Corrupt`)
//! stops the node before it listens: exit 2 with the store's own message. SIGTERM (or SIGINT)
//! ends the loop after one last sync: exit 0.

pub mod event_log;
pub mod event_loop;
pub mod net;

use crate::addresses::{parse_address, parse_addresses, parse_ids, Addresses};
use clap::Args;
use event_log::EventLog;
use event_loop::NodeLoop;
use felix_core::broker::{Broker, BrokerConfig};
use felix_core::journal::JournalConfig;
use felix_core::record::NodeId;
use felix_core::rules::{Layer, Rules, TwinName};
use felix_core::storage::{LogStore, SegmentLayout};
use felix_store::FileStore;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Inputs waiting for the event loop at most: the sockets block beyond it.
pub const INBOUND_MAX: usize = 8192;
/// The largest write body a node accepts (an `AppendEntries` of `append_entries_max` such
/// records stays under the frame limit).
pub const BODY_BYTES_MAX: u64 = 64 << 10;

/// The longest power-loss window (`--unsynced-window-ms`): well under an election timeout.
pub const UNSYNCED_WINDOW_MS_MAX: u64 = 1000;

/// Arguments of `felix serve`.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// This node's id.
    #[arg(long)]
    pub id: NodeId,
    /// Every node's address as ID=HOST:PORT, comma separated (this node's entry may be included
    /// and is then ignored: one list serves every node).
    #[arg(long)]
    pub peers: String,
    /// The address to listen on (peers and clients), e.g. 127.0.0.1:7001.
    #[arg(long)]
    pub listen: String,
    /// The node's directory (file store and event log); created if missing.
    #[arg(long)]
    pub dir: PathBuf,
    /// This node is a non-voting replica.
    #[arg(long)]
    pub replica: bool,
    /// The other non-voting replicas, by id (comma separated).
    #[arg(long, default_value = "")]
    pub replicas: String,
    /// Milliseconds per broker tick (heartbeats every 3 ticks).
    #[arg(long, default_value_t = 10)]
    pub tick_ms: u64,
    /// Election timeouts are drawn between this many ticks and twice as many.
    #[arg(long, default_value_t = 15)]
    pub election_ticks: u64,
    /// Records per segment file (fixed for the life of a store).
    #[arg(long, default_value_t = 64)]
    pub segment_records: u64,
    /// Accept failpoint frames (fault injection: a slow disk). For the nemesis and tests only.
    #[arg(long)]
    pub failpoints: bool,
    /// Power-loss mode: hold appended records in the process, unwritten, for up to this many
    /// milliseconds before one write and fsync covers them, so a kill -9 loses the unsynced
    /// suffix as a power loss would (0: sync every turn). For the nemesis and tests.
    #[arg(long, default_value_t = 0)]
    pub unsynced_window_ms: u64,
    /// Run with one safety rule off (a twin: README.md, "Twins and invariants"): for the nemesis's canaries only.
    #[arg(long)]
    pub twin: Option<String>,
}

/// A node's configuration, checked.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub id: NodeId,
    pub peers: Addresses,
    pub voters: Vec<NodeId>,
    pub replicas: Vec<NodeId>,
    pub listen: SocketAddr,
    pub dir: PathBuf,
    pub tick: Duration,
    pub election_ticks: u64,
    pub layout: SegmentLayout,
    pub rules: Rules,
    pub failpoints: bool,
    pub unsynced_window: Duration,
}

impl ServeConfig {
    /// Checks the arguments; an error is a message for the user (exit 2).
    pub fn from_args(args: &ServeArgs) -> Result<ServeConfig, String> {
        let mut peers = parse_addresses(&args.peers, false).map_err(|e| format!("--peers: {e}"))?;
        peers.remove(&args.id);
        let listen = parse_address(&args.listen).map_err(|e| format!("--listen: {e}"))?;
        let mut replicas: BTreeSet<NodeId> = parse_ids(&args.replicas)
            .map_err(|e| format!("--replicas: {e}"))?
            .into_iter()
            .collect();
        if args.replica {
            replicas.insert(args.id);
        }
        for replica in &replicas {
            if *replica != args.id && !peers.contains_key(replica) {
                return Err(format!("--replicas: node {replica} is not in --peers"));
            }
        }
        let mut voters: Vec<NodeId> = peers
            .keys()
            .copied()
            .filter(|id| !replicas.contains(id))
            .collect();
        if !replicas.contains(&args.id) {
            voters.push(args.id);
        }
        voters.sort_unstable();
        if voters.is_empty() {
            return Err("no voting node: a cluster needs at least one voter".to_string());
        }
        if !(1..=10_000).contains(&args.tick_ms) {
            return Err("--tick-ms must be between 1 and 10000".to_string());
        }
        if !(2..=1000).contains(&args.election_ticks) {
            return Err("--election-ticks must be between 2 and 1000".to_string());
        }
        if !(1..=1 << 20).contains(&args.segment_records) {
            return Err("--segment-records must be between 1 and 1048576".to_string());
        }
        if args.unsynced_window_ms > UNSYNCED_WINDOW_MS_MAX {
            return Err(format!(
                "--unsynced-window-ms must be at most {UNSYNCED_WINDOW_MS_MAX}"
            ));
        }
        let rules = match &args.twin {
            None => Rules::default(),
            Some(name) => match TwinName::parse_in(Layer::Sim, name) {
                Some(twin) => Rules::twin(twin),
                None => return Err(format!("--twin: no twin is named {name:?}")),
            },
        };
        Ok(ServeConfig {
            id: args.id,
            peers,
            voters,
            replicas: replicas.into_iter().collect(),
            listen,
            dir: args.dir.clone(),
            tick: Duration::from_millis(args.tick_ms),
            election_ticks: args.election_ticks,
            layout: SegmentLayout {
                records_per_segment: args.segment_records,
            },
            rules,
            failpoints: args.failpoints,
            unsynced_window: Duration::from_millis(args.unsynced_window_ms),
        })
    }

    fn broker_config(&self) -> BrokerConfig {
        let mut config = BrokerConfig::new(self.id, self.voters.clone(), self.replicas.clone());
        config.election_timeout_ticks = self.election_ticks;
        config.heartbeat_ticks = 3;
        config.incarnation = rand::random(); // a boot nonce: see BrokerConfig::incarnation
        config.read_wait_ticks_max = 30;
        config.journal = JournalConfig {
            layout: self.layout,
            rules: self.rules,
            body_bytes_max: BODY_BYTES_MAX,
            ..JournalConfig::default()
        };
        config
    }
}

/// `felix serve`: returns the exit code.
pub fn run_serve(args: ServeArgs) -> u8 {
    let config = match ServeConfig::from_args(&args) {
        Ok(config) => config,
        Err(message) => return crate::bad_input(message),
    };
    match serve(config) {
        Ok(()) => 0,
        Err(message) => crate::bad_input(message),
    }
}

/// Runs one node until SIGTERM. An error is a message for the user (exit 2).
pub fn serve(config: ServeConfig) -> Result<(), String> {
    let id = config.id;
    std::fs::create_dir_all(&config.dir)
        .map_err(|error| format!("{}: cannot create: {error}", config.dir.display()))?;
    let store_dir = config.dir.join("store");
    let mut store = FileStore::open(&store_dir, config.layout).map_err(|e| e.to_string())?;
    let recovered = store
        .recover()
        .map_err(|error| format!("node {id} refuses to start on its store: {error}"))?;
    if let Some(cut) = &recovered.tail_cut {
        eprintln!("node {id}: {cut}");
    }
    let fresh = recovered.entries.is_empty()
        && recovered.sealed.is_none()
        && recovered.hard_state == Default::default();
    let held = recovered.entries.len();
    let start = recovered.start;
    // What the store recovered is durable: the PromiseDurable witness starts from it.
    let mut witness = felix_audits::witness::Witness::default();
    if !fresh {
        witness.recovered(&recovered);
    }
    let broker = if fresh {
        Broker::new(config.broker_config())
    } else {
        Broker::from_recovered(config.broker_config(), recovered)
            .map_err(|error| format!("node {id}: the core refused its own store: {error:?}"))?
    };
    let listener = TcpListener::bind(config.listen)
        .map_err(|error| format!("node {id}: cannot listen on {}: {error}", config.listen))?;
    let events = EventLog::open(&config.dir.join("events.jsonl"))
        .map_err(|error| format!("node {id}: cannot open its event log: {error}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|error| format!("node {id}: cannot handle signal {signal}: {error}"))?;
    }
    let (inbound, inputs) = std::sync::mpsc::sync_channel(INBOUND_MAX);
    let mut links = BTreeMap::new();
    for (&peer, &address) in &config.peers {
        links.insert(peer, net::spawn_peer_link(id, peer, address));
    }
    net::spawn_listener(
        listener,
        id,
        config.peers.keys().copied().collect(),
        inbound,
    );
    out!(
        "node {id} listening on {} ({}; store {}: {held} records from offset {start})",
        config.listen,
        if config.replicas.contains(&id) {
            "replica"
        } else {
            "voter"
        },
        store_dir.display()
    );
    let mut node = NodeLoop::new(
        id,
        broker,
        store,
        events,
        links,
        config.election_ticks,
        config.tick,
    );
    node.failpoints = config.failpoints;
    node.unsynced_window = config.unsynced_window;
    node.witness = witness;
    node.boot()
        .map_err(|error| format!("node {id}: {}", error.0))?;
    node.run(&inputs, &stop)
        .map_err(|error| format!("node {id}: {}", error.0))?;
    out!("node {id} stopped");
    Ok(())
}
