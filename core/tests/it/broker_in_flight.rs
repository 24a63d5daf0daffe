//! The leader's bound on appends in flight per peer (`BrokerConfig::appends_in_flight_max`,
//! `core/src/broker/in_flight.rs`): kept, freed by the answers that cover it, and never wedged by
//! a lost append or a lost answer.

use felix_core::api::Request;
use felix_core::broker::{AppendResult, Broker, BrokerConfig, Input, Message, Output};
use felix_core::record::{Headers, NodeId, Offset};
use std::collections::{BTreeMap, VecDeque};

const LEADER: NodeId = 0;
const PEER: NodeId = 1;

/// Three voters on a synchronous driver: every persist is durable at once, and messages wait in
/// one queue until the test delivers (or loses) them.
struct Cluster {
    nodes: BTreeMap<NodeId, Broker>,
    queue: VecDeque<(NodeId, NodeId, Message)>,
}

impl Cluster {
    /// Node 0 leads term 1 with its noop committed everywhere; one record per append, at most
    /// `bound` appends in flight per peer.
    fn new(bound: Option<usize>) -> Cluster {
        let nodes = (0..3)
            .map(|id| {
                let mut config = BrokerConfig::new(id, vec![0, 1, 2], vec![]);
                config.election_timeout_ticks = if id == LEADER { 2 } else { 1_000 };
                config.heartbeat_ticks = 2;
                config.append_entries_max = 1;
                config.appends_in_flight_max = bound;
                (id, Broker::new(config))
            })
            .collect();
        let mut cluster = Cluster {
            nodes,
            queue: VecDeque::new(),
        };
        cluster.step(LEADER, Input::Tick);
        cluster.step(LEADER, Input::Tick);
        cluster.deliver(|_, _, _| false);
        cluster.heartbeat();
        cluster.deliver(|_, _, _| false);
        let leader = cluster.leader();
        assert!(leader.is_leader());
        assert_eq!((leader.tail(), leader.committed()), (2, 1));
        cluster
    }

    fn node(&mut self, id: NodeId) -> &mut Broker {
        self.nodes.get_mut(&id).expect("a node of the test cluster")
    }

    fn leader(&mut self) -> &mut Broker {
        self.node(LEADER)
    }

    /// The leader's window to `PEER`: how many appends, and the last offset of the newest.
    fn window(&mut self) -> (usize, Option<Offset>) {
        let in_flight = &self.leader().progress()[&PEER].in_flight;
        assert_eq!(in_flight.is_empty(), in_flight.newest().is_none());
        (in_flight.len(), in_flight.newest())
    }

    /// One step of `id`; its persists are durable at once, its sends join the queue.
    fn step(&mut self, id: NodeId, input: Input) {
        let outputs = self.node(id).step_collect(input);
        for output in outputs {
            match output {
                Output::Persist { id: persist, .. } => {
                    self.step(id, Input::Persisted { through: persist })
                }
                Output::Send { to, message } => self.queue.push_back((id, to, message)),
                _ => {}
            }
        }
    }

    /// Delivers the queue until it is empty, losing the messages `lost` picks.
    fn deliver(&mut self, lost: impl Fn(NodeId, NodeId, &Message) -> bool) {
        while let Some((from, to, message)) = self.queue.pop_front() {
            if !lost(from, to, &message) {
                self.step(to, Input::Message { from, message });
            }
        }
    }

    fn write(&mut self, body: &str) {
        let request = Request::Append {
            expected_tail: None,
            fence: None,
            body: body.as_bytes().to_vec(),
            headers: Headers::default(),
        };
        self.step(
            LEADER,
            Input::Client {
                client: 9,
                request_id: 1,
                request,
            },
        );
    }

    fn heartbeat(&mut self) {
        self.step(LEADER, Input::Tick);
        self.step(LEADER, Input::Tick);
    }

    /// The appends waiting in the queue for `PEER`, as (prev_offset, records), in order.
    fn appends_to_peer(&self) -> Vec<(Offset, usize)> {
        self.queue
            .iter()
            .filter_map(|(_, to, message)| match message {
                Message::AppendEntries {
                    prev_offset,
                    entries,
                    ..
                } if *to == PEER => Some((*prev_offset, entries.len())),
                _ => None,
            })
            .collect()
    }

    /// The leader hears `result` from `PEER` in `term`.
    fn answer(&mut self, term: u64, result: AppendResult) {
        let message = Message::AppendReply { term, result };
        self.step(
            LEADER,
            Input::Message {
                from: PEER,
                message,
            },
        );
    }
}

/// Nothing from the leader to its peers is delivered.
fn from_leader(from: NodeId, _: NodeId, _: &Message) -> bool {
    from == LEADER
}

/// With no answers, the leader sends a peer at most the bound of appends carrying records and
/// remembers each one's last offset; its heartbeat then carries no records and goes one past
/// them all. Without a bound every write goes out at once and nothing is remembered.
#[test]
fn a_leader_sends_at_most_the_bound_of_unanswered_appends_and_then_only_heartbeats() {
    for bound in [Some(1), Some(3), None] {
        let mut cluster = Cluster::new(bound);
        assert_eq!(cluster.window(), (0, None), "{bound:?}");
        for index in 0..6 {
            cluster.write(&format!("w{index}"));
        }
        let sent = bound.unwrap_or(6);
        let expected: Vec<(Offset, usize)> = (1..=sent as Offset).map(|prev| (prev, 1)).collect();
        assert_eq!(cluster.appends_to_peer(), expected, "{bound:?}");
        let remembered = bound.map(|bound| (bound, Some(1 + bound as Offset)));
        assert_eq!(cluster.window(), remembered.unwrap_or((0, None)));
        cluster.queue.clear();
        cluster.heartbeat();
        assert_eq!(
            cluster.appends_to_peer(),
            vec![(1 + sent as Offset, 0)],
            "{bound:?}: the heartbeat carries no records, one past every append sent"
        );
        assert_eq!(cluster.leader().progress()[&PEER].next, 2 + sent as Offset);
    }
}

/// An acceptance frees the slots of exactly the appends it covers, and the leader sends the next
/// records at once; a duplicated acceptance, a stale one and one from another term free nothing.
#[test]
fn an_acceptance_frees_the_appends_it_covers_and_nothing_else() {
    let mut cluster = Cluster::new(Some(2));
    for index in 0..6 {
        cluster.write(&format!("w{index}"));
    }
    assert_eq!(cluster.appends_to_peer(), vec![(1, 1), (2, 1)]);
    assert_eq!(cluster.window(), (2, Some(3)));
    cluster.queue.clear();
    cluster.answer(1, AppendResult::Accepted { matched: 2 });
    assert_eq!(
        cluster.appends_to_peer(),
        vec![(3, 1)],
        "one slot freed, refilled"
    );
    assert_eq!(cluster.window(), (2, Some(4)));
    cluster.queue.clear();
    for (term, matched) in [(1, 2), (1, 1), (0, 7)] {
        cluster.answer(term, AppendResult::Accepted { matched });
        assert_eq!(
            cluster.appends_to_peer(),
            vec![],
            "term {term} matched {matched}"
        );
        assert_eq!(
            cluster.window(),
            (2, Some(4)),
            "term {term} matched {matched}"
        );
    }
    cluster.answer(1, AppendResult::Accepted { matched: 4 });
    assert_eq!(
        cluster.appends_to_peer(),
        vec![(4, 1)],
        "both freed, one sent"
    );
    assert_eq!(cluster.window(), (1, Some(5)));
}

/// A rejection empties the window: the leader sends again from the peer's hint, although every
/// slot was taken.
#[test]
fn a_rejection_empties_the_window() {
    let mut cluster = Cluster::new(Some(2));
    for index in 0..4 {
        cluster.write(&format!("w{index}"));
    }
    assert_eq!(cluster.window(), (2, Some(3)));
    cluster.queue.clear();
    cluster.answer(1, AppendResult::Rejected { next: 2 });
    assert_eq!(cluster.appends_to_peer(), vec![(1, 1)]);
    assert_eq!(cluster.window(), (1, Some(2)));
}

/// A lost append or a lost answer costs one heartbeat, never a wedged peer: the heartbeat goes one
/// past every append in flight, so the peer either accepts it (which covers them all) or rejects
/// it (which empties the window), and the records flow again. Both ways, with one slot.
#[test]
fn a_lost_append_or_answer_never_wedges_a_peer() {
    for lose_the_append in [true, false] {
        let mut cluster = Cluster::new(Some(1));
        for index in 0..3 {
            cluster.write(&format!("w{index}"));
        }
        assert_eq!(cluster.window(), (1, Some(2)));
        if lose_the_append {
            cluster.deliver(|from, to, _| from == LEADER && to == PEER);
        } else {
            cluster.deliver(|from, to, _| from == PEER && to == LEADER);
        }
        let expected_tail = if lose_the_append { 2 } else { 3 };
        assert_eq!(cluster.node(PEER).tail(), expected_tail);
        assert_eq!(cluster.window(), (1, Some(2)), "the answer never came");
        cluster.write("w3");
        assert_eq!(cluster.appends_to_peer(), vec![], "held back");
        cluster.deliver(from_leader);
        cluster.heartbeat();
        cluster.deliver(|_, _, _| false);
        let tail = cluster.leader().tail();
        assert_eq!(
            cluster.node(PEER).tail(),
            tail,
            "lost the append: {lose_the_append}"
        );
        assert_eq!(cluster.window(), (0, None));
    }
}

/// A leader that lost its term and won a later one starts with empty windows: its full window of
/// the old term is forgotten, and its new noop goes out at once.
#[test]
fn a_new_leader_starts_with_empty_windows() {
    let mut cluster = Cluster::new(Some(1));
    cluster.write("w0");
    assert_eq!(cluster.window(), (1, Some(2)));
    cluster.queue.clear();
    cluster.answer(2, AppendResult::Rejected { next: 2 });
    assert!(!cluster.leader().is_leader());
    for _ in 0..2 {
        cluster.step(LEADER, Input::Tick);
    }
    // The votes only: the new leader's appends stay in the queue.
    while let Some(index) = cluster.queue.iter().position(|(_, _, message)| {
        matches!(message, Message::RequestVote { .. } | Message::Vote { .. })
    }) {
        let (from, to, message) = cluster.queue.remove(index).expect("a queued vote");
        cluster.step(to, Input::Message { from, message });
    }
    assert!(cluster.leader().is_leader());
    assert_eq!(cluster.leader().term(), 3);
    assert_eq!(
        cluster.appends_to_peer(),
        vec![(2, 1)],
        "the new noop, at 3"
    );
    assert_eq!(cluster.window(), (1, Some(3)));
}
