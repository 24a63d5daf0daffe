//! A node's observed events, one JSON line each with the wall-clock time it was observed:
//! `DIR/events.jsonl`. The nemesis merges every node's file with its own client history into one
//! trace (`nemesis/history.rs`).
//!
//! The node writes the buffered lines to the file (one `write`, no fsync: the page cache survives
//! a SIGKILL) before any send or reply leaves, so an event never goes missing while a message
//! that depended on it got out. Times are wall-clock microseconds since the Unix epoch: the only
//! clock every process on the machine shares.

use felix_core::history::Event;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Lines buffered above this are written at once, whatever the loop is doing.
const BUFFER_BYTES_MAX: usize = 1 << 20;

/// One line of `events.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedEvent {
    pub time_micros: u64,
    pub event: Event,
}

/// Wall-clock microseconds since the Unix epoch (0 if the clock is before it).
pub fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_micros() as u64)
        .unwrap_or(0)
}

/// The event log of one node incarnation (appended to across restarts).
pub struct EventLog {
    file: File,
    buffer: Vec<u8>,
}

impl EventLog {
    pub fn open(path: &Path) -> io::Result<EventLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(EventLog {
            file,
            buffer: Vec::new(),
        })
    }

    /// Buffers `event`, timestamped now.
    pub fn record(&mut self, event: Event) -> io::Result<()> {
        let line = LoggedEvent {
            time_micros: now_micros(),
            event,
        };
        serde_json::to_writer(&mut self.buffer, &line).map_err(io::Error::other)?;
        self.buffer.push(b'\n');
        if self.buffer.len() > BUFFER_BYTES_MAX {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes what is buffered to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        self.file.write_all(&self.buffer)?;
        self.buffer.clear();
        Ok(())
    }
}
