//! The core side of a ParosTrimJump path: the scripted environment's real brokers (and replicas),
//! moved one model action at a time, with the same network discipline as FelixHeadTrim's paths
//! (`crate::conform::core`: nothing in flight between two actions, replies recorded as they come).
//!
//! Setup (`start`): n0 is elected in term 1 and its noop takes offset 1; owner 1 (client 0) then
//! fences with `Fence { new: 1, old: 0 }` at offset 2, committed everywhere: the model's `Init`
//! (voter 1 leads term 1, the writer token is 1, every log is empty). So a model slot `i` is the
//! core's offset `i + SHIFT`, a truncate's `up_to` `u` is the core trim's floor `u + SHIFT`, and
//! tokens, terms and node numbers (voter `n` is node `n - 1`) are the same. Segments hold one
//! record each (`Segments::Model`), so the core compacts, as soon as its walk moves its floor,
//! exactly what the model's `Compact` drops (`min(floor, commit + 1)`); the paths take that
//! `Compact` right away (`super::takes`). Under `Segments::Never` no segment fills: no
//! compaction, no jump.
//!
//! Owners are stateless in the model, and here: owner `o` is client `o - 1`; every request
//! carries the fence `o`, no tail condition.

use crate::conform::core::{link, node, node_name, Core};
use crate::conform::Segments;
use felix_core::api::{Reply, Request};
use felix_core::broker::{Input, Message};
use felix_core::record::{Headers, Token};
use felix_core::{NodeId, Offset, Rules};
use felix_model::paros::spec::Action;
use felix_sim::script::env::{Packet, Payload, Trace, HEARTBEAT_TICKS};

/// Offsets the core holds below the model's slot 1: the election's noop and the first fence.
pub const SHIFT: u64 = 2;

/// Rounds a `TrimmedTo` may take (each an `AppendEntries` refused, moving the leader's next
/// offset back) before the driver gives up.
const JUMP_ROUNDS_MAX: usize = 2 * felix_model::paros::spec::LOG_MAX + 2;

/// The cluster of the model's `Init`, under `rules`: segments of one record (`Segments::Model`,
/// the model's compaction) or too big to fill (`Segments::Never`: no compaction, no jump).
pub fn start(voters: u8, replicas: u8, rules: Rules, segments: Segments) -> Result<Core, String> {
    let seg_size = match segments {
        Segments::Model => 1,
        Segments::Never => 1 << 20,
    };
    let mut core = Core::elected(voters, replicas, seg_size, rules)?;
    core.request(
        1,
        1,
        Request::Fence {
            new: Token(1),
            old: Token(0),
        },
    )?;
    core.settle()?;
    let settled = (0..core.nodes()).all(|id| {
        core.env.nodes[id as usize]
            .host
            .broker
            .as_ref()
            .is_some_and(|broker| broker.committed() == SHIFT && broker.writer() == Token(1))
    });
    if !settled {
        return Err("the scripted cluster did not commit owner 1's fence everywhere".to_string());
    }
    Ok(core)
}

/// Carries out one ParosTrimJump action on the core. `Err` when the core could not be driven to
/// do it: a divergence the caller reports.
pub fn apply(core: &mut Core, action: Action) -> Result<(), String> {
    let result = match action {
        Action::Promote(b, q) => core.promote(node(b), q),
        Action::Write(o, l) => sequence(
            core,
            o,
            l,
            Request::Append {
                expected_tail: None,
                fence: Some(Token(u64::from(o))),
                body: vec![b'w', o],
                headers: Headers::default(),
            },
        ),
        Action::Truncate(o, l) => {
            let floor = tail(core, node(l));
            sequence(
                core,
                o,
                l,
                Request::Trim {
                    expected_tail: None,
                    fence: Some(Token(u64::from(o))),
                    floor,
                    headers: Headers::default(),
                },
            )
        }
        Action::SetLeader(o, l) => sequence(
            core,
            o,
            l,
            Request::Fence {
                new: Token(u64::from(o)),
                old: Token(u64::from(o) - 1),
            },
        ),
        Action::Replicate(l, f) => core.replicate(node(l), node(f)),
        Action::TrimmedTo(l, f) => trimmed_to(core, node(l), node(f)),
        Action::StepDown(l, f) => core.step_down(node(l), node(f)),
        // The core compacted in the action that moved the floor (segments of one record).
        Action::Compact(_) => Ok(()),
        // What n's disk did not sync is lost; it restarts from the rest.
        Action::Crash(n) => core.crash_unsynced(node(n)),
    };
    core.take_replies();
    core.quiesce();
    result
}

/// Records every node's state (`Event::NodeState`), as the simulator samples it between events:
/// the audits read a node's floor from it (AckedWritesKept: a floor past an acknowledged write).
pub fn sample(core: &mut Core) {
    let states: Vec<_> = core
        .env
        .nodes
        .iter()
        .filter_map(|host| host.host.broker.as_ref().map(|broker| broker.node_state()))
        .collect();
    core.env.history.extend(states);
}

/// The next free offset of node `id`: a truncate asks for its own offset, as the model's
/// `up_to` is its own slot.
fn tail(core: &Core, id: NodeId) -> Offset {
    core.env.nodes[id as usize]
        .host
        .broker
        .as_ref()
        .map_or(1, |broker| broker.tail())
}

/// Owner `o`'s request to leader `l`: sequenced (answered only when it commits), or refused at
/// once, which the model's action never is.
fn sequence(core: &mut Core, o: u8, l: u8, request: Request) -> Result<(), String> {
    let id = core.request(o, l, request)?;
    match core.reply_to(id) {
        None => Ok(()),
        Some(Reply::Appended { .. }) => Ok(()),
        Some(reply) => Err(format!(
            "{} refused it: {}",
            node_name(node(l)),
            felix_sim::render::describe::reply(&reply)
        )),
    }
}

/// `TrimmedTo(l, f)`: l's next message to f, again until it is a `TrimmedTo` (each refused
/// `AppendEntries` moves l's next offset for f back, below its first held offset at last); f
/// jumps and its answer reaches l.
fn trimmed_to(core: &mut Core, l: NodeId, f: NodeId) -> Result<(), String> {
    let first_held = |core: &Core| {
        core.env.nodes[f as usize]
            .host
            .broker
            .as_ref()
            .map_or(0, |broker| broker.first_held())
    };
    let before = first_held(core);
    let is_jump = |packet: &Packet| {
        link(packet, l, f) && matches!(packet.payload, Payload::Message(Message::TrimmedTo { .. }))
    };
    let is_append = |packet: &Packet| {
        link(packet, l, f)
            && matches!(
                packet.payload,
                Payload::Message(Message::AppendEntries { .. })
            )
    };
    let mut trace = Trace::new(false);
    for _ in 0..JUMP_ROUNDS_MAX {
        if core.env.network.iter().any(is_jump) {
            core.env.deliver(&is_jump, 1, &mut trace)?;
            core.env.sync_node(f, &mut trace)?;
            let answer = move |packet: &Packet| link(packet, f, l);
            core.env.deliver(&answer, 1, &mut trace)?;
            core.env.sync_node(l, &mut trace)?;
            return if first_held(core) > before {
                Ok(())
            } else {
                Err(format!("n{f} did not jump to n{l}'s trim point"))
            };
        }
        if !core.env.network.iter().any(is_append) {
            let wanted = |packet: &Packet| is_jump(packet) || is_append(packet);
            let mut ticked = false;
            for _ in 0..=HEARTBEAT_TICKS {
                if core.env.network.iter().any(wanted) {
                    ticked = true;
                    break;
                }
                core.env.step_node(l, Input::Tick, &mut trace)?;
                core.env.sync_node(l, &mut trace)?;
            }
            if !ticked && !core.env.network.iter().any(wanted) {
                return Err(format!("n{l} sent n{f} nothing"));
            }
            continue;
        }
        if let Some(felix_core::broker::AppendResult::Accepted { .. }) = core.append_round(l, f)? {
            return Err(format!(
                "n{f} accepted n{l}'s AppendEntries: no jump was needed"
            ));
        }
    }
    Err(format!("n{l} never sent n{f} a TrimmedTo"))
}
