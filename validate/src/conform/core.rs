//! The core side of a model path: the scripted environment's real brokers, moved one model action
//! at a time.
//!
//! Nothing moves unless an action moves it (`felix_sim::script::env`). Between two actions no
//! message between brokers is in flight: each action sends what it needs and the network drops
//! whatever else its steps sent (the core's network is lossy, so a drop is always a behaviour of
//! the core). Replies to clients are taken off the network and recorded in the history as they
//! come, so the audits judge every exchange.
//!
//! Offsets: the scripted cluster elects n0 in term 1 before the first action, and that election's
//! noop takes offset 1; the model's `Init` has an empty log. So a model offset `i` is the core's
//! `i + 1` (a trim asking for model floor `fl` asks the core for `fl + 1`), and a holder's
//! expected tail `e` is the core's `expected_tail` `e + 2`. Terms and epochs are the same numbers.
//! Broker `b` is node `b - 1`; holder `h` is client `h - 1` with lease epoch `h`.
//!
//! Holders are the model's: the driver sends the request the model's holder would send, from its
//! own copy of the holder's variables (`HolderSide`), updated from the core's answers by the
//! model's client rules; the brokers are the core's, unchanged.

use felix_core::api::{ClientId, InvalidRequest, ReadFrom, Reply, Request, RequestId};
use felix_core::broker::{AppendResult, Input, Message};
use felix_core::history::Event;
use felix_core::record::Headers;
use felix_core::storage::SegmentLayout;
use felix_core::{NodeId, Offset, Rules};
use felix_model::head_trim::spec::Action;
use felix_sim::script::env::{
    Address, Env, Packet, Payload, Trace, ELECTION_TIMEOUT_TICKS, HEARTBEAT_TICKS,
};
use std::collections::BTreeMap;

/// Records a read may return: more than any model log holds.
const READ_RECORDS_MAX: u32 = 1_000;
/// Rounds (deliver, then sync every node) an exchange may take before the driver gives up.
const ROUNDS_MAX: usize = 64;
/// Elections a `Promote` may take: one per term the candidate must first learn.
const CAMPAIGNS_MAX: usize = 4;
/// Whole segments retention keeps (only the Retention and VisibleTrims twins delete by age).
const RETENTION_SEGMENTS: u64 = 0;

/// A model holder's variables as the driver keeps them from the core's answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HolderSide {
    /// `expected[h]`, in model offsets.
    pub expected: u64,
    /// `retired[h]`.
    pub retired: bool,
}

/// The real core in the scripted environment, with the model's holders.
pub struct Core {
    pub env: Env,
    pub rules: Rules,
    pub holders: Vec<HolderSide>,
    /// The last lease epoch granted (`lease`).
    pub lease: u64,
    /// A broker crashed on this path: commit indexes are volatile in the core (a restarted
    /// broker learns its commit again from a leader), kept in the model.
    pub crashed: bool,
    next_request: RequestId,
    /// Requests sent and not yet answered: client, node, request.
    pending: BTreeMap<RequestId, (ClientId, NodeId, Request)>,
}

/// The node of model broker `b`.
pub fn node(b: u8) -> NodeId {
    NodeId::from(b) - 1
}

impl Core {
    /// A cluster of `brokers` voters under `rules`, segments of `seg_size` records, with n0 elected
    /// in term 1, its noop committed everywhere, and holder 1 granted the lease: the model's `Init`.
    pub fn start(brokers: u8, holders: u8, seg_size: u64, rules: Rules) -> Result<Core, String> {
        let mut core = Core::elected(brokers, 0, seg_size, rules)?;
        core.holders = vec![HolderSide::default(); usize::from(holders)];
        core.grant_lease();
        Ok(core)
    }

    /// `brokers` voters and `replicas` non-voting replicas under `rules`, one record per
    /// `AppendEntries`, segments of `seg_size` records, with n0 elected in term 1 and its noop
    /// committed everywhere; no holder, no lease.
    pub fn elected(brokers: u8, replicas: u8, seg_size: u64, rules: Rules) -> Result<Core, String> {
        let mut env = Env::new();
        env.build_tuned(
            u32::from(brokers),
            u32::from(replicas),
            rules,
            SegmentLayout {
                records_per_segment: seg_size,
            },
            RETENTION_SEGMENTS,
            &|config| config.append_entries_max = 1,
        );
        let mut core = Core {
            env,
            rules,
            holders: Vec::new(),
            lease: 0,
            crashed: false,
            next_request: 1,
            pending: BTreeMap::new(),
        };
        let mut trace = Trace::new(false);
        for _ in 0..=ELECTION_TIMEOUT_TICKS {
            core.env.step_node(0, Input::Tick, &mut trace)?;
            if core.term(0) > 0 {
                break;
            }
        }
        core.env.stabilize(None, &mut trace)?;
        for _ in 0..HEARTBEAT_TICKS {
            core.env.step_node(0, Input::Tick, &mut trace)?;
        }
        core.env.stabilize(None, &mut trace)?;
        core.take_replies();
        let settled = (0..core.nodes()).all(|id| {
            core.env.nodes[id as usize]
                .host
                .broker
                .as_ref()
                .is_some_and(|broker| broker.term() == 1 && broker.committed() == 1)
        });
        if !settled || !core.is_leader(0) {
            return Err("the scripted cluster did not settle on n0 leading term 1".to_string());
        }
        Ok(core)
    }

    /// A heartbeat period of n0's ticks, then every message between brokers delivered until
    /// nothing moves, twice: n0's commit index reaches every node. Replies to clients are recorded.
    pub(crate) fn settle(&mut self) -> Result<(), String> {
        let mut trace = Trace::new(false);
        for _ in 0..2 {
            for _ in 0..HEARTBEAT_TICKS {
                self.env.step_node(0, Input::Tick, &mut trace)?;
                self.env.sync_node(0, &mut trace)?;
            }
            self.exchange(&|_: &[u64], packet: &Packet| is_message(packet), &|_| false)?;
        }
        self.take_replies();
        Ok(())
    }

    pub(crate) fn term(&self, id: NodeId) -> u64 {
        self.env.nodes[id as usize]
            .host
            .broker
            .as_ref()
            .map_or(0, |broker| broker.term())
    }

    pub(crate) fn is_leader(&self, id: NodeId) -> bool {
        self.env.nodes[id as usize]
            .host
            .broker
            .as_ref()
            .is_some_and(|broker| broker.is_leader())
    }

    pub(crate) fn nodes(&self) -> NodeId {
        self.env.nodes.len() as NodeId
    }

    /// The lease service grants the next epoch (`MoveLease`; the first grant is `Init`'s).
    fn grant_lease(&mut self) {
        self.lease += 1;
        let client = (self.lease - 1) as ClientId;
        self.env.history.push(Event::LeaseGranted {
            client,
            epoch: self.lease,
        });
    }

    /// Carries out one model action on the core. `Err` when the core could not be driven to do it
    /// (no message to carry, no answer): a divergence the caller reports.
    pub fn apply(&mut self, action: Action) -> Result<(), String> {
        let result = match action {
            Action::MoveLease => {
                self.grant_lease();
                Ok(())
            }
            Action::Promote(b, q) => self.promote(node(b), q),
            Action::Write(h, s) => self.append(h, s, None),
            Action::TrimAppend(h, s, fl) => self.append(h, s, Some(Offset::from(fl) + 1)),
            Action::TrimNoop(h, s) => self.tail_answer(h, s, true),
            Action::Refused(h, s) => self.tail_answer(h, s, false),
            Action::Read(h, s) => self.read(h, s),
            Action::Replicate(l, f) => self.replicate(node(l), node(f)),
            Action::StepDown(l, f) => self.step_down(node(l), node(f)),
            // The core compacts (and retains) eagerly, as its walk moves the floor: no verb.
            Action::Compact(_) | Action::Retain(_) => Ok(()),
            Action::Crash(b) => self.crash(node(b)),
        };
        self.take_replies();
        self.quiesce();
        result
    }

    // ---- the network ----

    /// Drops every message between brokers still queued (the core's network may lose any).
    pub(crate) fn quiesce(&mut self) {
        self.env
            .drop_packets(&|packet| is_message(packet), usize::MAX);
    }

    /// Takes every reply to a client off the network, recording it; returns them.
    pub(crate) fn take_replies(&mut self) -> Vec<(RequestId, Reply)> {
        let taken = self.env.drop_packets(
            &|packet| matches!(packet.payload, Payload::Reply { .. }),
            usize::MAX,
        );
        let mut replies = Vec::new();
        for packet in taken {
            let (Address::Node(from), Payload::Reply { request_id, reply }) =
                (packet.from, packet.payload)
            else {
                continue;
            };
            if let Some((client, _, request)) = self.pending.remove(&request_id) {
                self.env.history.push(Event::Replied {
                    client,
                    node: from,
                    request,
                    reply: reply.clone(),
                });
                replies.push((request_id, reply));
            }
        }
        replies
    }

    /// Syncs every node; whether any had something to sync.
    pub(crate) fn sync_all(&mut self, trace: &mut Trace) -> Result<bool, String> {
        let mut synced = false;
        for id in 0..self.nodes() {
            synced |= self.env.sync_node(id, trace)?;
        }
        Ok(synced)
    }

    /// Delivers what `filter` admits (given every node's term as the round starts) and syncs,
    /// round after round, until nothing moves or `done`.
    pub(crate) fn exchange(
        &mut self,
        filter: &dyn Fn(&[u64], &Packet) -> bool,
        done: &dyn Fn(&Core) -> bool,
    ) -> Result<(), String> {
        let mut trace = Trace::new(false);
        for _ in 0..ROUNDS_MAX {
            let terms: Vec<u64> = (0..self.nodes()).map(|id| self.term(id)).collect();
            let delivered =
                self.env
                    .deliver(&|packet| filter(&terms, packet), usize::MAX, &mut trace)?;
            let synced = self.sync_all(&mut trace)?;
            if done(self) || (delivered == 0 && !synced) {
                return Ok(());
            }
        }
        Err(format!("no quiet within {ROUNDS_MAX} rounds"))
    }

    /// Ticks node `id` until a message `wanted` admits is queued (at most a heartbeat period).
    pub(crate) fn tick_until(
        &mut self,
        id: NodeId,
        wanted: &dyn Fn(&Packet) -> bool,
        ticks_max: u64,
    ) -> Result<bool, String> {
        let mut trace = Trace::new(false);
        for _ in 0..ticks_max {
            if self.env.network.iter().any(wanted) {
                return Ok(true);
            }
            self.env.step_node(id, Input::Tick, &mut trace)?;
            self.env.sync_node(id, &mut trace)?;
        }
        Ok(self.env.network.iter().any(wanted))
    }

    // ---- the actions ----

    /// `Promote(b, Q)`: b campaigns; only Q's voters hear it. A candidate whose term is below a
    /// member's learns it from the refusal and campaigns again, so it ends one above Q's highest
    /// term, as the model's new term.
    pub(crate) fn promote(&mut self, id: NodeId, q: u8) -> Result<(), String> {
        let members: Vec<NodeId> = (0..self.nodes()).filter(|m| q & (1 << m) != 0).collect();
        let mut trace = Trace::new(false);
        for _ in 0..CAMPAIGNS_MAX {
            let before = self.term(id);
            for _ in 0..=ELECTION_TIMEOUT_TICKS {
                self.env.step_node(id, Input::Tick, &mut trace)?;
                if self.term(id) > before {
                    break;
                }
            }
            if self.term(id) == before {
                return Err(format!("n{id} did not campaign"));
            }
            self.env.sync_node(id, &mut trace)?;
            let members = members.clone();
            self.exchange(
                &move |_: &[u64], packet: &Packet| match (packet.from, packet.to, &packet.payload) {
                    (Address::Node(from), Address::Node(to), Payload::Message(message)) => {
                        (from == id
                            && members.contains(&to)
                            && matches!(message, Message::RequestVote { .. }))
                            || (to == id && matches!(message, Message::Vote { .. }))
                    }
                    _ => false,
                },
                &|core| core.is_leader(id),
            )?;
            self.quiesce();
            if self.is_leader(id) {
                return self.env.sync_node(id, &mut trace).map(|_| ());
            }
        }
        Err(format!("n{id} did not win an election among {members:?}"))
    }

    /// Sends `request` from holder `h` to broker `s`, delivers it and syncs s.
    pub(crate) fn request(&mut self, h: u8, s: u8, request: Request) -> Result<RequestId, String> {
        let client = ClientId::from(h) - 1;
        let to = node(s);
        let request_id = self.next_request;
        self.next_request += 1;
        self.env.history.push(Event::Requested {
            client,
            node: to,
            request: request.clone(),
        });
        self.pending
            .insert(request_id, (client, to, request.clone()));
        self.env.network.push_back(Packet {
            from: Address::Client(client),
            to: Address::Node(to),
            payload: Payload::Request {
                request_id,
                request,
            },
        });
        let mut trace = Trace::new(false);
        let sent = Address::Client(client);
        self.env.deliver(
            &|packet| packet.from == sent && matches!(packet.payload, Payload::Request { .. }),
            usize::MAX,
            &mut trace,
        )?;
        self.env.sync_node(to, &mut trace)?;
        Ok(request_id)
    }

    /// The reply to `request_id`, if it came.
    pub(crate) fn reply_to(&mut self, request_id: RequestId) -> Option<Reply> {
        self.take_replies()
            .into_iter()
            .find(|(id, _)| *id == request_id)
            .map(|(_, reply)| reply)
    }

    fn expected_tail(&self, h: u8) -> Offset {
        self.holders[usize::from(h) - 1].expected + 2
    }

    /// `Write(h, s)` (`floor` None) or `TrimAppend(h, s, fl)`: the append conditional on the
    /// holder's tail, with its epoch.
    fn append(&mut self, h: u8, s: u8, floor: Option<Offset>) -> Result<(), String> {
        let expected_tail = Some(self.expected_tail(h));
        let headers = Headers::with_epoch(u64::from(h));
        let request = match floor {
            None => Request::Append {
                expected_tail,
                fence: None,
                body: format!("w{h}").into_bytes(),
                headers,
            },
            Some(floor) => Request::Trim {
                expected_tail,
                fence: None,
                floor,
                headers,
            },
        };
        let id = self.request(h, s, request)?;
        // An append is answered after it commits; an immediate answer is a refusal.
        match self.reply_to(id) {
            None => Ok(()),
            Some(reply) => Err(format!(
                "{} refused the append: {}",
                node_name(node(s)),
                felix_sim::render::describe::reply(&reply)
            )),
        }
    }

    /// `TrimNoop(h, s)` (`noop`) or `Refused(h, s)`: a request answered at once with the tail,
    /// which the holder takes as its expected tail.
    fn tail_answer(&mut self, h: u8, s: u8, noop: bool) -> Result<(), String> {
        let expected_tail = Some(self.expected_tail(h));
        let headers = Headers::with_epoch(u64::from(h));
        let request = if noop {
            Request::Trim {
                expected_tail,
                fence: None,
                floor: 1,
                headers,
            }
        } else {
            Request::Append {
                expected_tail,
                fence: None,
                body: format!("w{h}").into_bytes(),
                headers,
            }
        };
        let id = self.request(h, s, request)?;
        let reply = self.reply_to(id);
        let tail = match (noop, &reply) {
            (true, Some(Reply::TrimNoop { tail })) => *tail,
            (false, Some(Reply::OffsetMismatch { tail })) => *tail,
            _ => {
                return Err(format!(
                    "{} answered {}",
                    node_name(node(s)),
                    reply.map_or("nothing".to_string(), |r| {
                        felix_sim::render::describe::reply(&r)
                    })
                ))
            }
        };
        self.holders[usize::from(h) - 1].expected = tail.saturating_sub(2);
        Ok(())
    }

    /// One read by holder `h` at broker `s`, carried through the read-index exchange.
    fn read_once(&mut self, h: u8, s: u8, from: ReadFrom) -> Result<Reply, String> {
        let id = self.request(
            h,
            s,
            Request::Read {
                from,
                max_records: READ_RECORDS_MAX,
            },
        )?;
        let client = Address::Client(ClientId::from(h) - 1);
        let answered = |core: &Core| {
            core.env.network.iter().any(|packet| {
                packet.to == client && matches!(packet.payload, Payload::Reply { .. })
            })
        };
        for _ in 0..8 {
            if answered(self) {
                break;
            }
            self.exchange(&read_message, &answered)?;
            if answered(self) {
                break;
            }
            // A leader sends its confirmation round on a tick.
            let mut trace = Trace::new(false);
            let leaders: Vec<NodeId> = (0..self.nodes()).filter(|&id| self.is_leader(id)).collect();
            for leader in leaders {
                self.env.step_node(leader, Input::Tick, &mut trace)?;
                self.env.sync_node(leader, &mut trace)?;
            }
            self.env.drop_packets(
                &|packet| {
                    matches!(
                        packet.payload,
                        Payload::Message(Message::AppendEntries { .. })
                    )
                },
                usize::MAX,
            );
        }
        self.reply_to(id)
            .ok_or_else(|| format!("{} never answered the read", node_name(node(s))))
    }

    /// `Read(h, s)`: from the holder's cursor (ReadFromEarliest: from the earliest record s
    /// serves); a refusal with a newer tag retires it, else it reads again from the floor; a
    /// newer epoch among the records retires it, else its tail becomes what it read to.
    fn read(&mut self, h: u8, s: u8) -> Result<(), String> {
        let holder = usize::from(h) - 1;
        let mut from = if self.rules.reread_from_cursor {
            ReadFrom::Offset(self.holders[holder].expected + 2)
        } else {
            ReadFrom::Earliest
        };
        for _ in 0..3 {
            match self.read_once(h, s, from)? {
                Reply::CursorTooOld { floor, tag } => {
                    if tag.and_then(|tag| tag.epoch()).unwrap_or(0) > u64::from(h) {
                        self.holders[holder] = HolderSide {
                            expected: 0,
                            retired: true,
                        };
                        return Ok(());
                    }
                    from = ReadFrom::Offset(floor);
                }
                // The model's read past s's commit serves nothing and takes s's commit as the
                // tail; the core refuses it naming its committed tail: the same answer.
                Reply::Invalid(InvalidRequest::ReadPastTail { tail, .. }) => {
                    self.holders[holder] = HolderSide {
                        expected: tail.saturating_sub(2),
                        retired: false,
                    };
                    return Ok(());
                }
                Reply::Records { records, next } => {
                    let newer = records
                        .iter()
                        .any(|record| record.headers.epoch().unwrap_or(0) > u64::from(h));
                    self.holders[holder] = if newer {
                        HolderSide {
                            expected: 0,
                            retired: true,
                        }
                    } else {
                        HolderSide {
                            expected: next.saturating_sub(2),
                            retired: false,
                        }
                    };
                    return Ok(());
                }
                other => {
                    return Err(format!(
                        "{} answered the read {}",
                        node_name(node(s)),
                        felix_sim::render::describe::reply(&other)
                    ))
                }
            }
        }
        Err(format!("{} kept refusing the read", node_name(node(s))))
    }

    /// Drops what l has queued for f and ticks l until it sends f a fresh `AppendEntries`.
    pub(crate) fn fresh_append(&mut self, l: NodeId, f: NodeId) -> Result<(), String> {
        self.env
            .drop_packets(&|packet| link(packet, l, f), usize::MAX);
        let wanted = move |packet: &Packet| {
            link(packet, l, f)
                && matches!(
                    packet.payload,
                    Payload::Message(Message::AppendEntries { .. })
                )
        };
        if !self.tick_until(l, &wanted, HEARTBEAT_TICKS + 1)? {
            return Err(format!("n{l} sent n{f} no AppendEntries"));
        }
        Ok(())
    }

    /// One `AppendEntries` from l to f and f's answer back; the answer's result.
    pub(crate) fn append_round(
        &mut self,
        l: NodeId,
        f: NodeId,
    ) -> Result<Option<AppendResult>, String> {
        let mut trace = Trace::new(false);
        let answer_first = !self.rules.ack_after_sync;
        if answer_first {
            // AckBeforeSync: what f took before is durable by the time it answers again (an
            // answer waits behind earlier unsynced writes).
            self.env.sync_node(f, &mut trace)?;
        }
        self.env.deliver(
            &|packet| {
                link(packet, l, f)
                    && matches!(
                        packet.payload,
                        Payload::Message(Message::AppendEntries { .. })
                    )
            },
            1,
            &mut trace,
        )?;
        let answered = |core: &Core| {
            core.env.network.iter().any(|packet| {
                link(packet, f, l)
                    && matches!(
                        packet.payload,
                        Payload::Message(Message::AppendReply { .. })
                    )
            })
        };
        if !answer_first || !answered(self) {
            // Persist before send: f's answer leaves once what it took is durable. Under
            // AckBeforeSync an answer that left first leaves the records unsynced.
            self.env.sync_node(f, &mut trace)?;
        }
        let result = self.env.network.iter().find_map(|packet| {
            match (link(packet, f, l), &packet.payload) {
                (true, Payload::Message(Message::AppendReply { result, .. })) => Some(*result),
                _ => None,
            }
        });
        self.env.deliver(
            &|packet| {
                link(packet, f, l)
                    && matches!(
                        packet.payload,
                        Payload::Message(Message::AppendReply { .. })
                    )
            },
            1,
            &mut trace,
        )?;
        self.env.sync_node(l, &mut trace)?;
        Ok(result)
    }

    /// `Replicate(l, f)`: l's fresh `AppendEntries` to f (one record at most) and the answer,
    /// again until f accepts (a refusal moves l's next offset back to the model's match point,
    /// and l answers it with the record there at once).
    pub(crate) fn replicate(&mut self, l: NodeId, f: NodeId) -> Result<(), String> {
        let log_of = |core: &Core, id: NodeId| {
            core.env.nodes[id as usize]
                .host
                .broker
                .as_ref()
                .map(|broker| (broker.journal().tail(), broker.journal().last_term()))
        };
        let before = log_of(self, f);
        let leader_last = self.env.nodes[l as usize]
            .host
            .broker
            .as_ref()
            .map_or(0, |broker| broker.journal().tail() - 1);
        self.fresh_append(l, f)?;
        for _ in 0..(2 * felix_model::head_trim::spec::LOG_MAX + 2) {
            let queued = self.env.network.iter().any(|packet| {
                link(packet, l, f)
                    && matches!(
                        packet.payload,
                        Payload::Message(Message::AppendEntries { .. })
                    )
            });
            if !queued {
                self.fresh_append(l, f)?;
            }
            match self.append_round(l, f)? {
                // Accepted where f already held what came (a refusal's hint can point below the
                // match point): the record the model sends is the next one.
                Some(AppendResult::Accepted { matched })
                    if matched < leader_last && log_of(self, f) == before => {}
                Some(AppendResult::Accepted { .. }) => return Ok(()),
                Some(AppendResult::Rejected { .. }) => {}
                None => return Err(format!("n{f} did not answer n{l}'s AppendEntries")),
            };
        }
        Err(format!("n{f} never accepted n{l}'s AppendEntries"))
    }

    /// `StepDown(l, f)`: l's `AppendEntries` reaches f, whose answer carries its higher term.
    pub(crate) fn step_down(&mut self, l: NodeId, f: NodeId) -> Result<(), String> {
        self.fresh_append(l, f)?;
        self.append_round(l, f)?;
        Ok(())
    }

    /// `Crash(b)`: b's storage completes, then it crashes and restarts from its disk.
    fn crash(&mut self, id: NodeId) -> Result<(), String> {
        let mut trace = Trace::new(false);
        self.env.sync_node(id, &mut trace)?;
        self.crash_unsynced(id)
    }

    /// A crash that loses every write of node `id` not yet synced, and a restart from its disk
    /// (ParosTrimJump's `Crash(n)`: the model drops what is not durable).
    pub(crate) fn crash_unsynced(&mut self, id: NodeId) -> Result<(), String> {
        let mut trace = Trace::new(false);
        self.crashed = true;
        self.env.crash(id, 0, &mut trace)?;
        self.env.restart(id, &mut trace)
    }
}

pub(crate) fn node_name(id: NodeId) -> String {
    felix_sim::render::describe::node(id)
}

/// A message between brokers.
pub(crate) fn is_message(packet: &Packet) -> bool {
    matches!(packet.payload, Payload::Message(_))
}

/// A message from `from` to `to`.
pub(crate) fn link(packet: &Packet, from: NodeId, to: NodeId) -> bool {
    packet.from == Address::Node(from) && packet.to == Address::Node(to) && is_message(packet)
}

/// What a read needs: the client's request and answer, the read-index question and answer, and
/// the leader's confirmation round, a probe only to a voter already in the prober's term (the
/// model's `Read` changes no term).
fn read_message(terms: &[u64], packet: &Packet) -> bool {
    match &packet.payload {
        Payload::Request { .. } | Payload::Reply { .. } => false,
        Payload::Message(Message::ReadProbe { term, .. }) => match packet.to {
            Address::Node(to) => terms[to as usize] == *term,
            Address::Client(_) => false,
        },
        Payload::Message(
            Message::ReadIndex { .. }
            | Message::ReadIndexReply { .. }
            | Message::ReadProbeAck { .. },
        ) => true,
        Payload::Message(_) => false,
    }
}
