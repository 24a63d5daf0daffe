//! Verbs of the network and the faults: delivery, drops, partitions, crashes, pauses, syncs,
//! timeouts and stabilize.

use super::*;

pub(super) fn packet_filter(
    env: &Env,
    args: &Args,
) -> Result<(Option<Address>, Option<Address>, usize), String> {
    let from = args
        .text("from")
        .map(|name| addr_arg(env, name))
        .transpose()?;
    let to = args
        .text("to")
        .map(|name| addr_arg(env, name))
        .transpose()?;
    let count = args.number("n")?.map(|n| n as usize).unwrap_or(usize::MAX);
    if count == 0 {
        return Err("bad argument: n must be at least 1".to_string());
    }
    Ok((from, to, count))
}

/// The filter of `deliver` and `drop`: from/to match, and the first `skip=K` matching packets
/// (in queue order) are passed over, so a later message on a link can overtake earlier ones.
fn link_filter(env: &Env, args: &Args) -> Result<(impl Fn(&Packet) -> bool, usize), String> {
    let (from, to, count) = packet_filter(env, args)?;
    let skip = args.number("skip")?.unwrap_or(0);
    let skipped = std::cell::Cell::new(0u64);
    let filter = move |packet: &Packet| {
        let matches =
            from.is_none_or(|from| packet.from == from) && to.is_none_or(|to| packet.to == to);
        if matches && skipped.get() < skip {
            skipped.set(skipped.get() + 1);
            return false;
        }
        matches
    };
    Ok((filter, count))
}

pub(super) fn describe_packet(env: &Env, packet: &Packet) -> String {
    let what = match &packet.payload {
        Payload::Message(message) => describe::message(message),
        Payload::Request { request, .. } => describe::request(request),
        Payload::Reply { reply, .. } => describe::reply(reply),
    };
    format!(
        "{} -> {}: {what}",
        env.addr_name(packet.from),
        env.addr_name(packet.to)
    )
}

/// `deliver [from=<name>] [to=<name>] [n=<count>] [skip=<count>] [dup]`
///
/// Delivers, in queue order, the messages queued now (from/to a node or client, at most n) and
/// prints each broker message as it arrives. `skip=K` passes over the first K matching messages
/// (they stay queued): `deliver from=n0 to=n1 skip=1 n=1` delivers the second message on that
/// link before the first, as a reordering network would. `dup` delivers a copy and leaves each
/// message queued in its place, as a duplicating network would (the other copy arrives later).
/// What they cause is queued, not delivered. Storage is not synced: sends that follow an unsynced
/// persist stay held (see `sync`).
pub(super) fn deliver(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["from", "to", "n", "skip"], 1)?;
    need_cluster(env)?;
    let duplicate = match args.positional.first().map(String::as_str) {
        None => false,
        Some("dup") => true,
        Some(other) => {
            return Err(format!(
                "bad argument: `deliver` takes only `dup` besides its keys, got `{other}`"
            ))
        }
    };
    let (filter, count) = link_filter(env, args)?;
    let mut trace = Trace::new(true);
    let result = env.deliver_copies(&filter, count, duplicate, &mut trace);
    let delivered = *result.as_ref().unwrap_or(&0);
    let mut lines = finish(trace, result.map(|_| ()));
    if delivered == 0 && lines.is_empty() {
        lines.push("nothing to deliver".to_string());
    }
    Ok(lines)
}

/// `drop [from=<name>] [to=<name>] [n=<count>] [skip=<count>]`
///
/// Loses queued messages matching the filter (at most n, after passing over the first `skip`),
/// printing each.
pub(super) fn drop_verb(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["from", "to", "n", "skip"], 0)?;
    need_cluster(env)?;
    let (filter, count) = link_filter(env, args)?;
    let dropped = env.drop_packets(&filter, count);
    if dropped.is_empty() {
        return Ok(vec!["nothing to drop".to_string()]);
    }
    Ok(dropped
        .iter()
        .map(|packet| format!("dropped {}", describe_packet(env, packet)))
        .collect())
}

/// `partition <node>...`
///
/// Cuts the listed nodes off from every other node (both ways): messages on a cut link are lost,
/// including ones already queued. Clients still reach every node.
pub(super) fn partition(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], BROKERS_MAX as usize + REPLICAS_MAX as usize)?;
    need_cluster(env)?;
    if args.positional.is_empty() {
        return Err("bad argument: `partition` needs at least one node".to_string());
    }
    let mut side = BTreeSet::new();
    for name in &args.positional {
        side.insert(node_arg(env, name)?);
    }
    let others: Vec<NodeId> = (0..env.nodes.len() as NodeId)
        .filter(|id| !side.contains(id))
        .collect();
    for &inside in &side {
        for &outside in &others {
            env.cut.insert((inside, outside));
            env.cut.insert((outside, inside));
        }
    }
    let names = |ids: &mut dyn Iterator<Item = NodeId>| -> String {
        ids.map(describe::node).collect::<Vec<_>>().join(" ")
    };
    Ok(vec![format!(
        "partition: {} | {}",
        names(&mut side.iter().copied()),
        names(&mut others.iter().copied())
    )])
}

/// `heal`
///
/// Restores every cut link.
pub(super) fn heal(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 0)?;
    need_cluster(env)?;
    env.cut.clear();
    Ok(vec!["healed: every link restored".to_string()])
}

/// `crash <node|client> [keep=<ops>]`
///
/// A node crashes: it loses every storage op not yet synced (but the first `keep`, default 0: a
/// power loss whose disk happened to write them) and every send it held back; its disk keeps
/// what was synced. Messages to it are lost until `restart`. A client crashes for good: it sends
/// nothing more and replies to it are lost (its requests may still land).
pub(super) fn crash(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["keep"], 1)?;
    let keep = args.number("keep")?.unwrap_or(0) as usize;
    need_cluster(env)?;
    let name = args.positional(0, "a node or client")?;
    let id = match addr_arg(env, name)? {
        Address::Node(id) => id,
        Address::Client(client) => {
            let mut trace = Trace::new(false);
            env.crash_client(client, &mut trace);
            return Ok(trace.render());
        }
    };
    if env.nodes[id as usize].host.broker.is_none() {
        return Ok(vec![format!("{} is already down", describe::node(id))]);
    }
    let mut trace = Trace::new(false);
    let result = env.crash(id, keep, &mut trace);
    if let Ok(lost) = &result {
        trace.line(format!(
            "{}: lost {lost} unsynced storage ops",
            describe::node(id)
        ));
    }
    Ok(finish(trace, result.map(|_| ())))
}

/// `restart <node>`
///
/// The node recovers from its disk: its promise, its log, its sealed state; it restarts as a
/// follower (or replica) and learns the committed index again.
pub(super) fn restart(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let id = node_arg(env, args.positional(0, "a node")?)?;
    if env.nodes[id as usize].host.broker.is_some() {
        return Ok(vec![format!("{} is not down", describe::node(id))]);
    }
    let mut trace = Trace::new(false);
    let result = env.restart(id, &mut trace);
    let mut lines = finish(trace, result);
    lines.extend(describe_node(env, id));
    Ok(lines)
}

/// `pause <node|client>`
///
/// A paused node takes no message, no tick and no sync (its messages wait); a paused client still
/// takes replies but sends nothing new.
pub(super) fn pause(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    need_cluster(env)?;
    let name = args.positional(0, "a node or client")?;
    match addr_arg(env, name)? {
        Address::Node(id) => env.nodes[id as usize].paused = true,
        Address::Client(id) => env.clients[id as usize].paused = true,
    }
    Ok(vec![format!("{name}: paused")])
}

/// `resume <node|client>`
///
/// Undoes `pause`; a resumed client sends its next request if it has one.
pub(super) fn resume(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    need_cluster(env)?;
    let name = args.positional(0, "a node or client")?;
    let mut lines = vec![format!("{name}: resumed")];
    match addr_arg(env, name)? {
        Address::Node(id) => env.nodes[id as usize].paused = false,
        Address::Client(id) => {
            env.clients[id as usize].paused = false;
            let mut trace = Trace::new(false);
            let result = env.pump(id, &mut trace);
            lines.extend(finish(trace, result));
        }
    }
    Ok(lines)
}

/// `sync [<node>...]`
///
/// Completes the storage of the listed nodes (default: every node): what they applied becomes
/// durable, the broker is told, and the sends and replies held behind it are queued.
pub(super) fn sync(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], BROKERS_MAX as usize + REPLICAS_MAX as usize)?;
    need_cluster(env)?;
    let mut ids = Vec::new();
    for name in &args.positional {
        ids.push(node_arg(env, name)?);
    }
    if ids.is_empty() {
        ids = (0..env.nodes.len() as NodeId).collect();
    }
    let mut trace = Trace::new(false);
    let mut synced = Vec::new();
    let mut result = Ok(());
    for id in ids {
        match env.sync_node(id, &mut trace) {
            Ok(true) => synced.push(describe::node(id)),
            Ok(false) => {}
            Err(error) => {
                result = Err(error);
                break;
            }
        }
    }
    let mut lines = vec![if synced.is_empty() {
        "nothing to sync".to_string()
    } else {
        format!("synced {}", synced.join(" "))
    }];
    lines.extend(finish(trace, result));
    Ok(lines)
}

/// `timeout <client>`
///
/// The driver gives up on the client's request in flight: its outcome is unknown (it may still
/// land). The client reacts (re-reads, drops the operation) and sends its next request.
pub(super) fn timeout(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let name = args.positional(0, "a client")?;
    let id = client_arg(env, name)?;
    let mut trace = Trace::new(false);
    trace.line(format!("{name}: gives up waiting (outcome unknown)"));
    let result = env.time_out(id, &mut trace);
    if let Ok(false) = result {
        return Ok(vec![format!("{name}: nothing in flight")]);
    }
    Ok(finish(trace, result.map(|_| ())))
}

/// `stabilize [verbose] [hold=<name>]`
///
/// Delivers every message and completes every node's storage, round after round, until nothing
/// moves (at most 1000 rounds). Prints client exchanges and node events (coalesced commits);
/// `verbose` also prints every broker message and sync. `hold=X` leaves every message to or from
/// the node or client X queued, as a slow link to X would (a later verb delivers them).
pub(super) fn stabilize(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["hold"], 1)?;
    need_cluster(env)?;
    let held = args
        .text("hold")
        .map(|name| addr_arg(env, name))
        .transpose()?;
    let verbose = match args.positional.first().map(String::as_str) {
        None => false,
        Some("verbose") => true,
        Some(other) => {
            return Err(format!(
                "bad argument: `stabilize` takes only `verbose`, got `{other}`"
            ))
        }
    };
    let mut trace = Trace::new(verbose);
    let result = env.stabilize(held, &mut trace);
    let mut lines = finish(trace, result.map(|_| ()));
    if lines.is_empty() {
        lines.push("quiet: nothing to deliver or sync".to_string());
    }
    Ok(lines)
}
