//! One history out of many processes: what the nemesis and its clients saw (recorded here, in
//! the order it happened, with wall-clock times) merged with each node's `events.jsonl`.
//!
//! The merge takes, at each step, the earliest head among the sources (the nemesis's own list, one
//! per client process and one per node), so each source keeps its own order even if the wall clock
//! stepped; across processes the wall clock orders events, which respects causality here because a
//! node timestamps an event before it sends the message or reply that depends on it, and a client
//! timestamps a reply after it arrived. The result is written in the simulator's JSONL trace format
//! (`docs/trace-format.md`): `felix trace show` reads it, and `felix_audits::audit` judges its
//! history events.

use crate::serve::event_log::{now_micros, LoggedEvent};
use felix_core::history::Event;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine, TRACE_FORMAT};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Lines the nemesis keeps at most (a bound on memory; a 60 s run records a few hundred
/// thousand).
pub const RECORDED_MAX: usize = 5_000_000;

/// One timestamped line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamped {
    pub time_micros: u64,
    pub event: TraceEvent,
}

/// Where a recorder's lines go: kept in memory (the nemesis's own record), or handed on one by
/// one as they happen (a client process streaming its record to the nemesis, `client_process`).
enum Kept {
    Memory(Vec<Stamped>),
    Stream(Box<dyn FnMut(&Stamped) + Send>),
}

/// The nemesis's and its clients' record, shared by their threads.
#[derive(Clone)]
pub struct Recorder {
    lines: Arc<Mutex<Kept>>,
}

impl Default for Recorder {
    fn default() -> Recorder {
        Recorder {
            lines: Arc::new(Mutex::new(Kept::Memory(Vec::new()))),
        }
    }
}

impl Recorder {
    /// A recorder that hands each line to `sink` as it is recorded, in time order, instead of
    /// keeping it.
    pub fn streaming(sink: impl FnMut(&Stamped) + Send + 'static) -> Recorder {
        Recorder {
            lines: Arc::new(Mutex::new(Kept::Stream(Box::new(sink)))),
        }
    }

    /// Records a history event now. The time is taken under the lock, so the list is in time
    /// order.
    pub fn history(&self, event: Event) {
        self.push(TraceEvent::History(event));
    }

    pub fn sim(&self, event: SimEvent) {
        self.push(TraceEvent::Sim(event));
    }

    fn push(&self, event: TraceEvent) {
        let mut kept = match self.lines.lock() {
            Ok(kept) => kept,
            Err(poisoned) => poisoned.into_inner(),
        };
        let line = Stamped {
            time_micros: now_micros(),
            event,
        };
        match &mut *kept {
            Kept::Memory(lines) => {
                if lines.len() < RECORDED_MAX {
                    lines.push(line);
                }
            }
            Kept::Stream(sink) => sink(&line),
        }
    }

    /// The lines kept so far (none for a streaming recorder).
    pub fn take(&self) -> Vec<Stamped> {
        let mut kept = match self.lines.lock() {
            Ok(kept) => kept,
            Err(poisoned) => poisoned.into_inner(),
        };
        match &mut *kept {
            Kept::Memory(lines) => std::mem::take(lines),
            Kept::Stream(_) => Vec::new(),
        }
    }
}

/// Reads a node's event log. A line that does not parse (the last one, torn by a kill in the
/// middle of a write) is skipped and counted.
pub fn read_node_log(path: &Path) -> Result<(Vec<Stamped>, usize), String> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(error) => return Err(format!("{}: {error}", path.display())),
    };
    let mut lines = Vec::new();
    let mut skipped = 0;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|error| format!("{}: {error}", path.display()))?;
        match crate::frame::parse_json::<LoggedEvent>(&line) {
            Ok(logged) => lines.push(Stamped {
                time_micros: logged.time_micros,
                event: TraceEvent::History(logged.event),
            }),
            Err(_) => skipped += 1,
        }
    }
    Ok((lines, skipped))
}

/// Merges the sources (each in its own order) by time.
pub fn merge(sources: Vec<Vec<Stamped>>) -> Vec<Stamped> {
    let total = sources.iter().map(Vec::len).sum();
    let mut heads: Vec<std::iter::Peekable<std::vec::IntoIter<Stamped>>> = sources
        .into_iter()
        .map(|source| source.into_iter().peekable())
        .collect();
    let mut merged = Vec::with_capacity(total);
    loop {
        let mut best: Option<(usize, u64)> = None;
        for (index, head) in heads.iter_mut().enumerate() {
            if let Some(line) = head.peek() {
                if best.is_none_or(|(_, time)| line.time_micros < time) {
                    best = Some((index, line.time_micros));
                }
            }
        }
        let Some((index, _)) = best else { break };
        if let Some(line) = heads[index].next() {
            merged.push(line);
        }
    }
    merged
}

/// The merged run as trace lines: `started` first, times relative to `start_micros`.
pub fn trace_lines(
    merged: &[Stamped],
    start_micros: u64,
    seed: u64,
    twin: Option<String>,
    knobs: serde_json::Value,
) -> Vec<TraceLine> {
    let mut lines = Vec::with_capacity(merged.len() + 1);
    lines.push(TraceLine {
        step: 0,
        time: 0,
        event: TraceEvent::Sim(SimEvent::Started {
            trace_format: TRACE_FORMAT,
            seed,
            twin,
            knobs,
        }),
    });
    for stamped in merged {
        lines.push(TraceLine {
            step: lines.len() as u64,
            time: stamped.time_micros.saturating_sub(start_micros),
            event: stamped.event.clone(),
        });
    }
    lines
}

/// The history events of a trace, and for each the index of its trace line.
pub fn history_of(lines: &[TraceLine]) -> (Vec<Event>, Vec<usize>) {
    let mut history = Vec::new();
    let mut at = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if let TraceEvent::History(event) = &line.event {
            history.push(event.clone());
            at.push(index);
        }
    }
    (history, at)
}

/// Writes the trace as JSONL.
pub fn write_trace(path: &Path, lines: &[TraceLine]) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|error| format!("{}: cannot write: {error}", path.display()))?;
    let mut writer = std::io::BufWriter::new(file);
    for line in lines {
        serde_json::to_writer(&mut writer, line)
            .map_err(|error| format!("{}: {error}", path.display()))?;
        writer
            .write_all(b"\n")
            .map_err(|error| format!("{}: {error}", path.display()))?;
    }
    writer
        .flush()
        .map_err(|error| format!("{}: {error}", path.display()))
}
