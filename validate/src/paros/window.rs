//! Windows: a few paros nodes' projected variables as one small ParosTrimJump `State`, terms,
//! floors and tokens renamed into its bounds, and one model action taken on it (see `super`).

use super::projection::ParosRecord;
use crate::renaming;
use crate::steps::{self, Abstraction, Failure, OUT, UNSEEN};
use felix_model::paros::config::{ParosBounds, ParosConfig};
use felix_model::paros::spec::{Action, Kind, Log, ParosTrimJump, Record, State};
use stateright::Model;

/// The configuration every window runs under: the design (every rule on), three voters, owners
/// up to 7 (the renamed tokens), and counters that never bind (a window takes one append).
/// `MaxLen` is 7: a window's slots are 0..=7.
pub static PAROS_WINDOW: ParosConfig = ParosConfig::passing(
    "ParosTrimJumpValidate",
    ParosBounds {
        voters: 3,
        replicas: 0,
        owners: 7,
        max_writes: 2,
        max_truncates: 2,
        max_setleaders: 2,
        max_promotions: 1,
        max_crashes: 0,
    },
);

/// The highest term a window holds (terms renamed into 1..=15).
pub(crate) const TERMS_LAST: u8 = 15;

/// The highest slot of a window (`MaxLen`).
pub(crate) const SLOTS: u64 = 7;

pub(crate) fn model() -> ParosTrimJump {
    ParosTrimJump::new(&PAROS_WINDOW)
}

/// Tokens renamed for a window: order kept, every fence's `new` the image of its `old` plus one,
/// distinct tokens distinct images, images in 1..=7.
pub(crate) struct Tokens {
    pub(crate) map: Vec<(u64, u8)>,
}

impl Tokens {
    pub(crate) fn new(values: &[u64], edges: &[(u64, u64)]) -> Option<Tokens> {
        let mut sorted: Vec<u64> = values
            .iter()
            .copied()
            .chain(edges.iter().flat_map(|&(old, new)| [old, new]))
            .collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut map: Vec<(u64, u8)> = Vec::with_capacity(sorted.len());
        let mut highest = 0u8;
        for value in sorted {
            let olds: Vec<u64> = edges
                .iter()
                .filter(|(_, new)| *new == value)
                .map(|(old, _)| *old)
                .collect();
            let from_old = olds.first().and_then(|old| {
                map.iter()
                    .find(|(token, _)| token == old)
                    .map(|(_, image)| image + 1)
            });
            if olds.iter().any(|old| *old != olds[0]) {
                return None;
            }
            let image = match from_old {
                Some(image) => image,
                None if highest == 0 => 1,
                None => highest + 2,
            };
            if image > 7 || map.iter().any(|(_, taken)| *taken == image) {
                return None;
            }
            highest = highest.max(image);
            map.push((value, image));
        }
        Some(Tokens { map })
    }

    pub(crate) fn to(&self, value: u64) -> u8 {
        self.map
            .iter()
            .find(|(token, _)| *token == value)
            .map(|(_, image)| *image)
            .unwrap_or_else(|| unreachable!("token {value} was not in the renamed set"))
    }

    pub(crate) fn back(&self, image: u8) -> Option<u64> {
        self.map
            .iter()
            .find(|(_, candidate)| *candidate == image)
            .map(|(token, _)| *token)
    }
}

/// One node of a window, already renamed.
#[derive(Clone, Debug)]
pub(crate) struct WindowNode {
    pub(crate) term: u8,
    pub(crate) leader: bool,
    pub(crate) records: Vec<Record>,
    pub(crate) start: u8,
    pub(crate) commit: u8,
    pub(crate) writer: u8,
    pub(crate) floor: u8,
    pub(crate) sterm: u8,
    pub(crate) swriter: u8,
    pub(crate) sfloor: u8,
}

impl WindowNode {
    pub(crate) fn absent(term: u8) -> WindowNode {
        WindowNode {
            term,
            leader: false,
            records: Vec::new(),
            start: 1,
            commit: 0,
            writer: 1,
            floor: 1,
            sterm: 0,
            swriter: 1,
            sfloor: 1,
        }
    }
}

/// The model state of a window: nodes 1..=3 (voters), every history variable at its initial
/// value. None when a node does not fit (`MaxLen`, commit outside the log).
pub(crate) fn window(nodes: [WindowNode; 3]) -> Option<State> {
    let mut state = model().init_states().remove(0);
    for (index, node) in nodes.into_iter().enumerate() {
        let last = u64::from(node.start) + node.records.len() as u64;
        if node.start == 0
            || last > SLOTS + 1
            || node.commit + 1 < node.start
            || u64::from(node.commit) + 1 > last
        {
            return None;
        }
        state.term[index] = node.term;
        state.vote[index] = 0;
        state.leader[index] = node.leader;
        state.log[index] = Log::from_records(&node.records);
        state.start[index] = node.start;
        state.commit[index] = node.commit;
        state.writer[index] = node.writer;
        state.floor[index] = node.floor;
        state.sterm[index] = node.sterm;
        state.swriter[index] = node.swriter;
        state.sfloor[index] = node.sfloor;
        state.high[index] = (node.term, 0);
        // Every record a node holds counts as durable: with every rule on a node answers only
        // for what it persisted, and a window takes no crash.
        state.durable[index] = (last - 1) as u8;
    }
    Some(state)
}

/// Node numbers in a window.
pub(crate) const N1: u8 = 1;
pub(crate) const N2: u8 = 2;

/// Runs one action on a window (`steps::take`).
pub(crate) fn take(state: &State, action: Action, label: &str) -> Result<State, Failure> {
    steps::take(
        &model(),
        state,
        action,
        label,
        "the ParosTrimJump model",
        "where node 1 or 2 is the stepping node and the others ghosts",
    )
}

/// The renamings of a window's records: terms (1..=15), floors (1..=63) and tokens.
pub(crate) type Names = renaming::Names<Tokens>;

impl Names {
    pub(crate) fn new(
        records: &[ParosRecord],
        terms: &[u64],
        floors: &[u64],
        tokens: &[u64],
    ) -> Result<Names, Failure> {
        if records.iter().any(|record| record.kind == Kind::Empty) {
            return Err(UNSEEN);
        }
        if records
            .iter()
            .any(|record| record.kind == Kind::Truncate && !record.fenced)
        {
            return Err(Failure::Abstract(Abstraction::Unfenced));
        }
        let values: Vec<u64> = records
            .iter()
            .filter(|record| record.kind == Kind::Truncate)
            .map(|record| record.token)
            .chain(tokens.iter().copied())
            .collect();
        let edges: Vec<(u64, u64)> = records
            .iter()
            .filter(|record| record.kind == Kind::SetLeader)
            .map(|record| (record.old, record.token))
            .collect();
        let tokens = Tokens::new(&values, &edges).ok_or(OUT)?;
        let (terms, floors) = (terms.iter().copied(), floors.iter().copied());
        Names::renamed(records, terms, TERMS_LAST, floors, tokens)
    }

    /// The tokens, renamed.
    pub(crate) fn tokens(&self) -> &Tokens {
        &self.more
    }

    pub(crate) fn record(&self, projected: &ParosRecord) -> Record {
        let (o, u) = match projected.kind {
            Kind::Truncate => (
                self.more.to(projected.token),
                self.floors.to(projected.up_to),
            ),
            Kind::SetLeader => (self.more.to(projected.token), 0),
            _ => (0, 0),
        };
        Record {
            k: projected.kind,
            o,
            t: self.terms.to(projected.term),
            u,
        }
    }

    pub(crate) fn records(&self, projected: &[ParosRecord]) -> Vec<Record> {
        projected.iter().map(|record| self.record(record)).collect()
    }

    pub(crate) fn token(&self, image: u8) -> u64 {
        self.more
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's tokens come from the window"))
    }
}
