//! The checker's second stage (`check` module doc, 2): the candidate order.
//!
//! Every operation that landed names its offset, so the landing order is the offsets' (like Elle,
//! the data reveals the order). The landings are replayed through the specification, real time is
//! checked between them, then every other operation (reads, no-op trims, `CursorTooOld`) is placed
//! at the earliest position its reply and real time allow, in call order: near-linear, and exact
//! whenever every landing's offset is known.

use super::operations::{in_search, Operation};
use super::spec::{reply_words, Op, Spec};
use felix_core::api::{Reply, Request};
use felix_core::record::Offset;
use felix_core::words;
use std::collections::BTreeMap;

/// Where the candidate failed: the operations involved, why, the state just before, and whether
/// the failure needs no search (facts no order can reconcile).
pub(super) struct Failure {
    pub involved: Vec<usize>,
    pub reason: String,
    pub before: Box<Spec>,
    pub definitive: bool,
}

/// The candidate order (module doc): the replies judged alone, the landings in offset order,
/// replayed through the specification and held to real time, then every other operation placed.
pub(super) fn candidate(operations: &[Operation]) -> Result<(), Failure> {
    judged_alone(operations)?;
    let (landings, others) = landings(operations)?;
    let replayed = replay(operations, &landings)?;
    landings_in_real_time(operations, &landings)?;
    place_others(operations, &landings, others, &replayed)
}

/// Replies that depend on no state are judged alone; their failure needs no search.
fn judged_alone(operations: &[Operation]) -> Result<(), Failure> {
    for (index, operation) in operations.iter().enumerate() {
        if let Some(reply) = &operation.reply {
            if let Some(Err(reason)) = Spec::local(&operation.op, reply) {
                return Err(Failure {
                    involved: vec![index],
                    reason,
                    before: Box::default(),
                    definitive: true,
                });
            }
        }
    }
    Ok(())
}

/// An operation that landed: its offset, and its index among the operations.
type Landing = (Offset, usize);

/// The landings, by offset, as `(offset, index)`, no two at one offset; and the other operations
/// the order takes part in.
fn landings(operations: &[Operation]) -> Result<(Vec<Landing>, Vec<usize>), Failure> {
    let mut landings: Vec<Landing> = Vec::new();
    let mut others: Vec<usize> = Vec::new();
    for (index, operation) in operations.iter().enumerate() {
        if !in_search(operation) {
            continue;
        }
        match operation.offset {
            Some(offset) => landings.push((offset, index)),
            None => match &operation.reply {
                None => {} // an unknown operation the data never shows: left out (never).
                Some(Reply::TruncateRefused { .. }) => {
                    return Err(Failure {
                        involved: vec![index],
                        reason: "its refused record is nowhere in the committed log".to_string(),
                        before: Box::default(),
                        definitive: false,
                    })
                }
                Some(_) => others.push(index),
            },
        }
    }
    landings.sort_unstable();
    for pair in landings.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (first, second) = (pair[0].1, pair[1].1);
            let both_acked =
                operations[first].reply.is_some() && operations[second].reply.is_some();
            return Err(Failure {
                involved: vec![first, second],
                reason: format!("both landed at offset {}", pair[0].0),
                before: Box::default(),
                definitive: both_acked,
            });
        }
    }
    Ok((landings, others))
}

/// The landings replayed through the specification: the log they make, the floor after each, and
/// where each `(floor, tag)` began.
struct Replayed {
    log: Spec,
    /// The floor after each landing (the first: before any).
    floor_at: Vec<Offset>,
    /// Each `(floor, tag)` in force, with the position where it began.
    floors_from: Vec<FloorFrom>,
}

/// A `(floor, tag)` and the position (landed records) where it came into force.
type FloorFrom = ((Offset, Option<felix_core::record::Headers>), usize);

/// Replays the landings in offset order; each must land at the tail and write its record.
fn replay(operations: &[Operation], landings: &[Landing]) -> Result<Replayed, Failure> {
    let mut spec = Spec::new();
    let mut floor_at: Vec<Offset> = vec![spec.floor()];
    let mut floors_from: Vec<FloorFrom> = vec![((spec.floor(), None), 0)];
    for (position, &(offset, index)) in landings.iter().enumerate() {
        let operation = &operations[index];
        if offset != spec.tail() {
            let reason = if offset > spec.tail() {
                format!(
                    "it landed at {offset}, but nothing any client or the committed log shows \
                     landed at {}",
                    spec.tail()
                )
            } else {
                format!("it landed at {offset} below the tail {}", spec.tail())
            };
            return Err(Failure {
                involved: vec![index],
                reason,
                before: Box::new(spec),
                definitive: false,
            });
        }
        let Some(reply) = operation.candidate_reply() else {
            unreachable!("a landing has an offset, hence a reply");
        };
        let before = spec.tail();
        match spec.apply(&operation.op, &reply) {
            Ok(true) => {}
            Ok(false) => {
                return Err(Failure {
                    involved: vec![index],
                    reason: "it landed but the specification writes nothing for it".to_string(),
                    before: Box::new(spec),
                    definitive: false,
                })
            }
            Err(reason) => {
                return Err(Failure {
                    involved: vec![index],
                    reason,
                    before: Box::new(spec),
                    definitive: false,
                })
            }
        }
        assert_eq!(spec.tail(), before + 1);
        floor_at.push(spec.floor());
        let current = (spec.floor(), spec.tag().cloned());
        if floors_from.last().map(|(known, _)| known) != Some(&current) {
            floors_from.push((current, position + 1));
        }
    }
    Ok(Replayed {
        log: spec,
        floor_at,
        floors_from,
    })
}

/// Real time between landings: no landing answered before another was requested may sit after
/// it. Walks the offsets downwards keeping the earliest answer seen.
fn landings_in_real_time(operations: &[Operation], landings: &[Landing]) -> Result<(), Failure> {
    let mut earliest: Option<(usize, usize)> = None; // (ret, index)
    for &(_, index) in landings.iter().rev() {
        let operation = &operations[index];
        if let Some((ret, later)) = earliest {
            if ret < operation.call {
                return Err(Failure {
                    involved: vec![later, index],
                    reason: "the first was answered before the second was requested, yet landed \
                             after it"
                        .to_string(),
                    before: Box::new(replay_until(operations, landings, operations[index].offset)),
                    definitive: operations[later].reply.is_some()
                        && operations[index].reply.is_some(),
                });
            }
        }
        if let Some(ret) = operation.ret {
            if earliest.is_none_or(|(known, _)| ret < known) {
                earliest = Some((ret, index));
            }
        }
    }
    Ok(())
}

/// Bounds from landings: an operation sits after every landing answered before its call, and
/// before every landing requested after its return. Positions count landed records.
struct Bounds {
    /// The answered landings as `(ret, offset)`, by answer.
    by_ret: Vec<(usize, Offset)>,
    /// The highest offset among the first `i + 1` of `by_ret`.
    prefix_max: Vec<Offset>,
    /// The landings as `(call, offset, index)`, by call.
    by_call: Vec<(usize, Offset, usize)>,
    /// The lowest `(offset, index)` among `by_call[i..]` (`(Offset::MAX, usize::MAX)`: none).
    suffix_min: Vec<Landing>,
    /// The number of landings: the highest position.
    last: usize,
}

impl Bounds {
    fn of(operations: &[Operation], landings: &[Landing]) -> Bounds {
        let mut by_ret: Vec<(usize, Offset)> = landings
            .iter()
            .filter_map(|&(offset, index)| operations[index].ret.map(|ret| (ret, offset)))
            .collect();
        by_ret.sort_unstable();
        let mut prefix_max: Vec<Offset> = Vec::with_capacity(by_ret.len());
        for &(_, offset) in &by_ret {
            prefix_max.push(prefix_max.last().copied().unwrap_or(0).max(offset));
        }
        let mut by_call: Vec<(usize, Offset, usize)> = landings
            .iter()
            .map(|&(offset, index)| (operations[index].call, offset, index))
            .collect();
        by_call.sort_unstable();
        let mut suffix_min: Vec<Landing> = vec![(Offset::MAX, usize::MAX); by_call.len() + 1];
        for at in (0..by_call.len()).rev() {
            let (_, offset, index) = by_call[at];
            suffix_min[at] = suffix_min[at + 1].min((offset, index));
        }
        Bounds {
            by_ret,
            prefix_max,
            by_call,
            suffix_min,
            last: landings.len(),
        }
    }

    /// The landings answered before `call`: how many, and the lowest position after all of them.
    fn after_answered(&self, call: usize) -> (usize, usize) {
        let answered_before = self.by_ret.partition_point(|&(ret, _)| ret < call);
        let low = if answered_before == 0 {
            0
        } else {
            self.prefix_max[answered_before - 1] as usize
        };
        (answered_before, low)
    }

    /// The highest position before every landing requested after `ret`, and the lowest such
    /// landing (`usize::MAX`: none).
    fn before_requested(&self, ret: usize) -> (usize, usize) {
        let requested_after = self.by_call.partition_point(|&(call, _, _)| call <= ret);
        let (high_offset, high_index) = self.suffix_min[requested_after];
        let high = if high_offset == Offset::MAX {
            self.last
        } else {
            high_offset as usize - 1
        };
        (high, high_index)
    }
}

/// The other operations, earliest feasible position first, in call order (real time among them:
/// one answered before another was requested sits no later).
fn place_others(
    operations: &[Operation],
    landings: &[Landing],
    mut others: Vec<usize>,
    replayed: &Replayed,
) -> Result<(), Failure> {
    let bounds = Bounds::of(operations, landings);
    let last = bounds.last;
    others.sort_unstable_by_key(|&index| operations[index].call);
    let mut returns: Vec<(usize, usize)> = others
        .iter()
        .map(|&index| (operations[index].ret.unwrap_or(usize::MAX), index))
        .collect();
    returns.sort_unstable();
    let mut placed: BTreeMap<usize, usize> = BTreeMap::new();
    let mut returned_max: (usize, Option<usize>) = (0, None);
    let mut next_return = 0;
    for &index in &others {
        let operation = &operations[index];
        while next_return < returns.len() && returns[next_return].0 < operation.call {
            let other = returns[next_return].1;
            if let Some(&position) = placed.get(&other) {
                if position >= returned_max.0 {
                    returned_max = (position, Some(other));
                }
            }
            next_return += 1;
        }
        let (answered_before, low_landing) = bounds.after_answered(operation.call);
        let (high, high_index) = bounds.before_requested(operation.ret.unwrap_or(usize::MAX));
        let Some(reply) = &operation.reply else {
            continue;
        };
        let (feasible_low, feasible_high, why) = feasible(&operation.op, reply, replayed, last);
        let low = low_landing.max(returned_max.0).max(feasible_low);
        let top = high.min(feasible_high);
        if low > top {
            let mut involved = vec![index];
            let reason;
            if feasible_low > feasible_high {
                reason = why;
            } else if feasible_low > high {
                if high_index != usize::MAX {
                    involved.push(high_index);
                }
                reason = format!(
                    "it was answered before the second was requested, yet needs {}",
                    why_low(feasible_low)
                );
            } else if feasible_high < low_landing {
                let answered = bounds.by_ret[answered_before - 1].1;
                if let Some(&(_, landed)) = landings.iter().find(|(offset, _)| *offset == answered)
                {
                    involved.push(landed);
                }
                reason = format!(
                    "it was requested after the second was answered, yet {why} holds only before \
                     offset {}",
                    feasible_high + 1
                );
            } else {
                if let Some(other) = returned_max.1 {
                    involved.push(other);
                }
                reason = format!(
                    "it was requested after the second was answered, which saw the log up to \
                     offset {}, yet {why} holds only before offset {}",
                    returned_max.0,
                    feasible_high + 1
                );
            }

            involved.dedup();
            let position = low_landing.max(returned_max.0).min(last);
            return Err(Failure {
                involved,
                reason,
                before: Box::new(replay_until(
                    operations,
                    landings,
                    Some(position as Offset + 1),
                )),
                definitive: false,
            });
        }
        placed.insert(index, low);
    }
    Ok(())
}

fn why_low(position: usize) -> String {
    format!("the log up to offset {position}")
}

/// The positions (records landed) at which `reply` to `op` is allowed, as an interval, and what
/// holds there in words; an empty interval when none.
fn feasible(op: &Op, reply: &Reply, replayed: &Replayed, last: usize) -> (usize, usize, String) {
    let Replayed {
        log,
        floor_at,
        floors_from,
    } = replayed;
    let empty = |why: String| (1, 0, why);
    let Op::Client(request) = op else {
        return empty("a noop is no reply".to_string());
    };
    match (request, reply) {
        (Request::Read { from, max_records }, Reply::Records { records, next }) => {
            let Some(position) = next.checked_sub(1).map(|position| position as usize) else {
                return empty("a read answered next 0".to_string());
            };
            if position > last {
                return empty(format!("it served up to {next}, past every landed record"));
            }
            // The content below `next` is fixed once it landed: judge it at `next`'s position.
            let at = replay_view(log, floor_at, position);
            if let Err(reason) = at.check(*from, *max_records, records, *next) {
                return empty(reason);
            }
            let cap = (*max_records).min(super::spec::read_records_max()) as usize;
            let complete = records.len() < cap;
            let start = match from {
                felix_core::api::ReadFrom::Offset(from) => *from,
                felix_core::api::ReadFrom::Earliest => {
                    records.first().map_or(*next, |record| record.offset)
                }
            };
            // The floor must still be at most where it served from.
            let floor_high = floor_at.partition_point(|&floor| floor <= start);
            if floor_high == 0 {
                return empty(format!("floor above {start} from the start"));
            }
            let high = if complete {
                position
            } else {
                (floor_high - 1).min(last)
            };
            (position, high, format!("serving up to {next} from {start}"))
        }
        (
            Request::Read {
                from: felix_core::api::ReadFrom::Offset(_),
                ..
            },
            Reply::CursorTooOld { floor, tag },
        ) => {
            let key = (*floor, tag.clone());
            match floors_from.iter().find(|(known, _)| *known == key) {
                Some(&(_, position)) => match log.step(op, reply) {
                    Ok(_) => (position, last, format!("floor {floor}")),
                    Err(reason) => empty(reason),
                },
                None => empty(format!(
                    "CursorTooOld names floor {floor} with {}, which was never in force",
                    match tag {
                        Some(headers) => format!("tag {}", words::headers(headers)),
                        None => "no tag".to_string(),
                    }
                )),
            }
        }
        (Request::Trim { floor, .. }, Reply::TrimNoop { .. }) => {
            let position = floor_at.partition_point(|&known| known < *floor);
            if position > last {
                return empty(format!(
                    "a no-op trim asking for floor {floor}, which the floor never reached"
                ));
            }
            match Spec::noop_trim_tail(request, reply) {
                Ok(()) => (position, last, format!("floor at least {floor}")),
                Err(reason) => empty(reason),
            }
        }
        _ => empty(format!(
            "{} cannot be answered {}",
            words::request(request),
            reply_words(reply)
        )),
    }
}

/// The log's records as a read at `position` sees them: the same records, the floor then.
fn replay_view<'a>(log: &'a Spec, floor_at: &[Offset], position: usize) -> ReadView<'a> {
    ReadView {
        log,
        floor: floor_at[position],
        tail: position as Offset + 1,
    }
}

struct ReadView<'a> {
    log: &'a Spec,
    floor: Offset,
    tail: Offset,
}

impl ReadView<'_> {
    fn check(
        &self,
        from: felix_core::api::ReadFrom,
        max_records: u32,
        records: &[felix_core::api::ReadRecord],
        next: Offset,
    ) -> Result<(), String> {
        self.log
            .check_records_at(from, max_records, records, next, self.floor, self.tail)
    }
}

/// The specification after the landings below `offset`.
fn replay_until(operations: &[Operation], landings: &[Landing], offset: Option<Offset>) -> Spec {
    let mut spec = Spec::new();
    for &(landed, index) in landings {
        if offset.is_some_and(|offset| landed >= offset) {
            break;
        }
        let Some(reply) = operations[index].candidate_reply() else {
            break;
        };
        if spec.apply(&operations[index].op, &reply) != Ok(true) {
            break;
        }
    }
    spec
}
