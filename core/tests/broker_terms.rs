//! Terms and roles at the edges the other engine tests do not reach. Proves: a candidate that
//! hears AppendEntries of its own term from the node that won it steps down to follower and
//! follows that leader (Raft §5.2), and keeps the vote it cast for itself; a stale leader's
//! AppendEntries (an older term) changes nothing and is answered with the newer term.

mod client_driver;

use client_driver::Cluster;
use felix_core::broker::{AppendResult, Input, Message, Role};
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
