//! The verbs of a scenario: one handler per verb, each documenting its syntax.
//!
//! A handler takes the environment and the command's arguments and returns the lines it prints.
//! `Err` is a bad argument (an unknown node or client, a malformed number, an argument the verb
//! does not take): the runner reports it with the file and line and exits 2. Conditions of the
//! run itself (a retired holder asked to write, a crashed node asked to tick) are printed as
//! output, since a scenario may want to show them.
//!
//! Names: nodes are `n0`, `n1`, ... (voters first, then replicas); clients are named by the verb
//! that creates them (`lease`, `owner`, `reader`, `folder`).

use super::describe;
use super::env::{Addr, ClientKind, Env, Packet, Payload, Trace, READS_MAX};
use super::parse::Arg;
use felix_core::broker::Role;
use felix_core::client::checkpoint::OwnerOp;
use felix_core::client::{Folder, HolderOp, HolderStatus, Owner, OwnerStatus, Reader};
use felix_core::storage::{LogStore as _, SegmentLayout};
use felix_core::{NodeId, Offset, Rules, Token, Twin};
use std::collections::{BTreeMap, BTreeSet};

/// The most voters and replicas a scenario may set up.
const BROKERS_MAX: u32 = 7;
const REPLICAS_MAX: u32 = 4;
/// The most ticks one `tick` may give.
const TICKS_MAX: u64 = 1_000;

/// A verb handler.
pub type Handler = fn(&mut Env, &Args) -> Result<Vec<String>, String>;

/// Every verb, in the order `describe`-like help lists them.
pub const VERBS: [(&str, Handler); 27] = [
    ("cluster", cluster),
    ("twin", twin),
    ("campaign", campaign),
    ("tick", tick),
    ("lease", lease),
    ("owner", owner),
    ("reader", reader),
    ("folder", folder),
    ("write", write),
    ("trim", trim),
    ("read", read),
    ("fold", fold),
    ("checkpoint", checkpoint),
    ("truncate", truncate),
    ("deliver", deliver),
    ("drop", drop_verb),
    ("partition", partition),
    ("heal", heal),
    ("crash", crash),
    ("restart", restart),
    ("pause", pause),
    ("resume", resume),
    ("sync", sync),
    ("timeout", timeout),
    ("stabilize", stabilize),
    ("audit", audit),
    ("describe", describe_verb),
];

/// The names of every verb.
pub fn verb_names() -> Vec<&'static str> {
    VERBS.iter().map(|(name, _)| *name).collect()
}

/// A command's arguments, with typed accessors that produce clear messages.
pub struct Args {
    verb: String,
    positional: Vec<String>,
    keyed: BTreeMap<String, String>,
}

impl Args {
    pub fn new(verb: &str, args: &[Arg]) -> Result<Args, String> {
        let mut positional = Vec::new();
        let mut keyed = BTreeMap::new();
        for arg in args {
            match &arg.key {
                None => positional.push(arg.value.clone()),
                Some(key) => {
                    if keyed.insert(key.clone(), arg.value.clone()).is_some() {
                        return Err(format!("bad argument: `{key}` given twice"));
                    }
                }
            }
        }
        Ok(Args {
            verb: verb.to_string(),
            positional,
            keyed,
        })
    }

    /// Refuses keys outside `keys` and more than `positional_max` bare values.
    fn only(&self, keys: &[&str], positional_max: usize) -> Result<(), String> {
        if let Some(key) = self.keyed.keys().find(|key| !keys.contains(&key.as_str())) {
            let takes = if keys.is_empty() {
                "none".to_string()
            } else {
                keys.join(", ")
            };
            return Err(format!(
                "bad argument: `{}` takes no `{key}=` (keys it takes: {takes})",
                self.verb
            ));
        }
        if self.positional.len() > positional_max {
            return Err(format!(
                "bad argument: `{}` takes at most {positional_max} bare values, got `{}`",
                self.verb,
                self.positional.join(" ")
            ));
        }
        Ok(())
    }

    fn positional(&self, index: usize, what: &str) -> Result<&str, String> {
        self.positional
            .get(index)
            .map(String::as_str)
            .ok_or_else(|| format!("bad argument: `{}` needs {what}", self.verb))
    }

    fn number(&self, key: &str) -> Result<Option<u64>, String> {
        match self.keyed.get(key) {
            None => Ok(None),
            Some(value) => parse_number(key, value).map(Some),
        }
    }

    fn text(&self, key: &str) -> Option<&str> {
        self.keyed.get(key).map(String::as_str)
    }
}

fn parse_number(what: &str, value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("bad argument: `{what}` must be a number, got `{value}`"))
}

fn need_cluster(env: &Env) -> Result<(), String> {
    if env.has_cluster() {
        Ok(())
    } else {
        Err("bad argument: no cluster yet (start with `cluster`)".to_string())
    }
}

/// Parses `nK` naming an existing node.
fn node_arg(env: &Env, name: &str) -> Result<NodeId, String> {
    need_cluster(env)?;
    let id = name
        .strip_prefix('n')
        .and_then(|digits| digits.parse::<NodeId>().ok())
        .ok_or_else(|| format!("bad argument: `{name}` is not a node (nodes are n0, n1, ...)"))?;
    if id as usize >= env.nodes.len() {
        return Err(format!(
            "bad argument: no node `{name}` (this cluster has n0..n{})",
            env.nodes.len() - 1
        ));
    }
    Ok(id)
}

fn client_arg(env: &Env, name: &str) -> Result<u32, String> {
    env.names
        .get(name)
        .copied()
        .ok_or_else(|| format!("bad argument: no client `{name}`"))
}

/// A node or a client.
fn addr_arg(env: &Env, name: &str) -> Result<Addr, String> {
    if let Ok(id) = node_arg(env, name) {
        return Ok(Addr::Node(id));
    }
    client_arg(env, name)
        .map(Addr::Client)
        .map_err(|_| format!("bad argument: `{name}` is neither a node nor a client"))
}

fn via_arg(env: &Env, args: &Args) -> Result<Option<NodeId>, String> {
    args.text("via").map(|name| node_arg(env, name)).transpose()
}

fn new_client_name(env: &Env, args: &Args) -> Result<String, String> {
    need_cluster(env)?;
    let name = args.positional(0, "a client name")?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let node_like = name
        .strip_prefix('n')
        .is_some_and(|digits| digits.parse::<u32>().is_ok());
    if !valid || node_like {
        return Err(format!(
            "bad argument: `{name}` is not a client name (letters, digits, '-'; not a node name)"
        ));
    }
    if env.names.contains_key(name) {
        return Err(format!("bad argument: client `{name}` already exists"));
    }
    Ok(name.to_string())
}

fn twin_arg(name: &str) -> Result<Option<Twin>, String> {
    if name == "none" {
        return Ok(None);
    }
    Twin::parse(name).map(Some).ok_or_else(|| {
        let names: Vec<&str> = Twin::ALL.iter().map(|twin| twin.name()).collect();
        format!(
            "bad argument: unknown twin `{name}` (twins: {}, or none)",
            names.join(", ")
        )
    })
}

fn rules_line(rules: Rules) -> String {
    match Twin::ALL.into_iter().find(|twin| twin.rules() == rules) {
        Some(twin) => format!("twin {twin}: one rule off, must break {}", twin.invariant()),
        None => "every rule on".to_string(),
    }
}

/// The trace's lines, then the environment's error if any (printed, never a panic).
fn finish(trace: Trace, result: Result<(), String>) -> Vec<String> {
    let mut lines = trace.render();
    if let Err(error) = result {
        lines.push(format!("error: {error}"));
    }
    lines
}

/// `cluster [brokers=3] [replicas=0] [twin=<Name>|none] [segment=4] [retention=1]`
///
/// Replaces everything (nodes, clients, network, history) with a fresh cluster: `brokers` voters
/// n0.. and `replicas` non-voting replicas after them, segments of `segment` records, retention
/// keeping `retention` segments (only under the Retention twin). Without `twin=`, the rules set
/// by the last `twin` verb (default: every rule on). Nobody is leader until `campaign`.
fn cluster(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["brokers", "replicas", "twin", "segment", "retention"], 0)?;
    let brokers = args.number("brokers")?.unwrap_or(3);
    let replicas = args.number("replicas")?.unwrap_or(0);
    if brokers == 0 || brokers > u64::from(BROKERS_MAX) {
        return Err(format!("bad argument: brokers must be 1..={BROKERS_MAX}"));
    }
    if replicas > u64::from(REPLICAS_MAX) {
        return Err(format!("bad argument: replicas must be 0..={REPLICAS_MAX}"));
    }
    let rules = match args.text("twin") {
        Some(name) => twin_arg(name)?.map(Twin::rules).unwrap_or_default(),
        None => env.next_rules,
    };
    let segment = args.number("segment")?.unwrap_or(4);
    if segment == 0 {
        return Err("bad argument: segment must be at least 1".to_string());
    }
    let retention = args.number("retention")?.unwrap_or(1);
    let layout = SegmentLayout {
        records_per_segment: segment,
    };
    env.build(brokers as u32, replicas as u32, rules, layout, retention);
    let voters: Vec<String> = (0..brokers as u32).map(describe::node).collect();
    let mut line = format!("{brokers} brokers ({})", voters.join(" "));
    if replicas > 0 {
        let names: Vec<String> = (brokers as u32..(brokers + replicas) as u32)
            .map(describe::node)
            .collect();
        line.push_str(&format!(", {replicas} replicas ({})", names.join(" ")));
    }
    line.push_str(&format!(", segments of {segment} records"));
    Ok(vec![line, rules_line(rules)])
}

/// `twin <Name>|none`
///
/// Switches one rule off (`none`: every rule on) for every `cluster` that follows without its own
/// `twin=`. Rules are fixed when a cluster is built, as a broker's config is.
fn twin(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let twin = twin_arg(args.positional(0, "a twin name or none")?)?;
    env.next_rules = twin.map(Twin::rules).unwrap_or_default();
    Ok(vec![format!(
        "next cluster: {}",
        rules_line(env.next_rules)
    )])
}

/// `campaign <node>`
///
/// Ticks a voter until its election timeout fires and it campaigns (a single voter wins at once).
/// Its vote request goes out once its promise is synced (`sync` or `stabilize`).
fn campaign(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let id = node_arg(env, args.positional(0, "a node")?)?;
    let mut trace = Trace::new(false);
    let Some(broker) = env.nodes[id as usize].broker.as_ref() else {
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
    for _ in 0..=super::env::ELECTION_TIMEOUT_TICKS {
        result = env.step_node(id, felix_core::broker::Input::Tick, &mut trace);
        let moved = env.nodes[id as usize]
            .broker
            .as_ref()
            .is_none_or(|broker| broker.term() > term_before);
        if result.is_err() || moved {
            break;
        }
    }
    if let Some(broker) = env.nodes[id as usize].broker.as_ref() {
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
fn tick(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
    if slot.broker.is_none() || slot.paused {
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
fn lease(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
fn owner(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
    let id = env.add_client(&name, ClientKind::Owner(owner), via);
    let mut trace = Trace::new(false);
    let result = env.pump(id, &mut trace);
    Ok(finish(trace, result))
}

/// `reader <name> [from=<offset>] [via=<node>]`
///
/// A plain reader with its cursor at `from` (default 1). It reads only when `read` asks.
fn reader(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["from", "via"], 1)?;
    let name = new_client_name(env, args)?;
    let from = args.number("from")?.unwrap_or(1).max(1);
    let via = via_arg(env, args)?;
    let client = env.clients.len() as u32;
    let reader = Reader::new(client, from, super::env::READ_BATCH_MAX);
    env.add_client(&name, ClientKind::Reader(reader), via);
    Ok(vec![format!("{name}: reader at cursor {from}")])
}

/// `folder <name> [via=<node>]`
///
/// A folder from the start of the journal. It reads only when `fold` or `read` asks.
fn folder(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["via"], 1)?;
    let name = new_client_name(env, args)?;
    let via = via_arg(env, args)?;
    let client = env.clients.len() as u32;
    let folder = Folder::new(
        client,
        super::env::READ_BATCH_MAX,
        Env::owner_config().chunks_max,
    );
    env.add_client(&name, ClientKind::Folder(folder), via);
    Ok(vec![format!("{name}: folder at cursor 1")])
}

/// `write <holder|owner> <body>`
///
/// Queues a write (a holder's is conditional on its tail, epoch in the headers; an owner's is
/// fenced by its token) and sends it if the client is ready.
fn write(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 2)?;
    let id = client_arg(env, args.positional(0, "a holder or owner")?)?;
    let body = args.positional(1, "a body")?.as_bytes().to_vec();
    let name = env.clients[id as usize].name.clone();
    let refused = match &mut env.clients[id as usize].kind {
        ClientKind::Holder(holder) => holder
            .submit(HolderOp::Write { body })
            .err()
            .map(|error| format!("{error:?}")),
        ClientKind::Owner(owner) => owner
            .submit(OwnerOp::Write { body })
            .err()
            .map(|_| "full or finished".to_string()),
        _ => return Err(format!("bad argument: `{name}` is not a holder or owner")),
    };
    if let Some(why) = refused {
        return Ok(vec![format!("{name}: write refused ({why})")]);
    }
    pump_lines(env, id)
}

fn pump_lines(env: &mut Env, id: u32) -> Result<Vec<String>, String> {
    let mut trace = Trace::new(false);
    let result = env.pump(id, &mut trace);
    let mut lines = finish(trace, result);
    if lines.is_empty() {
        let slot = &env.clients[id as usize];
        let why = if slot.paused {
            "paused"
        } else if slot.in_flight.is_some() {
            "a request is in flight"
        } else {
            "not ready"
        };
        lines.push(format!("{}: queued ({why})", slot.name));
    }
    Ok(lines)
}

/// `trim <holder> [floor=<offset>]`
///
/// Queues a trim conditional on the holder's tail. Without `floor=` it asks for the highest floor
/// allowed (the trim's own offset). A floor at or below the current floor is a no-op trim.
fn trim(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["floor"], 1)?;
    let id = client_arg(env, args.positional(0, "a holder")?)?;
    let floor = args.number("floor")?.unwrap_or(Offset::MAX);
    let name = env.clients[id as usize].name.clone();
    let ClientKind::Holder(holder) = &mut env.clients[id as usize].kind else {
        return Err(format!(
            "bad argument: `{name}` is not a holder (owners `truncate`)"
        ));
    };
    if let Err(error) = holder.submit(HolderOp::Trim { floor }) {
        return Ok(vec![format!("{name}: trim refused ({error:?})")]);
    }
    pump_lines(env, id)
}

/// `read <reader|folder> [<count>|all] [via=<node>]`
///
/// Sends `count` reads (default 1) from the client's cursor, one at a time as replies come, or
/// with `all` reads until one reaches the tail (at most 64). `via=` sends the next read to that
/// node.
fn read(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["via"], 2)?;
    let id = client_arg(env, args.positional(0, "a reader or folder")?)?;
    let (count, until_tail) = match args.positional.get(1).map(String::as_str) {
        None => (1, false),
        Some("all") => (u64::from(READS_MAX), true),
        Some(value) => (parse_number("count", value)?, false),
    };
    if count == 0 || count > u64::from(READS_MAX) {
        return Err(format!("bad argument: count must be 1..={READS_MAX}"));
    }
    start_reads(env, args, id, count as u32, until_tail)
}

fn start_reads(
    env: &mut Env,
    args: &Args,
    id: u32,
    count: u32,
    until_tail: bool,
) -> Result<Vec<String>, String> {
    let via = via_arg(env, args)?;
    let slot = &mut env.clients[id as usize];
    if !slot.kind.is_passive() {
        return Err(format!(
            "bad argument: `{}` is not a reader or folder (holders and owners read on their own)",
            slot.name
        ));
    }
    slot.reads_wanted = count;
    slot.until_tail = until_tail;
    if via.is_some() {
        slot.next_target = via;
    }
    pump_lines(env, id)
}

/// `fold <folder> [via=<node>]`
///
/// The folder reads from its cursor until a read reaches the tail, folding every write,
/// restoring from (or comparing with) the checkpoint runs it meets.
fn fold(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["via"], 1)?;
    let id = client_arg(env, args.positional(0, "a folder")?)?;
    if !matches!(env.clients[id as usize].kind, ClientKind::Folder(_)) {
        return Err(format!(
            "bad argument: `{}` is not a folder",
            env.clients[id as usize].name
        ));
    }
    start_reads(env, args, id, READS_MAX, true)
}

/// `checkpoint <owner> [crash-after=<records>|end]`
///
/// The owner reads to the tail, writes its fold as a checkpoint run (Begin, Chunks, End) there,
/// then truncates to the run's start. With `crash-after=K` the owner crashes once K records of
/// the run are acknowledged (K <= chunks + 1 leaves a run with no End); with `crash-after=end`
/// it crashes right after End is acknowledged, before its truncate goes out (a mid-log run).
fn checkpoint(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["crash-after"], 1)?;
    let id = client_arg(env, args.positional(0, "an owner")?)?;
    let (crash_after, crash_after_end) = match args.text("crash-after") {
        Some("end") => (None, true),
        _ => (args.number("crash-after")?, false),
    };
    let name = env.clients[id as usize].name.clone();
    env.clients[id as usize].crash_after_end |= crash_after_end;
    let ClientKind::Owner(owner) = &mut env.clients[id as usize].kind else {
        return Err(format!("bad argument: `{name}` is not an owner"));
    };
    if let Some(records) = crash_after {
        if records == 0 {
            return Err("bad argument: crash-after must be at least 1".to_string());
        }
        owner.crash_inside_run(records as usize);
    }
    if owner.submit(OwnerOp::Checkpoint).is_err() {
        return Ok(vec![format!(
            "{name}: checkpoint refused (full or finished)"
        )]);
    }
    pump_lines(env, id)
}

/// `truncate <owner> floor=<offset>`
///
/// The owner asks for a fenced truncate to an arbitrary floor (what a buggy or stale caller does;
/// `checkpoint` truncates on its own).
fn truncate(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["floor"], 1)?;
    let id = client_arg(env, args.positional(0, "an owner")?)?;
    let floor = args
        .number("floor")?
        .ok_or("bad argument: `truncate` needs floor=<offset>")?;
    let name = env.clients[id as usize].name.clone();
    let ClientKind::Owner(owner) = &mut env.clients[id as usize].kind else {
        return Err(format!("bad argument: `{name}` is not an owner"));
    };
    if owner.submit(OwnerOp::Truncate { floor }).is_err() {
        return Ok(vec![format!("{name}: truncate refused (full or finished)")]);
    }
    pump_lines(env, id)
}

fn packet_filter(env: &Env, args: &Args) -> Result<(Option<Addr>, Option<Addr>, usize), String> {
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

fn describe_packet(env: &Env, packet: &Packet) -> String {
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

/// `deliver [from=<name>] [to=<name>] [n=<count>]`
///
/// Delivers, in queue order, the messages queued now (from/to a node or client, at most n) and
/// prints each broker message as it arrives. What they cause is queued, not delivered. Storage is
/// not synced: sends that follow an unsynced persist stay held (see `sync`).
fn deliver(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["from", "to", "n"], 0)?;
    need_cluster(env)?;
    let (from, to, count) = packet_filter(env, args)?;
    let filter = move |packet: &Packet| {
        from.is_none_or(|from| packet.from == from) && to.is_none_or(|to| packet.to == to)
    };
    let mut trace = Trace::new(true);
    let result = env.deliver(&filter, count, &mut trace);
    let delivered = *result.as_ref().unwrap_or(&0);
    let mut lines = finish(trace, result.map(|_| ()));
    if delivered == 0 && lines.is_empty() {
        lines.push("nothing to deliver".to_string());
    }
    Ok(lines)
}

/// `drop [from=<name>] [to=<name>] [n=<count>]`
///
/// Loses queued messages matching the filter (at most n), printing each.
fn drop_verb(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["from", "to", "n"], 0)?;
    need_cluster(env)?;
    let (from, to, count) = packet_filter(env, args)?;
    let filter = move |packet: &Packet| {
        from.is_none_or(|from| packet.from == from) && to.is_none_or(|to| packet.to == to)
    };
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
fn partition(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
fn heal(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 0)?;
    need_cluster(env)?;
    env.cut.clear();
    Ok(vec!["healed: every link restored".to_string()])
}

/// `crash <node|client>`
///
/// A node crashes: it loses every storage op not yet synced and every send it held back; its
/// disk keeps what was synced. Messages to it are lost until `restart`. A client crashes for
/// good: it sends nothing more and replies to it are lost (its requests may still land).
fn crash(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    need_cluster(env)?;
    let name = args.positional(0, "a node or client")?;
    let id = match addr_arg(env, name)? {
        Addr::Node(id) => id,
        Addr::Client(client) => {
            let mut trace = Trace::new(false);
            env.crash_client(client, &mut trace);
            return Ok(trace.render());
        }
    };
    if env.nodes[id as usize].broker.is_none() {
        return Ok(vec![format!("{} is already down", describe::node(id))]);
    }
    let mut trace = Trace::new(false);
    let result = env.crash(id, &mut trace);
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
fn restart(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let id = node_arg(env, args.positional(0, "a node")?)?;
    if env.nodes[id as usize].broker.is_some() {
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
fn pause(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    need_cluster(env)?;
    let name = args.positional(0, "a node or client")?;
    match addr_arg(env, name)? {
        Addr::Node(id) => env.nodes[id as usize].paused = true,
        Addr::Client(id) => env.clients[id as usize].paused = true,
    }
    Ok(vec![format!("{name}: paused")])
}

/// `resume <node|client>`
///
/// Undoes `pause`; a resumed client sends its next request if it has one.
fn resume(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    need_cluster(env)?;
    let name = args.positional(0, "a node or client")?;
    let mut lines = vec![format!("{name}: resumed")];
    match addr_arg(env, name)? {
        Addr::Node(id) => env.nodes[id as usize].paused = false,
        Addr::Client(id) => {
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
fn sync(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
fn timeout(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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

/// `stabilize [verbose]`
///
/// Delivers every message and completes every node's storage, round after round, until nothing
/// moves (at most 1000 rounds). Prints client exchanges and node events (coalesced commits);
/// `verbose` also prints every broker message and sync.
fn stabilize(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    need_cluster(env)?;
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
    let result = env.stabilize(&mut trace);
    let mut lines = finish(trace, result.map(|_| ()));
    if lines.is_empty() {
        lines.push("quiet: nothing to deliver or sync".to_string());
    }
    Ok(lines)
}

/// `audit [coverage]`
///
/// Runs every felix-audits invariant on the history so far and prints each violation as
/// `<Invariant>: <what happened>`, or `ok`. `coverage` adds the coverage counters.
fn audit(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 1)?;
    let with_coverage = match args.positional.first().map(String::as_str) {
        None => false,
        Some("coverage") => true,
        Some(other) => {
            return Err(format!(
                "bad argument: `audit` takes only `coverage`, got `{other}`"
            ))
        }
    };
    let report = felix_audits::audit(&env.history);
    let mut lines: Vec<String> = report
        .violations
        .iter()
        .map(|violation| format!("{}: {}", violation.invariant, violation.message))
        .collect();
    if lines.is_empty() {
        lines.push("ok".to_string());
    }
    if with_coverage {
        let counters: Vec<String> = report
            .coverage
            .named()
            .iter()
            .map(|(name, count)| format!("{name}={count}"))
            .collect();
        lines.push(format!("coverage: {}", counters.join(" ")));
    }
    Ok(lines)
}

/// `describe [<node|client>...]`
///
/// Prints each node (role, term, vote, log, committed index, floor and its tag, where it serves
/// from, its writer, unsynced work) and each client (what it believes: epoch, cursor, tail, fold,
/// status), then the queued messages. With names, only those.
fn describe_verb(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 32)?;
    need_cluster(env)?;
    let mut lines = Vec::new();
    if args.positional.is_empty() {
        for id in 0..env.nodes.len() as NodeId {
            lines.extend(describe_node(env, id));
        }
        for id in 0..env.clients.len() as u32 {
            lines.push(describe_client(env, id));
        }
        if env.network.is_empty() {
            lines.push("network: empty".to_string());
        } else {
            lines.push(format!("network: {} queued", env.network.len()));
            for packet in &env.network {
                lines.push(format!("  {}", describe_packet(env, packet)));
            }
        }
        return Ok(lines);
    }
    for name in &args.positional {
        match addr_arg(env, name)? {
            Addr::Node(id) => lines.extend(describe_node(env, id)),
            Addr::Client(id) => lines.push(describe_client(env, id)),
        }
    }
    Ok(lines)
}

fn vote(vote: Option<NodeId>) -> String {
    vote.map(describe::node)
        .unwrap_or_else(|| "none".to_string())
}

/// A node: its state line, then its log (one record per line).
pub fn describe_node(env: &Env, id: NodeId) -> Vec<String> {
    let slot = &env.nodes[id as usize];
    let name = describe::node(id);
    let Some(broker) = &slot.broker else {
        let hard_state = slot.store.hard_state();
        let offsets: Vec<u64> = slot.store.entries().map(|entry| entry.offset).collect();
        let log = match (offsets.first(), offsets.last()) {
            (Some(first), Some(last)) => format!("log {first}..{last}"),
            _ => "empty log".to_string(),
        };
        return vec![format!(
            "{name} down: disk keeps term {} vote {}, {log}",
            hard_state.term,
            vote(hard_state.vote)
        )];
    };
    let role = match broker.role() {
        Role::Leader => "leader",
        Role::Follower => "follower",
        Role::Candidate => "candidate",
        Role::Replica => "replica",
    };
    let floor = broker.floor();
    let floor_text = match (broker.journal().fold().floor_trim, broker.floor_tag()) {
        (Some(trim), Some(tag)) => {
            format!("floor {floor} (trim at {trim} {})", describe::headers(tag))
        }
        (Some(trim), None) => format!("floor {floor} (trim at {trim})"),
        (None, _) => format!("floor {floor}"),
    };
    let mut head = format!(
        "{name} {role} term {} vote {}: committed {}, {floor_text}, serves from {}, tail {}, writer {}",
        broker.term(),
        vote(broker.vote()),
        broker.committed(),
        broker.readable_start(),
        broker.tail(),
        broker.writer().0
    );
    if broker.first_held() > 1 {
        head.push_str(&format!(
            ", holds from {} (sealed {})",
            broker.first_held(),
            describe::sealed(broker.journal().sealed())
        ));
    }
    if slot.unsynced_through.is_some() || !slot.held.is_empty() {
        head.push_str(&format!(
            ", unsynced ops {}, held sends {}",
            slot.store.unsynced_ops(),
            slot.held.len()
        ));
    }
    if slot.paused {
        head.push_str(", paused");
    }
    let mut lines = vec![head];
    for entry in broker.entries() {
        lines.push(format!("  {}", describe::entry(entry)));
    }
    lines
}

/// A client: what it believes.
pub fn describe_client(env: &Env, id: u32) -> String {
    let slot = &env.clients[id as usize];
    let mut text = match &slot.kind {
        ClientKind::Holder(holder) => {
            let status = match holder.status() {
                HolderStatus::Reading => "reading".to_string(),
                HolderStatus::Fencing => "fencing".to_string(),
                HolderStatus::Serving => "serving".to_string(),
                HolderStatus::Retired {
                    newer_epoch,
                    by_tag,
                } => {
                    let how = if by_tag { "by tag" } else { "by a read" };
                    format!("retired (saw epoch {newer_epoch} {how})")
                }
            };
            let tail = holder
                .tail()
                .map(|tail| tail.to_string())
                .unwrap_or_else(|| "unknown".to_string());
            format!(
                "{} holder epoch {} {status}: cursor {}, tail {tail}",
                slot.name,
                holder.epoch(),
                holder.cursor()
            )
        }
        ClientKind::Owner(owner) => {
            let status = match owner.status() {
                OwnerStatus::Fencing => "fencing".to_string(),
                OwnerStatus::Fenced => "fenced".to_string(),
                OwnerStatus::Writing { begin } => match begin {
                    Some(begin) => format!("writing a run from {begin}"),
                    None => "writing a run".to_string(),
                },
                OwnerStatus::Stopped { current } => {
                    format!("stopped (fence in force {})", current.0)
                }
                OwnerStatus::Crashed => "crashed".to_string(),
            };
            format!(
                "{} owner token {} {status}: cursor {}, {}",
                slot.name,
                owner.token().0,
                owner.cursor(),
                fold_text(owner.fold())
            )
        }
        ClientKind::Reader(reader) => format!("{} reader: cursor {}", slot.name, reader.cursor()),
        ClientKind::Folder(folder) => format!(
            "{} folder: cursor {}, {}",
            slot.name,
            folder.cursor(),
            fold_text(folder.fold())
        ),
    };
    if let Some((_, node, request)) = &slot.in_flight {
        text.push_str(&format!(
            ", waiting on {} for {}",
            describe::node(*node),
            describe::request(request)
        ));
    }
    if slot.paused {
        text.push_str(", paused");
    }
    if slot.down {
        text.push_str(", crashed");
    }
    text
}

fn fold_text(fold: Option<felix_core::client::Fold>) -> String {
    match fold {
        Some(fold) => format!("fold {} writes {:016x}", fold.writes, fold.digest),
        None => "fold lost (waits for a checkpoint run at the floor)".to_string(),
    }
}
