//! Verbs that set up a run: the cluster, the rules, elections, ticks, and the clients.

use super::*;
use crate::seeded::knobs::SEGMENT_RECORDS_MAX;

/// `cluster [brokers=3] [replicas=0] [twin=<Name>|none] [segment=4] [retention=1] [syncs=all|eager]
/// [election=10] [heartbeat=3] [in_flight=N]`
///
/// Replaces everything (nodes, clients, network, history) with a fresh cluster: `brokers` voters
/// n0.. and `replicas` non-voting replicas after them, segments of `segment` records (at most
/// `SEGMENT_RECORDS_MAX`, as for knobs), retention keeping `retention` segments (at most
/// `RETENTION_ARG_MAX`; only under the Retention twin). Without `twin=`, the rules set by the last
/// `twin` verb (default: every rule on). Nobody is leader until `campaign`.
/// `syncs=eager` makes each node's storage sync as a disk that syncs in the background does
/// (`env::Syncs::Eager`): a sync starts with the first op written and covers only the ops written
/// before it started, so `sync nK` may leave later ops of the same step unsynced.
/// `election=T` and `heartbeat=H` (default 10 and 3, each 1..=1000): a voter campaigns after T
/// ticks without hearing from a leader, a leader heartbeats every H ticks. `in_flight=N`
/// (1..=1000000; default: no bound): a leader keeps at most N appends carrying records unanswered
/// per follower, and sends it only heartbeats at the bound.
pub(super) fn cluster(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(
        &[
            "brokers",
            "replicas",
            "twin",
            "segment",
            "retention",
            "syncs",
            "election",
            "heartbeat",
            "in_flight",
        ],
        0,
    )?;
    let brokers = args.number("brokers")?.unwrap_or(3);
    let replicas = args.number("replicas")?.unwrap_or(0);
    if brokers == 0 || brokers > u64::from(BROKERS_MAX) {
        return Err(format!("bad argument: brokers must be 1..={BROKERS_MAX}"));
    }
    if replicas > u64::from(REPLICAS_MAX) {
        return Err(format!("bad argument: replicas must be 0..={REPLICAS_MAX}"));
    }
    let rules = match args.text("twin") {
        Some(name) => twin_arg(name)?.map(Rules::twin).unwrap_or_default(),
        None => env.next_rules,
    };
    let segment = args.number("segment")?.unwrap_or(4);
    if !(1..=SEGMENT_RECORDS_MAX).contains(&segment) {
        return Err(format!(
            "bad argument: segment must be 1..={SEGMENT_RECORDS_MAX} records"
        ));
    }
    let retention = args.number("retention")?.unwrap_or(1);
    if retention > RETENTION_ARG_MAX {
        return Err(format!(
            "bad argument: retention must be 0..={RETENTION_ARG_MAX} segments"
        ));
    }
    let syncs = match args.text("syncs") {
        None | Some("all") => Syncs::All,
        Some("eager") => Syncs::Eager,
        Some(other) => {
            return Err(format!(
                "bad argument: syncs must be all or eager, not {other:?}"
            ))
        }
    };
    let election_ticks = ticks_arg(args, "election", ELECTION_TIMEOUT_TICKS)?;
    let heartbeat_ticks = ticks_arg(args, "heartbeat", HEARTBEAT_TICKS)?;
    let appends_in_flight_max = match args.number("in_flight")? {
        None => None,
        Some(max @ 1..=IN_FLIGHT_ARG_MAX) => Some(max as usize),
        Some(_) => {
            return Err(format!(
                "bad argument: in_flight must be 1..={IN_FLIGHT_ARG_MAX} appends"
            ))
        }
    };
    let layout = SegmentLayout {
        records_per_segment: segment,
    };
    let shape = Shape {
        brokers: brokers as u32,
        replicas: replicas as u32,
        rules,
        layout,
        retention_segments_max: retention,
        syncs,
        election_ticks,
        heartbeat_ticks,
        appends_in_flight_max,
    };
    env.build_shaped(shape, &|_| {});
    let voters: Vec<String> = (0..brokers as u32).map(describe::node).collect();
    let mut line = format!("{brokers} brokers ({})", voters.join(" "));
    if replicas > 0 {
        let names: Vec<String> = (brokers as u32..(brokers + replicas) as u32)
            .map(describe::node)
            .collect();
        line.push_str(&format!(", {replicas} replicas ({})", names.join(" ")));
    }
    line.push_str(&format!(", segments of {segment} records"));
    if syncs == Syncs::Eager {
        line.push_str(", eager syncs");
    }
    if (election_ticks, heartbeat_ticks) != (ELECTION_TIMEOUT_TICKS, HEARTBEAT_TICKS) {
        line.push_str(&format!(
            ", elections after {election_ticks} ticks, heartbeats every {heartbeat_ticks}"
        ));
    }
    if let Some(max) = appends_in_flight_max {
        line.push_str(&format!(", appends in flight per follower: at most {max}"));
    }
    Ok(vec![line, rules_line(rules)])
}

/// The most appends in flight `in_flight=` takes.
const IN_FLIGHT_ARG_MAX: u64 = 1_000_000;

/// The most segments `retention=` keeps.
const RETENTION_ARG_MAX: u64 = 1_000_000;

/// The most ticks `election=` and `heartbeat=` take.
const TICKS_ARG_MAX: u64 = 1_000;

/// A tick count argument of `cluster` (1..=`TICKS_ARG_MAX`), `default` when absent.
fn ticks_arg(args: &Args, name: &str, default: u64) -> Result<u64, String> {
    let ticks = args.number(name)?.unwrap_or(default);
    if !(1..=TICKS_ARG_MAX).contains(&ticks) {
        return Err(format!(
            "bad argument: {name} must be 1..={TICKS_ARG_MAX} ticks"
        ));
    }
    Ok(ticks)
}

/// `twin <Name>|none`
///
/// Switches one rule off (`none`: every rule on) for every `cluster` that follows without its own
/// `twin=`. Rules are fixed when a cluster is built, as a broker's config is.
pub(super) fn twin(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let twin = twin_arg(args.positional(0, "a twin name or none")?)?;
    env.next_rules = twin.map(Rules::twin).unwrap_or_default();
    Ok(vec![format!(
        "next cluster: {}",
        rules_line(env.next_rules)
    )])
}

/// `campaign <node>`
///
/// Ticks a voter until its election timeout fires and it campaigns (a single voter wins at once).
/// Its vote request goes out once its promise is synced (`sync` or `stabilize`).
pub(super) fn campaign(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let id = node_arg(env, args.positional(0, "a node")?)?;
    let mut trace = Trace::new(false);
    let Some(broker) = env.nodes[id as usize].host.broker.as_ref() else {
        return Ok(vec![format!("{} is down", describe::node(id))]);
    };
    if !matches!(broker.role(), Role::Follower | Role::Candidate) {
        return Ok(vec![format!(
            "{} cannot campaign ({:?})",
            describe::node(id),
            broker.role()
        )]);
    }
    let term_before = broker.term();
    let mut result = Ok(());
    for _ in 0..=env.election_ticks {
        result = env.step_node(id, felix_core::broker::Input::Tick, &mut trace);
        let moved = env.nodes[id as usize]
            .host
            .broker
            .as_ref()
            .is_none_or(|broker| broker.term() > term_before);
        if result.is_err() || moved {
            break;
        }
    }
    if let Some(broker) = env.nodes[id as usize].host.broker.as_ref() {
        trace.line(format!(
            "{}: campaigns in term {}",
            describe::node(id),
            broker.term()
        ));
    }
    Ok(finish(trace, result))
}

/// `tick <node> [count]`
///
/// Gives a node `count` ticks (default 1): a leader heartbeats every 3, a follower campaigns after
/// 10 without a leader. Outputs go where they go (held until synced, then queued).
pub(super) fn tick(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 2)?;
    let id = node_arg(env, args.positional(0, "a node")?)?;
    let count = match args.positional.get(1) {
        Some(value) => parse_number("count", value)?,
        None => 1,
    };
    if count == 0 || count > TICKS_MAX {
        return Err(format!("bad argument: count must be 1..={TICKS_MAX}"));
    }
    let slot = &env.nodes[id as usize];
    if slot.host.broker.is_none() || slot.paused {
        return Ok(vec![format!(
            "{} is down or paused: no tick",
            describe::node(id)
        )]);
    }
    let mut trace = Trace::new(false);
    let mut result = Ok(());
    for _ in 0..count {
        result = env.step_node(id, felix_core::broker::Input::Tick, &mut trace);
        if result.is_err() {
            break;
        }
    }
    let mut lines = finish(trace, result);
    if lines.is_empty() {
        lines.push(format!("{}: ticked {count}", describe::node(id)));
    }
    Ok(lines)
}

/// `lease <holder> [via=<node>]`
///
/// The lease service grants the next epoch to a new holder named `<holder>` (it moves the lease:
/// nobody tells the previous holder). The holder starts reading the stream from offset 1.
pub(super) fn lease(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["via"], 1)?;
    let name = new_client_name(env, args)?;
    let via = via_arg(env, args)?;
    let mut trace = Trace::new(false);
    let id = env.lease_holder(&name, via, &mut trace);
    let result = env.pump(id, &mut trace);
    Ok(finish(trace, result))
}

/// `owner <name> token=<T> [old=<O>] [via=<node>]`
///
/// A checkpoint owner taking the writer fence with token `T`, replacing `O` (default 0, a fresh
/// journal). It sends its fence record at once.
pub(super) fn owner(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["token", "old", "via"], 1)?;
    let name = new_client_name(env, args)?;
    let token = args
        .number("token")?
        .ok_or("bad argument: `owner` needs token=<T>")?;
    let old = args.number("old")?.unwrap_or(0);
    if token == old {
        return Err("bad argument: token must differ from old".to_string());
    }
    let via = via_arg(env, args)?;
    let client = env.clients.len() as u32;
    let owner = Owner::new(client, Token(token), Token(old), Env::owner_config());
    let id = env.add_client(&name, ClientKind::Owner(Box::new(owner)), via);
    let mut trace = Trace::new(false);
    let result = env.pump(id, &mut trace);
    Ok(finish(trace, result))
}

/// `reader <name> [from=<offset>] [via=<node>]`
///
/// A plain reader with its cursor at `from` (default 1). It reads only when `read` asks.
pub(super) fn reader(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["from", "via"], 1)?;
    let name = new_client_name(env, args)?;
    let from = args.number("from")?.unwrap_or(1).max(1);
    let via = via_arg(env, args)?;
    let client = env.clients.len() as u32;
    let reader = Reader::new(client, from, super::super::env::READ_BATCH_MAX);
    env.add_client(&name, ClientKind::Reader(reader), via);
    Ok(vec![format!("{name}: reader at cursor {from}")])
}

/// `folder <name> [via=<node>]`
///
/// A folder from the start of the journal. It reads only when `fold` or `read` asks.
pub(super) fn folder(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["via"], 1)?;
    let name = new_client_name(env, args)?;
    let via = via_arg(env, args)?;
    let client = env.clients.len() as u32;
    let folder = Folder::new(
        client,
        super::super::env::READ_BATCH_MAX,
        Env::owner_config().chunks_max,
    );
    env.add_client(&name, ClientKind::Folder(folder), via);
    Ok(vec![format!("{name}: folder at cursor 1")])
}
