//! `felix bench store`: append and read-back throughput of the two log stores (`felix bench sim`,
//! the simulator's speed, is in `sim.rs`).
//!
//! Appends N write records in batches (one sync per batch), then reads every record back, first on
//! the in-memory store (the simulator's disk, its hot path) and then on the file-backed store in a
//! fresh temporary directory (fewer records: every batch is an fsync). Wall-clock timings live in
//! the benchmarks (`bench store` here, `bench sim`, and felix-node's `bench cluster`) and nowhere
//! else: a benchmark is the only place they belong, never an assert in a test.

pub mod sim;

use crate::exit;
use clap::{Args, Subcommand};
use felix_core::record::{Command, Entry, Headers, Offset};
use felix_core::storage::{LogStore, MemoryStore, SegmentLayout, StorageOp};
use felix_store::FileStore;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Arguments of `felix bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    target: Target,
}

#[derive(Subcommand, Debug)]
enum Target {
    /// Append + read throughput of the in-memory and file-backed log stores.
    Store(StoreArgs),
    /// Simulator speed: seeds/s, events/s, and the share of wall time inside the core's
    /// Broker::step and the audits (one thread).
    Sim(sim::SimArgs),
    /// A real 3-node cluster on loopback with fsync: appends/s and p50/p99 latency for 1, 8
    /// and 64 writers, beside the disk's one-fsync-per-append rate.
    Cluster(felix_node::bench::ClusterBenchArgs),
}

/// Arguments of `felix bench store`.
#[derive(Args, Debug)]
struct StoreArgs {
    /// Records appended to the in-memory store.
    #[arg(long, default_value_t = 1_000_000)]
    records: u64,
    /// Records appended to the file store (default: records / 10, at most 200000).
    #[arg(long)]
    file_records: Option<u64>,
    /// Records per append (one sync per batch).
    #[arg(long, default_value_t = 64)]
    batch: u64,
    /// Bytes in each record's body.
    #[arg(long, default_value_t = 100)]
    body_bytes: usize,
    /// Records per segment.
    #[arg(long, default_value_t = 4096)]
    records_per_segment: u64,
    /// Directory for the file store (must not exist; removed afterwards). Default: a fresh
    /// directory under the system temporary directory.
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Limits that keep a typo from exhausting memory.
const RECORDS_MAX: u64 = 50_000_000;
const BODY_BYTES_MAX: usize = 1 << 20;

pub fn run(args: BenchArgs) -> u8 {
    match args.target {
        Target::Store(args) => store(args),
        Target::Sim(args) => sim::run(args),
        Target::Cluster(args) => felix_node::bench::run_bench_cluster(args),
    }
}

/// What one store measured.
struct Figures {
    records: u64,
    append: Duration,
    read: Duration,
    recover: Duration,
}

fn rate(records: u64, duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds <= 0.0 {
        return "-".to_string();
    }
    format!("{:.0}", records as f64 / seconds)
}

fn store(args: StoreArgs) -> u8 {
    if args.records == 0 || args.records > RECORDS_MAX {
        return exit::bad_input(format!("--records must be 1..={RECORDS_MAX}"));
    }
    let file_records = args
        .file_records
        .unwrap_or((args.records / 10).clamp(1, 200_000));
    if file_records == 0 || file_records > RECORDS_MAX {
        return exit::bad_input(format!("--file-records must be 1..={RECORDS_MAX}"));
    }
    if args.batch == 0 || args.batch > 1_000_000 {
        return exit::bad_input("--batch must be 1..=1000000");
    }
    if args.body_bytes > BODY_BYTES_MAX {
        return exit::bad_input(format!("--body-bytes must be at most {BODY_BYTES_MAX}"));
    }
    if args.records_per_segment == 0 {
        return exit::bad_input("--records-per-segment must be at least 1");
    }
    let layout = SegmentLayout {
        records_per_segment: args.records_per_segment,
    };
    let body = vec![0x5Au8; args.body_bytes];

    let memory = match bench_memory(layout, args.records, args.batch, &body) {
        Ok(figures) => figures,
        Err(message) => {
            eprintln!("felix: bench failed: {message}");
            return exit::VIOLATION;
        }
    };
    let dir = args.dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("felix-bench-store-{}", std::process::id()))
    });
    if dir.exists() {
        return exit::bad_input(format!(
            "{} already exists; the file bench needs a fresh directory",
            dir.display()
        ));
    }
    // A directory that cannot be made (no such parent, no permission, /proc) is bad input.
    if let Err(error) = std::fs::create_dir(&dir) {
        return exit::bad_input(format!("cannot create {}: {error}", dir.display()));
    }
    let file = bench_file(&dir, layout, file_records, args.batch, &body);
    let _ = std::fs::remove_dir_all(&dir);
    let file = match file {
        Ok(figures) => figures,
        Err(message) => {
            eprintln!("felix: bench failed: {message}");
            return exit::VIOLATION;
        }
    };

    out!(
        "store (batch {} records, {}-byte bodies, {} records/segment)",
        args.batch,
        args.body_bytes,
        args.records_per_segment
    );
    out!(
        "{:<8} {:>10} {:>16} {:>16} {:>16}",
        "store",
        "records",
        "append rec/s",
        "read rec/s",
        "recover rec/s"
    );
    for (name, figures) in [("memory", &memory), ("file", &file)] {
        out!(
            "{:<8} {:>10} {:>16} {:>16} {:>16}",
            name,
            figures.records,
            rate(figures.records, figures.append),
            rate(figures.records, figures.read),
            rate(figures.records, figures.recover)
        );
    }
    out!("file store directory: {} (removed)", dir.display());
    exit::OK
}

fn batch_of(first: Offset, count: u64, body: &[u8]) -> Vec<Entry> {
    (first..first + count)
        .map(|offset| Entry {
            offset,
            term: 1,
            command: Command::Write {
                body: body.to_vec(),
                headers: Headers::with_epoch(1),
            },
        })
        .collect()
}

/// Appends `records` in batches, timing only the store's apply + sync.
fn append_all(
    store: &mut impl LogStore,
    records: u64,
    batch: u64,
    body: &[u8],
) -> Result<Duration, String> {
    let mut spent = Duration::ZERO;
    let mut next: Offset = 1;
    while next <= records {
        let count = batch.min(records - next + 1);
        let op = StorageOp::Append(batch_of(next, count, body));
        let started = Instant::now();
        store.apply(&op).map_err(|error| error.to_string())?;
        store.sync().map_err(|error| error.to_string())?;
        spent += started.elapsed();
        next += count;
    }
    Ok(spent)
}

/// Checks that a read-back holds exactly offsets 1..=records with the right bodies.
fn check_read_back<'a>(
    entries: impl Iterator<Item = &'a Entry>,
    records: u64,
    body: &[u8],
) -> Result<(), String> {
    let mut expected: Offset = 1;
    for entry in entries {
        let body_ok = matches!(&entry.command, Command::Write { body: read, .. } if read == body);
        if entry.offset != expected || !body_ok {
            return Err(format!("read back a wrong record at offset {expected}"));
        }
        expected += 1;
    }
    if expected != records + 1 {
        return Err(format!("read back {} of {records} records", expected - 1));
    }
    Ok(())
}

fn bench_memory(
    layout: SegmentLayout,
    records: u64,
    batch: u64,
    body: &[u8],
) -> Result<Figures, String> {
    let mut store = MemoryStore::new(layout);
    store.recover().map_err(|error| error.to_string())?;
    let append = append_all(&mut store, records, batch, body)?;

    let started = Instant::now();
    let mut body_bytes = 0usize;
    for offset in 1..=records {
        match store.entry(offset).map(|entry| &entry.command) {
            Some(Command::Write { body, .. }) => body_bytes += body.len(),
            _ => return Err(format!("offset {offset} missing from the memory store")),
        }
    }
    let read = started.elapsed();
    if body_bytes != body.len() * records as usize {
        return Err("read back the wrong number of body bytes".to_string());
    }

    let started = Instant::now();
    let recovered = store.recover().map_err(|error| error.to_string())?;
    let recover = started.elapsed();
    check_read_back(recovered.entries.iter(), records, body)?;
    Ok(Figures {
        records,
        append,
        read,
        recover,
    })
}

fn bench_file(
    dir: &Path,
    layout: SegmentLayout,
    records: u64,
    batch: u64,
    body: &[u8],
) -> Result<Figures, String> {
    let mut store = FileStore::open(dir, layout).map_err(|error| error.to_string())?;
    store.recover().map_err(|error| error.to_string())?;
    let append = append_all(&mut store, records, batch, body)?;
    drop(store);

    // Reading back a file store is a recovery: open the directory, scan and check every frame.
    let started = Instant::now();
    let mut store = FileStore::open(dir, layout).map_err(|error| error.to_string())?;
    let recovered = store.recover().map_err(|error| error.to_string())?;
    let recover = started.elapsed();
    let started = Instant::now();
    check_read_back(recovered.entries.iter(), records, body)?;
    let read = started.elapsed() + recover;
    if let Some(cut) = recovered.tail_cut {
        return Err(format!("a clean store had a torn tail: {cut}"));
    }
    Ok(Figures {
        records,
        append,
        read,
        recover,
    })
}
