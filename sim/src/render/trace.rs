//! The record of a run: every history event and every simulator event, in order, with a hash.
//!
//! The audits judge `history` (core `history::Event`s only). The trace interleaves those with the
//! simulator's own events (faults, phases, lease moves, pauses) and numbers every line with a step.
//! The trace hash is structural (`hash`): every line's step, time and event data go into a fixed,
//! documented 64-bit function without being rendered as text, so one seed gives one hash on every
//! machine, every `--jobs` value, and whether or not the lines are kept. A line is rendered as
//! JSON only when the lines are kept (replay, `--trace`, determinism checks, failing runs).

use crate::env::queue::Time;
use crate::env::tape::Schedule;
use crate::render::hash;
use felix_audits::fnv;
use felix_core::api::ClientId;
use felix_core::history::Event;
use felix_core::NodeId;
use serde::{Deserialize, Serialize};

/// The version of the JSONL trace format (docs/trace-format.md), written on the first line.
/// Version 3 adds the `violation` lines at the end of a failing run.
pub const TRACE_FORMAT: u32 = 3;

/// The trace formats this build reads: version 2 is version 3 without `violation` lines.
pub const TRACE_FORMATS_READ: std::ops::RangeInclusive<u32> = 2..=TRACE_FORMAT;

/// Something the simulator did to the world, recorded beside the core's events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimEvent {
    /// The run starts with these knobs (a JSON object of `Knobs`), in trace format
    /// `trace_format` (`TRACE_FORMAT`). `twin` labels the configuration: a twin name, a control
    /// run, and a continuation's fork (`fork STEP:BRANCH`, `fork`).
    Started {
        trace_format: u32,
        seed: u64,
        twin: Option<String>,
        knobs: serde_json::Value,
    },
    /// A phase began: "liveness" after heal, "quiesce" when writers stop before the deadline.
    Phase {
        name: String,
    },
    /// A network fault was injected, described in words.
    NetworkFault {
        description: String,
    },
    /// Faults healed: every link restored, no more loss.
    Healed,
    /// The lease service moved the lease; `told` says whether the old holder was told.
    LeaseMoved {
        from: Option<ClientId>,
        to: ClientId,
        epoch: u64,
        told: bool,
    },
    /// A client process froze (its timers and messages wait) or thawed.
    Paused {
        client: ClientId,
    },
    Resumed {
        client: ClientId,
    },
    /// A crash lost this many unsynced storage operations and tore (or not) the last record.
    DiskLost {
        node: NodeId,
        ops_lost: u64,
        torn: bool,
    },
    /// The run ended at this simulated time.
    Finished {
        reason: String,
    },
    /// The verdict: one line per finding, after `finished`, written with the trace file (never
    /// recorded during the run, so it is in no trace hash). `at_step` is the step of the event
    /// the finding names (the same number the summary, the why and `trace show` give).
    Violation {
        invariant: String,
        at_step: Option<u64>,
        clients: Vec<ClientId>,
        detail: String,
    },
    /// A restarting node's disk could not be read (a storage fault, knob `storage_faults`): the
    /// store's words; the node stays down and tries again `retry_micros` later. Last of the
    /// variants so that no other line's hash moved when it was added (a new kind: no new format).
    DiskReadFailed {
        node: NodeId,
        error: String,
        retry_micros: Time,
    },
    /// A continuation leaves its parent here: every stream that draws the future is re-keyed
    /// from (seed, step, branch) (`fork`).
    Forked {
        step: u64,
        branch: u32,
    },
    /// A lease holder's process restarted (BUGGIFY `RestartAfterAck`): it keeps its lease's
    /// `epoch` and nothing else, and reads the stream again from offset 1. Last of the variants,
    /// for the reason `DiskReadFailed` gives.
    HolderRestarted {
        client: ClientId,
        epoch: u64,
    },
}

/// One line of the trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceEvent {
    History(Event),
    Sim(SimEvent),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceLine {
    pub step: u64,
    /// Simulated time, in microseconds since the run started.
    #[serde(rename = "time_micros")]
    pub time: Time,
    #[serde(flatten)]
    pub event: TraceEvent,
}

impl TraceLine {
    /// The line as it is written to a trace file: one JSON object (docs/trace-format.md).
    pub fn to_json(&self) -> String {
        // Serializing a plain enum of owned data cannot fail; a failure here is a bug.
        serde_json::to_string(self).expect("trace line serializes")
    }
}

/// The verdict lines that follow a run's trace (`SimEvent::Violation`), one per finding, each
/// numbered after the last line and timed at its end.
pub fn violation_lines(lines: &[TraceLine], findings: &[crate::Finding]) -> Vec<TraceLine> {
    let (next, time) = lines
        .last()
        .map_or((0, 0), |last| (last.step + 1, last.time));
    findings
        .iter()
        .zip(next..)
        .map(|(finding, step)| TraceLine {
            step,
            time,
            event: TraceEvent::Sim(SimEvent::Violation {
                invariant: finding.invariant.name().to_string(),
                at_step: finding.step,
                clients: finding.clients.clone(),
                detail: finding.detail.clone(),
            }),
        })
        .collect()
}

/// The kind word of a history line and of a simulator line in the hash.
const TRACE_HISTORY: u64 = 0;
const TRACE_SIM: u64 = 1;

/// The sweep hash: FNV-1a (`felix_audits::fnv`) over every seed's trace hash, eight bytes
/// little-endian each, in seed order. One number for a whole sweep, the same for any `--jobs` and
/// for shards merged back in seed order; the default is the hash of no seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepHash(u64);

impl Default for SweepHash {
    fn default() -> SweepHash {
        SweepHash(fnv::OFFSET)
    }
}

impl SweepHash {
    /// Adds the next seed's trace hash.
    pub fn add(&mut self, trace_hash: u64) {
        self.0 = fnv::fnv1a(self.0, &trace_hash.to_le_bytes());
    }

    /// The hash as a number.
    pub fn value(self) -> u64 {
        self.0
    }
}

/// As the summaries print it: 16 hex digits.
impl std::fmt::Display for SweepHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Collects the run's history and trace and hashes every line as it is added.
pub struct Recorder {
    hash: u64,
    steps: u64,
    /// The history events in order (what the audits judge).
    pub history: Vec<Event>,
    /// The trace step of each history event, for naming the step of a violation.
    pub history_steps: Vec<u64>,
    /// The simulated time of each history event (the Progress judge's clock).
    pub history_times: Vec<Time>,
    /// The lines, kept only when asked for (replay, determinism checks, failures); serialized
    /// only when written (`TraceLine::to_json`).
    lines: Option<Vec<TraceLine>>,
    /// The world's schedule, when it records one (the shrinker's final replay): every line is a
    /// step of it.
    schedule: Option<Schedule>,
}

impl Recorder {
    pub fn new(keep_lines: bool, schedule: Option<Schedule>) -> Recorder {
        Recorder {
            hash: hash::SEED,
            steps: 0,
            history: Vec::new(),
            history_steps: Vec::new(),
            history_times: Vec::new(),
            lines: keep_lines.then(Vec::new),
            schedule,
        }
    }

    pub fn history(&mut self, time: Time, event: Event) {
        self.history_steps.push(self.steps);
        self.history_times.push(time);
        self.hash_line(time, TRACE_HISTORY, &event);
        if self.lines.is_some() {
            self.keep_line(time, TraceEvent::History(event.clone()));
        }
        self.history.push(event);
        self.steps += 1;
    }

    /// Keeps only the first `len` history events, with their steps and times (the history of the
    /// same run cut there; the trace's hash and lines are left as they are).
    pub fn truncate_history(&mut self, len: usize) {
        self.history.truncate(len);
        self.history_steps.truncate(len);
        self.history_times.truncate(len);
    }

    pub fn sim(&mut self, time: Time, event: SimEvent) {
        self.hash_line(time, TRACE_SIM, &event);
        if self.lines.is_some() {
            self.keep_line(time, TraceEvent::Sim(event));
        }
        self.steps += 1;
    }

    /// Feeds one line into the hash: its step, its time, which kind of event, and the event's
    /// data (`hash::hash_value`, no text).
    fn hash_line<T: Serialize>(&mut self, time: Time, kind: u64, event: &T) {
        if let Some(schedule) = &self.schedule {
            schedule.note(crate::env::tape::Step::Line);
        }
        let mut hash = hash::mix(self.hash, self.steps);
        hash = hash::mix(hash, time);
        hash = hash::mix(hash, kind);
        self.hash = hash::hash_value(hash, event);
    }

    /// Renders the line as JSON, only when the lines are kept (replay, `--trace`, failures).
    fn keep_line(&mut self, time: Time, event: TraceEvent) {
        let line = TraceLine {
            step: self.steps,
            time,
            event,
        };
        if let Some(lines) = &mut self.lines {
            lines.push(line);
        }
    }

    pub fn hash(&self) -> u64 {
        self.hash
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }

    pub fn take_lines(&mut self) -> Option<Vec<TraceLine>> {
        self.lines.take()
    }

    pub fn lines(&self) -> Option<&[TraceLine]> {
        self.lines.as_deref()
    }
}
