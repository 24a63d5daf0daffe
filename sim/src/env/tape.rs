//! The choice tape: every draw of a run's streams, recorded or replayed (for `shrink`).
//!
//! A world made with a tape (`world::Setup::tape`) sends every draw of its streams through it.
//! Each draw is stored as a number where 0 is the simplest value of its kind: `range` as the offset
//! above its low end (the shortest delay), `chance` as 0/1 (0 = it did not happen: no drop, no
//! fault), `index` as the index (0 = the first), `next_u64` as itself. Recording keeps what the
//! generator drew; replaying hands back the recorded value at the same position of the same
//! component when it still fits the bound asked for, else 0, and a component whose recording ran
//! out answers 0 from then on ("nothing more happens"). Either way the tape keeps the values
//! actually used, so a replay yields its own normalized recording. Components stay separate:
//! editing the network's choices never shifts the fault plan or the workload.
//!
//! A world may also record its schedule (`world::Setup::schedule`): what each node's host was
//! given (messages, requests, ticks, syncs) interleaved with the trace lines, for the scenario
//! translation. Both are explicit parts of the world that asks for them, shared by its streams,
//! hosts and recorder: nothing on the thread changes or watches a run.

use crate::env::network::{Address, Payload};
use crate::env::rng::Component;
use felix_core::api::{ClientId, Request};
use felix_core::broker::Message;
use felix_core::NodeId;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The choices of one run, per component, in draw order.
pub type Choices = BTreeMap<Component, Vec<u64>>;

#[derive(Debug)]
struct Draws {
    replay: Option<Choices>,
    cursors: BTreeMap<Component, usize>,
    used: Choices,
}

/// A recording (or a replay) of one run's draws, shared by the streams of its world.
#[derive(Clone, Debug)]
pub struct Tape(Rc<RefCell<Draws>>);

impl Tape {
    /// A tape that records (`replay` None) or replays `replay`.
    pub fn new(replay: Option<Choices>) -> Tape {
        Tape(Rc::new(RefCell::new(Draws {
            replay,
            cursors: BTreeMap::new(),
            used: Choices::new(),
        })))
    }

    /// One draw of `component` with values in `0..=max`: `fresh` draws it from the generator
    /// when recording.
    pub fn draw(&self, component: Component, max: u64, fresh: impl FnOnce() -> u64) -> u64 {
        let mut draws = self.0.borrow_mut();
        let draws = &mut *draws;
        let value = match &draws.replay {
            None => fresh(),
            Some(replay) => {
                let cursor = draws.cursors.entry(component).or_insert(0);
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
        draws.used.entry(component).or_default().push(value);
        value
    }

    /// The choices the run used so far.
    pub fn used(&self) -> Choices {
        self.0.borrow().used.clone()
    }
}

/// One thing a node's host was given by its scheduler, or a trace line written, in run order: the
/// run's schedule, which `shrink::script` turns into delivery, tick and sync verbs. Recorded only
/// in a world given a `Schedule` (the shrinker's final replay); any other run records nothing.
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
    /// A packet was lost: the network lost it as it was sent (a drop drawn, or a blocked link),
    /// or it reached a node that was down. The driver's network would keep it queued; the
    /// translation drops it (`drop`).
    Dropped {
        from: Address,
        to: Address,
        payload: Payload,
    },
}

/// The schedule of one run being recorded, shared by its hosts, its recorder and its clients.
#[derive(Clone, Debug, Default)]
pub struct Schedule(Rc<RefCell<Vec<Step>>>);

impl Schedule {
    /// Appends a step.
    pub fn note(&self, step: Step) {
        self.0.borrow_mut().push(step);
    }

    /// The steps recorded so far.
    pub fn steps(&self) -> Vec<Step> {
        self.0.borrow().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::rng::Stream;

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
        let taped = |seed: u64, replay: Option<Choices>| {
            let tape = Tape::new(replay);
            let drawn = draws(&mut Stream::taped(seed, Component::Network, Some(&tape)));
            (drawn, tape.used())
        };
        let (recorded, tape) = taped(5, None);
        assert_eq!(plain, recorded);
        assert_eq!(
            tape[&Component::Network].len(),
            5,
            "a certain chance is no choice"
        );
        let (replayed, again) = taped(99, Some(tape.clone()));
        assert_eq!(replayed, plain);
        assert_eq!(again, tape);
        let mut short = tape.clone();
        short.get_mut(&Component::Network).unwrap().truncate(1);
        let (cut, _) = taped(5, Some(short));
        assert_eq!(cut, vec![plain[0], 0, 0, 0, 1, 3]);
    }
}
