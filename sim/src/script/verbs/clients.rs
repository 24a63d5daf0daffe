//! Verbs that drive the clients: writes, trims, reads, folds, checkpoints and truncates.

use super::*;

/// `write <holder|owner> <body>`
///
/// Queues a write (a holder's is conditional on its tail, epoch in the headers; an owner's is
/// fenced by its token) and sends it if the client is ready.
pub(super) fn write(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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

pub(super) fn pump_lines(env: &mut Env, id: u32) -> Result<Vec<String>, String> {
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
pub(super) fn trim(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
pub(super) fn read(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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

pub(super) fn start_reads(
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
pub(super) fn fold(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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

/// `checkpoint <owner> [crash-after=<records>|end] [keep]`
///
/// The owner reads to the tail, writes its fold as a checkpoint run (Begin, Chunks, End) there,
/// then truncates to the run's start. With `crash-after=K` the owner crashes once K records of
/// the run are acknowledged (K <= chunks + 1 leaves a run with no End); with `crash-after=end`
/// it crashes right after End is acknowledged, before its truncate goes out (a mid-log run).
/// With `keep` the owner writes the run and truncates nothing, as the seeded world's owner does
/// when a folder's cursor is still below the run (its trim limit, `Owner::set_trim_limit`); a
/// `checkpoint` without it lifts the limit again.
pub(super) fn checkpoint(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&["crash-after"], 2)?;
    let id = client_arg(env, args.positional(0, "an owner")?)?;
    let keep = match args.positional.get(1).map(String::as_str) {
        None => false,
        Some("keep") => true,
        Some(other) => {
            return Err(format!(
                "bad argument: `checkpoint` takes only `keep` besides its owner and keys, got `{other}`"
            ))
        }
    };
    let (crash_after, crash_after_end) = match args.text("crash-after") {
        Some("end") => (None, true),
        _ => (args.number("crash-after")?, false),
    };
    let name = env.clients[id as usize].name.clone();
    env.clients[id as usize].crash_after_end |= crash_after_end;
    let ClientKind::Owner(owner) = &mut env.clients[id as usize].kind else {
        return Err(format!("bad argument: `{name}` is not an owner"));
    };
    // A limit below every floor forbids the run's truncate; none allows it.
    owner.set_trim_limit(keep.then_some(0));
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
pub(super) fn truncate(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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

/// `target <client> <node>`
///
/// The client's next request goes to `<node>`, whatever the replies before it say (once; then it
/// routes as before: the leader it was told of, else where `via=` pinned it, else the leader). A
/// client of the seeded world picks its node itself; a shrunk run names it with this verb. Sends
/// nothing by itself.
pub(super) fn target(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
    args.only(&[], 2)?;
    let id = client_arg(env, args.positional(0, "a client")?)?;
    let node = node_arg(env, args.positional(1, "a node")?)?;
    let slot = &mut env.clients[id as usize];
    slot.aimed = Some(node);
    Ok(vec![format!(
        "{}: next request to {}",
        slot.name,
        describe::node(node)
    )])
}
