//! The broker's read-only accessors say what the node is: the audits, `describe` and the
//! simulator read a node only through them, so each must report the node's own state, not a
//! default. Proves, on a three-voter cluster that elected node 0 and wrote two records, and on a
//! fresh replica: id, role (leader, follower, replica), term, vote, leader hint, the journal's
//! bounds, the writer, the held entries, the leader's progress, the durable tail and the sampled
//! node state.

use crate::client_driver::Cluster;
use felix_core::api::{Reply, Request};
use felix_core::broker::{Broker, BrokerConfig, Role};
use felix_core::history::Event;
use felix_core::record::{Headers, Token};
use felix_core::Rules;

fn write(body: &str) -> Request {
    Request::Append {
        expected_tail: None,
        fence: None,
        body: body.as_bytes().to_vec(),
        headers: Headers::default(),
    }
}

/// Node 0 leads term 1; the noop (1) and two writes (2, 3) are committed everywhere.
fn cluster_with_two_writes() -> Cluster {
    let mut cluster = Cluster::new(Rules::default());
    for (request_id, body) in [(1, "a"), (2, "b")] {
        let reply = cluster.request(7, request_id, write(body));
        assert!(matches!(reply, Reply::Appended { .. }), "{reply:?}");
    }
    // Heartbeats until the followers learn the leader's commit index.
    for _ in 0..cluster.brokers[0].config().heartbeat_ticks {
        cluster.input(0, felix_core::broker::Input::Tick);
        cluster.settle();
    }
    cluster
}

#[test]
fn each_node_reports_its_own_id_role_term_vote_and_leader() {
    let cluster = cluster_with_two_writes();
    for (index, broker) in cluster.brokers.iter().enumerate() {
        assert_eq!(broker.id() as usize, index, "id of node {index}");
        assert_eq!(broker.config().id, broker.id());
        assert_eq!(broker.term(), 1, "every node is in term 1");
        // Node 0 voted for itself; the others granted it their vote.
        assert_eq!(broker.vote(), Some(0), "vote of node {index}");
        assert_eq!(broker.hard_state().vote, Some(0));
        assert_eq!(broker.hard_state().term, 1);
        assert_eq!(broker.leader_hint(), Some(0), "leader hint of node {index}");
        assert!(!broker.is_replica(), "node {index} is a voter");
    }
    assert!(cluster.brokers[0].is_leader());
    assert_eq!(cluster.brokers[0].role(), Role::Leader);
    for follower in &cluster.brokers[1..] {
        assert!(!follower.is_leader(), "node {} follows", follower.id());
        assert_eq!(follower.role(), Role::Follower);
    }
}

#[test]
fn a_fresh_node_has_no_vote_no_leader_and_is_not_leading() {
    let voter = Broker::new(BrokerConfig::new(2, vec![0, 1, 2], vec![3]));
    assert_eq!(voter.id(), 2);
    assert!(!voter.is_leader());
    assert!(!voter.is_replica());
    assert_eq!(voter.vote(), None);
    assert_eq!(voter.leader_hint(), None);
    assert_eq!(voter.term(), 0);

    let replica = Broker::new(BrokerConfig::new(3, vec![0, 1, 2], vec![3]));
    assert_eq!(replica.id(), 3);
    assert!(replica.is_replica(), "node 3 is the replica");
    assert_eq!(replica.role(), Role::Replica);
    assert!(!replica.is_leader());
}

#[test]
fn the_journal_bounds_writer_and_entries_are_the_nodes_own() {
    let cluster = cluster_with_two_writes();
    for broker in &cluster.brokers {
        let id = broker.id();
        assert_eq!(broker.committed(), 3, "node {id}: noop and two writes");
        assert_eq!(broker.tail(), 4, "node {id}");
        assert_eq!(broker.first_held(), 1, "node {id}");
        assert_eq!(broker.readable_start(), 1, "node {id}");
        assert_eq!(
            broker.floor(),
            1,
            "node {id}: no trim: the floor is the first offset"
        );
        assert_eq!(broker.floor_tag(), None, "node {id}");
        assert_eq!(broker.writer(), broker.journal().writer());
        assert_eq!(
            broker.durable_last(),
            3,
            "node {id}: the driver syncs every step"
        );
        let offsets: Vec<u64> = broker.entries().map(|entry| entry.offset).collect();
        assert_eq!(offsets, vec![1, 2, 3], "node {id}");
        assert_eq!(broker.journal().committed(), broker.committed());
    }
    // Only the leader tracks its peers: both followers have matched everything.
    let progress = cluster.brokers[0].progress();
    assert_eq!(progress.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
    for peer in progress.values() {
        assert_eq!(peer.matched, 3);
        assert_eq!(peer.next, 4);
    }
    assert!(cluster.brokers[1].progress().is_empty());
}

#[test]
fn the_writer_is_the_token_the_last_committed_fence_set() {
    let mut cluster = cluster_with_two_writes();
    let reply = cluster.request(
        7,
        3,
        Request::Fence {
            new: Token(5),
            old: cluster.brokers[0].writer(),
        },
    );
    assert!(matches!(reply, Reply::Appended { .. }), "{reply:?}");
    assert_eq!(cluster.brokers[0].writer(), Token(5));
    assert_eq!(cluster.brokers[0].journal().writer(), Token(5));
}

#[test]
fn the_sampled_node_state_matches_the_accessors() {
    let cluster = cluster_with_two_writes();
    for broker in &cluster.brokers {
        let Event::NodeState {
            node,
            term,
            vote,
            leader,
            floor,
            committed,
            readable_start,
            floor_tag,
        } = broker.node_state()
        else {
            panic!("node_state is an Event::NodeState");
        };
        assert_eq!(node, broker.id());
        assert_eq!(term, 1);
        assert_eq!(vote, Some(0));
        assert_eq!(leader, broker.id() == 0);
        assert_eq!(floor, 1);
        assert_eq!(committed, 3);
        assert_eq!(readable_start, 1);
        assert_eq!(floor_tag, None);
    }
}
