//! `felix store check DIR` and `felix store dump DIR`: look at a file store directory without
//! changing it.
//!
//! Both read the directory with `FileStore::inspect`, which recovers in memory only: a torn tail
//! that recovery would cut, an interrupted compaction it would finish, a temp file it would remove
//! are listed as repairs, never carried out. Nothing here opens a file for writing.
//!
//! Exit codes: 0 the store opens (possibly with repairs, listed); 1 it is damaged (recovery would
//! refuse it: the file and byte position are printed); 2 bad usage (DIR missing, not a directory,
//! or holding no store).

use crate::exit;
use clap::{Args, Subcommand};
use felix_core::record::{Command, Entry, Offset};
use felix_core::storage::StoreError;
use felix_sim::render::describe;
use felix_store::{FileStore, Inspection};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Arguments of `felix store`.
#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Print what a store directory holds and any damage (exit 0 opens, 1 damaged, 2 bad usage).
    Check(CheckArgs),
    /// Print what `check` prints, then every record (exit codes as `check`).
    Dump(DumpArgs),
}

/// Arguments of `felix store check`.
#[derive(Args, Debug)]
struct CheckArgs {
    /// The store directory (read only; never written).
    dir: PathBuf,
}

/// Arguments of `felix store dump`.
#[derive(Args, Debug)]
struct DumpArgs {
    /// The store directory (read only; never written).
    dir: PathBuf,
    /// First offset to print (default: the first held offset).
    #[arg(long)]
    from: Option<Offset>,
    /// One JSON object per line: the store summary, then one per record.
    #[arg(long)]
    json: bool,
}

pub fn run(args: StoreArgs) -> u8 {
    match args.action {
        Action::Check(args) => check(&args.dir),
        Action::Dump(args) => dump(&args.dir, args.from, args.json),
    }
}

/// Refuses a DIR that is missing or not a directory (bad usage, exit 2).
fn usable_dir(dir: &Path) -> Result<(), u8> {
    match std::fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(_) => Err(exit::bad_input(format!(
            "{} is not a directory",
            dir.display()
        ))),
        Err(error) => Err(exit::bad_input(format!("{}: {error}", dir.display()))),
    }
}

/// Inspects `dir`: the inspection, or the exit code after printing why not.
fn inspect(dir: &Path, json: bool) -> Result<Inspection, u8> {
    usable_dir(dir)?;
    match FileStore::inspect(dir, None) {
        Ok(inspection) if inspection.fresh => Err(exit::bad_input(format!(
            "{} holds no store (no promise, meta, sealed or segment file)",
            dir.display()
        ))),
        Ok(inspection) => Ok(inspection),
        Err(error) => {
            print_damage(dir, &error, json);
            Err(exit::VIOLATION)
        }
    }
}

#[derive(Serialize)]
struct DamageJson<'a> {
    kind: &'static str,
    dir: String,
    status: &'static str,
    path: Option<String>,
    position: Option<u64>,
    error: String,
    files: &'a [FileJson],
}

#[derive(Serialize)]
struct FileJson {
    name: String,
    kind: String,
    bytes: u64,
}

/// Every entry of `dir`, its type and size (never following a symbolic link, never opening one).
fn listing(dir: &Path) -> Vec<FileJson> {
    let mut files = Vec::new();
    if let Ok(items) = std::fs::read_dir(dir) {
        for item in items.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            let (kind, bytes) = match std::fs::symlink_metadata(item.path()) {
                Ok(metadata) => {
                    let file_type = metadata.file_type();
                    let kind = if file_type.is_file() {
                        "file"
                    } else if file_type.is_dir() {
                        "directory"
                    } else if file_type.is_symlink() {
                        "symbolic link"
                    } else {
                        "special file"
                    };
                    (kind.to_string(), metadata.len())
                }
                Err(error) => (format!("unreadable: {error}"), 0),
            };
            files.push(FileJson { name, kind, bytes });
        }
    }
    files.sort_by(|left, right| left.name.cmp(&right.name));
    files
}

fn print_damage(dir: &Path, error: &StoreError, json: bool) {
    let (path, position) = match error {
        StoreError::Corrupt { path, position, .. } => (Some(path), Some(*position)),
        StoreError::Io { path, .. } => (Some(path), None),
        StoreError::Invalid { .. } => (None, None),
    };
    let files = listing(dir);
    if json {
        let value = DamageJson {
            kind: "store",
            dir: dir.display().to_string(),
            status: "damaged",
            path: path.map(|path| path.display().to_string()),
            position,
            error: error.to_string(),
            files: &files,
        };
        out!(
            "{}",
            serde_json::to_string(&value).expect("plain data serializes")
        );
        return;
    }
    out!("store {}", dir.display());
    out!("DAMAGED: {error}");
    if let Some(path) = path {
        match position {
            Some(position) => out!("  file {} at byte {position}", path.display()),
            None => out!("  file {}", path.display()),
        }
    }
    out!("files:");
    for file in &files {
        out!(
            "  {:<32} {:<14} {:>12} bytes",
            file.name,
            file.kind,
            file.bytes
        );
    }
    out!("recovery would refuse this store (exit 1)");
}

fn promise_text(inspection: &Inspection) -> String {
    let promise = inspection.recovered.hard_state;
    match promise.vote {
        Some(vote) => format!("term {}, voted for {}", promise.term, describe::node(vote)),
        None => format!("term {}, no vote", promise.term),
    }
}

fn trims(entries: &[Entry]) -> Vec<(Offset, Offset)> {
    entries
        .iter()
        .filter_map(|entry| match &entry.command {
            Command::Trim { floor, .. } => Some((entry.offset, *floor)),
            _ => None,
        })
        .collect()
}

fn print_summary(dir: &Path, inspection: &Inspection) {
    let recovered = &inspection.recovered;
    out!("store {}", dir.display());
    out!(
        "layout: {} records per segment",
        inspection.layout.records_per_segment
    );
    out!("promise: {}", promise_text(inspection));
    match &recovered.sealed {
        None => out!("sealed: none (nothing compacted or jumped over)"),
        Some(state) => out!("sealed: {}", describe::sealed(state)),
    }
    let floor = recovered.sealed.as_ref().map_or(0, |state| state.floor);
    out!("floor (sealed): {floor}");
    if recovered.entries.is_empty() {
        out!(
            "log: empty, first held offset {}, next append at {}",
            recovered.start,
            recovered.next()
        );
    } else {
        out!(
            "log: offsets {}..={} ({} records), next append at {}",
            recovered.start,
            recovered.next() - 1,
            recovered.entries.len(),
            recovered.next()
        );
    }
    let trims = trims(&recovered.entries);
    if trims.is_empty() {
        out!("trims in the log: none");
    } else {
        let listed: Vec<String> = trims
            .iter()
            .map(|(offset, floor)| format!("{offset} (floor {floor})"))
            .collect();
        out!("trims in the log: {}", listed.join(", "));
    }
    let mark = inspection.meta.map_or(0, |meta| meta.synced_mark);
    out!("synced mark: {mark}");
    out!("segments: {}", inspection.segments.len());
    for segment in &inspection.segments {
        let name = segment
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        out!(
            "  {name}: offsets {}..={} ({} records, {} bytes)",
            segment.first,
            segment.next() - 1,
            segment.positions.len(),
            segment.len_bytes
        );
    }
    if inspection.repairs.is_empty() {
        out!("repairs: none (closed cleanly)");
    } else {
        out!("repairs recovery would make (not made here):");
        for repair in &inspection.repairs {
            out!("  {repair}");
        }
    }
    match &recovered.tail_cut {
        Some(cut) => out!("torn tail: {cut}"),
        None => out!("torn tail: none"),
    }
    out!("ok: the store opens");
}

fn check(dir: &Path) -> u8 {
    match inspect(dir, false) {
        Ok(inspection) => {
            print_summary(dir, &inspection);
            exit::OK
        }
        Err(code) => code,
    }
}

#[derive(Serialize)]
struct SummaryJson {
    kind: &'static str,
    dir: String,
    status: &'static str,
    records_per_segment: u64,
    term: u64,
    vote: Option<u32>,
    sealed: Option<String>,
    floor: Offset,
    start: Offset,
    next: Offset,
    records: usize,
    trims: Vec<Offset>,
    synced_mark: Offset,
    segments: Vec<SegmentJson>,
    repairs: Vec<String>,
    torn_tail: Option<String>,
}

#[derive(Serialize)]
struct SegmentJson {
    path: String,
    first: Offset,
    records: usize,
    bytes: u64,
}

#[derive(Serialize)]
struct RecordJson<'a> {
    kind: &'static str,
    offset: Offset,
    term: u64,
    text: String,
    command: &'a Command,
}

fn dump(dir: &Path, from: Option<Offset>, json: bool) -> u8 {
    let inspection = match inspect(dir, json) {
        Ok(inspection) => inspection,
        Err(code) => return code,
    };
    let recovered = &inspection.recovered;
    let from = from.unwrap_or(recovered.start);
    if json {
        let summary = SummaryJson {
            kind: "store",
            dir: dir.display().to_string(),
            status: "ok",
            records_per_segment: inspection.layout.records_per_segment,
            term: recovered.hard_state.term,
            vote: recovered.hard_state.vote,
            sealed: recovered.sealed.as_ref().map(describe::sealed),
            floor: recovered.sealed.as_ref().map_or(0, |state| state.floor),
            start: recovered.start,
            next: recovered.next(),
            records: recovered.entries.len(),
            trims: trims(&recovered.entries)
                .into_iter()
                .map(|(offset, _)| offset)
                .collect(),
            synced_mark: inspection.meta.map_or(0, |meta| meta.synced_mark),
            segments: inspection
                .segments
                .iter()
                .map(|segment| SegmentJson {
                    path: segment.path.display().to_string(),
                    first: segment.first,
                    records: segment.positions.len(),
                    bytes: segment.len_bytes,
                })
                .collect(),
            repairs: inspection.repairs.iter().map(ToString::to_string).collect(),
            torn_tail: recovered.tail_cut.as_ref().map(ToString::to_string),
        };
        out!(
            "{}",
            serde_json::to_string(&summary).expect("plain data serializes")
        );
    } else {
        print_summary(dir, &inspection);
        out!("records from {from}:");
    }
    for entry in recovered
        .entries
        .iter()
        .filter(|entry| entry.offset >= from)
    {
        if json {
            let record = RecordJson {
                kind: "record",
                offset: entry.offset,
                term: entry.term,
                text: describe::entry(entry),
                command: &entry.command,
            };
            out!(
                "{}",
                serde_json::to_string(&record).expect("plain data serializes")
            );
        } else {
            out!("  {}", describe::entry(entry));
        }
    }
    exit::OK
}
