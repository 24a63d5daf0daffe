//! Catch-up of a lagging follower, on the engine tests' synchronous driver.

use super::broker_engine::{config, write, Net};
use felix_core::broker::Broker;
use felix_core::rules::{Rules, TwinName};

/// A leader sends a lagging follower its next batch as soon as the follower acknowledges one, so a
/// follower that was cut off catches up within one heartbeat's exchange (batches of one record
/// here). With LazyCatchUp the next batch waits for the next heartbeat or write: after one
/// heartbeat the follower is still behind.
#[test]
fn leader_sends_a_lagging_follower_its_next_batch_at_once_unless_lazy_catch_up() {
    for (rules, at_once) in [
        (Rules::default(), true),
        (Rules::twin(TwinName::LazyCatchUp), false),
    ] {
        let mut net = Net::new(rules);
        for id in 0..4 {
            let mut one_by_one = config(id, rules);
            one_by_one.append_entries_max = 1;
            net.nodes.insert(id, Broker::new(one_by_one));
        }
        net.elect_zero();
        net.cut.push(2);
        for index in 0..4 {
            net.client(0, write(&format!("w{index}")));
        }
        let tail = net.node(0).tail();
        assert!(net.node(2).tail() + 4 <= tail, "node 2 missed the writes");
        net.cut.clear();
        net.heartbeat(0);
        let caught_up = net.node(2).tail() == tail;
        assert_eq!(
            caught_up,
            at_once,
            "{rules:?}: node 2 at {} of {tail}",
            net.node(2).tail()
        );
    }
}
