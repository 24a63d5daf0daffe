//! `felix bench cluster`: appends/s and latency of a real 3-node cluster on loopback with fsync,
//! for 1, 8 and 64 concurrent writers, beside the disk's own limit measured the same way in the
//! same directory (one-record appends to a file store, one fsync each: the rate a node without
//! group commit could reach at best).
//!
//! Each writer is a thread with its own connection that appends a 100-byte body, waits for the
//! acknowledgement (committed on a majority, fsynced there), and appends again. Wall-clock
//! timings live in the benchmarks (this one, and the cli's `bench store` and `bench sim`) and
//! nowhere else (never in a test).

use crate::client::{route_of, ClusterClient, Router};
use clap::Args;
use felix_core::api::{Reply, Request};
use felix_core::record::{Command, Entry, Headers};
use felix_core::storage::{LogStore, SegmentLayout, StorageOp};
use felix_store::FileStore;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `felix bench cluster`.
#[derive(Args, Debug, Clone)]
pub struct ClusterBenchArgs {
    /// Seconds of appends per writer count.
    #[arg(long, default_value_t = 5)]
    pub seconds: u64,
    /// Writer counts, comma separated.
    #[arg(long, default_value = "1,8,64")]
    pub writers: String,
    /// Bytes per record body.
    #[arg(long, default_value_t = 100)]
    pub body_bytes: usize,
    /// Directory for the nodes' stores (must not exist; removed afterwards). Default: a fresh
    /// directory under the system temporary directory (the same disk as `felix bench store`).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// What one writer count measured.
pub struct Figures {
    pub writers: usize,
    pub appends: u64,
    pub seconds: f64,
    pub p50: Duration,
    pub p99: Duration,
}

pub fn run_bench_cluster(args: ClusterBenchArgs) -> u8 {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => return crate::bad_input(format!("cannot find the felix binary: {error}")),
    };
    match bench(&args, &exe) {
        Ok(()) => 0,
        Err(message) => crate::bad_input(message),
    }
}

fn bench(args: &ClusterBenchArgs, exe: &Path) -> Result<(), String> {
    if !(1..=600).contains(&args.seconds) {
        return Err("--seconds must be between 1 and 600".to_string());
    }
    if args.body_bytes == 0 || args.body_bytes > crate::serve::BODY_BYTES_MAX as usize {
        return Err(format!(
            "--body-bytes must be between 1 and {}",
            crate::serve::BODY_BYTES_MAX
        ));
    }
    let counts: Vec<usize> = args
        .writers
        .split(',')
        .map(|count| count.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("--writers {:?} is not a list of numbers", args.writers))?;
    if counts.iter().any(|count| !(1..=1024).contains(count)) {
        return Err("every --writers count must be between 1 and 1024".to_string());
    }
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("felix-bench-cluster-{}", std::process::id())),
    };
    if dir.exists() {
        return Err(format!("--dir {}: must not exist", dir.display()));
    }
    std::fs::create_dir_all(&dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    let result = bench_in(args, exe, &dir, &counts);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn bench_in(
    args: &ClusterBenchArgs,
    exe: &Path,
    dir: &Path,
    counts: &[usize],
) -> Result<(), String> {
    let fsyncs = fsync_rate(&dir.join("disk"), args.body_bytes, Duration::from_secs(2))?;
    // Big segments: the benchmark measures appends, not segment files.
    let extra = ["--segment-records".to_string(), "65536".to_string()];
    let (mut nodes, addresses) = crate::process::start_voters(exe, dir, 3, &extra)?;
    if !crate::nemesis::wait_for_convergence(&addresses, Duration::from_secs(10)) {
        return Err("the cluster elected no leader within 10 s".to_string());
    }
    out!(
        "felix bench cluster: 3 nodes on 127.0.0.1, file store with fsync, {}-byte bodies, {} s per row ({})",
        args.body_bytes,
        args.seconds,
        dir.display()
    );
    out!(
        "disk: {fsyncs:.0} one-record appends/s with one fsync each (a file store in the same directory)"
    );
    out!(
        "| writers | appends/s | p50 latency | p99 latency | appends per disk fsync-bound append |"
    );
    out!("|---:|---:|---:|---:|---:|");
    for &count in counts {
        let figures = run_writers(
            &addresses,
            count,
            args.body_bytes,
            Duration::from_secs(args.seconds),
        );
        let rate = figures.appends as f64 / figures.seconds.max(1e-9);
        out!(
            "| {} | {rate:.0} | {:.2} ms | {:.2} ms | {:.2} |",
            figures.writers,
            figures.p50.as_secs_f64() * 1e3,
            figures.p99.as_secs_f64() * 1e3,
            rate / fsyncs.max(1e-9)
        );
    }
    for node in &mut nodes {
        node.stop(Duration::from_secs(5));
    }
    // The disk is shared and its fsync rate drifts: measured again after the rows.
    let after = fsync_rate(
        &dir.join("disk-after"),
        args.body_bytes,
        Duration::from_secs(2),
    )?;
    out!(
        "disk after the rows: {after:.0} one-record appends/s with one fsync each (the last column divides by the rate before)"
    );
    Ok(())
}

/// One-record appends with one fsync each, for `length`, on a fresh file store in `dir`.
fn fsync_rate(dir: &Path, body_bytes: usize, length: Duration) -> Result<f64, String> {
    let layout = SegmentLayout {
        records_per_segment: 65536,
    };
    let mut store = FileStore::open(dir, layout).map_err(|error| error.to_string())?;
    store.recover().map_err(|error| error.to_string())?;
    let begun = Instant::now();
    let mut offset = 1;
    while begun.elapsed() < length {
        let entry = Entry {
            offset,
            term: 1,
            command: Command::Write {
                body: vec![b'x'; body_bytes],
                headers: Headers::default(),
            },
        };
        store
            .apply(&StorageOp::Append(vec![entry]))
            .and_then(|()| store.sync())
            .map_err(|error| error.to_string())?;
        offset += 1;
    }
    Ok((offset - 1) as f64 / begun.elapsed().as_secs_f64())
}

fn run_writers(
    addresses: &crate::addresses::Addresses,
    count: usize,
    body_bytes: usize,
    length: Duration,
) -> Figures {
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..count)
        .map(|writer| {
            let addresses = addresses.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let nodes: Vec<_> = addresses.keys().copied().collect();
                let mut client = ClusterClient::new(addresses, Duration::from_secs(5));
                let mut router = Router::new(nodes, writer, Duration::from_millis(10));
                let mut latencies = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    let request = Request::Append {
                        expected_tail: None,
                        fence: None,
                        body: vec![b'b'; body_bytes],
                        headers: Headers::default(),
                    };
                    let sent = Instant::now();
                    match client.call(router.target(), request) {
                        Ok(Reply::Appended { .. }) => latencies.push(sent.elapsed()),
                        Ok(reply) => {
                            let route =
                                route_of(&reply).unwrap_or(felix_core::client::Route::AnotherNode);
                            std::thread::sleep(router.follow(route, true));
                        }
                        Err(_) => router.next(),
                    }
                }
                latencies
            })
        })
        .collect();
    let begun = Instant::now();
    std::thread::sleep(length);
    stop.store(true, Ordering::SeqCst);
    let mut latencies: Vec<Duration> = threads
        .into_iter()
        .flat_map(|thread| thread.join().unwrap_or_default())
        .collect();
    let seconds = begun.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |share: f64| {
        latencies
            .get(((latencies.len() as f64 * share) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Figures {
        writers: count,
        appends: latencies.len() as u64,
        seconds,
        p50: at(0.50),
        p99: at(0.99),
    }
}
