//! The ParosTrimJump state machine: a one-to-one translation of `docs/formal/ParosTrimJump.tla`.
//!
//! Same variables (fields of `State`, in the spec's order), same actions with the same parameters
//! and guards (variants of `Action`, in the order of the spec's `Next`), same initial state, so a
//! trace here reads as a trace there and TLC's distinct-state count equals Stateright's
//! unique-state count. Each helper below carries the name of the spec operator it translates.
//!
//! Representation: nodes and owners are numbered from 1 as in the spec, stored at index
//! `number - 1`. A log is the records a node holds from `start`, in a fixed array; slots past its
//! length are always zero, and `acked` (a set in the spec) is a sorted array of packed pairs, so
//! two states are equal exactly when the spec's states are.

use std::fmt;

use stateright::{Model, Property};

use super::config::ParosConfig;
use super::properties;
use crate::quorum;
use crate::spec::{booleans, function, Condition, Rendered, Spec};
use felix_names::TwinName::{AckBeforeSync, FloorPastCommit, JumpResetsTerm, UnfencedTruncate};

/// Nodes a state can hold (the spec's `NumVoters + NumReplicas` is at most this).
pub const NODES_MAX: usize = 4;
pub use super::record::{Acked, Kind, Log, Record, ACKED_MAX};
pub use crate::log::LOG_MAX;

/// The spec's variables, in its order (`vars`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// `term[n]`: n's current term.
    pub term: [u8; NODES_MAX],
    /// `vote[n]`: the voter n voted for in `term[n]`, 0 if none.
    pub vote: [u8; NODES_MAX],
    /// `leader[n]`: n believes it leads `term[n]`.
    pub leader: [bool; NODES_MAX],
    /// `log[n]`: the records n holds, from slot `start[n]`.
    pub log: [Log; NODES_MAX],
    /// `start[n]`: the first slot n holds.
    pub start: [u8; NODES_MAX],
    /// `commit[n]`: n's committed index, which its walk has reached.
    pub commit: [u8; NODES_MAX],
    /// `writer[n]`: the writer token after n's walk.
    pub writer: [u8; NODES_MAX],
    /// `floor[n]`: n's floor (first_seq).
    pub floor: [u8; NODES_MAX],
    /// `sterm[n]`: the sealed term of slot `start[n] - 1`.
    pub sterm: [u8; NODES_MAX],
    /// `swriter[n]`: the sealed writer token.
    pub swriter: [u8; NODES_MAX],
    /// `sfloor[n]`: the sealed floor.
    pub sfloor: [u8; NODES_MAX],
    /// `high[n]`: the highest promise `(term, vote)` n made (history).
    pub high: [(u8, u8); NODES_MAX],
    /// `decided`: the highest up_to of a committed truncate whose fence was in force (history).
    pub decided: u8,
    /// `acked`: acknowledged writes at or above `decided` (history).
    pub acked: Acked,
    /// `writes`: writes sequenced so far.
    pub writes: u8,
    /// `truncates`: truncates sequenced so far.
    pub truncates: u8,
    /// `setleaders`: SetLeader commands sequenced so far.
    pub setleaders: u8,
    /// `promotions`: elections so far.
    pub promotions: u8,
    /// `durable[n]`: the last slot of `log[n]` that is durable (`start[n] - 1`: none).
    pub durable: [u8; NODES_MAX],
    /// `crashes`: crash-restarts so far.
    pub crashes: u8,
}

/// A node number (1-based, as in the spec).
pub type Node = u8;
/// An owner number, which is also its fence (1-based).
pub type Owner = u8;

fn index(number: u8) -> usize {
    assert!(number >= 1, "nodes and owners are numbered from 1");
    usize::from(number) - 1
}

/// `GoesBack(p, q)`: promise q is behind promise p.
pub fn goes_back(p: (u8, u8), q: (u8, u8)) -> bool {
    q.0 < p.0 || (q.0 == p.0 && p.1 != 0 && q.1 != p.1)
}

/// The state of a walk: `[w, f, d, a, i, ack]` in the spec's `WalkStep`.
#[derive(Clone, Copy, Debug)]
struct Fold {
    w: u8,
    f: u8,
    d: u8,
    a: Acked,
    i: u8,
    ack: bool,
}

impl Fold {
    /// Node n's walk from its commit on: its writer and floor, the decided floor `d` so far and
    /// the acknowledged writes; `ack` for the leader's walk (the one that acknowledges).
    fn from_commit(state: &State, n: Node, d: u8, ack: bool) -> Fold {
        Fold {
            w: state.writer[index(n)],
            f: state.floor[index(n)],
            d,
            a: state.acked,
            i: state.commit[index(n)] + 1,
            ack,
        }
    }
}

impl State {
    /// `LastIndex(n)`.
    pub fn last_index(&self, n: Node) -> u8 {
        self.start[index(n)] - 1 + self.log[index(n)].len()
    }

    /// Whether n holds slot i.
    pub fn holds(&self, n: Node, i: u8) -> bool {
        self.start[index(n)] <= i && i <= self.last_index(n)
    }

    /// `Rec(n, i)`.
    pub fn rec(&self, n: Node, i: u8) -> Record {
        self.log[index(n)].at(i - self.start[index(n)] + 1)
    }

    /// `Known(n, i)`.
    fn known(&self, n: Node, i: u8) -> bool {
        self.start[index(n)] - 1 <= i && i <= self.last_index(n)
    }

    /// `TermAt(n, i)`.
    pub fn term_at(&self, n: Node, i: u8) -> u8 {
        if i == self.start[index(n)] - 1 {
            self.sterm[index(n)]
        } else {
            self.rec(n, i).t
        }
    }

    /// `LastTerm(n)`.
    fn last_term(&self, n: Node) -> u8 {
        self.term_at(n, self.last_index(n))
    }

    /// `UpToDate(b, q)`.
    fn up_to_date(&self, b: Node, q: Node) -> bool {
        self.last_term(b) > self.last_term(q)
            || (self.last_term(b) == self.last_term(q) && self.last_index(b) >= self.last_index(q))
    }

    /// `Matches(l, f)`, in increasing order (`max_len` is `MaxLen`).
    fn matches(&self, l: Node, f: Node, max_len: u8) -> impl Iterator<Item = u8> + '_ {
        (0..=max_len).filter(move |&m| {
            self.known(l, m) && self.known(f, m) && self.term_at(l, m) == self.term_at(f, m)
        })
    }

    /// `CanReplicate(l, f)`.
    fn can_replicate(&self, l: Node, f: Node, max_len: u8) -> bool {
        let least = self.start[index(l)] - 1;
        self.matches(l, f, max_len).any(|m| m >= least)
    }

    /// `MatchLen(l, f)` (only when `CanReplicate(l, f)`).
    fn match_len(&self, l: Node, f: Node, max_len: u8) -> u8 {
        self.matches(l, f, max_len)
            .max()
            .unwrap_or_else(|| unreachable!("MatchLen is taken only where l and f agree"))
    }

    /// `HighAfter(n, t, v)`.
    fn high_after(&self, n: Node, t: u8, v: u8) -> (u8, u8) {
        let high = self.high[index(n)];
        if goes_back(high, (t, v)) {
            high
        } else {
            (t, v)
        }
    }

    /// `Confirmed(l)`.
    pub fn confirmed(&self, config: &ParosConfig, l: Node) -> bool {
        let voters = config.bounds.voters;
        self.leader[index(l)]
            && self.term_at(l, self.commit[index(l)]) == self.term[index(l)]
            && 2 * (1..=voters)
                .filter(|&q| self.term[index(q)] <= self.term[index(l)])
                .count()
                > usize::from(voters)
    }

    /// `ReadIndexOK(n)`.
    pub fn read_index_ok(&self, config: &ParosConfig, n: Node) -> bool {
        (1..=config.bounds.voters)
            .any(|l| self.confirmed(config, l) && self.commit[index(n)] >= self.commit[index(l)])
    }

    /// `ReadAnswer(n, from)`.
    pub fn read_answer(&self, config: &ParosConfig, n: Node, from: u8) -> ReadAnswer {
        if !self.read_index_ok(config, n) {
            ReadAnswer::NotReady
        } else if from < self.floor[index(n)] {
            ReadAnswer::CursorTooOld
        } else if from < self.start[index(n)] {
            ReadAnswer::NotHeld
        } else {
            ReadAnswer::Served
        }
    }

    /// Every variable rendered as TLC prints it, in the spec's order.
    pub fn variables(&self, config: &ParosConfig) -> Vec<(&'static str, Rendered)> {
        let nodes = usize::from(config.bounds.nodes());
        let scalar = |value: u8| Rendered::Scalar(value.to_string());
        vec![
            ("term", function(&self.term[..nodes])),
            ("vote", function(&self.vote[..nodes])),
            ("leader", booleans(&self.leader[..nodes])),
            ("log", function(&self.log[..nodes])),
            ("start", function(&self.start[..nodes])),
            ("commit", function(&self.commit[..nodes])),
            ("writer", function(&self.writer[..nodes])),
            ("floor", function(&self.floor[..nodes])),
            ("sterm", function(&self.sterm[..nodes])),
            ("swriter", function(&self.swriter[..nodes])),
            ("sfloor", function(&self.sfloor[..nodes])),
            (
                "high",
                Rendered::Function(
                    self.high[..nodes]
                        .iter()
                        .map(|(t, v)| format!("<<{t}, {v}>>"))
                        .collect(),
                ),
            ),
            ("decided", scalar(self.decided)),
            ("acked", Rendered::Scalar(self.acked.to_string())),
            ("writes", scalar(self.writes)),
            ("truncates", scalar(self.truncates)),
            ("setleaders", scalar(self.setleaders)),
            ("promotions", scalar(self.promotions)),
            ("durable", function(&self.durable[..nodes])),
            ("crashes", scalar(self.crashes)),
        ]
    }
}

/// What a node answers a read (`ReadAnswer` in the spec).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAnswer {
    /// No read index yet: refused, retriably.
    NotReady,
    /// Below the floor: `CursorTooOld`.
    CursorTooOld,
    /// At or above the floor but below the first held slot: `NotHeld`, ask another node.
    NotHeld,
    /// Served from the node's log.
    Served,
}

/// The spec's actions with their parameters, in the order of its `Next`. An action's kind, its
/// name without parameters, is its variant's name (`<&'static str>::from(action)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, strum::IntoStaticStr)]
pub enum Action {
    /// `Promote(b, Q)`; `Q` as a bit set (bit `q - 1` for voter q).
    Promote(Node, u8),
    /// `Write(o, l)`.
    Write(Owner, Node),
    /// `Truncate(o, l)`.
    Truncate(Owner, Node),
    /// `SetLeader(o, l)`.
    SetLeader(Owner, Node),
    /// `Replicate(l, f)`.
    Replicate(Node, Node),
    /// `TrimmedTo(l, f)`.
    TrimmedTo(Node, Node),
    /// `StepDown(l, f)`.
    StepDown(Node, Node),
    /// `Compact(n)`.
    Compact(Node),
    /// `Crash(n)`.
    Crash(Node),
}

/// `Kind(parameters)`, as the spec writes an action.
impl fmt::Display for Action {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.into())?;
        match *self {
            Action::Promote(b, q) => write!(formatter, "({b}, {})", quorum::set(q)),
            Action::Write(x, y)
            | Action::Truncate(x, y)
            | Action::SetLeader(x, y)
            | Action::Replicate(x, y)
            | Action::TrimmedTo(x, y)
            | Action::StepDown(x, y) => write!(formatter, "({x}, {y})"),
            Action::Compact(n) | Action::Crash(n) => write!(formatter, "({n})"),
        }
    }
}

/// The model of one configuration.
#[derive(Clone, Debug)]
pub struct ParosTrimJump {
    /// The configuration: its constants, and the twin it is, if any.
    pub config: &'static ParosConfig,
}

impl ParosTrimJump {
    /// The model of a configuration.
    pub fn new(config: &'static ParosConfig) -> Self {
        let bounds = &config.bounds;
        assert!(bounds.voters >= 1);
        assert!(usize::from(bounds.nodes()) <= NODES_MAX);
        assert!(bounds.owners >= 1 && bounds.owners < 8);
        assert!(usize::from(bounds.max_len()) < LOG_MAX);
        assert!(usize::from(bounds.max_writes) <= ACKED_MAX);
        assert!(1 + bounds.max_promotions < 16);
        ParosTrimJump { config }
    }

    /// `MaxLen`.
    fn max_len(&self) -> u8 {
        self.config.bounds.max_len()
    }

    /// The voters of a bit set.
    fn members(&self, q: u8) -> impl Iterator<Item = Node> {
        quorum::members(q, self.config.bounds.voters)
    }

    /// `AcceptsTruncate(w, o)`.
    fn accepts_truncate(&self, w: u8, o: u8) -> bool {
        self.config.is_twin(UnfencedTruncate) || o == w
    }

    /// `WalkStep(st, r)`.
    fn walk_step(&self, st: &mut Fold, r: Record) {
        let w = st.w;
        if r.k == Kind::SetLeader && r.o == w + 1 {
            st.w = r.o;
        }
        if r.k == Kind::Truncate
            && self.accepts_truncate(w, r.o)
            && !self.config.is_twin(FloorPastCommit)
        {
            st.f = st.f.max(r.u);
        }
        if r.k == Kind::Truncate && r.o == w {
            st.d = st.d.max(r.u);
        }
        if st.ack && r.k == Kind::Write && r.o == w {
            st.a.insert(st.i, r);
        }
        st.i += 1;
    }

    /// `Walk(st, Slots(lg, s, i, j))`: folds the records of `lg` (starting at slot `s`) at slots
    /// `i..=j`.
    fn walk(&self, st: &mut Fold, lg: &Log, s: u8, i: u8, j: u8) {
        for slot in i..=j {
            self.walk_step(st, lg.at(slot - s + 1));
        }
    }

    /// `CommitIn(lg, dur, l)`, with `Counts(lg, dur, q, x, t)`: a copy counts once it is durable
    /// (AckBeforeSync: durable or not).
    fn commit_in(
        &self,
        state: &State,
        lg: &[Log; NODES_MAX],
        dur: &[u8; NODES_MAX],
        l: Node,
    ) -> u8 {
        let voters = self.config.bounds.voters;
        let start_l = state.start[index(l)];
        let term_l = state.term[index(l)];
        let last = start_l - 1 + lg[index(l)].len();
        let any_copy = self.config.is_twin(AckBeforeSync);
        let holds = |q: Node, x: u8| {
            let s = state.start[index(q)];
            s <= x
                && x - s < lg[index(q)].len()
                && lg[index(q)].at(x - s + 1).t == term_l
                && (any_copy || x <= dur[index(q)])
        };
        ((state.commit[index(l)] + 1)..=last)
            .rev()
            .find(|&x| {
                lg[index(l)].at(x - start_l + 1).t == term_l
                    && 2 * (1..=voters).filter(|&q| holds(q, x)).count() > usize::from(voters)
            })
            .unwrap_or(state.commit[index(l)])
    }

    /// Whether `action`'s guard holds in `state`.
    pub fn enabled(&self, state: &State, action: Action) -> bool {
        let bounds = &self.config.bounds;
        let max_len = self.max_len();
        match action {
            Action::Promote(b, q) => {
                state.promotions < bounds.max_promotions
                    && !state.leader[index(b)]
                    && quorum::elects(q, b, bounds.voters)
                    && self.members(q).all(|m| state.up_to_date(b, m))
            }
            Action::Write(_, l) => state.writes < bounds.max_writes && state.leader[index(l)],
            Action::Truncate(_, l) => {
                state.truncates < bounds.max_truncates && state.leader[index(l)]
            }
            Action::SetLeader(o, l) => {
                o >= 2 && state.setleaders < bounds.max_setleaders && state.leader[index(l)]
            }
            Action::Replicate(l, f) => {
                state.leader[index(l)]
                    && f != l
                    && state.term[index(f)] <= state.term[index(l)]
                    && state.can_replicate(l, f, max_len)
            }
            Action::TrimmedTo(l, f) => {
                let point = state.start[index(l)];
                state.leader[index(l)]
                    && f != l
                    && !state.leader[index(f)]
                    && state.term[index(f)] <= state.term[index(l)]
                    && !state.can_replicate(l, f, max_len)
                    && point > state.floor[index(f)]
                    && point > state.start[index(f)]
            }
            Action::StepDown(l, f) => {
                state.leader[index(l)] && state.term[index(f)] > state.term[index(l)]
            }
            Action::Compact(n) => {
                let s = state.floor[index(n)].min(state.commit[index(n)] + 1);
                state.start[index(n)] < s
            }
            Action::Crash(n) => {
                state.crashes < bounds.max_crashes
                    && (state.leader[index(n)] || state.durable[index(n)] < state.last_index(n))
            }
        }
    }

    /// `Replicate(l, f)`: f persists what it takes before it answers (AckBeforeSync: a follower
    /// of l's term answers first, and the record it takes is not yet durable).
    fn replicate(&self, state: &State, l: Node, f: Node) -> State {
        let config = self.config;
        let mut next = state.clone();
        let m = state.match_len(l, f, self.max_len());
        let sent = m < state.last_index(l);
        let mut new_f = state.log[index(f)];
        let mut received = None;
        if sent {
            let r = state.rec(l, m + 1);
            new_f.keep_first(m + 1 - state.start[index(f)]);
            new_f.append(r);
            received = Some(r);
        }
        let matched = if sent { m + 1 } else { m };
        let fc = state.commit[index(f)].max(state.commit[index(l)].min(matched));
        let mut fw = Fold::from_commit(state, f, state.decided, false);
        self.walk(
            &mut fw,
            &new_f,
            state.start[index(f)],
            state.commit[index(f)] + 1,
            fc,
        );
        let mut lg = state.log;
        lg[index(f)] = new_f;
        let same_term = state.term[index(f)] == state.term[index(l)];
        let durable_f = if config.is_twin(AckBeforeSync) && sent && same_term {
            m
        } else {
            state.start[index(f)] - 1 + new_f.len()
        };
        let mut dur = state.durable;
        dur[index(f)] = durable_f;
        let lc = self.commit_in(state, &lg, &dur, l);
        let mut lw = Fold::from_commit(state, l, fw.d, true);
        self.walk(
            &mut lw,
            &state.log[index(l)],
            state.start[index(l)],
            state.commit[index(l)] + 1,
            lc,
        );
        let f_floor = match received {
            Some(r)
                if config.is_twin(FloorPastCommit)
                    && r.k == Kind::Truncate
                    && self.accepts_truncate(state.writer[index(f)], r.o) =>
            {
                fw.f.max(r.u)
            }
            _ => fw.f,
        };
        let newer = state.term[index(f)] < state.term[index(l)];
        let f_vote = if newer { 0 } else { state.vote[index(f)] };
        next.log = lg;
        next.commit[index(f)] = fc;
        next.commit[index(l)] = lc;
        next.writer[index(f)] = fw.w;
        next.writer[index(l)] = lw.w;
        next.floor[index(f)] = f_floor;
        next.floor[index(l)] = lw.f;
        next.decided = lw.d;
        next.acked = lw.a.judged(lw.d);
        next.term[index(f)] = state.term[index(l)];
        next.vote[index(f)] = f_vote;
        if newer {
            next.leader[index(f)] = false;
        }
        next.high[index(f)] = state.high_after(f, state.term[index(l)], f_vote);
        next.durable = dur;
        next
    }

    /// `Promote(b, q)`, into `next` (a copy of `state`): the voters of `q` take the next term
    /// with b as its leader, and b appends the term's noop.
    fn promote(&self, state: &State, next: &mut State, b: Node, q: u8) {
        let new_term = quorum::next_term(q, self.config.bounds.voters, &state.term);
        for m in self.members(q) {
            next.term[index(m)] = new_term;
            next.vote[index(m)] = b;
            next.leader[index(m)] = m == b;
            next.high[index(m)] = state.high_after(m, new_term, b);
        }
        next.log[index(b)].append(Record {
            k: Kind::Noop,
            o: 0,
            t: new_term,
            u: 0,
        });
        for m in self.members(q) {
            next.durable[index(m)] = next.last_index(m);
        }
        next.promotions = state.promotions + 1;
    }

    /// `TrimmedTo(l, f)`, into `next` (a copy of `state`): f jumps to l's first held slot and
    /// takes l's sealed base (its term, writer and floor), keeping its own term and vote (with
    /// `jump_keeps_term` off, the JumpResetsTerm twin, it takes the sealed term and no vote).
    fn trimmed_to(&self, state: &State, next: &mut State, l: Node, f: Node) {
        let point = state.start[index(l)];
        let (new_term, new_vote) = if self.config.is_twin(JumpResetsTerm) {
            (state.sterm[index(l)], 0)
        } else {
            (state.term[index(f)], state.vote[index(f)])
        };
        next.log[index(f)] = Log::EMPTY;
        next.start[index(f)] = point;
        next.commit[index(f)] = point - 1;
        next.writer[index(f)] = state.swriter[index(l)];
        next.floor[index(f)] = state.floor[index(f)].max(state.sfloor[index(l)]);
        next.sterm[index(f)] = state.sterm[index(l)];
        next.swriter[index(f)] = state.swriter[index(l)];
        next.sfloor[index(f)] = state.sfloor[index(l)];
        next.term[index(f)] = new_term;
        next.vote[index(f)] = new_vote;
        next.high[index(f)] = state.high_after(f, new_term, new_vote);
        next.durable[index(f)] = point - 1;
    }

    /// `Compact(n)`, into `next` (a copy of `state`): n deletes every slot below
    /// `min(floor, commit + 1)`, sealing what the walk of the deleted slots folds.
    fn compact(&self, state: &State, next: &mut State, n: Node) {
        let start = state.start[index(n)];
        let s = state.floor[index(n)].min(state.commit[index(n)] + 1);
        let mut st = Fold {
            w: state.swriter[index(n)],
            f: state.sfloor[index(n)],
            d: 1,
            a: Acked::EMPTY,
            i: start,
            ack: false,
        };
        self.walk(&mut st, &state.log[index(n)], start, start, s - 1);
        next.log[index(n)].drop_first(s - start);
        next.start[index(n)] = s;
        next.sterm[index(n)] = state.rec(n, s - 1).t;
        next.swriter[index(n)] = st.w;
        next.sfloor[index(n)] = st.f;
        next.durable[index(n)] = state.durable[index(n)].max(s - 1);
    }

    /// `Crash(n)`: n drops what is not durable; a leader restarts as a follower of its term.
    fn crash(&self, state: &State, n: Node) -> State {
        let mut next = state.clone();
        let durable = state.durable[index(n)];
        next.log[index(n)].keep_first(durable + 1 - state.start[index(n)]);
        next.leader[index(n)] = false;
        next.commit[index(n)] = state.commit[index(n)].min(durable);
        next.crashes = state.crashes + 1;
        next
    }

    /// The state after `action` (whose guard holds): the primed variables.
    fn apply(&self, state: &State, action: Action) -> State {
        let config = self.config;
        let mut next = state.clone();
        match action {
            Action::Promote(b, q) => self.promote(state, &mut next, b, q),
            Action::Write(o, l) => {
                let r = Record {
                    k: Kind::Write,
                    o,
                    t: state.term[index(l)],
                    u: 0,
                };
                next.log[index(l)].append(r);
                next.durable[index(l)] = state.last_index(l) + 1;
                next.writes = state.writes + 1;
            }
            Action::Truncate(o, l) => {
                let r = Record {
                    k: Kind::Truncate,
                    o,
                    t: state.term[index(l)],
                    u: state.last_index(l) + 1,
                };
                next.log[index(l)].append(r);
                if config.is_twin(FloorPastCommit)
                    && self.accepts_truncate(state.writer[index(l)], o)
                {
                    next.floor[index(l)] = state.floor[index(l)].max(r.u);
                }
                next.durable[index(l)] = state.last_index(l) + 1;
                next.truncates = state.truncates + 1;
            }
            Action::SetLeader(o, l) => {
                next.log[index(l)].append(Record {
                    k: Kind::SetLeader,
                    o,
                    t: state.term[index(l)],
                    u: 0,
                });
                next.durable[index(l)] = state.last_index(l) + 1;
                next.setleaders = state.setleaders + 1;
            }
            Action::Replicate(l, f) => next = self.replicate(state, l, f),
            Action::TrimmedTo(l, f) => self.trimmed_to(state, &mut next, l, f),
            Action::StepDown(l, f) => {
                next.term[index(l)] = state.term[index(f)];
                next.vote[index(l)] = 0;
                next.leader[index(l)] = false;
                next.high[index(l)] = state.high_after(l, state.term[index(f)], 0);
            }
            Action::Compact(n) => self.compact(state, &mut next, n),
            Action::Crash(n) => next = self.crash(state, n),
        }
        next
    }
}

impl Model for ParosTrimJump {
    type State = State;
    type Action = Action;

    /// `Init`: voter 1 leads term 1 with every voter's vote; owner 1 holds the writer token.
    fn init_states(&self) -> Vec<State> {
        let bounds = &self.config.bounds;
        let mut state = State {
            term: [0; NODES_MAX],
            vote: [0; NODES_MAX],
            leader: [false; NODES_MAX],
            log: [Log::EMPTY; NODES_MAX],
            start: [0; NODES_MAX],
            commit: [0; NODES_MAX],
            writer: [0; NODES_MAX],
            floor: [0; NODES_MAX],
            sterm: [0; NODES_MAX],
            swriter: [0; NODES_MAX],
            sfloor: [0; NODES_MAX],
            high: [(0, 0); NODES_MAX],
            decided: 1,
            acked: Acked::EMPTY,
            writes: 0,
            truncates: 0,
            setleaders: 0,
            promotions: 0,
            durable: [0; NODES_MAX],
            crashes: 0,
        };
        for n in 1..=bounds.nodes() {
            let i = index(n);
            let vote = if n <= bounds.voters { 1 } else { 0 };
            state.term[i] = 1;
            state.vote[i] = vote;
            state.leader[i] = n == 1;
            state.start[i] = 1;
            state.writer[i] = 1;
            state.floor[i] = 1;
            state.swriter[i] = 1;
            state.sfloor[i] = 1;
            state.high[i] = (1, vote);
        }
        vec![state]
    }

    /// `Next`: every action whose guard holds, in the order of the spec's disjunction, each
    /// parameter ranging over its set in increasing order.
    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        let bounds = &self.config.bounds;
        let voters = bounds.voters;
        let nodes = bounds.nodes();
        let mut push = |action: Action| {
            if self.enabled(state, action) {
                actions.push(action);
            }
        };
        for b in 1..=voters {
            for q in 1..(1u8 << voters) {
                push(Action::Promote(b, q));
            }
        }
        // An owner's command at a leader, then a message from a leader to a node, then a node's
        // own step: each kind over its whole range before the next kind.
        let appends: [fn(u8, u8) -> Action; 3] =
            [Action::Write, Action::Truncate, Action::SetLeader];
        for append in appends {
            for o in 1..=bounds.owners {
                for l in 1..=voters {
                    push(append(o, l));
                }
            }
        }
        let messages: [fn(u8, u8) -> Action; 3] =
            [Action::Replicate, Action::TrimmedTo, Action::StepDown];
        for message in messages {
            for l in 1..=voters {
                for f in 1..=nodes {
                    push(message(l, f));
                }
            }
        }
        let steps: [fn(u8) -> Action; 2] = [Action::Compact, Action::Crash];
        for step in steps {
            for n in 1..=nodes {
                push(step(n));
            }
        }
    }

    fn next_state(&self, state: &State, action: Action) -> Option<State> {
        if !self.enabled(state, action) {
            return None;
        }
        Some(self.apply(state, action))
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn properties(&self) -> Vec<Property<Self>> {
        Self::every_property()
    }
}

impl crate::spec::Spec for ParosTrimJump {
    type Bounds = super::config::ParosBounds;
    const LAYER: felix_names::Layer = felix_names::Layer::Paros;
    const MAIN_ALIAS: bool = false;
    const NO_SYMMETRY: Option<&'static str> = Some(
        "ParosTrimJump has no symmetry reduction (only FelixHeadTrim's brokers are searched up to \
         permutation)",
    );
    const NO_DIAGRAM: Option<&'static str> = Some(
        "no ParosTrimJump sequence diagram yet: the --html page draws FelixHeadTrim's brokers \
         and holders",
    );
    const ALWAYS: &'static [(felix_names::Invariant, Condition<Self>)] = &properties::ALWAYS;
    const SOMETIMES: &'static [(&'static str, Condition<Self>)] = &properties::COVERAGE;

    fn configs() -> &'static [ParosConfig] {
        &super::config::CONFIGS
    }

    fn model(config: &'static ParosConfig, symmetry: bool) -> Self {
        assert!(!symmetry, "ParosTrimJump has no symmetry reduction");
        ParosTrimJump::new(config)
    }

    fn variables(config: &ParosConfig, state: &State) -> Vec<(&'static str, Rendered)> {
        state.variables(config)
    }
}
