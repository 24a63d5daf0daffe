//! BUGGIFY for the simulator's clients and nodes: rare behaviours injected at dangerous moments.
//!
//! FoundationDB's two gates, per named site: *activation* is decided once per run (a knob, drawn
//! with the others from the seed and printed with them, P = 1/4 per site), *firing* on each
//! evaluation of an active site (P = 1/4; a site of a rare moment, ReadAfterJump, every time:
//! `Site::fire_per_million`), from the run's own `Buggify` stream so that no other
//! component's draws shift. Each run thus enables a random subset of the rare paths: swarm testing
//! at the granularity of a moment. The sites are moments every fenced, replicated system must
//! survive (a process paused right after an acknowledgement, a lease that moves while a request is
//! in flight, a node that dies right after it answered, a read that reaches a node right after it
//! caught up by a jump), not the path of any one rule.
//!
//! The world evaluates the sites (`world/buggify.rs`); this module holds their names and gates.

use crate::env::rng::Stream;
use felix_audits::Counter;
use serde::{Deserialize, Serialize};

/// The chance that a site is active in a run.
pub const ACTIVE_PER_MILLION: u32 = 250_000;
/// The chance that an active site fires when evaluated (`Site::fire_per_million`: rare moments
/// fire every time).
pub const FIRE_PER_MILLION: u32 = 250_000;

/// How many sites `draw_active` draws (the sites of the first swarm); the rest are drawn later.
const FIRST_SITES: usize = 7;

/// Where the sites `draw_active_late` draws end; the rest are drawn last of all.
const LATE_SITES_END: usize = 8;

/// Where the sites `draw_active_last` draws end; the rest are drawn after every knob
/// (`draw_active_final`).
const LAST_SITES_END: usize = 9;

/// The named sites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Site {
    /// A writer (lease holder or checkpoint owner) freezes right after one of its appends is
    /// acknowledged: the process pause of the fencing literature.
    PauseAfterAck,
    /// A writer freezes right after it sent a conditional append (its answer waits for it).
    PauseInFlight,
    /// The lease (or the writer fence) moves to another client, silently, right after the
    /// current writer sent a conditional append.
    LeaseMoveInFlight,
    /// A node crashes right after it answered a client's append or trim.
    CrashAfterAck,
    /// A node is cut off from everyone right after it answered a client's append or trim.
    IsolateAfterAck,
    /// Every node loses power at once right after one answered a client's append or trim (a
    /// correlated crash: whatever no disk had synced is gone everywhere).
    PowerLossAfterAck,
    /// One sync takes far longer than the disk's usual latency (a stalled disk).
    SlowSync,
    /// Right after a node caught up by a jump (state transfer: it now holds nothing below the
    /// point), a reader restarts from the start of the journal and asks that node first: the
    /// node's replaced state meets the read that depends most on it (a cursor the jump skipped),
    /// at the moment it is least settled. The moment is InstallSnapshot's; the behaviour a
    /// consumer restarting without its saved position.
    ReadAfterJump,
    /// Right after a node became leader (the cluster's state just moved on), the last messages
    /// another node sent to its peers arrive again: votes, appends and acknowledgements of terms
    /// and logs that are gone. Every replicated log must survive a burst of its own past (a
    /// replaying proxy, a switch flushing its buffers after a partition).
    ReplayPast,
    /// A lease holder's process restarts right after one of its appends or trims was
    /// acknowledged. It re-attaches to its unexpired lease (the same epoch, as a client resumes
    /// its session) but keeps nothing else: it reads the stream again from the start, and the
    /// requests the old process had in flight may still land. Every consumer of a trimmed
    /// journal meets the floors it set itself this way (a restart without its saved position).
    RestartAfterAck,
}

impl Site {
    pub const ALL: [Site; 10] = [
        Site::PauseAfterAck,
        Site::PauseInFlight,
        Site::LeaseMoveInFlight,
        Site::CrashAfterAck,
        Site::IsolateAfterAck,
        Site::PowerLossAfterAck,
        Site::SlowSync,
        // Added later: its activation is the knobs stream's last draw (`draw_active_late`).
        Site::ReadAfterJump,
        // Added later still: drawn after every other knob (`draw_active_last`).
        Site::ReplayPast,
        // Added after the pipelined writers: drawn after every other knob (`draw_active_final`).
        Site::RestartAfterAck,
    ];

    /// The counter a firing bumps (in the run's coverage).
    pub fn counter(self) -> Counter {
        match self {
            Site::PauseAfterAck => Counter::BuggifyPauseAfterAck,
            Site::PauseInFlight => Counter::BuggifyPauseInFlight,
            Site::LeaseMoveInFlight => Counter::BuggifyLeaseMoveInFlight,
            Site::CrashAfterAck => Counter::BuggifyCrashAfterAck,
            Site::IsolateAfterAck => Counter::BuggifyIsolateAfterAck,
            Site::PowerLossAfterAck => Counter::BuggifyPowerLossAfterAck,
            Site::SlowSync => Counter::BuggifySlowSync,
            Site::ReadAfterJump => Counter::BuggifyReadAfterJump,
            Site::ReplayPast => Counter::BuggifyReplayPast,
            Site::RestartAfterAck => Counter::BuggifyRestartAfterAck,
        }
    }

    /// The chance that this site fires when active and evaluated. A site evaluated at a moment
    /// that comes a handful of times per run at most (a jump) fires every time: a quarter of
    /// those moments would leave the site all but unseen, which is what the gate is not for
    /// (it keeps frequent moments from firing on every evaluation).
    pub fn fire_per_million(self) -> u32 {
        match self {
            Site::ReadAfterJump => 1_000_000,
            _ => FIRE_PER_MILLION,
        }
    }

    /// The sites active in a run among the first seven, drawn once (from the knobs stream, as a
    /// knob).
    pub fn draw_active(stream: &mut Stream) -> Vec<Site> {
        Site::ALL[..FIRST_SITES]
            .iter()
            .copied()
            .filter(|_| stream.chance(ACTIVE_PER_MILLION))
            .collect()
    }

    /// The later sites active in a run: drawn after every other knob (a twin's bias included), so
    /// that adding a site moved no earlier draw of any seed: a seed's world changes only where the
    /// new site is active and its moment comes.
    pub fn draw_active_late(stream: &mut Stream) -> Vec<Site> {
        Site::ALL[FIRST_SITES..LATE_SITES_END]
            .iter()
            .copied()
            .filter(|_| stream.chance(ACTIVE_PER_MILLION))
            .collect()
    }
}

impl Site {
    /// The sites added after the replication shape and the prober: drawn after every other knob
    /// (`Knobs::draw_last`), for the reason `draw_active_late` gives.
    pub fn draw_active_last(stream: &mut Stream) -> Vec<Site> {
        Site::draw_among(&Site::ALL[LATE_SITES_END..LAST_SITES_END], stream)
    }

    /// The sites added after the pipelined writers: drawn after every knob, the pipeline's
    /// included (`Knobs::draw_last`), for the reason `draw_active_late` gives.
    pub fn draw_active_final(stream: &mut Stream) -> Vec<Site> {
        Site::draw_among(&Site::ALL[LAST_SITES_END..], stream)
    }

    fn draw_among(sites: &[Site], stream: &mut Stream) -> Vec<Site> {
        sites
            .iter()
            .copied()
            .filter(|_| stream.chance(ACTIVE_PER_MILLION))
            .collect()
    }
}

/// The firing gate of a run.
pub struct Buggify {
    active: Vec<Site>,
    stream: Stream,
}

impl Buggify {
    /// The gate of `active` sites, drawing from `stream`.
    pub fn new(stream: Stream, active: &[Site]) -> Buggify {
        Buggify {
            active: active.to_vec(),
            stream,
        }
    }

    /// Re-keys the gate's stream (a continuation's fork, `fork`).
    pub fn rekey(&mut self, key: u64) {
        self.stream.rekey(key);
    }

    /// Whether `site` fires now: never when inactive (and then nothing is drawn).
    pub fn fire(&mut self, site: Site) -> bool {
        self.active.contains(&site) && self.stream.chance(site.fire_per_million())
    }

    /// Whether `site` is active in this run (nothing is drawn).
    pub fn is_active(&self, site: Site) -> bool {
        self.active.contains(&site)
    }

    /// A draw for what a firing site does (how long a pause lasts, ...).
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        self.stream.range(low, high)
    }
}
