//! Progress (liveness, in time): after the faults heal, every live node that lags the cluster's
//! committed prefix catches up within a bound, and every client with work to do gets an answer
//! within a bound; both bounds are worked out from the run's own knobs (`Bounds`).
//!
//! Convergence judges a run once, at the deadline: a cluster stuck for seconds that unsticks
//! itself by luck before it passes. Progress judges how long each stall lasted.
//!
//! Unlike the other audits it needs time: `check` takes the simulated time of every history event
//! (`times[i]` is the time of `history[i]`, in microseconds) and the run's `Bounds`; `audit` (which
//! sees a history only) does not run it, and the simulator's judge does (`felix_sim::judge`).
//!
//! From the `PhaseChanged { phase: Liveness }` marker on (time `t0`):
//! - **Nodes.** Each time the cluster's committed index (the highest offset of any `Committed`)
//!   grows to `c` at time `t`, every live node whose own committed index `n` is below `c` owes a
//!   *target*: reach `c` by `t + Bounds::catch_up_micros(c - n, w)`; at `t0` every live node behind
//!   the cluster owes one. While a leader holds, the lag is at least the leader's durable log above
//!   `n`, committed or not: it commits nothing of its term before a majority holds its log through
//!   its noop (a pipelining writer can leave it a long uncommitted tail). `w` is the runs a leader
//!   may walk back over: the terms of the run's committed log above `n`, or the runs of the node's
//!   own durable log above `n` (from its `DurableLog` events, the most it held since the target was
//!   set), whichever is more. A node's committed index is the highest of its `Committed` offsets,
//!   its `NodeState`'s `committed` and `point - 1` of its `Jumped` (reset by `Restarted`). A node
//!   whose oldest unmet target is past its deadline at any later event, or at `PhaseChanged {
//!   phase: End }`, is a violation, reported once per node, naming the step that set the target.
//! - **Clients.** A client's work starts with its first `Requested` after `t0` that no useful
//!   `Replied` (any answer but the retriable `NotLeader`, `NoReadIndex`, `NotHeld` and
//!   `ReadPastTail`) has answered yet; a retirement (`HolderRetired`, `OwnerStopped`) ends it.
//!   A useful answer later than `Bounds::answer_micros` (with the longest walk any live node held
//!   since the heal) after that start, or a request sent while
//!   still unanswered after that long (the client is still waiting), is a violation, reported once
//!   per client. A client that stops asking (the quiesce) is not judged on work it gave up.
//!
//! A history without the End marker (a run cut short) is judged up to where it stops.

use crate::log_terms::LogTerms;
use crate::{step_ref, Violation, PROGRESS};
use felix_core::api::{ClientId, InvalidRequest, Reply};
use felix_core::history::{Event, Phase};
use felix_core::record::{NodeId, Offset};
use std::collections::{BTreeMap, VecDeque};
use std::num::Saturating as S;

/// How many elections a healed cluster may need before a leader holds when its timeouts are
/// spread wide (every node restarts at once when the faults heal, so the first election can split;
/// each retry draws new timeouts). `Bounds::elections` allows more where they are spread narrow.
pub const ELECTIONS_MAX: u64 = 4;

/// The run's knobs the bounds are made of (all times in microseconds of true time; the simulator
/// fills them in from its knobs, `felix_sim::judge::progress_bounds`). A bound that would pass
/// `u64::MAX` (knobs far beyond what the swarm draws, a user's) is `u64::MAX`: no deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// One durable round trip: a message there (at most the longest delay), a sync (at most the
    /// longest), and the answer back: `2 * delay_max + sync_max`.
    pub round_trip_micros: u64,
    /// A broker tick on the slowest node clock: `tick * 10^6 / (10^6 - drift_max_ppm)`.
    pub tick_micros: u64,
    /// The longest election timeout, in ticks (`election_ticks_max`).
    pub election_ticks: u64,
    /// The spread of the election timeouts, in ticks (`election_ticks_max - election_ticks_min`).
    pub election_spread_ticks: u64,
    /// Ticks between a leader's heartbeats (`heartbeat_ticks`).
    pub heartbeat_ticks: u64,
    /// Records per AppendEntries at most (`append_entries_max`).
    pub batch_records: u64,
    /// How long a client waits for an answer before it gives up on it and how long it sleeps
    /// between tries: `client_timeout + client_gap` on the slowest client clock.
    pub client_retry_micros: u64,
    /// How many nodes a client may try before one answers usefully (brokers + replicas).
    pub nodes: u64,
    /// Ticks a node waits for a read index before it answers `NoReadIndex`.
    pub read_wait_ticks: u64,
    /// The longest a sync begun before the heal may still take after it: `sync_max`, or `50 *
    /// sync_max` in a run whose SlowSync BUGGIFY site is active (it fires in the safety phase
    /// only, and stretches one sync up to 50 times; seen holding a node's answers for 1.2 s).
    pub stalled_sync_micros: u64,
}

impl Bounds {
    /// One election: the longest timeout, then a vote round and the leader's noop committed (two
    /// durable round trips): `election_ticks * tick + 2 * round_trip`.
    pub fn election_micros(&self) -> u64 {
        (S(self.election_ticks) * S(self.tick_micros) + S(2) * S(self.round_trip_micros)).0
    }

    /// How many elections may fail before one holds: `ELECTIONS_MAX * ceil(2 * round_trip /
    /// (spread * tick))`, at least `ELECTIONS_MAX`. Two candidates whose timeouts fall within a
    /// vote's round trip of each other split the vote, so the narrower the spread of the timeouts
    /// next to a durable round trip, the more elections split (seen: 8 in a row with a 45 ms
    /// spread and 50 ms round trips).
    pub fn elections(&self) -> u64 {
        let spread = (S(self.election_spread_ticks) * S(self.tick_micros))
            .0
            .max(1);
        let splits = (S(2) * S(self.round_trip_micros)).0.div_ceil(spread).max(1);
        (S(ELECTIONS_MAX) * S(splits)).0
    }

    /// How long a node `lag` records behind, with `terms` runs of one term to walk back over, may
    /// take to reach the target: `stalled_sync + elections * election + heartbeat * tick +
    /// (ceil(lag / batch) + terms) * round_trip`: a sync left from the faults, a leader elected,
    /// its next heartbeat, one round trip per run of the node's divergent suffix the leader walks
    /// back over (the same walk `led_catch_up_micros` counts: seen, 97 runs walked back in 132 ms
    /// right after the heal), then one durable round trip per batch of the lag.
    pub fn catch_up_micros(&self, lag: u64, terms: u64) -> u64 {
        let batches = lag.div_ceil(self.batch_records.max(1));
        (S(self.stalled_sync_micros)
            + S(self.elections()) * S(self.election_micros())
            + S(self.heartbeat_ticks) * S(self.tick_micros)
            + (S(batches) + S(terms)) * S(self.round_trip_micros))
        .0
    }

    /// How long a node may take while one leader holds, when the cluster's committed index was
    /// `lag` records ahead of it and the run's committed log holds `terms` terms above it:
    /// `stalled_sync + 2 * heartbeat * tick + (2 + ceil(lag / batch) + terms) * round_trip`: the
    /// leader's next heartbeat, a round trip to find where the node's log matches, one per batch
    /// of the lag, one per term the leader may have to walk back over (a divergent suffix is
    /// repaired one term per rejection, and after a storm of elections every term holds one
    /// noop: seen, 91 noops of 91 terms walked back in 326 ms), and the heartbeat that carries
    /// the commit index.
    pub fn led_catch_up_micros(&self, lag: u64, terms: u64) -> u64 {
        let batches = lag.div_ceil(self.batch_records.max(1));
        (S(self.stalled_sync_micros)
            + S(2) * S(self.heartbeat_ticks) * S(self.tick_micros)
            + (S(2) + S(batches) + S(terms)) * S(self.round_trip_micros))
        .0
    }

    /// How long a client may wait for a useful answer when the cluster's committed index is
    /// `committed` and a node may have `terms` runs to walk back over (a read at a node catching
    /// up from nothing waits for it, and a write for a majority that matches the leader):
    /// `catch_up(committed, terms) + nodes * (client_retry + read_wait * tick + round_trip)`.
    pub fn answer_micros(&self, committed: u64, terms: u64) -> u64 {
        let retry = S(self.client_retry_micros)
            + S(self.read_wait_ticks) * S(self.tick_micros)
            + S(self.round_trip_micros);
        (S(self.catch_up_micros(committed, terms)) + S(self.nodes) * retry).0
    }
}

/// A place a node must reach by a time.
#[derive(Clone, Copy)]
struct Target {
    offset: Offset,
    /// The history index that set it (the stall's start).
    since: usize,
    lag: u64,
    /// The most runs the node's durable log has held above its committed index since the target
    /// was set (what a leader may walk back over, `LogTerms::runs_above`).
    walk: u64,
}

#[derive(Default)]
struct NodeView {
    live: bool,
    committed: Offset,
    /// The node's durable log, from its `DurableLog` events.
    log: LogTerms,
    targets: VecDeque<Target>,
    reported: bool,
}

impl NodeView {
    /// The runs of the node's durable log above its committed index.
    fn walk(&self) -> u64 {
        self.log.runs_above(self.committed)
    }
}

#[derive(Default)]
struct ClientView {
    /// The history index and time of the first request not answered usefully yet.
    waiting: Option<(usize, u64)>,
    reported: bool,
}

/// Whether `reply` only sent the client elsewhere (it retries): not an answer to its work.
fn retriable(reply: &Reply) -> bool {
    matches!(
        reply,
        Reply::NotLeader { .. }
            | Reply::NoReadIndex { .. }
            | Reply::NotHeld { .. }
            | Reply::Invalid(InvalidRequest::ReadPastTail { .. })
    )
}

/// The node a node event is about, and the committed index it shows, if any.
fn node_event(event: &Event) -> Option<(NodeId, Option<Offset>)> {
    let shows = match event {
        Event::Committed { entry, .. } => Some(entry.offset),
        Event::NodeState { committed, .. } => Some(*committed),
        Event::Jumped { point, .. } => Some(point.saturating_sub(1)),
        _ => None,
    };
    match event {
        // A client's request and reply name the node it talked to, which may not be acting; an
        // acknowledgement says nothing the node's `NodeState` does not; a store found corrupt
        // follows the node's crash, which already took it down.
        Event::Requested { .. }
        | Event::Replied { .. }
        | Event::AckSent { .. }
        | Event::StoreCorrupt { .. } => None,
        _ => event.node().map(|node| (node, shows)),
    }
}

/// The audit's state over one history.
struct Judge<'a> {
    times: &'a [u64],
    bounds: Bounds,
    nodes: BTreeMap<NodeId, NodeView>,
    clients: BTreeMap<ClientId, ClientView>,
    cluster_committed: Offset,
    /// The Liveness marker was seen.
    healed: bool,
    /// The offsets where a new term starts in the run's committed log (first commit per offset),
    /// ascending.
    term_starts: Vec<Offset>,
    /// The highest term any node has shown.
    term: u64,
    /// The leader that holds, with its term and the time it became leader: none once a node
    /// shows a higher term or the leader steps down.
    leader: Option<(NodeId, u64, u64)>,
    /// The most runs any live node's durable log has held above its committed index since the
    /// heal: what a client's answer may wait for a leader to walk back over.
    walk_max: u64,
    violations: Vec<Violation>,
}

impl Judge<'_> {
    fn time(&self, step: usize) -> u64 {
        self.times.get(step).copied().unwrap_or(0)
    }

    /// Every live node behind the cluster owes the cluster's committed index from `step` on.
    fn set_targets(&mut self, step: usize) {
        let cluster = self.cluster_committed;
        for view in self.nodes.values_mut() {
            if !view.live || view.reported || view.committed >= cluster {
                continue;
            }
            if view
                .targets
                .back()
                .is_some_and(|last| last.offset >= cluster)
            {
                continue;
            }
            view.targets.push_back(Target {
                offset: cluster,
                since: step,
                lag: cluster - view.committed,
                walk: view.walk(),
            });
        }
    }

    fn node_event(&mut self, step: usize, event: &Event, node: NodeId, shows: Option<Offset>) {
        self.leadership(step, event);
        let view = self.nodes.entry(node).or_insert(NodeView {
            live: true,
            ..NodeView::default()
        });
        match event {
            Event::Crashed { .. } => {
                view.live = false;
                view.targets.clear();
            }
            Event::Restarted { .. } => {
                view.live = true;
                view.committed = 0;
            }
            Event::NodeState { committed, .. } => view.committed = *committed,
            Event::DurableLog { last, term, .. } => view.log.end_at(*last, *term),
            _ => {
                if let Some(offset) = shows {
                    view.committed = view.committed.max(offset);
                }
            }
        }
        while view
            .targets
            .front()
            .is_some_and(|target| view.committed >= target.offset)
        {
            view.targets.pop_front();
        }
        let walk = view.walk();
        for target in view.targets.iter_mut() {
            target.walk = target.walk.max(walk);
        }
        if self.healed && view.live {
            self.walk_max = self.walk_max.max(walk);
        }
        if let Event::Committed { entry, .. } = event {
            if entry.offset > self.cluster_committed {
                self.cluster_committed = entry.offset;
                if self.healed {
                    self.set_targets(step);
                }
            }
        }
    }

    /// Follows who leads: a `BecameLeader` holds until a node shows a higher term, the leader
    /// shows it is not leading, or it crashes.
    fn leadership(&mut self, step: usize, event: &Event) {
        let (node, term, leading) = match *event {
            Event::BecameLeader { node, term } => {
                self.term = self.term.max(term);
                self.leader = Some((node, term, self.time(step)));
                return;
            }
            Event::PromiseChanged { node, term, .. } => (node, term, None),
            Event::NodeState {
                node, term, leader, ..
            } => (node, term, Some(leader)),
            Event::Crashed { node } | Event::Restarted { node } => (node, 0, Some(false)),
            _ => return,
        };
        self.term = self.term.max(term);
        if let Some((leader, leader_term, _)) = self.leader {
            if self.term > leader_term || (leader == node && leading == Some(false)) {
                self.leader = None;
            }
        }
    }

    /// The last offset of the durable log of the node that leads now (0 with no leader).
    fn leader_last(&self) -> Offset {
        self.leader
            .and_then(|(leader, _, _)| self.nodes.get(&leader))
            .map_or(0, |view| view.log.last())
    }

    /// Every node whose oldest unmet target is past its deadline at `step`.
    fn judge_nodes(&mut self, step: usize) {
        let now = self.time(step);
        let leader_last = self.leader_last();
        for (node, view) in self.nodes.iter_mut() {
            let Some(target) = view.targets.front().copied() else {
                continue;
            };
            // A leader commits nothing of its term before a majority holds its log through its
            // noop: the node waits for the leader's whole log above it, committed or not (a
            // pipelining writer can leave a long uncommitted tail).
            let lag = target
                .lag
                .max(leader_last.saturating_sub(target.offset - target.lag));
            let since = self.times.get(target.since).copied().unwrap_or(0);
            // The runs to walk back over: the committed log's terms above the node, or its own
            // divergent suffix's, whichever is more.
            let terms = terms_above(&self.term_starts, target.offset - target.lag).max(target.walk);
            let deadline = since.saturating_add(self.bounds.catch_up_micros(lag, terms));
            // Under one leader the whole time since `led_from`, the tighter bound holds.
            let led = self.leader.map(|(_, _, from)| {
                let led_from = from.max(since);
                (
                    led_from,
                    led_from.saturating_add(self.bounds.led_catch_up_micros(lag, terms)),
                )
            });
            let led_late = led.is_some_and(|(_, deadline)| now > deadline);
            if view.reported || (now <= deadline && !led_late) {
                continue;
            }
            let bound = match led {
                Some((led_from, deadline)) if led_late => format!(
                    "past its bound of {} under the leader that held from {} on",
                    micros(deadline - led_from),
                    micros(led_from)
                ),
                _ => format!("past its bound of {}", micros(deadline - since)),
            };
            view.reported = true;
            view.targets.clear();
            self.violations.push(Violation::new(
                PROGRESS,
                step,
                format!(
                    "live node {node} was still at committed index {} {} after {} (the \
                     cluster's committed index {} then, {} records ahead), {bound}",
                    view.committed,
                    micros(now - since),
                    step_ref(target.since),
                    target.offset,
                    target.lag,
                ),
            ));
        }
    }

    fn client_event(&mut self, step: usize, client: ClientId, answered: Option<bool>) {
        let now = self.time(step);
        let bound = self
            .bounds
            .answer_micros(self.cluster_committed, self.walk_max);
        let view = self.clients.entry(client).or_default();
        let Some((since, start)) = view.waiting else {
            if answered.is_none() {
                view.waiting = Some((step, now));
            }
            return;
        };
        if !view.reported && now > start.saturating_add(bound) {
            view.reported = true;
            let what = match answered {
                Some(true) => "answered",
                _ => "still waiting",
            };
            self.violations.push(
                Violation::new(
                    PROGRESS,
                    step,
                    format!(
                        "client {client} was {what} {} after its request at {}, past its bound \
                         of {}",
                        micros(now - start),
                        step_ref(since),
                        micros(bound),
                    ),
                )
                .with_clients(vec![client]),
            );
        }
        if answered == Some(true) {
            view.waiting = None;
        }
    }
}

/// The offsets where a term starts in the committed log `history` builds (the first commit of
/// each offset counts), ascending.
fn term_starts(history: &[Event]) -> Vec<Offset> {
    let mut terms: BTreeMap<Offset, u64> = BTreeMap::new();
    for event in history {
        if let Event::Committed { entry, .. } = event {
            terms.entry(entry.offset).or_insert(entry.term);
        }
    }
    let mut starts = Vec::new();
    let mut last = None;
    for (offset, term) in terms {
        if last != Some(term) {
            starts.push(offset);
            last = Some(term);
        }
    }
    starts
}

/// How many terms of the committed log start above `offset`.
fn terms_above(starts: &[Offset], offset: Offset) -> u64 {
    (starts.len() - starts.partition_point(|start| *start <= offset)) as u64
}

/// A duration in words: `1.234 s` or `12.3 ms`.
fn micros(micros: u64) -> String {
    if micros >= 1_000_000 {
        format!("{:.3} s", micros as f64 / 1e6)
    } else {
        format!("{:.1} ms", micros as f64 / 1e3)
    }
}

/// The violations of Progress in `history`, whose event `i` happened at `times[i]` (microseconds),
/// under `bounds`.
pub fn check(history: &[Event], times: &[u64], bounds: Bounds) -> Vec<Violation> {
    assert_eq!(history.len(), times.len(), "one time per history event");
    let mut judge = Judge {
        times,
        bounds,
        nodes: BTreeMap::new(),
        clients: BTreeMap::new(),
        cluster_committed: 0,
        healed: false,
        term_starts: term_starts(history),
        term: 0,
        leader: None,
        walk_max: 0,
        violations: Vec::new(),
    };
    for (step, event) in history.iter().enumerate() {
        if let Some((node, shows)) = node_event(event) {
            judge.node_event(step, event, node, shows);
        }
        if !judge.healed {
            if matches!(
                event,
                Event::PhaseChanged {
                    phase: Phase::Liveness
                }
            ) {
                judge.healed = true;
                judge.clients.clear();
                judge.set_targets(step);
                judge.walk_max = judge
                    .nodes
                    .values()
                    .filter(|view| view.live)
                    .map(NodeView::walk)
                    .max()
                    .unwrap_or(0);
            }
            continue;
        }
        match event {
            Event::Requested { client, .. } => judge.client_event(step, *client, None),
            Event::Replied { client, reply, .. } => {
                judge.client_event(step, *client, Some(!retriable(reply)))
            }
            Event::HolderRetired { client, .. } | Event::OwnerStopped { client, .. } => {
                if let Some(view) = judge.clients.get_mut(client) {
                    view.waiting = None;
                }
            }
            _ => {}
        }
        judge.judge_nodes(step);
    }
    judge.violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    fn bounds() -> Bounds {
        Bounds {
            round_trip_micros: 1_000,
            tick_micros: 10_000,
            election_ticks: 10,
            election_spread_ticks: 5,
            heartbeat_ticks: 2,
            batch_records: 4,
            client_retry_micros: 50_000,
            nodes: 3,
            read_wait_ticks: 20,
            stalled_sync_micros: 0,
        }
    }

    fn liveness() -> Event {
        Event::PhaseChanged {
            phase: Phase::Liveness,
        }
    }

    /// The bounds are the documented formulas of the knobs.
    #[test]
    fn bounds_follow_their_formulas() {
        let bounds = bounds();
        assert_eq!(bounds.election_micros(), 10 * 10_000 + 2 * 1_000);
        assert_eq!(bounds.elections(), ELECTIONS_MAX);
        let narrow = Bounds {
            election_spread_ticks: 1,
            round_trip_micros: 12_000,
            ..bounds
        };
        assert_eq!(narrow.elections(), 3 * ELECTIONS_MAX);
        assert_eq!(
            bounds.led_catch_up_micros(9, 2),
            2 * 2 * 10_000 + (2 + 3 + 2) * 1_000
        );
        // Terms start at offsets 1 and 3 of this committed log: one above offset 2, two above 0.
        let log = [
            committed(0, noop(1, 1)),
            committed(0, write(2, 1, 1)),
            committed(1, noop(1, 1)),
            committed(0, noop(3, 2)),
        ];
        let starts = term_starts(&log);
        assert_eq!(starts, vec![1, 3]);
        assert_eq!(terms_above(&starts, 2), 1);
        assert_eq!(terms_above(&starts, 0), 2);
        assert_eq!(terms_above(&starts, 3), 0);
        assert_eq!(
            bounds.catch_up_micros(9, 0),
            ELECTIONS_MAX * 102_000 + 2 * 10_000 + 3 * 1_000
        );
        assert_eq!(
            bounds.catch_up_micros(9, 5),
            bounds.catch_up_micros(9, 0) + 5 * 1_000
        );
        assert_eq!(
            bounds.answer_micros(9, 2),
            bounds.catch_up_micros(9, 2) + 3 * (50_000 + 20 * 10_000 + 1_000)
        );
    }

    /// Knobs far past the swarm's (one-microsecond ticks, hour-long round trips) make bounds past
    /// 64 bits: each is `u64::MAX`, no deadline, and a stalled node is not judged late.
    #[test]
    fn bounds_past_64_bits_mean_no_deadline() {
        let huge = Bounds {
            round_trip_micros: 3 * 3_600_000_000,
            tick_micros: 1,
            election_ticks: 1_000,
            election_spread_ticks: 1,
            nodes: 17,
            ..bounds()
        };
        assert_eq!(huge.elections(), ELECTIONS_MAX * 2 * 3 * 3_600_000_000);
        assert_eq!(huge.catch_up_micros(9, 2), u64::MAX);
        assert_eq!(huge.answer_micros(9, 2), u64::MAX);
        let history = vec![
            state(1, 1, false, 0, 0),
            liveness(),
            committed(0, noop(1, 1)),
            committed(0, write(2, 1, 1)),
            state(0, 1, true, 0, 2),
            end(),
        ];
        let times = [0, 0, 10, 20, 30, u64::MAX - 1];
        assert_eq!(check(&history, &times, huge), vec![]);
    }

    /// A follower that catches up inside its bound holds; one that is still behind past it breaks
    /// Progress at the first event after the deadline, naming the step that set the target.
    #[test]
    fn a_node_stalled_past_its_bound_breaks_it() {
        // The committed log holds one term above node 1's committed index: one run to walk back.
        let bound = bounds().catch_up_micros(2, 1);
        let history = vec![
            state(1, 1, false, 0, 0),
            liveness(),
            committed(0, noop(1, 1)),
            committed(0, write(2, 1, 1)),
            committed(1, noop(1, 1)),
            state(0, 1, true, 0, 2),
            end(),
        ];
        // Node 1 reaches offset 1 and never offset 2: the target step 3 set (lag 2) is past its
        // deadline at the end.
        let late = [0, 0, 10, 20, 30, 40, 20 + bound + 1];
        let found = check(&history, &late, bounds());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].step, 6);
        assert!(
            found[0].text().contains("live node 1"),
            "{}",
            found[0].text()
        );
        assert!(
            found[0].text().contains("after step 3"),
            "{}",
            found[0].text()
        );
        // Inside its bound, the same history holds.
        let soon = [0, 0, 10, 20, 30, 40, 50];
        assert_eq!(check(&history, &soon, bounds()), vec![]);
        // Before the faults heal, nothing is judged.
        let mut before = history.clone();
        before.remove(1);
        let mut times = late.to_vec();
        times.remove(1);
        assert_eq!(check(&before, &times, bounds()), vec![]);
    }

    /// A node waits for the leader's whole durable log above it, committed or not: a leader
    /// commits nothing of its term before a majority holds its log through its noop, so a long
    /// uncommitted tail (a pipelining writer's) lengthens the bound by its batches.
    #[test]
    fn a_node_waits_for_the_leaders_whole_log_above_it() {
        let history = vec![
            state(1, 9, false, 0, 0),
            liveness(),
            Event::BecameLeader { node: 0, term: 9 },
            Event::DurableLog {
                node: 0,
                last: 40,
                term: 8,
            },
            committed(0, noop(1, 9)),
            end(),
        ];
        let terms = 1;
        let whole = bounds().led_catch_up_micros(40, terms);
        let committed_only = bounds().led_catch_up_micros(1, terms);
        assert!(committed_only < whole);
        let at = |end: u64| vec![0, 0, 0, 0, 10, end];
        assert_eq!(
            check(&history, &at(10 + committed_only + 1), bounds()),
            vec![]
        );
        assert_eq!(check(&history, &at(10 + whole), bounds()), vec![]);
        let found = check(&history, &at(10 + whole + 1), bounds());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].text().contains("live node 1"),
            "{}",
            found[0].text()
        );
    }

    /// A node whose durable log holds a divergent suffix of many runs above its committed index
    /// may take a round trip per run more (a leader walks it back one rejection per run): late
    /// only past that, and the walk counted is the longest the node held since its target was set.
    #[test]
    fn a_divergent_suffix_is_walked_back_one_round_trip_per_run() {
        let durable = |last, term| Event::DurableLog {
            node: 1,
            last,
            term,
        };
        let history = vec![
            state(1, 9, false, 0, 0),
            liveness(),
            // Node 1's log holds six records of six terms, none committed.
            durable(1, 2),
            durable(2, 3),
            durable(3, 4),
            durable(4, 5),
            durable(5, 6),
            durable(6, 7),
            committed(0, noop(1, 9)),
            committed(0, noop(2, 9)),
            // The leader's walk back cut it to nothing before it matched.
            durable(0, 0),
            state(0, 9, true, 0, 2),
            end(),
        ];
        // The target (set at step 8, lag 2, committed log one term above) allows six runs.
        let with_walk = bounds().catch_up_micros(2, 6);
        let without = bounds().catch_up_micros(2, 1);
        let at = |end: u64| {
            let mut times = vec![0, 0, 1, 1, 1, 1, 1, 1, 10, 10, 10, 10];
            times.push(end);
            times
        };
        let found = check(&history, &at(10 + with_walk + 1), bounds());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].text().contains("live node 1"),
            "{}",
            found[0].text()
        );
        assert_eq!(check(&history, &at(10 + with_walk), bounds()), vec![]);
        assert!(without < with_walk);
        // Without the divergent suffix, the same wait is past the bound.
        let short: Vec<Event> = history
            .iter()
            .filter(|event| !matches!(event, Event::DurableLog { .. }))
            .cloned()
            .collect();
        let times = [0, 0, 10, 10, 10, 10 + without + 1];
        assert_eq!(check(&short, &times, bounds()).len(), 1);
    }

    /// A client answered late breaks it; one answered in time, or answered late only with
    /// retriable refusals before a useful answer in time, holds.
    #[test]
    fn a_client_answered_past_its_bound_breaks_it() {
        let bound = bounds().answer_micros(0, 0);
        let request = read_request(0);
        let history = vec![
            liveness(),
            read_sent(3, 0, 0),
            Event::Replied {
                client: 3,
                node: 0,
                request: request.clone(),
                reply: Reply::NotLeader { hint: None },
            },
            read_sent(3, 1, 0),
            read_served(3, 1, 0, &[]),
        ];
        let late = [0, 10, 20, 30, 31 + bound];
        let found = check(&history, &late, bounds());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].clients, vec![3]);
        assert!(
            found[0].text().contains("request at step 1"),
            "{}",
            found[0].text()
        );
        let soon = [0, 10, 20, 30, 40];
        assert_eq!(check(&history, &soon, bounds()), vec![]);
    }
}
