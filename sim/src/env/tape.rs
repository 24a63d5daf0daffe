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
    /// The draws made so far, every component's together.
    drawn: usize,
    /// With `Tape::marking`: what the run's prefixes drew (`Tape::cut_at`).
    marking: Option<Marking>,
}

/// The component of every draw in order, and a mark at the end of each event that grew the
/// history: enough to read off the run any cut after an event would have made.
#[derive(Debug, Default)]
struct Marking {
    order: Vec<Component>,
    marks: Vec<Mark>,
}

/// The end of an event that grew the history (`Tape::event_done`): the history's length and the
/// world's event count then, and the draws made so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub history: usize,
    pub events: u64,
    draws: usize,
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
            drawn: 0,
            marking: None,
        })))
    }

    /// `new`, also marking the end of every event that grew the history (`World` calls
    /// `event_done`), so that `cut_at` can read off what the same run cut after an event drew.
    pub fn marking(replay: Option<Choices>) -> Tape {
        let tape = Tape::new(replay);
        tape.0.borrow_mut().marking = Some(Marking::default());
        tape
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
        draws.drawn += 1;
        if let Some(marking) = &mut draws.marking {
            marking.order.push(component);
        }
        value
    }

    /// The choices the run used so far.
    pub fn used(&self) -> Choices {
        self.0.borrow().used.clone()
    }

    /// How many draws the run made so far, every component's together: the size of the recording
    /// a cut right now would leave (`World::cut`'s bound on draws).
    pub fn drawn(&self) -> usize {
        self.0.borrow().drawn
    }

    /// The world finished an event with `history` history events and `events` events so far: a
    /// marking tape marks it when the history grew since its last mark.
    pub fn event_done(&self, history: usize, events: u64) {
        let mut draws = self.0.borrow_mut();
        let Some(marking) = &mut draws.marking else {
            return;
        };
        if marking.marks.last().map_or(0, |mark| mark.history) < history {
            let draws = marking.order.len();
            marking.marks.push(Mark {
                history,
                events,
                draws,
            });
        }
    }

    /// What the same run cut right after history event `at` (`World::cut`: after the first event
    /// that leaves more than `at` history events) would have ended with: that event's mark and the
    /// choices drawn up to it. A run is the same, event for event, up to its cut, so this is that
    /// run's own recording. `None` without marks or when the history never grew past `at`.
    pub fn cut_at(&self, at: usize) -> Option<(Mark, Choices)> {
        let draws = self.0.borrow();
        let marking = draws.marking.as_ref()?;
        let first = (marking.marks).partition_point(|mark| mark.history <= at);
        let mark = *marking.marks.get(first)?;
        let mut counts: BTreeMap<Component, usize> = BTreeMap::new();
        for component in &marking.order[..mark.draws] {
            *counts.entry(*component).or_insert(0) += 1;
        }
        let choices = (counts.into_iter())
            .map(|(component, count)| (component, draws.used[&component][..count].to_vec()))
            .collect();
        Some((mark, choices))
    }
}

/// One thing a node's host was given by its scheduler, or a trace line written, in run order: the
/// run's schedule, which `shrink::schedule` turns into delivery, tick and sync verbs. Recorded only
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
