//! The FelixHeadTrim state machine. FIRST DRAFT, written from the seed before the TLA+ spec
//! landed; it is replaced by a one-to-one translation of docs/formal/FelixHeadTrim.tla.

use std::fmt;

use stateright::{Model, Property};

use crate::config::Config;
use crate::properties;

/// Kind of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A holder's write.
    Write,
    /// A trim asking for a floor.
    Trim,
}

/// One record of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// Write or trim.
    pub kind: Kind,
    /// The epoch of the holder that wrote it.
    pub holder: u8,
    /// For a trim, the floor it asks for.
    pub floor: u8,
}

/// The state: one variable per TLA+ variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// The log, offsets from 1; records below `start` are deleted but kept here as history.
    pub log: Vec<Record>,
    /// The floor.
    pub floor: u8,
    /// The first retained offset.
    pub start: u8,
    /// The current lease epoch.
    pub lease: u8,
    /// Per holder, the last offset it knows of (its tail is `expected + 1`).
    pub expected: Vec<u8>,
    /// Per holder, whether it retired.
    pub retired: Vec<bool>,
    /// Writes made.
    pub writes: u8,
    /// Trims made.
    pub trims: u8,
}

impl State {
    /// Every variable rendered in TLA+ notation, in the spec's order.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        let log: Vec<String> = self
            .log
            .iter()
            .map(|r| match r.kind {
                Kind::Write => format!("[k |-> \"w\", h |-> {}]", r.holder),
                Kind::Trim => format!("[k |-> \"t\", h |-> {}, f |-> {}]", r.holder, r.floor),
            })
            .collect();
        vec![
            ("log", format!("<<{}>>", log.join(", "))),
            ("floor", self.floor.to_string()),
            ("start", self.start.to_string()),
            ("lease", self.lease.to_string()),
            ("expected", tuple(&self.expected)),
            ("retired", tuple(&self.retired)),
            ("writes", self.writes.to_string()),
            ("trims", self.trims.to_string()),
        ]
    }

    fn tag(&self, model: &FelixHeadTrim) -> u8 {
        if model.config.switches.untagged || model.config.switches.hidden_trims {
            return 0;
        }
        self.log
            .iter()
            .enumerate()
            .filter(|(i, r)| {
                *i + 1 >= self.start as usize && r.kind == Kind::Trim && r.floor == self.floor
            })
            .map(|(_, r)| r.holder)
            .next_back()
            .unwrap_or(0)
    }
}

fn tuple<T: fmt::Display>(values: &[T]) -> String {
    let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("<<{}>>", items.join(", "))
}

/// The actions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// The lease moves to the next epoch.
    MoveLease,
    /// Holder reads.
    Read(u8),
    /// Holder writes.
    Write(u8),
    /// Holder trims to a floor.
    Trim(u8, u8),
    /// Delete records below the floor.
    Compact,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::MoveLease => write!(f, "MoveLease"),
            Action::Read(h) => write!(f, "Read({h})"),
            Action::Write(h) => write!(f, "Write({h})"),
            Action::Trim(h, fl) => write!(f, "Trim({h}, {fl})"),
            Action::Compact => write!(f, "Compact"),
        }
    }
}

/// The model of one configuration.
#[derive(Clone, Debug)]
pub struct FelixHeadTrim {
    /// The configuration.
    pub config: &'static Config,
}

impl FelixHeadTrim {
    /// The model of a configuration.
    pub fn new(config: &'static Config) -> Self {
        FelixHeadTrim { config }
    }
}

impl Model for FelixHeadTrim {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let holders = self.config.bounds.holders as usize;
        vec![State {
            log: Vec::new(),
            floor: 1,
            start: 1,
            lease: 1,
            expected: vec![0; holders],
            retired: vec![false; holders],
            writes: 0,
            trims: 0,
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        if state.lease < self.config.bounds.holders {
            actions.push(Action::MoveLease);
        }
        for h in 1..=self.config.bounds.holders {
            if state.retired[h as usize - 1] || h > state.lease {
                continue;
            }
            actions.push(Action::Read(h));
            if state.writes < self.config.bounds.writes_max {
                actions.push(Action::Write(h));
            }
            if state.trims < self.config.bounds.trims_max {
                for f in 1..=(state.log.len() as u8 + 1) {
                    actions.push(Action::Trim(h, f));
                }
            }
        }
        actions.push(Action::Compact);
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        let mut n = s.clone();
        let len = s.log.len() as u8;
        match action {
            Action::MoveLease => n.lease += 1,
            Action::Read(h) => {
                let i = h as usize - 1;
                let from = if self.config.switches.read_from_earliest {
                    s.floor
                } else {
                    s.expected[i] + 1
                };
                let too_old = from < s.floor;
                let start = from.max(s.floor);
                let newer =
                    s.log.iter().enumerate().any(|(j, r)| {
                        j + 1 >= start as usize && r.holder > h && r.kind == Kind::Write
                    });
                if (too_old && s.tag(self) > h) || newer {
                    n.retired[i] = true;
                } else {
                    n.expected[i] = len;
                }
            }
            Action::Write(h) => {
                let i = h as usize - 1;
                n.writes += 1;
                if s.expected[i] == len {
                    n.log.push(Record {
                        kind: Kind::Write,
                        holder: h,
                        floor: 0,
                    });
                    n.expected[i] = len + 1;
                } else if self.config.switches.tail_from_refusal {
                    n.expected[i] = len;
                }
            }
            Action::Trim(h, f) => {
                let i = h as usize - 1;
                n.trims += 1;
                let noop = f <= s.floor;
                if noop && self.config.switches.noop_skip {
                    n.expected[i] = len;
                } else if s.expected[i] == len {
                    if noop {
                        n.expected[i] = len;
                    } else {
                        n.log.push(Record {
                            kind: Kind::Trim,
                            holder: h,
                            floor: f,
                        });
                        n.expected[i] = len + 1;
                        n.floor = f;
                    }
                }
            }
            Action::Compact => {
                let limit = if self.config.switches.compact_active {
                    len + 1
                } else {
                    s.floor
                };
                if limit <= s.start {
                    return None;
                }
                n.start = limit;
            }
        }
        if n == *s {
            return None;
        }
        Some(n)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::all()
    }
}
