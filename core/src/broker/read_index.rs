//! The read index: reads that are never served below a trim acknowledged before they were sent.
//!
//! A node's floor is applied lazily (when its walk over the committed log reaches the trim), so a
//! lagging follower, a restarted node or a deposed leader still holds, and would serve, records
//! below a trim the cluster already acknowledged. The rule (the first seed's: "no reader is ever
//! served a record below a trim that was acknowledged") is kept the standard way, Raft's
//! ReadIndex (Ongaro's thesis §6.4; etcd-io/raft's `ReadOnlySafe`):
//!
//! 1. **Leader.** A read that arrives at the leader takes the leader's commit index as its read
//!    index, but only once the leader's own term has a committed record (its noop): before that,
//!    its commit index may be behind an earlier leader's. The leader then sends a confirmation
//!    round (`ReadProbe { term, round }`) to its voters; a majority answering in its term proves
//!    no newer leader existed when the read arrived, so every trim acknowledged before the read was
//!    sent is at or below the index. One round covers every read that arrived before it was sent.
//! 2. **Follower or replica.** It asks the leader it knows (`ReadIndex { ask }`); the leader runs
//!    step 1 for it and answers `ReadIndexReply { ask, index }`. An `Ask` names the node's
//!    incarnation (`BrokerConfig::incarnation`, from the driver) as well as the question's number,
//!    which restarts with the node: an answer to a question asked before a crash must not serve a
//!    read that arrived after it, whose index it may be behind.
//! 3. **Every node** serves the read once its committed walk reaches the index, from its committed
//!    prefix: its floor then includes every trim acknowledged before the read began.
//!
//! A node that cannot get a read index (no leader known, the round does not complete within
//! `read_wait_ticks_max` ticks, leadership lost, `pending_reads_max` reads already waiting)
//! answers `NoReadIndex { hint }`, a retriable refusal that clients handle like `NotLeader`, and
//! never serves stale records. Two answers need no index, because they serve nothing and rest on
//! facts that only grow: a cursor below the node's own readable start is `CursorTooOld` at once
//! (floors never decrease), and a cursor in a range the node jumped over is `NotHeld` at once (the
//! reader asks another node).
//!
//! **Cost in round trips** (inside the cluster; the walk to the index comes on top): a read at the
//! leader costs one confirmation round (two message delays, batched over every read waiting for
//! it, no disk write); a read at a follower or replica costs two (ask the leader, the leader's
//! round); the first read after an election waits one more replication round for the term's noop.
//! A lease-based read (0 rounds) would need a bound on clock drift, which the simulator's clocks
//! deliberately do not give. The `LocalReads` twin (rule `read_index` off) serves at once from the
//! node's own committed prefix and breaks NoReadBelowFloor.

use super::{Broker, Output, Role};
use crate::api::{ClientId, ReadFrom, Reply, RequestId};
use crate::broker::message::{Ask, Message};
use crate::record::{NodeId, Offset};
use std::collections::{BTreeMap, VecDeque};

/// What a waiting client read still needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// At the leader: its term has no committed record yet (the noop is not committed).
    Noop,
    /// At the leader: the index is taken; waiting for a majority to answer probe `round`.
    Confirm { index: Offset, round: u64 },
    /// At a follower or replica: asked the leader under `ask`.
    Leader { ask: Ask },
    /// The index is confirmed: waiting for the committed walk to reach it.
    Walk { index: Offset },
    /// The leader could not give an index: refused at the end of the step.
    Refused,
}

/// A client read waiting at this node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PendingRead {
    client: ClientId,
    request_id: RequestId,
    from: ReadFrom,
    max_records: u32,
    age_ticks: u64,
    wait: Wait,
}

/// A follower's question waiting at the leader (`index` and `round` are unset while the leader's
/// noop is not committed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RemoteRead {
    from: NodeId,
    ask: Ask,
    age_ticks: u64,
    confirm: Option<(Offset, u64)>,
}

/// The read-index bookkeeping of one node (volatile: a restart forgets every waiting read, whose
/// outcome is then unknown to its client, as with a lost message).
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadIndex {
    reads: VecDeque<PendingRead>,
    remote: VecDeque<RemoteRead>,
    /// The last probe round this node sent (monotonic per incarnation).
    round_sent: u64,
    /// The highest round each voter answered in the current term (cleared on becoming leader).
    round_acked: BTreeMap<NodeId, u64>,
    /// The last question number this node used in this incarnation.
    ask_last: u64,
}

impl ReadIndex {
    /// Reads waiting at this node (for bounds and tests).
    pub(crate) fn waiting(&self) -> usize {
        self.reads.len() + self.remote.len()
    }

    /// Followers' questions waiting at this leader.
    pub(crate) fn remote_waiting(&self) -> usize {
        self.remote.len()
    }

    /// A new term of leadership: answers from an earlier term no longer count.
    pub(crate) fn became_leader(&mut self) {
        self.round_acked.clear();
    }
}

/// The highest probe round a majority of `voters` confirmed: `own` for this node, what each other
/// voter answered for the others (0 when it has not).
pub(crate) fn confirmed_round(
    own: u64,
    me: NodeId,
    voters: &[NodeId],
    acked: &BTreeMap<NodeId, u64>,
    majority: usize,
) -> u64 {
    let rounds = voters.iter().map(|voter| {
        if *voter == me {
            own
        } else {
            acked.get(voter).copied().unwrap_or(0)
        }
    });
    assert!(majority >= 1 && majority <= voters.len());
    super::nth_largest(rounds, majority).expect("a majority of the voters")
}

impl Broker {
    /// A client read arrived. Answers at once what needs no index; otherwise queues it.
    pub(super) fn on_read(
        &mut self,
        client: ClientId,
        request_id: RequestId,
        from: ReadFrom,
        max_records: u32,
        out: &mut Vec<Output>,
    ) {
        let immediate = if self.config.journal.rules.read_index {
            self.journal.read_without_index(from)
        } else {
            // LocalReads twin: the node's own committed prefix, whatever the cluster acknowledged.
            Some(self.journal.read(from, max_records))
        };
        if let Some(reply) = immediate {
            out.push(Output::Reply {
                client,
                request_id,
                reply,
            });
            return;
        }
        let hint = self.leader_hint;
        let full = self.read_index.reads.len() >= self.config.pending_reads_max;
        let wait = match self.role {
            _ if full => None,
            Role::Leader => Some(self.leader_wait()),
            Role::Follower | Role::Replica => match hint {
                Some(leader) if leader != self.config.id => {
                    self.read_index.ask_last += 1;
                    let ask = Ask {
                        incarnation: self.config.incarnation,
                        number: self.read_index.ask_last,
                    };
                    out.push(Output::Send {
                        to: leader,
                        message: Message::ReadIndex { ask },
                    });
                    Some(Wait::Leader { ask })
                }
                _ => None,
            },
            Role::Candidate => None,
        };
        let Some(wait) = wait else {
            out.push(Output::Reply {
                client,
                request_id,
                reply: Reply::NoReadIndex { hint },
            });
            return;
        };
        self.read_index.reads.push_back(PendingRead {
            client,
            request_id,
            from,
            max_records,
            age_ticks: 0,
            wait,
        });
        assert!(self.read_index.reads.len() <= self.config.pending_reads_max);
    }

    /// What a read arriving at the leader waits for now.
    fn leader_wait(&self) -> Wait {
        assert_eq!(self.role, Role::Leader);
        // UnconfirmedReads twin: round 0 needs no probe and counts as confirmed at once.
        let confirmed = self.config.journal.rules.read_index_confirmed;
        if self.term_committed() {
            Wait::Confirm {
                index: self.journal.committed(),
                round: if confirmed {
                    self.read_index.round_sent + 1
                } else {
                    0
                },
            }
        } else {
            Wait::Noop
        }
    }

    /// Whether the committed prefix ends in a record of this node's current term (its noop or
    /// later): only then is its commit index at least every earlier leader's.
    fn term_committed(&self) -> bool {
        self.journal.term_at(self.journal.committed()) == Some(self.hard_state.term)
    }

    /// A follower or replica asks this node for a read index.
    pub(super) fn on_read_index(&mut self, from: NodeId, ask: Ask, out: &mut Vec<Output>) {
        if self.role != Role::Leader
            || self.read_index.remote.len() >= self.config.pending_reads_max
        {
            out.push(Output::Send {
                to: from,
                message: Message::ReadIndexReply { ask, index: None },
            });
            return;
        }
        let confirm = match self.leader_wait() {
            Wait::Confirm { index, round } => Some((index, round)),
            _ => None,
        };
        self.read_index.remote.push_back(RemoteRead {
            from,
            ask,
            age_ticks: 0,
            confirm,
        });
        assert!(self.read_index.remote.len() <= self.config.pending_reads_max);
    }

    /// The leader answered question `ask` (of this incarnation, or of an earlier one, whose reads
    /// the restart forgot: then nothing waits for it).
    pub(super) fn on_read_index_reply(&mut self, ask: Ask, index: Option<Offset>) {
        let Some(read) = self
            .read_index
            .reads
            .iter_mut()
            .find(|read| read.wait == Wait::Leader { ask })
        else {
            return; // a duplicate, or a read that already gave up
        };
        read.wait = match index {
            Some(index) => Wait::Walk { index },
            None => Wait::Refused,
        };
    }

    /// The leader of `term` asks whether this voter still follows it.
    pub(super) fn on_read_probe(
        &mut self,
        from: NodeId,
        term: u64,
        round: u64,
        out: &mut Vec<Output>,
    ) {
        let current = self.hard_state.term;
        if term == current && self.role != Role::Replica {
            if self.role == Role::Candidate || self.role == Role::Leader {
                // Another node won this term (a leader here would mean two in one term).
                self.step_down_in_term();
            }
            self.leader_hint = Some(from);
            self.election_elapsed_ticks = 0;
        }
        // An older term gets this node's term back, which deposes the sender.
        out.push(Output::Send {
            to: from,
            message: Message::ReadProbeAck {
                term: current,
                round,
            },
        });
    }

    /// A voter answered probe `round` in `term`.
    pub(super) fn on_read_probe_ack(&mut self, from: NodeId, term: u64, round: u64) {
        if self.role != Role::Leader || term != self.hard_state.term {
            return;
        }
        if !self.config.voters.contains(&from) || round > self.read_index.round_sent {
            return;
        }
        let acked = self.read_index.round_acked.entry(from).or_insert(0);
        *acked = (*acked).max(round);
    }

    /// One tick: waiting reads age; those waiting too long are refused.
    pub(super) fn age_reads(&mut self) {
        for read in &mut self.read_index.reads {
            read.age_ticks += 1;
        }
        for remote in &mut self.read_index.remote {
            remote.age_ticks += 1;
        }
    }

    /// Moves every waiting read as far as it can go (called at the end of every step): takes the
    /// index once the noop is committed, sends the round they need, confirms, serves what the walk
    /// reached, refuses what cannot be answered.
    pub(super) fn drive_reads(&mut self, out: &mut Vec<Output>) {
        if self.read_index.waiting() == 0 {
            return;
        }
        let leading = self.role == Role::Leader;
        let age_max = self.config.read_wait_ticks_max;
        if leading && self.term_committed() {
            let wait = self.leader_wait();
            for read in &mut self.read_index.reads {
                if read.wait == Wait::Noop {
                    read.wait = wait;
                }
            }
            if let Wait::Confirm { index, round } = wait {
                for remote in &mut self.read_index.remote {
                    if remote.confirm.is_none() {
                        remote.confirm = Some((index, round));
                    }
                }
            }
        }
        if leading {
            let needed = self
                .read_index
                .reads
                .iter()
                .filter_map(|read| match read.wait {
                    Wait::Confirm { round, .. } => Some(round),
                    _ => None,
                })
                .chain(
                    self.read_index
                        .remote
                        .iter()
                        .filter_map(|remote| remote.confirm.map(|(_, round)| round)),
                )
                .max()
                .unwrap_or(0);
            if needed > self.read_index.round_sent {
                assert_eq!(needed, self.read_index.round_sent + 1);
                self.read_index.round_sent = needed;
                let message = Message::ReadProbe {
                    term: self.hard_state.term,
                    round: needed,
                };
                for index in 0..self.config.voters.len() {
                    let to = self.config.voters[index];
                    if to != self.config.id {
                        out.push(Output::Send {
                            to,
                            message: message.clone(),
                        });
                    }
                }
            }
        }
        let confirmed = if leading {
            confirmed_round(
                self.read_index.round_sent,
                self.config.id,
                &self.config.voters,
                &self.read_index.round_acked,
                self.majority(),
            )
        } else {
            0
        };
        // Followers' questions: answered once confirmed, refused when leadership is gone or they
        // waited too long.
        let mut remote = std::mem::take(&mut self.read_index.remote);
        remote.retain(|question| {
            let answer = match question.confirm {
                Some((index, round)) if leading && round <= confirmed => Some(Some(index)),
                _ if !leading || question.age_ticks > age_max => Some(None),
                _ => None,
            };
            match answer {
                Some(index) => {
                    out.push(Output::Send {
                        to: question.from,
                        message: Message::ReadIndexReply {
                            ask: question.ask,
                            index,
                        },
                    });
                    false
                }
                None => true,
            }
        });
        self.read_index.remote = remote;
        // Client reads.
        let committed = self.journal.committed();
        let hint = self.leader_hint;
        let mut reads = std::mem::take(&mut self.read_index.reads);
        reads.retain_mut(|read| {
            if let Wait::Confirm { index, round } = read.wait {
                if leading && round <= confirmed {
                    read.wait = Wait::Walk { index };
                }
            }
            let reply = match read.wait {
                Wait::Walk { index } if index <= committed => {
                    Some(self.journal.read(read.from, read.max_records))
                }
                // A confirmed index stays valid whoever leads now: wait for the walk, in time.
                Wait::Walk { .. } if read.age_ticks <= age_max => None,
                Wait::Noop | Wait::Confirm { .. } if leading && read.age_ticks <= age_max => None,
                Wait::Leader { .. } if read.age_ticks <= age_max => None,
                _ => Some(Reply::NoReadIndex { hint }),
            };
            match reply {
                Some(reply) => {
                    out.push(Output::Reply {
                        client: read.client,
                        request_id: read.request_id,
                        reply,
                    });
                    false
                }
                None => true,
            }
        });
        self.read_index.reads = reads;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round is confirmed when a majority (this node included) answered it or a later one.
    #[test]
    fn confirmed_round_is_the_majority_answer() {
        let voters = [0, 1, 2];
        let mut acked = BTreeMap::new();
        assert_eq!(confirmed_round(4, 0, &voters, &acked, 2), 0);
        acked.insert(2, 3);
        assert_eq!(confirmed_round(4, 0, &voters, &acked, 2), 3);
        acked.insert(1, 4);
        assert_eq!(confirmed_round(4, 0, &voters, &acked, 2), 4);
        assert_eq!(confirmed_round(4, 0, &voters, &acked, 3), 3);
        assert_eq!(confirmed_round(7, 0, &[0], &BTreeMap::new(), 1), 7);
    }
}
