//! Which of the scripted driver's packets stands for a packet of the world's, when the schedule's
//! translation (`schedule`) delivers or drops it: the two sides' clients and nodes number their
//! requests, read-index asks and probe rounds each on their own, and the world's clients read in
//! batches of their own, so a packet the driver holds may say what the world's said and still
//! differ from it.

use crate::env::network::{Address, Packet, Payload};
use felix_core::api::Request;
use felix_core::broker::Message;
use std::collections::VecDeque;

/// The driver's packets queued from `from` to `to`, oldest first: a `deliver` or `drop` verb
/// names one by its place among them (`skip_word`).
pub(super) fn on_link(network: &VecDeque<Packet>, from: Address, to: Address) -> Vec<&Packet> {
    (network.iter())
        .filter(|packet| packet.from == from && packet.to == to)
        .collect()
}

/// ` skip=K` for the packet at place `skip` among its link's (`on_link`), nothing for the first.
pub(super) fn skip_word(skip: usize) -> String {
    if skip == 0 {
        String::new()
    } else {
        format!(" skip={skip}")
    }
}

/// Whether the driver's request `driver` asks what the world's `world` asked. A read is the same
/// read from the same place whatever its batch: the world's clients read up to their own
/// `read_batch_max` records, the driver's up to `script::env::READ_BATCH_MAX`, so comparing the
/// whole request would never find the driver's copy of a world client's read (and the delivery
/// would fall back on the oldest read queued, one its client may have given up on).
pub(super) fn same_request(driver: &Request, world: &Request) -> bool {
    match (driver, world) {
        (Request::Read { from, .. }, Request::Read { from: asked, .. }) => from == asked,
        _ => driver == world,
    }
}

/// Whether a driver packet's payload says what a world packet's did: the same message, a request
/// asking the same (`same_request`), or the same reply (request ids are each side's own).
pub(super) fn same_payload(driver: &Payload, world: &Payload) -> bool {
    match (driver, world) {
        (Payload::Message(driver), Payload::Message(world)) => driver == world,
        (Payload::Request { request, .. }, Payload::Request { request: asked, .. }) => {
            same_request(request, asked)
        }
        (
            Payload::Reply { reply, .. },
            Payload::Reply {
                reply: answered, ..
            },
        ) => reply == answered,
        _ => false,
    }
}

/// Whether the driver's message `driver` is the world's `world` but for the read-index counters
/// (an ask's number and incarnation, a probe's round), or but for the log position a vote
/// request carries (the driver's candidate may hold another log by then): each node numbers its
/// own asks and rounds, and the driver's count them apart from the world's as soon as one node
/// asked or probed a different number of times (its clients' reads are not the world's one for
/// one). The newest such message is the one waiting: older asks, rounds and campaigns were
/// answered or given up.
pub(super) fn same_but_counters(driver: &Message, world: &Message) -> bool {
    match (driver, world) {
        (Message::ReadIndex { .. }, Message::ReadIndex { .. }) => true,
        (Message::ReadIndexReply { index, .. }, Message::ReadIndexReply { index: asked, .. }) => {
            index == asked
        }
        // A vote request of the same term is the same campaign, whatever log the driver's
        // candidate holds by then.
        (Message::RequestVote { term, .. }, Message::RequestVote { term: asked, .. })
        | (Message::ReadProbe { term, .. }, Message::ReadProbe { term: asked, .. })
        | (Message::ReadProbeAck { term, .. }, Message::ReadProbeAck { term: asked, .. }) => {
            term == asked
        }
        _ => driver == world,
    }
}
