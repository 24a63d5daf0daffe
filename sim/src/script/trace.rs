//! What a verb prints (`Trace`), and the shape of a scripted cluster (`Shape`, `Syncs`).

use crate::render::describe;
use felix_core::storage::SegmentLayout;
use felix_core::{NodeId, Rules};

/// Lines a verb prints. `Committed` events of one node at consecutive offsets are coalesced.
#[derive(Default)]
pub struct Trace {
    lines: Vec<TraceLine>,
    /// Also print every broker-to-broker message delivered and every sync.
    pub verbose: bool,
}

enum TraceLine {
    Text(String),
    Committed { node: NodeId, from: u64, to: u64 },
}

impl Trace {
    pub fn new(verbose: bool) -> Trace {
        Trace {
            lines: Vec::new(),
            verbose,
        }
    }

    pub fn line(&mut self, text: String) {
        self.lines.push(TraceLine::Text(text));
    }

    pub(super) fn committed(&mut self, node: NodeId, offset: u64) {
        if let Some(TraceLine::Committed { node: last, to, .. }) = self.lines.last_mut() {
            if *last == node && *to + 1 == offset {
                *to = offset;
                return;
            }
        }
        self.lines.push(TraceLine::Committed {
            node,
            from: offset,
            to: offset,
        });
    }

    pub fn render(self) -> Vec<String> {
        self.lines
            .into_iter()
            .map(|line| match line {
                TraceLine::Text(text) => text,
                TraceLine::Committed { node, from, to } if from == to => {
                    format!("{}: committed {from}", describe::node(node))
                }
                TraceLine::Committed { node, from, to } => {
                    format!("{}: committed {from}..{to}", describe::node(node))
                }
            })
            .collect()
    }
}

/// How the nodes' storage syncs (`cluster ... syncs=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Syncs {
    /// `sync` makes everything a node applied durable at once (the default).
    #[default]
    All,
    /// As the simulator's disks sync: a sync starts when an op is written while none is in
    /// flight, and covers only the ops written before it started; `sync` completes the sync in
    /// flight, and the ops written meanwhile wait for the next one (which starts then). Two ops
    /// of one step (a promise's term, then its vote) may so become durable one at a time.
    Eager,
}

/// What `Env::build_shaped` builds.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub brokers: u32,
    pub replicas: u32,
    pub rules: Rules,
    pub layout: SegmentLayout,
    pub retention_segments_max: u64,
    pub syncs: Syncs,
    /// Ticks a voter waits without a leader before it campaigns.
    pub election_ticks: u64,
    /// Ticks between a leader's heartbeats.
    pub heartbeat_ticks: u64,
    /// At most this many appends carrying records unanswered per follower (`None`: no bound).
    pub appends_in_flight_max: Option<usize>,
}
