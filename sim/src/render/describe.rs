//! The one renderer of what a person reads: one sentence per history event, simulator event,
//! request, reply, message and record. Replay summaries (`felix replay`, `felix trace show`) and
//! scenario output (`felix scenario`) both use it, so a failing seed reads like a scenario file.
//!
//! Every match is exhaustive and nothing falls back to `Debug`: a new event kind does not compile
//! until it has its sentence. Scenario expectations are golden text, so every function is
//! deterministic: maps are BTreeMaps, no addresses, no timings. Names are the protocol's own
//! (`CursorTooOld`, `TrimmedTo`, floor, tail, tag). Clients are named by the caller (`Names`):
//! replay says `c3`, a scenario says the name its verb gave (`lease1`).

use crate::render::trace::{SimEvent, TraceEvent, TraceLine};
use felix_core::api::ClientId;
use felix_core::api::{InvalidRequest, ReadRecord, Reply};
use felix_core::broker::{AppendResult, Ask, Message};
use felix_core::history::{Event, Phase};
use felix_core::storage::SealedState;
pub use felix_core::words::{body, command, entry, headers, node, request};
use felix_core::words::{headers_suffix, vote};

/// A record a reader was served.
pub fn read_record(record: &ReadRecord) -> String {
    format!(
        "{} {}{}",
        record.offset,
        body(&record.body),
        headers_suffix(&record.headers)
    )
}

/// A broker's answer.
pub fn reply(reply: &Reply) -> String {
    match reply {
        Reply::Appended { offset, tail } => format!("Appended at {offset} (tail {tail})"),
        Reply::TrimNoop { tail } => format!("TrimNoop (tail {tail})"),
        Reply::OffsetMismatch { tail } => format!("OffsetMismatch (tail {tail})"),
        Reply::FenceMismatch { current } => format!("FenceMismatch (current {})", current.0),
        Reply::TruncateRefused { current } => format!("TruncateRefused (current {})", current.0),
        Reply::Records { records, next } => {
            let listed: Vec<String> = records.iter().map(read_record).collect();
            format!("Records [{}] next {next}", listed.join(", "))
        }
        Reply::CursorTooOld { floor, tag } => match tag {
            Some(tag) => format!("CursorTooOld floor {floor} tag {}", headers(tag)),
            None => format!("CursorTooOld floor {floor} untagged"),
        },
        Reply::NotHeld { from } => format!("NotHeld from {from}"),
        Reply::NotLeader { hint } => match hint {
            Some(hint) => format!("NotLeader (hint {})", node(*hint)),
            None => "NotLeader (no hint)".to_string(),
        },
        Reply::NoReadIndex { hint } => match hint {
            Some(hint) => format!("NoReadIndex (hint {})", node(*hint)),
            None => "NoReadIndex (no hint)".to_string(),
        },
        Reply::Invalid(invalid) => format!("Invalid: {}", invalid_request(invalid)),
    }
}

fn invalid_request(invalid: &InvalidRequest) -> String {
    match invalid {
        InvalidRequest::FloorAboveOffset { floor, offset } => {
            format!("floor {floor} above the trim's offset {offset}")
        }
        InvalidRequest::ReadPastTail { from, tail } => {
            format!("read from {from} past the committed tail {tail}")
        }
        InvalidRequest::MalformedHeaders { reason } => format!("malformed headers: {reason}"),
        InvalidRequest::TooLarge { bytes, limit } => {
            format!("{bytes} bytes, limit {limit}")
        }
    }
}

/// A sealed state, as a jump or a describe shows it.
/// A read-index question's name: its number within the asking node's incarnation.
fn ask_name(ask: &Ask) -> String {
    format!("{} of incarnation {}", ask.number, ask.incarnation)
}

pub fn sealed(state: &SealedState) -> String {
    let tag = state
        .floor_tag
        .as_ref()
        .map(|tag| format!(" tag {}", headers(tag)))
        .unwrap_or_default();
    format!(
        "base {}@{}, floor {}{tag}, writer {}",
        state.base_offset, state.base_term, state.floor, state.writer.0
    )
}

/// A broker-to-broker message.
pub fn message(message: &Message) -> String {
    match message {
        Message::RequestVote {
            term,
            last_offset,
            last_term,
        } => format!("RequestVote term {term} last {last_offset}@{last_term}"),
        Message::Vote { term, granted } => {
            let answer = if *granted { "granted" } else { "refused" };
            format!("Vote term {term} {answer}")
        }
        Message::AppendEntries {
            term,
            prev_offset,
            prev_term,
            entries,
            committed,
        } => {
            let listed = match (entries.first(), entries.last()) {
                (Some(first), Some(last)) if first.offset == last.offset => {
                    format!("[{}]", first.offset)
                }
                (Some(first), Some(last)) => format!("[{}..{}]", first.offset, last.offset),
                _ => "[]".to_string(),
            };
            format!(
                "AppendEntries term {term} prev {prev_offset}@{prev_term} {listed} commit {committed}"
            )
        }
        Message::AppendReply { term, result } => match result {
            AppendResult::Accepted { matched } => {
                format!("AppendReply term {term} accepted {matched}")
            }
            AppendResult::Rejected { next } => {
                format!("AppendReply term {term} rejected, next {next}")
            }
        },
        Message::TrimmedTo { point, state } => {
            format!("TrimmedTo point {point} ({})", sealed(state))
        }
        Message::ReadIndex { ask } => format!("ReadIndex ask {}", ask_name(ask)),
        Message::ReadIndexReply { ask, index } => match index {
            Some(index) => format!("ReadIndexReply ask {} index {index}", ask_name(ask)),
            None => format!("ReadIndexReply ask {} refused", ask_name(ask)),
        },
        Message::ReadProbe { term, round } => format!("ReadProbe term {term} round {round}"),
        Message::ReadProbeAck { term, round } => format!("ReadProbeAck term {term} round {round}"),
    }
}

/// How the caller names clients.
pub trait Names {
    fn client(&self, id: ClientId) -> String;
}

/// Clients as `c<id>` (replay, trace files).
pub struct ById;

impl Names for ById {
    fn client(&self, id: ClientId) -> String {
        format!("c{id}")
    }
}

fn role(leader: bool) -> &'static str {
    if leader {
        "leader"
    } else {
        "not leader"
    }
}

/// A node's sent promise or acknowledgement, its durable promise or log, or a TrimmedTo it sent,
/// as one sentence (`event`'s).
fn sent_or_durable(event: &Event) -> String {
    match event {
        Event::TrimmedToSent {
            node: id,
            to,
            point,
        } => format!("{}: TrimmedTo {} point {point}", node(*id), node(*to)),
        Event::DurablePromise {
            node: id,
            term,
            vote: voted,
        } => format!(
            "{}: durable promise term {term} vote {}",
            node(*id),
            vote(*voted)
        ),
        Event::PromiseSent {
            node: id,
            to,
            term,
            vote: granted,
        } => match granted {
            Some(candidate) => format!(
                "{}: sent {} its vote in term {term} for {}",
                node(*id),
                node(*to),
                node(*candidate)
            ),
            None => format!("{}: sent {} term {term}", node(*id), node(*to)),
        },
        Event::DurableLog {
            node: id,
            last,
            term,
        } => match last {
            0 => format!("{}: durable log empty", node(*id)),
            _ => format!("{}: durable log through {last} (term {term})", node(*id)),
        },
        Event::AckSent {
            node: id,
            to,
            term,
            matched,
            matched_term,
        } => {
            let record = match matched_term {
                Some(record) => format!(" (a record of term {record})"),
                None => String::new(),
            };
            format!(
                "{}: sent {} AppendReply term {term} accepted {matched}{record}",
                node(*id),
                node(*to)
            )
        }
        _ => unreachable!("only a sent promise or acknowledgement, a durable one or a TrimmedTo"),
    }
}

/// A floor applied, a trim refused in place, or segments deleted, as one sentence.
fn floors(event: &Event) -> String {
    match event {
        Event::FloorApplied {
            node: id,
            floor,
            trim,
        } => match trim {
            Some(trim) => format!("{}: floor {floor} (trim at {trim})", node(*id)),
            None => format!("{}: floor {floor} (from a jump)", node(*id)),
        },
        Event::TruncateRefused {
            node: id,
            offset,
            current,
        } => format!(
            "{}: trim at {offset} refused in place (fence in force {})",
            node(*id),
            current.0
        ),
        Event::SegmentsDeleted {
            node: id,
            below,
            readable_start,
            retention,
        } => {
            let why = if *retention { " by retention" } else { "" };
            format!(
                "{}: deleted segments below {below}{why}, serves from {readable_start}",
                node(*id)
            )
        }
        _ => unreachable!("only a floor, a refused trim or a deletion"),
    }
}

/// A crash, a restart, a restart that found the store corrupt or unfaithful, or a log whose terms
/// go down (LogTermsMonotone), as one sentence.
fn life(event: &Event) -> String {
    match event {
        Event::Crashed { node: id } => format!("{}: crashed", node(*id)),
        Event::Restarted { node: id } => format!("{}: restarted", node(*id)),
        Event::StoreCorrupt { node: id, reason } => {
            format!(
                "{}: restart found its store corrupt, down for good: {reason}",
                node(*id)
            )
        }
        Event::RecoveryUnfaithful { node: id, detail } => {
            format!(
                "{}: restart read back what its disk never held: {detail}",
                node(*id)
            )
        }
        Event::LogTermsDecreased {
            node: id,
            offset,
            term,
            before,
            base,
            restart,
        } => format!(
            "{}: {} {offset} of term {term} after {} of term {before}: terms go down along its log",
            node(*id),
            if *restart {
                "restart read back"
            } else {
                "log holds"
            },
            if *base {
                "its sealed base".to_string()
            } else {
                (offset - 1).to_string()
            }
        ),
        _ => unreachable!("only a crash, a restart, a store that read back wrong or a log's terms"),
    }
}

/// One history event as one sentence.
pub fn event(event: &Event, names: &dyn Names) -> String {
    match event {
        Event::PromiseChanged {
            node: id,
            term,
            vote: voted,
        } => format!("{}: promise term {term} vote {}", node(*id), vote(*voted)),
        Event::BecameLeader { node: id, term } => {
            format!("{}: became leader of term {term}", node(*id))
        }
        Event::Committed {
            node: id,
            entry: record,
        } => format!("{}: committed {}", node(*id), entry(record)),
        Event::FloorApplied { .. }
        | Event::TruncateRefused { .. }
        | Event::SegmentsDeleted { .. } => floors(event),
        Event::TrimmedToSent { .. }
        | Event::DurablePromise { .. }
        | Event::PromiseSent { .. }
        | Event::DurableLog { .. }
        | Event::AckSent { .. } => sent_or_durable(event),
        Event::Jumped {
            node: id,
            point,
            replica,
        } => {
            let who = if *replica { " (replica)" } else { "" };
            format!("{}{who}: jumped to trim point {point}", node(*id))
        }
        Event::NodeState {
            node: id,
            term,
            vote: voted,
            leader,
            floor,
            committed,
            readable_start,
            floor_tag,
        } => {
            let tag = floor_tag
                .as_ref()
                .map(|tag| format!(" tag {}", headers(tag)))
                .unwrap_or_default();
            format!(
                "{}: state term {term} vote {} {} floor {floor}{tag} committed {committed} serves from {readable_start}",
                node(*id),
                vote(*voted),
                role(*leader)
            )
        }
        Event::Crashed { .. }
        | Event::Restarted { .. }
        | Event::StoreCorrupt { .. }
        | Event::RecoveryUnfaithful { .. }
        | Event::LogTermsDecreased { .. } => life(event),
        Event::Requested {
            client,
            node: id,
            request: asked,
        } => format!(
            "{} -> {}: {}",
            names.client(*client),
            node(*id),
            request(asked)
        ),
        Event::Replied {
            client,
            node: id,
            reply: answer,
            ..
        } => format!(
            "{} -> {}: {}",
            node(*id),
            names.client(*client),
            reply(answer)
        ),
        Event::LeaseGranted { .. }
        | Event::HolderRetired { .. }
        | Event::Gap { .. }
        | Event::Folded { .. }
        | Event::CheckpointRestored { .. }
        | Event::CheckpointCompared { .. }
        | Event::CheckpointWritten { .. }
        | Event::OwnerStopped { .. } => client_side(event, names),
        Event::PhaseChanged { phase } => format!("phase: {}", phase_name(*phase)),
    }
}

/// A client's own event: its lease, its retirement, a gap, its fold and its checkpoints, its stop.
fn client_side(event: &Event, names: &dyn Names) -> String {
    match event {
        Event::LeaseGranted { client, epoch } => {
            format!("{}: lease granted, epoch {epoch}", names.client(*client))
        }
        Event::HolderRetired {
            client,
            epoch,
            newer_epoch,
            by_tag,
        } => {
            let where_ = if *by_tag {
                "in a CursorTooOld tag"
            } else {
                "in a write it read"
            };
            format!(
                "{}: retired (epoch {epoch} saw epoch {newer_epoch} {where_})",
                names.client(*client)
            )
        }
        Event::Gap { client, from, to } => format!(
            "{}: gap {from}..{to} reported, cursor moves to {to}",
            names.client(*client)
        ),
        Event::Folded {
            client,
            offset,
            digest,
        } => format!(
            "{}: folded {offset} -> {digest:016x}",
            names.client(*client)
        ),
        Event::CheckpointRestored { client, begin, end } => format!(
            "{}: restored from checkpoint run {begin}..{end}",
            names.client(*client)
        ),
        Event::CheckpointCompared {
            client,
            begin,
            end,
            digest,
            checkpoint_digest,
        } => {
            let verdict = if digest == checkpoint_digest {
                "agrees".to_string()
            } else {
                format!("DISAGREES (own {digest:016x}, checkpoint {checkpoint_digest:016x})")
            };
            format!(
                "{}: compared checkpoint run {begin}..={end}: {verdict}, fold resets on it",
                names.client(*client)
            )
        }
        Event::CheckpointWritten { client, begin, end } => format!(
            "{}: checkpoint run {begin}..{end} written (End acknowledged)",
            names.client(*client)
        ),
        Event::OwnerStopped {
            client,
            token,
            current,
        } => format!(
            "{}: stopped (token {}, fence in force {})",
            names.client(*client),
            token.0,
            current.0
        ),
        _ => unreachable!("only a client's lease, retirement, gap, fold, checkpoint or stop"),
    }
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Safety => "safety (faults on)",
        Phase::Liveness => "liveness (faults healed)",
        Phase::End => "end (the liveness deadline)",
    }
}

/// One simulator event as one sentence.
pub fn sim_event(event: &SimEvent, names: &dyn Names) -> String {
    match event {
        SimEvent::Started { seed, twin, .. } => match twin {
            Some(twin) => format!("sim: seed {seed} starts ({twin})"),
            None => format!("sim: seed {seed} starts"),
        },
        SimEvent::Forked { step, branch } => format!(
            "sim: fork {step}:{branch}: from here every stream draws afresh (a continuation)"
        ),
        SimEvent::Phase { name } => format!("sim: {name} phase"),
        SimEvent::NetworkFault { description } => format!("sim: network: {description}"),
        SimEvent::Healed => "sim: every fault healed".to_string(),
        SimEvent::LeaseMoved {
            from,
            to,
            epoch,
            told,
        } => {
            let from = from.map_or("nobody".to_string(), |client| names.client(client));
            let told = if *told { "told" } else { "NOT told" };
            format!(
                "sim: lease epoch {epoch} moved from {from} to {} ({from} {told})",
                names.client(*to)
            )
        }
        SimEvent::Paused { client } => format!("sim: {} frozen", names.client(*client)),
        SimEvent::Resumed { client } => format!("sim: {} thawed", names.client(*client)),
        SimEvent::HolderRestarted { client, epoch } => format!(
            "sim: {} restarts: keeps lease epoch {epoch}, forgets the rest, reads from offset 1",
            names.client(*client)
        ),
        SimEvent::DiskLost {
            node: id,
            ops_lost,
            torn,
        } => {
            let torn = if *torn { ", last record torn" } else { "" };
            format!(
                "sim: {} lost {ops_lost} unsynced storage ops{torn}",
                node(*id)
            )
        }
        SimEvent::DiskReadFailed {
            node: id,
            error,
            retry_micros,
        } => format!(
            "sim: {} could not read its disk ({error}); stays down, tries again in {retry_micros}us",
            node(*id)
        ),
        SimEvent::Finished { reason } => format!("sim: run ends: {reason}"),
        SimEvent::Violation {
            invariant,
            at_step,
            detail,
            ..
        } => match at_step {
            Some(step) => format!("VIOLATION {invariant} at step {step}: {detail}"),
            None => format!("VIOLATION {invariant}: {detail}"),
        },
    }
}

/// One trace event (a history event or a simulator event) as one sentence.
pub fn trace_event(event: &TraceEvent) -> String {
    match event {
        TraceEvent::History(history) => self::event(history, &ById),
        TraceEvent::Sim(sim) => sim_event(sim, &ById),
    }
}

/// One trace line as `step  time  what happened`.
pub fn trace_line(line: &TraceLine) -> String {
    let what = trace_event(&line.event);
    format!("{:>6}  {:>9.6}s  {what}", line.step, line.time as f64 / 1e6)
}
