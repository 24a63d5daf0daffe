//! The FelixHeadTrim state machine: a one-to-one translation of `docs/formal/FelixHeadTrim.tla`.
//!
//! Same variables (fields of `State`, in the spec's order), same actions with the same parameters
//! and guards (variants of `Action`, in the order of the spec's `Next`), same initial state, so a
//! trace here reads as a trace there and TLC's distinct-state count equals Stateright's
//! unique-state count. Each helper below carries the name of the spec operator it translates.
//!
//! Representation: brokers and holders are numbered from 1 as in the spec, stored at index
//! `number - 1`. A log is a fixed array of `LOG_MAX` slots and a length; slots past the length
//! are always `Record::EMPTY`, so two states are equal exactly when the spec's states are.

use std::fmt;

use stateright::{Model, Property};

use super::config::Config;
use super::properties;
use crate::quorum;
use crate::spec::{booleans, function, Condition, Rendered, Spec};
use felix_names::TwinName::{
    CompactActive, HiddenTrims, LocalReads, NoopSkip, ReadFromEarliest, TagAtFloor,
    TailFromRefusal, Untagged, VisibleTrims,
};

/// Brokers a state can hold (the spec's `NumBrokers` is at most this).
pub const BROKERS_MAX: usize = 3;
/// Holders a state can hold (the spec's `NumHolders` is at most this).
pub const HOLDERS_MAX: usize = 2;
pub use super::record::{Kind, Log, Record};
pub use crate::log::LOG_MAX;

/// The spec's variables, in its order (`vars`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// `term[b]`: broker b's current term (its promise).
    pub term: [u8; BROKERS_MAX],
    /// `leader[b]`: b believes it leads `term[b]` (a deposed leader still does).
    pub leader: [bool; BROKERS_MAX],
    /// `log[b]`: b's log, deleted records included (see `start`).
    pub log: [Log; BROKERS_MAX],
    /// `commit[b]`: b's committed index (a follower learns it from its leader).
    pub commit: [u8; BROKERS_MAX],
    /// `floor[b]`: b's floor, applied as b's committed walk reaches each trim.
    pub floor: [u8; BROKERS_MAX],
    /// `start[b]`: first offset b still holds.
    pub start: [u8; BROKERS_MAX],
    /// `lease`: the epoch (holder) the lease service granted last.
    pub lease: u8,
    /// `expected[h]`: the last offset holder h believes is in the stream.
    pub expected: [u8; HOLDERS_MAX],
    /// `retired[h]`: h learnt that a newer holder exists and stopped.
    pub retired: [bool; HOLDERS_MAX],
    /// `staleRead`: some read served a write below the floor of an acknowledged trim.
    pub stale_read: bool,
    /// `writes`: writes appended so far.
    pub writes: u8,
    /// `trims`: trims appended so far (a no-op trim needs one left but uses none up).
    pub trims: u8,
    /// `promotions`: elections so far.
    pub promotions: u8,
    /// `crashes`: crashes so far.
    pub crashes: u8,
}

/// Hashes every field (so it agrees with the derived `Eq`) as one byte string: the checker
/// fingerprints every generated state, and one `write` is much cheaper than one per field.
impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, hasher: &mut H) {
        const BYTES: usize = BROKERS_MAX * (6 + 2 * LOG_MAX) + HOLDERS_MAX * 2 + 6;
        let mut bytes = [0u8; BYTES];
        let mut at = 0;
        let mut put = |byte: u8| {
            bytes[at] = byte;
            at += 1;
        };
        for b in 0..BROKERS_MAX {
            put(self.term[b]);
            put(u8::from(self.leader[b]));
            put(self.commit[b]);
            put(self.floor[b]);
            put(self.start[b]);
            let (len, slots) = self.log[b].packed();
            put(len);
            for slot in slots {
                let [low, high] = slot.to_le_bytes();
                put(low);
                put(high);
            }
        }
        put(self.lease);
        for h in 0..HOLDERS_MAX {
            put(self.expected[h]);
            put(u8::from(self.retired[h]));
        }
        put(u8::from(self.stale_read));
        put(self.writes);
        put(self.trims);
        put(self.promotions);
        put(self.crashes);
        assert_eq!(at, BYTES, "every byte of the state is hashed");
        hasher.write(&bytes);
    }
}

/// A broker number (1-based, as in the spec).
pub type Broker = u8;
/// A holder number, which is also its epoch (1-based, as in the spec).
pub type Holder = u8;

fn index(number: u8) -> usize {
    assert!(number >= 1, "brokers and holders are numbered from 1");
    usize::from(number) - 1
}

impl State {
    /// `Len(log[b])`.
    fn len(&self, b: Broker) -> u8 {
        self.log[index(b)].len()
    }

    /// `LastTerm(b)`: the term of b's last record, 0 for an empty log.
    pub fn last_term(&self, b: Broker) -> u8 {
        let log = &self.log[index(b)];
        if log.is_empty() {
            0
        } else {
            log.at(log.len()).t
        }
    }

    /// `UpToDate(b, q)`: b's log is at least as up to date as q's.
    pub fn up_to_date(&self, b: Broker, q: Broker) -> bool {
        self.last_term(b) > self.last_term(q)
            || (self.last_term(b) == self.last_term(q) && self.len(b) >= self.len(q))
    }

    /// `Walk(lg, b, from, to, fl)` on this state's log: the floor after a committed walk over
    /// `log[b]`'s records `from + 1 ..= to`, starting from floor `fl`. Public for trace
    /// validation (`felix-validate`), which holds the simulator's floors to it.
    pub fn walk(log: &Log, from: u8, to: u8, fl: u8) -> u8 {
        ((from + 1)..=to)
            .map(|i| log.at(i))
            .filter(|record| record.k == Kind::Trim)
            .map(|record| record.f)
            .fold(fl, u8::max)
    }

    /// `TrimFloor(b)`: the highest floor among b's committed trims, deleted ones included, 1 when
    /// none (what `floor[b]` must be: FloorRecordKept).
    pub fn trim_floor(&self, b: Broker) -> u8 {
        State::walk(&self.log[index(b)], 0, self.commit[index(b)], 1)
    }

    /// `floor[b]`: b's applied floor.
    pub fn floor(&self, b: Broker) -> u8 {
        self.floor[index(b)]
    }

    /// `FloorSetter(b)`: the offset of the first committed trim asking for `floor[b]`, 0 when no
    /// trim set the floor.
    pub fn floor_setter(&self, b: Broker) -> u8 {
        let floor = self.floor(b);
        if floor == 1 {
            return 0;
        }
        let log = &self.log[index(b)];
        (1..=self.commit[index(b)])
            .find(|&i| {
                let record = log.at(i);
                record.k == Kind::Trim && record.f == floor
            })
            .unwrap_or(0)
    }

    /// `ReadableStart(b)`: the first offset b can serve; below it a read is refused.
    pub fn readable_start(&self, b: Broker) -> u8 {
        self.floor(b).max(self.start[index(b)])
    }

    /// `FloorTag(b)`: the epoch of the floor-setting trim, if b still holds it and the tag is on
    /// (TagAtFloor: of the record at the floor).
    pub fn floor_tag(&self, config: &Config, b: Broker) -> u8 {
        let floor = self.floor(b);
        if config.is_twin(HiddenTrims)
            || config.is_twin(Untagged)
            || config.is_twin(VisibleTrims)
            || floor == 1
        {
            return 0;
        }
        if config.is_twin(TagAtFloor) {
            return if floor >= self.start[index(b)] {
                self.log[index(b)].at(floor).h
            } else {
                0
            };
        }
        let setter = self.floor_setter(b);
        if setter == 0 || setter < self.start[index(b)] {
            return 0;
        }
        self.log[index(b)].at(setter).h
    }

    /// `AckedFloor`: the highest floor any broker has applied (of any acknowledged trim).
    pub fn acked_floor(&self, config: &Config) -> u8 {
        (1..=config.bounds.brokers)
            .map(|b| self.floor(b))
            .max()
            .unwrap_or(1)
    }

    /// `ReadIndexFrom(l)`: l leads, a majority still accepts its term, and it has committed a
    /// record of its own term (or leads term 1).
    pub fn read_index_from(&self, config: &Config, l: Broker) -> bool {
        let li = index(l);
        if !self.leader[li] {
            return false;
        }
        let accepting = (1..=config.bounds.brokers)
            .filter(|&q| self.term[index(q)] <= self.term[li])
            .count();
        2 * accepting > usize::from(config.bounds.brokers)
            && (self.term[li] == 1
                || (self.commit[li] > 0 && self.log[li].term_at(self.commit[li]) == self.term[li]))
    }

    /// `Serves(s)`: s learnt a read index from the current leader and its walk reached it
    /// (LocalReads: always).
    pub fn serves(&self, config: &Config, s: Broker) -> bool {
        config.is_twin(LocalReads)
            || (1..=config.bounds.brokers).any(|l| {
                self.read_index_from(config, l) && self.commit[index(s)] >= self.commit[index(l)]
            })
    }

    /// `FenceCommitted(h)`: a committed write of an epoch newer than h exists.
    pub fn fence_committed(&self, config: &Config, h: Holder) -> bool {
        (1..=config.bounds.brokers).any(|b| {
            self.log[index(b)]
                .records()
                .take(usize::from(self.commit[index(b)]))
                .any(|record| record.k == Kind::Write && record.h > h)
        })
    }

    /// `Active(h)`: h holds, or believes it holds, the lease.
    pub fn active(&self, h: Holder) -> bool {
        h <= self.lease && !self.retired[index(h)]
    }

    /// `MatchLen(l, f)`: the longest prefix on which the logs of l and f agree on terms.
    pub fn match_len(&self, l: Broker, f: Broker) -> u8 {
        let leader_log = self.log[index(l)].records();
        let follower_log = self.log[index(f)].records();
        leader_log
            .zip(follower_log)
            .take_while(|(a, b)| a.t == b.t)
            .count() as u8
    }

    /// `CommitIn(lg, l)`: leader l's commit index once the logs are `lg` (this state's `commit`
    /// and `term`): the highest offset of its own term that a majority of `lg` holds, or its
    /// commit index unchanged.
    pub fn commit_in(&self, config: &Config, lg: &[Log; BROKERS_MAX], l: Broker) -> u8 {
        let brokers = usize::from(config.bounds.brokers);
        let leader_log = &lg[index(l)];
        // `Cardinality(Holding(lg, l, c))`: brokers whose log holds l's record at offset c.
        let holding = |c: u8| {
            let t = leader_log.term_at(c);
            (1..=config.bounds.brokers)
                .filter(|&q| lg[index(q)].len() >= c && lg[index(q)].term_at(c) == t)
                .count()
        };
        ((self.commit[index(l)] + 1)..=leader_log.len())
            .rev()
            .find(|&c| leader_log.term_at(c) == self.term[index(l)] && 2 * holding(c) > brokers)
            .unwrap_or(self.commit[index(l)])
    }

    /// `SegLast(b)`: last offset of the segment that starts at `start[b]`.
    fn seg_last(&self, config: &Config, b: Broker) -> u8 {
        self.start[index(b)] + config.bounds.seg_size - 1
    }

    /// `seen` and `newer` in `Read(h, s)`: whether s's committed records from `lo` that the
    /// reader sees (writes; VisibleTrims: trims too) hold one of an epoch newer than h, and whether
    /// one of them lies below `AckedFloor` (the read serves it).
    pub fn read_outcome(&self, config: &Config, h: Holder, s: Broker, lo: u8) -> (bool, bool) {
        let log = &self.log[index(s)];
        let acked = self.acked_floor(config);
        let mut newer = false;
        let mut below = false;
        for i in lo..=self.commit[index(s)] {
            let record = log.at(i);
            let seen =
                record.k == Kind::Write || (config.is_twin(VisibleTrims) && record.k == Kind::Trim);
            if seen {
                newer |= record.h > h;
                below |= i < acked;
            }
        }
        (newer, below)
    }

    /// Every variable rendered as TLC prints it, in the spec's order.
    pub fn variables(&self, config: &Config) -> Vec<(&'static str, Rendered)> {
        let brokers = usize::from(config.bounds.brokers);
        let holders = usize::from(config.bounds.holders);
        vec![
            ("term", function(&self.term[..brokers])),
            ("leader", booleans(&self.leader[..brokers])),
            ("log", function(&self.log[..brokers])),
            ("commit", function(&self.commit[..brokers])),
            ("floor", function(&self.floor[..brokers])),
            ("start", function(&self.start[..brokers])),
            ("lease", Rendered::Scalar(self.lease.to_string())),
            ("expected", function(&self.expected[..holders])),
            ("retired", booleans(&self.retired[..holders])),
            (
                "staleRead",
                Rendered::Scalar(if self.stale_read { "TRUE" } else { "FALSE" }.to_string()),
            ),
            ("writes", Rendered::Scalar(self.writes.to_string())),
            ("trims", Rendered::Scalar(self.trims.to_string())),
            ("promotions", Rendered::Scalar(self.promotions.to_string())),
            ("crashes", Rendered::Scalar(self.crashes.to_string())),
        ]
    }
}

/// The spec's actions with their parameters, in the order of its `Next`. An action's kind, its
/// name without parameters, is its variant's name (`<&'static str>::from(action)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, strum::IntoStaticStr)]
pub enum Action {
    /// `MoveLease`.
    MoveLease,
    /// `Promote(b, Q)`; `Q` as a bit set (bit `q - 1` for broker q).
    Promote(Broker, u8),
    /// `Write(h, s)`.
    Write(Holder, Broker),
    /// `TrimAppend(h, s, fl)`.
    TrimAppend(Holder, Broker, u8),
    /// `TrimNoop(h, s)`.
    TrimNoop(Holder, Broker),
    /// `Refused(h, s)`.
    Refused(Holder, Broker),
    /// `Read(h, s)`.
    Read(Holder, Broker),
    /// `Replicate(l, f)`.
    Replicate(Broker, Broker),
    /// `StepDown(l, f)`.
    StepDown(Broker, Broker),
    /// `Compact(b)`.
    Compact(Broker),
    /// `Retain(b)`.
    Retain(Broker),
    /// `Crash(b)`.
    Crash(Broker),
}

/// `Kind(parameters)`, as the spec writes an action.
impl fmt::Display for Action {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.into())?;
        match *self {
            Action::MoveLease => Ok(()),
            Action::Promote(b, q) => write!(formatter, "({b}, {})", quorum::set(q)),
            Action::TrimAppend(h, s, fl) => write!(formatter, "({h}, {s}, {fl})"),
            Action::Write(x, y)
            | Action::TrimNoop(x, y)
            | Action::Refused(x, y)
            | Action::Read(x, y)
            | Action::Replicate(x, y)
            | Action::StepDown(x, y) => write!(formatter, "({x}, {y})"),
            Action::Compact(b) | Action::Retain(b) | Action::Crash(b) => write!(formatter, "({b})"),
        }
    }
}

/// The model of one configuration.
#[derive(Clone, Debug)]
pub struct FelixHeadTrim {
    /// The configuration: its constants, and the twin it is, if any.
    pub config: &'static Config,
    /// Search one state per orbit under permutations of the brokers (see `canonical`). Off by
    /// default: with it on, the unique-state count is no longer comparable with TLC's.
    pub broker_symmetry: bool,
}

impl FelixHeadTrim {
    /// The model of a configuration.
    pub fn new(config: &'static Config) -> Self {
        let bounds = &config.bounds;
        assert!(bounds.brokers >= 1 && usize::from(bounds.brokers) <= BROKERS_MAX);
        assert!(bounds.holders >= 1 && usize::from(bounds.holders) <= HOLDERS_MAX);
        assert!(
            usize::from(bounds.max_len()) <= LOG_MAX,
            "MaxLen exceeds LOG_MAX"
        );
        assert!(bounds.seg_size >= 1);
        FelixHeadTrim {
            config,
            broker_symmetry: false,
        }
    }

    /// `MaxLen`.
    fn max_len(&self) -> u8 {
        self.config.bounds.max_len()
    }

    /// Whether `action`'s guard holds in `state` (the conjuncts that do not prime a variable).
    pub fn enabled(&self, state: &State, action: Action) -> bool {
        let config = self.config;
        let bounds = &config.bounds;
        match action {
            Action::MoveLease => state.lease < bounds.holders,
            Action::Promote(b, q) => {
                state.promotions < bounds.max_promotions
                    && !state.leader[index(b)]
                    && quorum::elects(q, b, bounds.brokers)
                    && self.members(q).all(|member| state.up_to_date(b, member))
            }
            Action::Write(h, s) => {
                state.active(h)
                    && state.writes < bounds.max_writes
                    && state.leader[index(s)]
                    && state.expected[index(h)] == state.len(s)
            }
            Action::TrimAppend(h, s, fl) => {
                state.active(h)
                    && state.trims < bounds.max_trims
                    && state.leader[index(s)]
                    && state.expected[index(h)] == state.len(s)
                    && fl > state.floor(s)
                    && fl <= state.expected[index(h)] + 1
            }
            Action::TrimNoop(h, s) => {
                state.active(h)
                    && state.trims < bounds.max_trims
                    && state.leader[index(s)]
                    && (config.is_twin(NoopSkip) || state.expected[index(h)] == state.len(s))
            }
            Action::Refused(h, s) => {
                config.is_twin(TailFromRefusal)
                    && state.active(h)
                    && state.leader[index(s)]
                    && state.expected[index(h)] != state.len(s)
            }
            Action::Read(h, s) => state.active(h) && state.serves(config, s),
            Action::Replicate(l, f) => {
                let m = state.match_len(l, f);
                state.leader[index(l)]
                    && f != l
                    && state.term[index(f)] <= state.term[index(l)]
                    && (m >= state.len(l) || m + 1 >= state.start[index(l)])
            }
            Action::StepDown(l, f) => {
                state.leader[index(l)] && state.term[index(f)] > state.term[index(l)]
            }
            Action::Compact(b) => {
                let first = state.start[index(b)];
                let last = state.seg_last(config, b);
                if config.is_twin(CompactActive) {
                    first < state.floor(b) && last <= state.commit[index(b)]
                } else {
                    last < state.floor(b)
                }
            }
            Action::Retain(b) => {
                config.retention_deletes() && state.seg_last(config, b) <= state.commit[index(b)]
            }
            Action::Crash(b) => state.crashes < bounds.max_crashes && state.leader[index(b)],
        }
    }

    /// The brokers of a bit set.
    fn members(&self, q: u8) -> impl Iterator<Item = Broker> {
        quorum::members(q, self.config.bounds.brokers)
    }

    /// `Read(h, s)`, into `next` (a copy of `state`): holder h reads from broker s at its cursor
    /// (or, with `reread_from_cursor` off, the ReadFromEarliest twin, from where s can serve);
    /// it retires on a refusal tagged with a newer epoch or on a newer epoch's write, else its
    /// tail becomes s's commit index.
    fn read(&self, state: &State, next: &mut State, h: Holder, s: Broker) {
        let rs = state.readable_start(s);
        let from = if self.config.is_twin(ReadFromEarliest) {
            rs
        } else {
            state.expected[index(h)] + 1
        };
        let too_old = from < rs;
        let (newer, below) = state.read_outcome(self.config, h, s, from.max(rs));
        next.stale_read = state.stale_read || below;
        let tagged = too_old && state.floor_tag(self.config, s) > h;
        if tagged || newer {
            next.retired[index(h)] = true;
            // A retired holder never uses its tail again (spec change e5a4592).
            next.expected[index(h)] = 0;
        } else {
            next.expected[index(h)] = state.commit[index(s)];
        }
    }

    /// `Replicate(l, f)`, into `next` (a copy of `state`): l sends f the record after their
    /// matching prefix, if any, with its commit index.
    fn replicate(&self, state: &State, next: &mut State, l: Broker, f: Broker) {
        let m = state.match_len(l, f);
        let sent = m < state.len(l);
        if sent {
            let record = state.log[index(l)].at(m + 1);
            next.log[index(f)].keep_first(m);
            next.log[index(f)].append(record);
        }
        // The message carries l's commit index: f commits up to it within the prefix it now
        // shares with l; then l commits what a majority holds of its term. Each walks its newly
        // committed records and applies their floors.
        let shared = if sent { m + 1 } else { m };
        let fc = state.commit[index(f)].max(state.commit[index(l)].min(shared));
        let lc = state.commit_in(self.config, &next.log, l);
        next.commit[index(l)] = lc;
        next.commit[index(f)] = fc;
        next.floor[index(l)] = State::walk(
            &next.log[index(l)],
            state.commit[index(l)],
            lc,
            state.floor[index(l)],
        );
        next.floor[index(f)] = State::walk(
            &next.log[index(f)],
            state.commit[index(f)],
            fc,
            state.floor[index(f)],
        );
        next.term[index(f)] = state.term[index(l)];
        if state.term[index(f)] < state.term[index(l)] {
            next.leader[index(f)] = false;
        }
    }

    /// The state after `action` (whose guard holds): the primed variables.
    fn apply(&self, state: &State, action: Action) -> State {
        let mut next = state.clone();
        match action {
            Action::MoveLease => next.lease = state.lease + 1,
            Action::Promote(b, q) => {
                let new_term = quorum::next_term(q, self.config.bounds.brokers, &state.term);
                for member in self.members(q) {
                    next.term[index(member)] = new_term;
                    next.leader[index(member)] = member == b;
                }
                next.log[index(b)].append(Record {
                    k: Kind::Noop,
                    h: 0,
                    t: new_term,
                    f: 0,
                });
                next.promotions = state.promotions + 1;
            }
            Action::Write(h, s) => {
                next.log[index(s)].append(Record {
                    k: Kind::Write,
                    h,
                    t: state.term[index(s)],
                    f: 0,
                });
                next.writes = state.writes + 1;
            }
            Action::TrimAppend(h, s, fl) => {
                next.log[index(s)].append(Record {
                    k: Kind::Trim,
                    h,
                    t: state.term[index(s)],
                    f: fl,
                });
                next.trims = state.trims + 1;
            }
            Action::TrimNoop(h, s) => {
                // A no-op needs a trim left but uses none up (spec change e5a4592).
                next.expected[index(h)] = state.len(s);
            }
            Action::Refused(h, s) => {
                next.expected[index(h)] = state.len(s);
            }
            Action::Read(h, s) => self.read(state, &mut next, h, s),
            Action::Replicate(l, f) => self.replicate(state, &mut next, l, f),
            Action::StepDown(l, f) => {
                next.term[index(l)] = state.term[index(f)];
                next.leader[index(l)] = false;
            }
            Action::Compact(b) | Action::Retain(b) => {
                next.start[index(b)] = state.seg_last(self.config, b) + 1;
            }
            Action::Crash(b) => {
                next.leader[index(b)] = false;
                next.crashes = state.crashes + 1;
            }
        }
        next
    }
}

impl Model for FelixHeadTrim {
    type State = State;
    type Action = Action;

    /// `Init`: broker 1 leads term 1, every log is empty, holder 1 has the lease.
    fn init_states(&self) -> Vec<State> {
        let mut leader = [false; BROKERS_MAX];
        leader[0] = true;
        let mut term = [0; BROKERS_MAX];
        let mut start = [0; BROKERS_MAX];
        let mut floor = [0; BROKERS_MAX];
        for b in 0..usize::from(self.config.bounds.brokers) {
            term[b] = 1;
            start[b] = 1;
            floor[b] = 1;
        }
        vec![self.canonical(State {
            term,
            leader,
            log: [Log::EMPTY; BROKERS_MAX],
            commit: [0; BROKERS_MAX],
            floor,
            start,
            lease: 1,
            expected: [0; HOLDERS_MAX],
            retired: [false; HOLDERS_MAX],
            stale_read: false,
            writes: 0,
            trims: 0,
            promotions: 0,
            crashes: 0,
        })]
    }

    /// `Next`: every action whose guard holds, in the order of the spec's disjunction, each
    /// parameter ranging over its set in increasing order.
    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        // Every candidate goes through `enabled`, so the set is exactly the spec's. The `if`s
        // around the loops only skip candidates a guard conjunct already rules out (a bound
        // reached, a switch off, a broker that does not lead), to keep this hot path short.
        let config = self.config;
        let bounds = &config.bounds;
        let brokers = bounds.brokers;
        let holders = bounds.holders;
        let is_leader = |b: Broker| state.leader[index(b)];
        let mut push = |action: Action| {
            if self.enabled(state, action) {
                actions.push(action);
            }
        };
        push(Action::MoveLease);
        if state.promotions < bounds.max_promotions {
            for b in (1..=brokers).filter(|&b| !is_leader(b)) {
                for q in 1..(1u8 << brokers) {
                    push(Action::Promote(b, q));
                }
            }
        }
        if state.writes < bounds.max_writes {
            for h in 1..=holders {
                for s in (1..=brokers).filter(|&s| is_leader(s)) {
                    push(Action::Write(h, s));
                }
            }
        }
        if state.trims < bounds.max_trims {
            for h in 1..=holders {
                for s in (1..=brokers).filter(|&s| is_leader(s)) {
                    // `Floor(s) < fl <= expected[h] + 1` (at most the trim record's own offset).
                    let own = (state.expected[index(h)] + 1).min(self.max_len() + 1);
                    for fl in (state.floor(s) + 1)..=own {
                        push(Action::TrimAppend(h, s, fl));
                    }
                }
            }
            for h in 1..=holders {
                for s in (1..=brokers).filter(|&s| is_leader(s)) {
                    push(Action::TrimNoop(h, s));
                }
            }
        }
        if config.is_twin(TailFromRefusal) {
            for h in 1..=holders {
                for s in (1..=brokers).filter(|&s| is_leader(s)) {
                    push(Action::Refused(h, s));
                }
            }
        }
        for h in 1..=holders {
            for s in 1..=brokers {
                push(Action::Read(h, s));
            }
        }
        for l in (1..=brokers).filter(|&l| is_leader(l)) {
            for f in 1..=brokers {
                push(Action::Replicate(l, f));
            }
        }
        for l in (1..=brokers).filter(|&l| is_leader(l)) {
            for f in 1..=brokers {
                push(Action::StepDown(l, f));
            }
        }
        for b in 1..=brokers {
            push(Action::Compact(b));
        }
        if config.retention_deletes() {
            for b in 1..=brokers {
                push(Action::Retain(b));
            }
        }
        if state.crashes < bounds.max_crashes {
            for b in (1..=brokers).filter(|&b| is_leader(b)) {
                push(Action::Crash(b));
            }
        }
    }

    fn next_state(&self, state: &State, action: Action) -> Option<State> {
        if !self.enabled(state, action) {
            return None;
        }
        Some(self.canonical(self.apply(state, action)))
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn properties(&self) -> Vec<Property<Self>> {
        Self::every_property()
    }
}

impl crate::spec::Spec for FelixHeadTrim {
    type Bounds = super::config::Bounds;
    const LAYER: felix_names::Layer = felix_names::Layer::HeadTrim;
    const MAIN_ALIAS: bool = true;
    const NO_SYMMETRY: Option<&'static str> = None;
    const NO_DIAGRAM: Option<&'static str> = None;
    const ALWAYS: &'static [(felix_names::Invariant, Condition<Self>)] = &properties::ALWAYS;
    const SOMETIMES: &'static [(&'static str, Condition<Self>)] = &properties::COVERAGE;

    fn configs() -> &'static [Config] {
        &super::config::CONFIGS
    }

    fn model(config: &'static Config, symmetry: bool) -> Self {
        if symmetry {
            FelixHeadTrim::with_broker_symmetry(config)
        } else {
            FelixHeadTrim::new(config)
        }
    }

    fn variables(config: &Config, state: &State) -> Vec<(&'static str, Rendered)> {
        state.variables(config)
    }
}
