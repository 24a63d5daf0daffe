//! How a broker is set up: every number the driver chooses for a node (the core has no clock
//! and no random source, so the random election timeout and the incarnation come from here).

use crate::journal::JournalConfig;
use crate::record::NodeId;

/// How a broker is set up. The driver chooses every number (including the random election
/// timeout): the core has no random source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerConfig {
    /// This node.
    pub id: NodeId,
    /// Every voting broker, this one included when it votes.
    pub voters: Vec<NodeId>,
    /// Every non-voting replica, this one included when it is a replica.
    pub replicas: Vec<NodeId>,
    /// Ticks without hearing a leader before a voter campaigns (randomized by the driver).
    pub election_timeout_ticks: u64,
    /// Ticks between a leader's heartbeats.
    pub heartbeat_ticks: u64,
    /// A number the driver never gave this node before (a count of its starts, a boot nonce): it
    /// names this incarnation's read-index questions, so that an answer to a question asked before
    /// a restart is never taken for a later one. The core holds no counter across a restart and
    /// has no random source, so the driver chooses it, like the election timeout.
    pub incarnation: u64,
    /// At most this many records per `AppendEntries`.
    pub append_entries_max: usize,
    /// At most this many `AppendEntries` carrying records unanswered per peer at a leader, which
    /// sends that peer only heartbeats at the bound (`broker/in_flight.rs`: how answers, rejections
    /// and heartbeats free slots); `None`, the default: no bound, the leader pipelines freely.
    pub appends_in_flight_max: Option<usize>,
    /// At most this many appended-but-unanswered client requests on a leader.
    pub pending_acks_max: usize,
    /// At most this many `Persist`s not yet reported durable (a driver that never syncs is a bug).
    pub unsynced_persists_max: usize,
    /// At most this many client reads waiting for a read index at this node (and, at a leader,
    /// at most this many followers' questions); a read beyond it is refused with `NoReadIndex`.
    pub pending_reads_max: usize,
    /// Ticks a read may wait for its read index (and the walk to it) before `NoReadIndex`.
    pub read_wait_ticks_max: u64,
    /// Whether to observe one `Committed` event per record the walk reaches (the audits need it;
    /// a benchmark may not).
    pub observe_commits: bool,
    /// Layout, rules and client bounds of the journal.
    pub journal: JournalConfig,
}

impl BrokerConfig {
    /// A config for node `id` among `voters` and `replicas`, with defaults for the rest.
    pub fn new(id: NodeId, voters: Vec<NodeId>, replicas: Vec<NodeId>) -> BrokerConfig {
        BrokerConfig {
            id,
            voters,
            replicas,
            election_timeout_ticks: 10,
            heartbeat_ticks: 3,
            incarnation: 0,
            append_entries_max: 64,
            appends_in_flight_max: None,
            pending_acks_max: 1024,
            unsynced_persists_max: 1 << 16,
            pending_reads_max: 256,
            read_wait_ticks_max: 20,
            observe_commits: true,
            journal: JournalConfig::default(),
        }
    }
}
