//! Terms and roles at the edges the other engine tests do not reach. Proves: a candidate that
//! hears AppendEntries of its own term from the node that won it steps down to follower and
//! follows that leader (Raft §5.2), and keeps the vote it cast for itself; a stale leader's
//! AppendEntries (an older term) changes nothing and is answered with the newer term.

use crate::client_driver::Cluster;
use felix_core::broker::{AppendResult, Broker, BrokerConfig, Input, Message, Output, Role};
use felix_core::record::NodeId;
use felix_core::Rules;

#[test]
fn a_candidate_steps_down_when_the_winner_of_its_term_appends() {
    // Node 0 leads term 1. Node 1 times out and campaigns for term 2, but its vote requests are
    // lost; node 2 then campaigns for term 2 too and wins with node 0's vote.
    let mut cluster = Cluster::new(Rules::default());
    cluster.input(1, Input::Tick);
    cluster.network.clear();
    assert_eq!(cluster.brokers[1].role(), Role::Candidate);
    assert_eq!(cluster.brokers[1].term(), 2);
    cluster.input(2, Input::Tick);
    cluster.settle();
    assert!(cluster.brokers[2].is_leader(), "node 2 won term 2");
    // Node 2's AppendEntries of term 2 reached the candidate: it follows node 2 now.
    let candidate = &cluster.brokers[1];
    assert_eq!(candidate.role(), Role::Follower);
    assert_eq!(candidate.term(), 2);
    assert_eq!(candidate.leader_hint(), Some(2));
    assert_eq!(
        candidate.vote(),
        Some(1),
        "the vote it cast in term 2 stays"
    );
    // And it took the new leader's noop.
    assert_eq!(candidate.tail(), cluster.brokers[2].tail());
    assert_eq!(candidate.entries().last().map(|entry| entry.term), Some(2));
}

#[test]
fn a_stale_leaders_append_is_refused_with_the_newer_term() {
    let mut cluster = Cluster::new(Rules::default());
    // Node 1 moves to term 2 (its vote requests lost).
    cluster.input(1, Input::Tick);
    cluster.network.clear();
    let tail_before = cluster.brokers[1].tail();
    cluster.input(
        1,
        Input::Message {
            from: 0,
            message: Message::AppendEntries {
                term: 1,
                prev_offset: 0,
                prev_term: 0,
                entries: Vec::new(),
                committed: 1,
            },
        },
    );
    let answers: Vec<_> = cluster.network.drain(..).collect();
    assert_eq!(answers.len(), 1, "{answers:?}");
    let (from, to, message) = &answers[0];
    assert_eq!((*from, *to), (1, 0));
    assert_eq!(
        *message,
        Message::AppendReply {
            term: 2,
            result: AppendResult::Rejected { next: tail_before },
        }
    );
    let node = &cluster.brokers[1];
    assert_eq!(
        node.role(),
        Role::Candidate,
        "a stale leader deposes no one"
    );
    assert_eq!(node.leader_hint(), None);
    assert_eq!(node.term(), 2);
}

/// A bare voter `id` of `voters` that campaigned once: a candidate in term 1.
fn candidate(id: NodeId, voters: Vec<NodeId>) -> Broker {
    let mut node = Broker::new(BrokerConfig::new(id, voters, Vec::new()));
    node.step(Input::ElectionTimeout { ticks: 1 }, &mut Vec::new());
    node.step_collect(Input::Tick);
    node
}

fn vote(from: NodeId, granted: bool) -> Input {
    Input::Message {
        from,
        message: Message::Vote { term: 1, granted },
    }
}

#[test]
fn a_lone_voter_leads_at_once_and_five_voters_need_three_votes() {
    // Proves the majority is more than half the voters, whatever their number: one voter is its
    // own majority (it leads in the step it campaigns), five need three grants (its own and two).
    let solo = candidate(0, vec![0]);
    assert_eq!(solo.role(), Role::Leader);
    let mut five = candidate(0, vec![0, 1, 2, 3, 4]);
    assert_eq!(five.role(), Role::Candidate);
    five.step_collect(vote(1, true));
    assert_eq!(five.role(), Role::Candidate, "two of five are no majority");
    five.step_collect(vote(2, true));
    assert_eq!(five.role(), Role::Leader);
}

#[test]
fn only_granted_votes_of_voters_count() {
    // Proves a refused vote and a vote from a node that is not a voter count for nothing.
    let mut node = candidate(0, vec![0, 1, 2]);
    assert_eq!(node.step_collect(vote(1, false)), vec![]);
    assert_eq!(node.role(), Role::Candidate, "a refusal is no vote");
    assert_eq!(node.step_collect(vote(7, true)), vec![]);
    assert_eq!(node.role(), Role::Candidate, "node 7 does not vote");
    node.step_collect(vote(2, true));
    assert_eq!(node.role(), Role::Leader);
}

#[test]
fn a_read_probe_of_its_own_term_deposes_a_candidate_and_an_older_one_changes_nothing() {
    // Proves the read probe speaks for the leader of its term (Raft §5.2, as AppendEntries): a
    // candidate of that term steps down and follows the sender, keeping its own vote; a probe of
    // an older term is answered with the newer term and moves no one.
    let mut node = candidate(1, vec![0, 1, 2]);
    let probe = |from, term, round| Input::Message {
        from,
        message: Message::ReadProbe { term, round },
    };
    let ack = |to, round| Output::Send {
        to,
        message: Message::ReadProbeAck { term: 1, round },
    };
    assert_eq!(node.step_collect(probe(2, 1, 4)), vec![ack(2, 4)]);
    assert_eq!(node.role(), Role::Follower);
    assert_eq!(node.leader_hint(), Some(2));
    assert_eq!(node.vote(), Some(1));
    assert_eq!(node.step_collect(probe(0, 0, 9)), vec![ack(0, 9)]);
    assert_eq!(
        node.leader_hint(),
        Some(2),
        "an older leader is not followed"
    );
    assert_eq!(node.term(), 1);
}

#[test]
fn a_voter_learns_its_leader_from_a_read_probe_and_a_replica_does_not() {
    // Proves a voter hearing the probe of a newer term adopts the term and follows its sender,
    // while a replica (never asked, never counted) adopts the term but names no leader from it.
    for (id, voters, replicas, leader) in [
        (1, vec![0, 1, 2], vec![], Some(0)),
        (3, vec![0, 1, 2], vec![3], None),
    ] {
        let mut node = Broker::new(BrokerConfig::new(id, voters, replicas));
        node.step_collect(Input::Message {
            from: 0,
            message: Message::ReadProbe { term: 1, round: 1 },
        });
        assert_eq!(node.term(), 1);
        assert_eq!(node.leader_hint(), leader, "node {id}");
    }
}

#[test]
fn a_vote_follows_the_persist_of_its_promise_unless_the_twin_sends_it_first() {
    // Proves the order the driver relies on (persist before send): a voter granting its vote
    // outputs the persist of (term, vote) before the vote, so the outbox holds the vote until the
    // promise is durable; the VoteBeforePersist twin outputs the vote first. A refusal persists
    // the term it adopts first too.
    let request = Input::Message {
        from: 0,
        message: Message::RequestVote {
            term: 1,
            last_offset: 0,
            last_term: 0,
        },
    };
    let kinds = |rules: Rules| {
        let mut config = BrokerConfig::new(1, vec![0, 1, 2], Vec::new());
        config.journal.rules = rules;
        let mut voter = Broker::new(config);
        let outputs = voter.step_collect(request.clone());
        assert_eq!(voter.vote(), Some(0));
        outputs
            .into_iter()
            .map(|output| match output {
                Output::Persist { .. } => "persist",
                Output::Send {
                    to: 0,
                    message:
                        Message::Vote {
                            term: 1,
                            granted: true,
                        },
                } => "vote",
                _ => "other",
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(Rules::default()), ["persist", "persist", "vote"]);
    let twin = Rules::twin(felix_core::TwinName::VoteBeforePersist);
    assert_eq!(kinds(twin), ["persist", "vote", "persist"]);
}

#[test]
fn a_vote_of_an_earlier_term_counts_only_in_the_stale_votes_twin() {
    // Proves the StaleVotes switch: a candidate of term 2 that receives a grant sent for its
    // term-1 campaign stays a candidate; the twin counts it and leads term 2 on it.
    let campaign_twice = |rules: Rules| {
        let mut config = BrokerConfig::new(0, vec![0, 1, 2], Vec::new());
        config.journal.rules = rules;
        let mut node = Broker::new(config);
        node.step(Input::ElectionTimeout { ticks: 1 }, &mut Vec::new());
        node.step_collect(Input::Tick);
        node.step_collect(Input::Tick);
        assert_eq!((node.role(), node.term()), (Role::Candidate, 2));
        node.step_collect(vote(1, true));
        node.role()
    };
    assert_eq!(campaign_twice(Rules::default()), Role::Candidate);
    let twin = Rules::twin(felix_core::TwinName::StaleVotes);
    assert_eq!(campaign_twice(twin), Role::Leader);
}
