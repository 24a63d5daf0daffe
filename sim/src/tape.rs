//! The choice tape: every draw of a run's streams, recorded or replayed (for `shrink`).
//!
//! While a tape is active on the thread (`with_tape`), every `rng::Stream` made on that thread
//! sends its draws through it. Each draw is stored as a number where 0 is the simplest value of its
//! kind: `range` as the offset above its low end (the shortest delay), `chance` as 0/1 (0 = it did
//! not happen: no drop, no fault), `index` as the index (0 = the first), `next_u64` as itself.
//! Recording keeps what the generator drew; replaying hands back the recorded value at the same
//! position of the same component when it still fits the bound asked for, else 0, and a component
//! whose recording ran out answers 0 from then on ("nothing more happens"). Either way the tape
//! keeps the values actually used, so a replay yields its own normalized recording. Components
//! stay separate: editing the network's choices never shifts the fault plan or the workload.
//!
//! The same thread may record the run's schedule (`with_schedule`): what each node's host was given
//! (messages, requests, ticks, syncs) interleaved with the trace lines, for the scenario translation.

use crate::rng::Component;
use felix_core::api::{ClientId, Request};
use felix_core::broker::Message;
use felix_core::NodeId;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The choices of one run, per component, in draw order.
pub type Choices = BTreeMap<Component, Vec<u64>>;

struct Tape {
    replay: Option<Choices>,
    cursors: BTreeMap<Component, usize>,
    used: Choices,
}

thread_local! {
    static TAPE: RefCell<Option<Tape>> = const { RefCell::new(None) };
}

/// True while a tape is active on this thread.
pub fn active() -> bool {
    TAPE.with(|tape| tape.borrow().is_some())
}

/// One draw of `component` with values in `0..=max`: `fresh` draws it from the generator when
/// recording (or when the stream outlived its tape).
pub fn draw(component: Component, max: u64, fresh: impl FnOnce() -> u64) -> u64 {
    TAPE.with(|tape| {
        let mut tape = tape.borrow_mut();
        let Some(tape) = tape.as_mut() else {
            return fresh();
        };
        let value = match &tape.replay {
            None => fresh(),
            Some(replay) => {
                let cursor = tape.cursors.entry(component).or_insert(0);
                let position = *cursor;
                *cursor += 1;
                replay
                    .get(&component)
                    .and_then(|values| values.get(position))
                    .copied()
                    .filter(|value| *value <= max)
                    .unwrap_or(0)
            }
        };
        assert!(value <= max, "a draw of {value} above its bound {max}");
        tape.used.entry(component).or_default().push(value);
        value
    })
}

/// Clears the thread's tape even when `body` panics.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        TAPE.with(|tape| *tape.borrow_mut() = None);
    }
}

/// Runs `body` with a tape: recording (`replay` None) or replaying `replay`. Returns what `body`
/// returned and the choices the run used.
pub fn with_tape<R>(replay: Option<Choices>, body: impl FnOnce() -> R) -> (R, Choices) {
    TAPE.with(|tape| {
        let mut tape = tape.borrow_mut();
        assert!(tape.is_none(), "tapes do not nest");
        *tape = Some(Tape {
            replay,
            cursors: BTreeMap::new(),
            used: Choices::new(),
        });
    });
    let guard = Guard;
    let result = body();
    let used = TAPE.with(|tape| {
        tape.borrow_mut()
            .take()
            .map(|tape| tape.used)
            .unwrap_or_default()
    });
    drop(guard);
    (result, used)
}

/// One thing a node's host was given by its scheduler, or a trace line written, in run order: the
/// run's schedule, which `shrink::script` turns into delivery, tick and sync verbs. Recorded only
/// inside `with_schedule` (the shrinker's final replay); a run outside it records nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The next trace line was written (the k-th `Line` is trace line k).
    Line,
    /// Node `to` took `message` from node `from`.
    Message {
        from: NodeId,
        to: NodeId,
        message: Message,
    },
    /// Node `to` took a client's request.
    Request {
        client: ClientId,
        to: NodeId,
        request: Request,
    },
    /// Node `node` ticked; `campaigned` when its term rose, `sent` when it put packets out
    /// (or held one back for a sync, which releases it).
    Tick {
        node: NodeId,
        campaigned: bool,
        sent: bool,
    },
    /// Node `node`'s disk completed a sync.
    Synced { node: NodeId },
    /// Client `client` gave up on its request in flight (its timeout fired; the outcome is
    /// unknown to it): the driver's `timeout` verb.
    TimedOut { client: ClientId },
}

thread_local! {
    static SCHEDULE: RefCell<Option<Vec<Step>>> = const { RefCell::new(None) };
}

/// True while a schedule is being recorded on this thread (the host's hooks check it first).
pub fn noting() -> bool {
    SCHEDULE.with(|schedule| schedule.borrow().is_some())
}

/// Appends a step to the schedule being recorded, if any.
pub fn note(step: impl FnOnce() -> Step) {
    SCHEDULE.with(|schedule| {
        if let Some(steps) = schedule.borrow_mut().as_mut() {
            steps.push(step());
        }
    });
}

/// Clears the thread's schedule even when `body` panics.
struct ScheduleGuard;

impl Drop for ScheduleGuard {
    fn drop(&mut self) {
        SCHEDULE.with(|schedule| *schedule.borrow_mut() = None);
    }
}

/// Runs `body` recording its schedule. Returns what `body` returned and the steps.
pub fn with_schedule<R>(body: impl FnOnce() -> R) -> (R, Vec<Step>) {
    SCHEDULE.with(|schedule| {
        let mut schedule = schedule.borrow_mut();
        assert!(schedule.is_none(), "schedules do not nest");
        *schedule = Some(Vec::new());
    });
    let guard = ScheduleGuard;
    let result = body();
    let steps = SCHEDULE.with(|schedule| schedule.borrow_mut().take().unwrap_or_default());
    drop(guard);
    (result, steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    /// Recording changes no draw; replaying the recording gives the same draws; a replay whose
    /// recording ran out or no longer fits answers the simplest value.
    #[test]
    fn record_and_replay() {
        let draws = |stream: &mut Stream| -> Vec<u64> {
            vec![
                stream.range(10, 20),
                u64::from(stream.chance(500_000)),
                stream.index(7) as u64,
                stream.next_u64(),
                u64::from(stream.chance(1_000_000)),
                stream.range(3, 9),
            ]
        };
        let plain = draws(&mut Stream::new(5, Component::Network));
        let (recorded, tape) = with_tape(None, || draws(&mut Stream::new(5, Component::Network)));
        assert_eq!(plain, recorded);
        assert_eq!(
            tape[&Component::Network].len(),
            5,
            "a certain chance is no choice"
        );
        let (replayed, again) = with_tape(Some(tape.clone()), || {
            draws(&mut Stream::new(99, Component::Network))
        });
        assert_eq!(replayed, plain);
        assert_eq!(again, tape);
        let mut short = tape.clone();
        short.get_mut(&Component::Network).unwrap().truncate(1);
        let (cut, _) = with_tape(Some(short), || {
            draws(&mut Stream::new(5, Component::Network))
        });
        assert_eq!(cut, vec![plain[0], 0, 0, 0, 1, 3]);
        assert!(!active());
    }
}
