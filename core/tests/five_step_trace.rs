//! The first seed's five-step trace ("The trace"), replayed on the real core: three brokers, two
//! lease holders, a small deterministic in-test driver.
//!
//! The seed numbers positions from 1 with no leader noop; here the leader's noop takes offset 1,
//! so every position is one higher: holder 2's fenced write lands at 2, its trim (floor 3, its own
//! offset) at 3; holder 1 read the stream to tail 2 before the lease moved.
//!
//! With every rule on, holder 1's fenced write is refused, it re-reads from its own cursor (2),
//! is refused with `CursorTooOld` tagged epoch 2, and retires. With `HiddenTrims` or `Untagged`
//! (no tag), and with the `ReadFromEarliest` and `TailFromRefusal` twins, holder 1 writes and
//! trims after holder 2, breaking StaleTrimRefused.

use felix_core::api::{ClientId, ReadFrom, Reply, Request, RequestId};
use felix_core::broker::{Broker, BrokerConfig, Input, Message, Output};
use felix_core::client::{Client, Holder, HolderConfig, HolderOp, HolderStatus};
use felix_core::history::Event;
use felix_core::journal::JournalConfig;
use felix_core::storage::memory::MemoryStore;
use felix_core::storage::{LogStore, SegmentLayout};
use felix_core::{Command, Entry, Headers, NodeId, Offset, Rules, Twin};
use std::collections::VecDeque;

const VOTERS: [NodeId; 3] = [0, 1, 2];
const HOLDER_1: ClientId = 1;
const HOLDER_2: ClientId = 2;
/// Every wait in the driver is bounded: a protocol that does not answer fails the test.
const DRIVER_STEPS_MAX: usize = 10_000;

/// Three brokers, FIFO message delivery, stores synced after every step. Only the leader ticks,
/// so no follower ever campaigns: the run is the same every time.
struct Cluster {
    brokers: Vec<Broker>,
    stores: Vec<MemoryStore>,
    network: VecDeque<(NodeId, NodeId, Message)>,
    replies: Vec<(ClientId, RequestId, Reply)>,
    history: Vec<Event>,
}

impl Cluster {
    fn new(rules: Rules) -> Cluster {
        let layout = SegmentLayout::default();
        let brokers = VOTERS
            .iter()
            .map(|id| {
                let mut config = BrokerConfig::new(*id, VOTERS.to_vec(), Vec::new());
                config.election_timeout_ticks = if *id == 0 { 1 } else { 1_000_000 };
                config.journal = JournalConfig {
                    layout,
                    rules,
                    ..JournalConfig::default()
                };
                Broker::new(config)
            })
            .collect();
        let stores = VOTERS.iter().map(|_| MemoryStore::new(layout)).collect();
        let mut cluster = Cluster {
            brokers,
            stores,
            network: VecDeque::new(),
            replies: Vec::new(),
            history: Vec::new(),
        };
        cluster.input(0, Input::Tick);
        cluster.settle();
        assert!(cluster.brokers[0].is_leader(), "node 0 is elected");
        cluster
    }

    /// One input to one node; persists are applied and synced before its sends go out.
    fn input(&mut self, node: NodeId, input: Input) {
        let outputs = self.brokers[node as usize].step_collect(input);
        let mut persisted = None;
        for output in outputs {
            match output {
                Output::Persist { id, op } => {
                    self.stores[node as usize]
                        .apply(&op)
                        .expect("in-memory apply");
                    persisted = Some(id);
                }
                Output::Send { to, message } => self.network.push_back((node, to, message)),
                Output::Reply {
                    client,
                    request_id,
                    reply,
                } => self.replies.push((client, request_id, reply)),
                Output::Observe(event) => self.history.push(event),
            }
        }
        if let Some(through) = persisted {
            self.stores[node as usize].sync().expect("in-memory sync");
            self.input(node, Input::Persisted { through });
        }
    }

    /// Delivers messages until the network is empty.
    fn settle(&mut self) {
        for _ in 0..DRIVER_STEPS_MAX {
            let Some((from, to, message)) = self.network.pop_front() else {
                return;
            };
            self.input(to, Input::Message { from, message });
        }
        panic!("the network did not settle");
    }

    /// Sends `request` to the leader and runs the cluster until it is answered.
    fn request(&mut self, client: ClientId, request_id: RequestId, request: Request) -> Reply {
        self.history.push(Event::Requested {
            client,
            node: 0,
            request: request.clone(),
        });
        self.input(
            0,
            Input::Client {
                client,
                request_id,
                request: request.clone(),
            },
        );
        for _ in 0..DRIVER_STEPS_MAX {
            let answered = self
                .replies
                .iter()
                .position(|(to, id, _)| *to == client && *id == request_id);
            if let Some(index) = answered {
                let (_, _, reply) = self.replies.remove(index);
                self.history.push(Event::Replied {
                    client,
                    node: 0,
                    request,
                    reply: reply.clone(),
                });
                return reply;
            }
            if self.network.is_empty() {
                self.input(0, Input::Tick);
            }
            self.settle();
        }
        panic!("request {request_id} of client {client} was never answered");
    }

    /// Every record the leader's walk committed, from its `Committed` events: its log itself may
    /// have deleted the segments below a floor by now.
    fn committed(&self) -> Vec<Entry> {
        self.history
            .iter()
            .filter_map(|event| match event {
                Event::Committed { node: 0, entry } => Some(entry.clone()),
                _ => None,
            })
            .collect()
    }
}

/// One request and its reply, as the trace shows them.
type Exchange = (Request, Reply);

/// Lets `holder` ask and hear answers until it has nothing more to ask; returns what it asked,
/// what it heard and the events it emitted.
fn run_holder(
    cluster: &mut Cluster,
    holder: &mut Holder,
    requests_max: usize,
) -> (Vec<Exchange>, Vec<Event>) {
    let mut exchanges = Vec::new();
    let mut events = Vec::new();
    for _ in 0..requests_max {
        let Some((id, request)) = holder.next_request() else {
            return (exchanges, events);
        };
        let reply = cluster.request(holder.client_id(), id, request.clone());
        let step = holder.on_reply(id, reply.clone());
        cluster.history.extend(step.events.iter().cloned());
        events.extend(step.events);
        exchanges.push((request, reply));
    }
    assert_eq!(
        holder.next_request(),
        None,
        "the holder stopped within {requests_max} requests"
    );
    (exchanges, events)
}

fn epoch_of(entry: &Entry) -> Option<u64> {
    match &entry.command {
        Command::Write { headers, .. } | Command::Trim { headers, .. } => headers.epoch(),
        Command::Fence { .. } | Command::Noop => None,
    }
}

/// StaleTrimRefused over a committed log: the first committed write or trim of a holder that
/// follows a committed write of a newer holder, as (offset, its epoch, the newer epoch).
fn stale_trim_refused_violation(committed: &[Entry]) -> Option<(Offset, u64, u64)> {
    let mut newest_write_epoch = 0;
    for entry in committed {
        let Some(epoch) = epoch_of(entry) else {
            continue;
        };
        if epoch < newest_write_epoch {
            return Some((entry.offset, epoch, newest_write_epoch));
        }
        if matches!(entry.command, Command::Write { .. }) {
            newest_write_epoch = newest_write_epoch.max(epoch);
        }
    }
    None
}

fn read(from: Offset) -> Request {
    Request::Read {
        from: ReadFrom::Offset(from),
        max_records: 16,
    }
}

fn fenced_write(epoch: u64, tail: Offset) -> Request {
    Request::Append {
        expected_tail: Some(tail),
        fence: None,
        body: Holder::fenced_write_body(epoch),
        headers: Headers::with_epoch(epoch),
    }
}

fn trim(epoch: u64, tail: Offset) -> Request {
    Request::Trim {
        expected_tail: Some(tail),
        fence: None,
        floor: tail,
        headers: Headers::with_epoch(epoch),
    }
}

/// Steps 1–3 of the trace; returns the cluster and holder 1, paused after reading to tail 2.
fn first_three_steps(rules: Rules) -> (Cluster, Holder) {
    let config = HolderConfig {
        read_batch_max: 16,
        ops_max: 4,
    };
    let mut cluster = Cluster::new(rules);
    // Step 1: holder 1 has the lease (epoch 1), reads the stream to its tail, and pauses before
    // writing anything. The lease moves to holder 2; nobody tells holder 1.
    cluster.history.push(Event::LeaseGranted {
        client: HOLDER_1,
        epoch: 1,
    });
    let mut holder_1 = Holder::new(HOLDER_1, 1, 1, rules, config);
    let (id, request) = holder_1.next_request().expect("holder 1 reads");
    assert_eq!(request, read(1));
    let reply = cluster.request(HOLDER_1, id, request);
    assert_eq!(
        reply,
        Reply::Records {
            records: vec![],
            next: 2
        }
    );
    assert!(holder_1.on_reply(id, reply).events.is_empty());
    assert_eq!(holder_1.status(), HolderStatus::Fencing);
    cluster.history.push(Event::LeaseGranted {
        client: HOLDER_2,
        epoch: 2,
    });
    // Steps 2 and 3: holder 2 makes its fenced write at 2, then trims with floor 3 (its own
    // offset: everything below is old history once there is a snapshot).
    let mut holder_2 = Holder::new(HOLDER_2, 2, 1, rules, config);
    holder_2
        .submit(HolderOp::Trim { floor: u64::MAX })
        .expect("room for a trim");
    let (exchanges, events) = run_holder(&mut cluster, &mut holder_2, 8);
    assert!(events.is_empty());
    assert_eq!(
        exchanges,
        vec![
            (
                read(1),
                Reply::Records {
                    records: vec![],
                    next: 2
                }
            ),
            (fenced_write(2, 2), Reply::Appended { offset: 2, tail: 3 }),
            (trim(2, 3), Reply::Appended { offset: 3, tail: 4 }),
        ]
    );
    assert_eq!(
        cluster.brokers[0].floor(),
        3,
        "the trim moved the floor to 3"
    );
    (cluster, holder_1)
}

/// Step 4 and 5 for holder 1, which wakes up wanting to trim: returns its exchanges, its events
/// and the leader's committed log afterwards.
fn holder_1_wakes_up(rules: Rules) -> (Vec<Exchange>, Vec<Event>, Vec<Entry>) {
    let (mut cluster, mut holder_1) = first_three_steps(rules);
    holder_1
        .submit(HolderOp::Trim { floor: u64::MAX })
        .expect("room for a trim");
    let (exchanges, events) = run_holder(&mut cluster, &mut holder_1, 8);
    (exchanges, events, cluster.committed())
}

/// The committed log a stale holder leaves when it writes (4) and trims (5) after holder 2.
fn assert_stale_holder_wrote_after_holder_2(committed: &[Entry]) {
    let epochs: Vec<(Offset, Option<u64>)> = committed
        .iter()
        .map(|entry| (entry.offset, epoch_of(entry)))
        .collect();
    assert_eq!(
        epochs,
        vec![
            (1, None),
            (2, Some(2)),
            (3, Some(2)),
            (4, Some(1)),
            (5, Some(1))
        ]
    );
    assert!(matches!(committed[3].command, Command::Write { .. }));
    assert!(matches!(
        committed[4].command,
        Command::Trim { floor: 5, .. }
    ));
    assert_eq!(stale_trim_refused_violation(committed), Some((4, 1, 2)));
}

/// Every rule on: holder 1 is refused, re-reads from its own cursor, is refused as too old with
/// a tag naming epoch 2, and retires; nothing of epoch 1 is ever committed.
#[test]
fn every_rule_on_holder_1_retires_on_the_tag() {
    let (exchanges, events, committed) = holder_1_wakes_up(Rules::default());
    assert_eq!(
        exchanges,
        vec![
            (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
            (
                read(2),
                Reply::CursorTooOld {
                    floor: 3,
                    tag: Some(Headers::with_epoch(2))
                }
            ),
        ]
    );
    assert_eq!(
        events,
        vec![Event::HolderRetired {
            client: HOLDER_1,
            epoch: 1,
            newer_epoch: 2,
            by_tag: true
        }]
    );
    assert_eq!(committed.len(), 3);
    assert_eq!(stale_trim_refused_violation(&committed), None);
}

/// HiddenTrims (the design before the fix) and Untagged: the refusal carries no tag; holder 1
/// reports the gap, resumes at the floor, sees only the skipped trim, and writes and trims after
/// holder 2 — the trim hid the fence.
#[test]
fn without_the_tag_holder_1_writes_and_trims_after_holder_2() {
    for twin in [Twin::HiddenTrims, Twin::Untagged] {
        let (exchanges, events, committed) = holder_1_wakes_up(twin.rules());
        assert_eq!(
            exchanges,
            vec![
                (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
                (
                    read(2),
                    Reply::CursorTooOld {
                        floor: 3,
                        tag: None
                    }
                ),
                (
                    read(3),
                    Reply::Records {
                        records: vec![],
                        next: 4
                    }
                ),
                (fenced_write(1, 4), Reply::Appended { offset: 4, tail: 5 }),
                (trim(1, 5), Reply::Appended { offset: 5, tail: 6 }),
            ],
            "{twin}"
        );
        assert_eq!(
            events,
            vec![Event::Gap {
                client: HOLDER_1,
                from: 2,
                to: 3
            }],
            "{twin}"
        );
        assert_stale_holder_wrote_after_holder_2(&committed);
    }
}

/// ReadFromEarliest: the re-read resolves to the floor, is never refused, never tagged.
#[test]
fn read_from_earliest_holder_1_writes_after_holder_2() {
    let (exchanges, events, committed) = holder_1_wakes_up(Twin::ReadFromEarliest.rules());
    assert_eq!(
        exchanges[..2],
        [
            (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
            (
                Request::Read {
                    from: ReadFrom::Earliest,
                    max_records: 16
                },
                Reply::Records {
                    records: vec![],
                    next: 4
                }
            ),
        ]
    );
    assert!(events.is_empty());
    assert_stale_holder_wrote_after_holder_2(&committed);
}

/// TailFromRefusal: holder 1 adopts the refusal's tail and writes straight after holder 2.
#[test]
fn tail_from_refusal_holder_1_writes_after_holder_2() {
    let (exchanges, events, committed) = holder_1_wakes_up(Twin::TailFromRefusal.rules());
    assert_eq!(
        exchanges[..2],
        [
            (fenced_write(1, 2), Reply::OffsetMismatch { tail: 4 }),
            (fenced_write(1, 4), Reply::Appended { offset: 4, tail: 5 }),
        ]
    );
    assert!(events.is_empty());
    assert_stale_holder_wrote_after_holder_2(&committed);
}

/// The driver is deterministic: the same rules give the same history, event for event.
#[test]
fn the_trace_is_deterministic() {
    let run = |rules: Rules| {
        let (mut cluster, mut holder_1) = first_three_steps(rules);
        holder_1
            .submit(HolderOp::Trim { floor: u64::MAX })
            .expect("room");
        run_holder(&mut cluster, &mut holder_1, 8);
        cluster.history
    };
    assert_eq!(run(Rules::default()), run(Rules::default()));
    assert_ne!(run(Rules::default()), run(Twin::Untagged.rules()));
}
