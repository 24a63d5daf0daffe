//! Verbs that judge and show a run: audits and the state of nodes and clients.

use super::*;

/// `audit [coverage]`
///
/// Runs every felix-audits invariant on the history so far and prints each violation as
/// `<Invariant>: <what happened>`, or `ok`. `coverage` adds the coverage counters.
pub(super) fn audit(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
    let report = match env.audit_only {
        Some(invariant) if !with_coverage => felix_audits::audit_one(&env.history, invariant),
        _ => felix_audits::audit(&env.history),
    };
    let mut lines: Vec<String> = report
        .violations
        .iter()
        .map(|violation| format!("{}: {}", violation.invariant, violation.text()))
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
pub(super) fn describe_verb(env: &mut Env, args: &Args) -> Result<Vec<String>, String> {
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
            Address::Node(id) => lines.extend(describe_node(env, id)),
            Address::Client(id) => lines.push(describe_client(env, id)),
        }
    }
    Ok(lines)
}

pub(super) fn vote(vote: Option<NodeId>) -> String {
    vote.map(describe::node)
        .unwrap_or_else(|| "none".to_string())
}

/// A node: its state line, then its log (one record per line).
pub fn describe_node(env: &Env, id: NodeId) -> Vec<String> {
    let slot = &env.nodes[id as usize];
    let name = describe::node(id);
    let Some(broker) = &slot.host.broker else {
        // A scenario's disks are in-memory stores (the file store runs only on swarm seeds).
        let Some(store) = slot.host.disk.store() else {
            return vec![format!("{name} down: its disk is a file store")];
        };
        let hard_state = store.hard_state();
        let offsets: Vec<u64> = store.entries().map(|entry| entry.offset).collect();
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
    if slot.host.unsynced_through().is_some() || slot.host.held_len() > 0 {
        head.push_str(&format!(
            ", unsynced ops {}, held sends {}",
            slot.host.disk.unsynced_ops(),
            slot.host.held_len()
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

pub(super) fn fold_text(fold: Option<felix_core::client::Fold>) -> String {
    match fold {
        Some(fold) => format!("fold {} writes {:016x}", fold.writes, fold.digest),
        None => "fold lost (waits for a checkpoint run at the floor)".to_string(),
    }
}
