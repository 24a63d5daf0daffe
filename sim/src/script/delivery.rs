//! The scripted world's network deliveries: a queued packet to its node or client, in queue order,
//! with the `deliver` and `drop` verbs' filters.

use super::env::{Address, Env, EnvResult, Packet, Payload, Trace};
use crate::render::describe;
use felix_core::broker::Input;
use std::collections::VecDeque;

impl Env {
    /// Whether `packet` can be delivered now (a paused node takes nothing; it stays queued).
    fn deliverable(&self, packet: &Packet) -> bool {
        match packet.to {
            Address::Node(id) => !self.nodes[id as usize].paused,
            Address::Client(_) => true,
        }
    }

    /// Delivers one packet: to a node as an input, to a client as a reply. A packet to a crashed
    /// node, or on a link cut since it was sent, is lost.
    fn deliver_packet(&mut self, packet: Packet, trace: &mut Trace) -> EnvResult<()> {
        let lost_link = match (packet.from, packet.to) {
            (Address::Node(from), Address::Node(to)) => self.cut.contains(&(from, to)),
            _ => false,
        };
        let down = matches!(packet.to, Address::Node(id) if !self.nodes[id as usize].host.is_up());
        if lost_link || down {
            if trace.verbose || !matches!(packet.payload, Payload::Message(_)) {
                let why = if down { "is down" } else { "is cut off" };
                trace.line(format!(
                    "{} -> {}: lost ({} {why})",
                    self.addr_name(packet.from),
                    self.addr_name(packet.to),
                    self.addr_name(packet.to)
                ));
            }
            return Ok(());
        }
        match (packet.to, packet.payload) {
            (Address::Node(to), Payload::Message(message)) => {
                let Address::Node(from) = packet.from else {
                    return Ok(());
                };
                if trace.verbose {
                    trace.line(format!(
                        "{} -> {}: {}",
                        describe::node(from),
                        describe::node(to),
                        describe::message(&message)
                    ));
                }
                self.step_node(to, Input::Message { from, message }, trace)
            }
            (
                Address::Node(to),
                Payload::Request {
                    request_id,
                    request,
                },
            ) => {
                let Address::Client(client) = packet.from else {
                    return Ok(());
                };
                if trace.verbose {
                    trace.line(format!(
                        "{} -> {}: {} arrives",
                        self.client_name(client),
                        describe::node(to),
                        describe::request(&request)
                    ));
                }
                let input = Input::Client {
                    client,
                    request_id,
                    request,
                };
                self.step_node(to, input, trace)
            }
            (Address::Client(client), Payload::Reply { request_id, reply }) => {
                let Address::Node(from) = packet.from else {
                    return Ok(());
                };
                self.client_reply(client, from, request_id, reply, trace)
            }
            _ => Ok(()),
        }
    }

    /// Delivers, in queue order, up to `count_max` of the packets queued now that match `filter`
    /// and can be delivered; packets sent meanwhile wait for the next call. Returns how many.
    pub fn deliver(
        &mut self,
        filter: &dyn Fn(&Packet) -> bool,
        count_max: usize,
        trace: &mut Trace,
    ) -> EnvResult<usize> {
        self.deliver_copies(filter, count_max, false, trace)
    }

    /// `deliver`, and with `duplicate` each delivered packet also stays queued in its place (the
    /// network duplicated it; the other copy arrives later).
    pub fn deliver_copies(
        &mut self,
        filter: &dyn Fn(&Packet) -> bool,
        count_max: usize,
        duplicate: bool,
        trace: &mut Trace,
    ) -> EnvResult<usize> {
        // The packets queued now are the first `waiting` of the queue, in their order; what a
        // delivery sends is pushed behind them, so it waits for the next call. The queue is
        // walked in place: taking every packet out and putting it back cost each delivery the
        // whole queue.
        let mut waiting = self.network.len();
        let mut at = 0;
        let mut delivered = 0;
        while at < waiting && delivered < count_max {
            if !(filter(&self.network[at]) && self.deliverable(&self.network[at])) {
                at += 1;
                continue;
            }
            delivered += 1;
            let packet = if duplicate {
                at += 1;
                self.network[at - 1].clone()
            } else {
                waiting -= 1;
                self.network.remove(at).expect("a packet of the queue")
            };
            self.held_aside = waiting;
            let result = self.deliver_packet(packet, trace);
            self.held_aside = 0;
            if let Err(error) = result {
                // A failed delivery loses the packets that were waiting; those sent meanwhile stay.
                self.network.drain(..waiting);
                return Err(error);
            }
        }
        Ok(delivered)
    }

    /// Drops up to `count_max` queued packets matching `filter`. Returns how many.
    pub fn drop_packets(
        &mut self,
        filter: &dyn Fn(&Packet) -> bool,
        count_max: usize,
    ) -> Vec<Packet> {
        let mut dropped = Vec::new();
        let mut kept = VecDeque::new();
        for packet in self.network.drain(..) {
            if dropped.len() < count_max && filter(&packet) {
                dropped.push(packet);
            } else {
                kept.push_back(packet);
            }
        }
        self.network = kept;
        dropped
    }
}
