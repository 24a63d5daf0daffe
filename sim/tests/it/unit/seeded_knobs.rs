//! The knobs' draws, their checks and their JSON.
//!
//! The unit tests of `felix_sim::seeded::knobs` (sim/src/seeded/knobs.rs).

use felix_core::TwinName;
use felix_sim::seeded::buggify::Site;

use felix_core::rules::Layer;
use felix_sim::seeded::knobs::*;

/// Every draw, biased or not, leaves the shortest election timeout four durable round trips
/// long, so elections can finish once the faults heal.
#[test]
fn election_timeouts_outlast_durable_round_trips() {
    let twins = std::iter::once(None).chain(TwinName::in_layer(Layer::Sim).map(Some));
    for twin in twins {
        for seed in 0..200 {
            let knobs = Knobs::draw(seed, twin);
            let round_trip = knobs.sync_max_micros + knobs.network.delay_max_micros;
            let timeout = knobs.tick_micros * knobs.election_ticks_min;
            assert!(
                timeout >= 4 * round_trip,
                "{twin:?} seed {seed}: {}",
                knobs.describe()
            );
        }
    }
}

/// A seed always draws the same knobs, different seeds draw different worlds, and a twin's
/// bias gives it the workload it needs.
#[test]
fn knobs_are_drawn_by_the_seed() {
    assert_eq!(Knobs::draw(11, None), Knobs::draw(11, None));
    let shapes: std::collections::BTreeSet<String> = (0..50)
        .map(|seed| Knobs::draw(seed, None).describe())
        .collect();
    assert!(shapes.len() > 40);
    for seed in 0..50 {
        let knobs = Knobs::draw(seed, Some(TwinName::Untagged));
        assert!(matches!(knobs.workload, Workload::Felixd { .. }));
        assert_eq!(knobs.lease_move_told_per_million, 0);
        let knobs = Knobs::draw(seed, Some(TwinName::UnfencedTruncate));
        assert!(matches!(knobs.workload, Workload::Paros { owners: 2, .. }));
    }
}

/// The default swarm reaches the extremes and the omitted features the module doc promises:
/// one-record segments, one holder, trims on every operation and no trims at all, silent lease
/// moves only, lost renewals, whole fault kinds weighted 0, every BUGGIFY site active
/// somewhere; every draw is valid, survives `normalize` unchanged and reads back from JSON.
#[test]
fn the_default_swarm_reaches_extremes_and_omissions() {
    let draws: Vec<Knobs> = (0..400).map(|seed| Knobs::draw(seed, None)).collect();
    let some = |test: &dyn Fn(&Knobs) -> bool| draws.iter().any(test);
    assert!(some(&|k| k.records_per_segment == 1));
    assert!(some(&|k| k.records_per_segment == 64));
    assert!(some(&|k| matches!(
        k.workload,
        Workload::Felixd { holders: 1 }
    )));
    assert!(some(&|k| k.trim_per_million == 1_000_000));
    assert!(some(&|k| k.trim_per_million == 0));
    assert!(some(&|k| k.lease_move_told_per_million == 0));
    assert!(some(&|k| k.renew_lost_per_million == 1_000_000));
    assert!(some(&|k| k.trim_lag_max == 0));
    assert!(some(&|k| k.weight_pause == 0 && k.weight_crash > 0));
    assert!(some(&|k| k.weight_crash == 0 && k.weight_pause > 0));
    assert!(draws.iter().all(|k| k.fault_weight() > 0));
    for site in Site::ALL {
        assert!(some(&|k| k.buggify.contains(&site)), "{site:?}");
    }
    assert!(some(&|k| k.buggify.is_empty()));
    for knobs in &draws {
        assert_eq!(knobs.validate(), Ok(()));
        let mut again = knobs.clone();
        again.normalize();
        assert_eq!(&again, knobs);
        let json = serde_json::to_string(knobs).unwrap_or_default();
        assert_eq!(Knobs::parse(&json).as_ref(), Ok(knobs));
    }
    // The replication shape's extremes and the prober's omission are drawn too.
    assert!(some(&|k| k.append_entries_max == 1));
    assert!(some(&|k| k.append_entries_max == 64));
    assert!(some(&|k| k.heartbeat_ticks == 1));
    assert!(some(&|k| k.election_ticks_min == 3));
    assert!(some(&|k| k.appends_in_flight_max == Some(1)));
    assert!(some(&|k| k.appends_in_flight_max.is_none()));
    assert!(some(&|k| k.appends_in_flight_max == Some(4)));
    assert!(some(&|k| k.prober) && some(&|k| !k.prober));
    assert!(some(&|k| k.network.ancient_per_million == 0));
    assert!(some(&|k| k.network.ancient_per_million == 50_000));
    // Old messages are captured in some seeds and copied in others; never captured when off.
    assert!(some(&|k| k.network.ancient_captures));
    assert!(some(
        &|k| k.network.ancient_per_million > 0 && !k.network.ancient_captures
    ));
    assert!(draws
        .iter()
        .all(|k| k.network.ancient_per_million > 0 || !k.network.ancient_captures));
    assert!(some(&|k| k.broken_runs) && some(&|k| !k.broken_runs));
    assert!(draws
        .iter()
        .all(|k| !k.broken_runs || matches!(k.workload, Workload::Paros { .. })));
    assert!(some(&|k| k.prober_at_edges) && some(&|k| k.prober && !k.prober_at_edges));
    assert!(draws.iter().all(|k| k.prober || !k.prober_at_edges));
    // Knobs that do not capture print no `ancient_captures`: their JSON is what it was.
    let copying = draws
        .iter()
        .find(|k| !k.network.ancient_captures)
        .map(|k| serde_json::to_string(k).unwrap_or_default());
    assert!(copying.is_some_and(|json| !json.contains("ancient_captures")));
}

/// Knobs printed before the replication shape and the prober existed run as they did; knobs
/// that break what `draw` guarantees, and garbage, are refused.
#[test]
fn older_knob_files_still_parse_and_bad_ones_are_refused() {
    let draws: Vec<Knobs> = (0..1).map(|seed| Knobs::draw(seed, None)).collect();
    let mut old = serde_json::to_value(&draws[0]).unwrap_or_default();
    for field in [
        "append_entries_max",
        "heartbeat_ticks",
        "election_ticks_min",
        "election_ticks_max",
        "appends_in_flight_max",
        "prober",
    ] {
        old.as_object_mut().map(|object| object.remove(field));
    }
    for field in ["ancient_per_million", "ancient_max_micros"] {
        old.get_mut("network")
            .and_then(|network| network.as_object_mut())
            .map(|network| network.remove(field));
    }
    let parsed = Knobs::parse(&old.to_string());
    assert_eq!(
        parsed.as_ref().map(|k| k.network.ancient_per_million),
        Ok(0)
    );
    let parsed = Knobs::parse(&old.to_string());
    let parsed = parsed.as_ref().map(|k| {
        (
            k.append_entries_max,
            k.heartbeat_ticks,
            k.election_ticks_min,
            k.election_ticks_max,
            k.appends_in_flight_max,
            k.prober,
        )
    });
    assert_eq!(parsed, Ok((64, 3, 10, 20, None, false)));
    let mut bad = draws[0].clone();
    bad.append_entries_max = 0;
    assert!(Knobs::parse(&serde_json::to_string(&bad).unwrap_or_default()).is_err());
    bad.append_entries_max = 1;
    bad.heartbeat_ticks = bad.election_ticks_min;
    assert!(Knobs::parse(&serde_json::to_string(&bad).unwrap_or_default()).is_err());
    let mut bad = draws[0].clone();
    bad.appends_in_flight_max = Some(0);
    assert!(Knobs::parse(&serde_json::to_string(&bad).unwrap_or_default()).is_err());
    bad.appends_in_flight_max = Some(1);
    assert!(Knobs::parse(&serde_json::to_string(&bad).unwrap_or_default()).is_ok());
    assert!(Knobs::parse("{").is_err());
    let mut bad = draws[0].clone();
    bad.brokers = 4;
    let json = serde_json::to_string(&bad).unwrap_or_default();
    assert!(Knobs::parse(&json).is_err());
}

/// The storage faults are on in some seeds and off in others; knobs without them print no
/// `storage_faults` (their JSON is what it was before the knob existed, and still parses), knobs
/// with them round-trip through JSON, and a chance over one million is refused.
#[test]
fn storage_faults_are_drawn_in_some_seeds_and_round_trip() {
    let draws: Vec<Knobs> = (0..200).map(|seed| Knobs::draw(seed, None)).collect();
    let on = draws.iter().find(|k| k.storage_faults.is_some());
    let off = draws.iter().find(|k| k.storage_faults.is_none());
    let (Some(on), Some(off)) = (on, off) else {
        panic!("the storage faults are on in every seed of 0..200, or in none");
    };
    let json = serde_json::to_string(off).unwrap_or_default();
    assert!(!json.contains("storage_faults"), "{json}");
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(off));
    let json = serde_json::to_string(on).unwrap_or_default();
    assert!(json.contains("storage_faults"), "{json}");
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(on));
    assert!(on.describe().contains(" storage: damage="));
    assert!(!off.describe().contains("storage"));
    let mut bad = on.clone();
    bad.storage_faults = Some(StorageFaults {
        damage_per_million: 1_000_001,
        read_error_per_million: 0,
    });
    let json = serde_json::to_string(&bad).unwrap_or_default();
    assert!(Knobs::parse(&json).is_err());
}

/// The file store is on in some seeds and off in others. Knobs without it print no `file_store` and
/// parse back to the in-memory store; knobs with it round-trip through JSON and say so in words.
#[test]
fn the_file_store_is_drawn_last_in_some_seeds_and_round_trips() {
    let draws: Vec<Knobs> = (0..100).map(|seed| Knobs::draw(seed, None)).collect();
    let on = draws.iter().find(|k| k.file_store);
    let off = draws.iter().find(|k| !k.file_store);
    let (Some(on), Some(off)) = (on, off) else {
        panic!("the file store is on in every seed of 0..100, or in none");
    };
    let json = serde_json::to_string(off).unwrap_or_default();
    assert!(!json.contains("file_store"), "{json}");
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(off));
    let json = serde_json::to_string(on).unwrap_or_default();
    assert!(json.contains("\"file_store\":true"), "{json}");
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(on));
    let mut without = on.clone();
    without.file_store = false;
    let older = serde_json::to_string(&without).unwrap_or_default();
    assert_eq!(Knobs::parse(&older).map(|k| k.file_store), Ok(false));
    assert!(on.describe().contains(" file_store=true"));
    assert!(!off.describe().contains("file_store"));
}

/// Pipelined and sticky writers are drawn only where owners write (paros), in some seeds and not
/// others; knobs without them print neither (their JSON is what it was before the knobs existed,
/// and still parses to one write in flight and no stickiness), knobs with them round-trip and
/// say so in words, and values out of bounds are refused.
#[test]
fn pipelines_and_sticky_writers_are_drawn_for_owners_and_round_trip() {
    let draws: Vec<Knobs> = (0..300).map(|seed| Knobs::draw(seed, None)).collect();
    let paros = |k: &&Knobs| matches!(k.workload, Workload::Paros { .. });
    assert!(draws
        .iter()
        .filter(|k| !paros(k))
        .all(|k| k.pipeline_depth == 1 && k.sticky_timeouts == 0));
    let owners: Vec<&Knobs> = draws.iter().filter(paros).collect();
    assert!(owners.iter().any(|k| k.pipeline_depth == 1));
    assert!(owners.iter().any(|k| k.pipeline_depth == 8));
    assert!(owners.iter().any(|k| k.sticky_timeouts == 0));
    assert!(owners.iter().any(|k| k.sticky_timeouts == 8));
    let (Some(on), Some(off)) = (
        owners
            .iter()
            .find(|k| k.pipeline_depth > 1 && k.sticky_timeouts > 0),
        owners
            .iter()
            .find(|k| k.pipeline_depth == 1 && k.sticky_timeouts == 0),
    ) else {
        panic!("no paros seed of 0..300 with both knobs on, or none with both off");
    };
    let json = serde_json::to_string(off).unwrap_or_default();
    assert!(
        !json.contains("pipeline_depth") && !json.contains("sticky"),
        "{json}"
    );
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(*off));
    assert!(!off.describe().contains("pipeline") && !off.describe().contains("sticky"));
    let json = serde_json::to_string(on).unwrap_or_default();
    assert!(json.contains(&format!("\"pipeline_depth\":{}", on.pipeline_depth)));
    assert!(json.contains(&format!("\"sticky_timeouts\":{}", on.sticky_timeouts)));
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(*on));
    assert!(on.describe().contains(&format!(
        " pipeline_depth={} sticky_timeouts={}",
        on.pipeline_depth, on.sticky_timeouts
    )));
    for (depth, sticky, valid) in [
        (0, 0, false),
        (17, 0, false),
        (16, 64, true),
        (1, 65, false),
    ] {
        let mut knobs = (*on).clone();
        knobs.pipeline_depth = depth;
        knobs.sticky_timeouts = sticky;
        let json = serde_json::to_string(&knobs).unwrap_or_default();
        assert_eq!(Knobs::parse(&json).is_ok(), valid, "{depth} {sticky}");
    }
}

/// Partitions of the leader with its writers are drawn only where partitions come, in some seeds
/// and not others; knobs without them print nothing of them (and their JSON, as before the knob
/// existed, parses to off), knobs with them round-trip and say so in words.
#[test]
fn leader_partitions_are_drawn_where_partitions_come_and_round_trip() {
    let draws: Vec<Knobs> = (0..300).map(|seed| Knobs::draw(seed, None)).collect();
    assert!(draws
        .iter()
        .filter(|k| k.weight_partition == 0)
        .all(|k| !k.leader_partitions));
    let (Some(on), Some(off)) = (
        draws.iter().find(|k| k.leader_partitions),
        draws
            .iter()
            .find(|k| k.weight_partition > 0 && !k.leader_partitions),
    ) else {
        panic!("no seed of 0..300 with leader partitions, or none with partitions but not those");
    };
    let json = serde_json::to_string(off).unwrap_or_default();
    assert!(!json.contains("leader_partitions"), "{json}");
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(off));
    assert!(!off.describe().contains("leader_partitions"));
    let json = serde_json::to_string(on).unwrap_or_default();
    assert!(json.contains("\"leader_partitions\":true"), "{json}");
    assert_eq!(Knobs::parse(&json).as_ref(), Ok(on));
    assert!(on.describe().ends_with(" leader_partitions=true"));
}

/// Knobs given by a user are held to sizes no run overflows with: each duration (and the clock
/// skew) at most an hour, each fault weight at most `WEIGHT_MAX`, the usual delays within the long
/// ones, segments of at most `SEGMENT_RECORDS_MAX` records; a knob past its size is refused by
/// name, and the largest heartbeat is refused without an overflow in the check itself.
#[test]
fn knobs_past_their_sizes_are_refused_by_name() {
    let drawn = Knobs::draw(7, None);
    let refused = |change: &dyn Fn(&mut Knobs), name: &str| {
        let mut knobs = drawn.clone();
        change(&mut knobs);
        let json = serde_json::to_string(&knobs).unwrap_or_default();
        let error = Knobs::parse(&json).err().unwrap_or_default();
        assert!(error.starts_with(name), "{name}: {error}");
    };
    let past = DURATION_MAX_MICROS + 1;
    refused(
        &|k| k.safety_micros = past,
        "safety_micros: at most 3600000000",
    );
    refused(&|k| k.liveness_micros = u64::MAX, "liveness_micros");
    refused(&|k| k.tick_micros = past, "tick_micros");
    refused(&|k| k.lease_micros = past, "lease_micros");
    refused(&|k| k.renew_micros = past, "renew_micros");
    refused(&|k| k.fault_gap_micros = past, "fault_gap_micros");
    refused(&|k| k.downtime_max_micros = past, "downtime_max_micros");
    refused(
        &|k| k.fault_duration_max_micros = past,
        "fault_duration_max_micros",
    );
    refused(&|k| k.client_gap_micros = past, "client_gap_micros");
    refused(&|k| k.client_timeout_micros = past, "client_timeout_micros");
    refused(&|k| k.sync_max_micros = past, "sync_max_micros");
    refused(
        &|k| k.clock_skew_max_micros = i64::MAX,
        "clock_skew_max_micros",
    );
    refused(
        &|k| k.network.ancient_max_micros = past,
        "network.ancient_max_micros",
    );
    refused(
        &|k| k.network.long_delay_max_micros = past,
        "network.long_delay_max_micros",
    );
    refused(
        &|k| k.network.delay_max_micros = k.network.long_delay_max_micros + 1,
        "network.delay_max_micros <= network.long_delay_max_micros",
    );
    refused(
        &|k| k.weight_crash = WEIGHT_MAX + 1,
        "weight_crash: at most",
    );
    refused(&|k| k.heartbeat_ticks = u64::MAX, "heartbeat_ticks");
    // A segment past SEGMENT_RECORDS_MAX: with the file store, segments of 2^63 records made the
    // store report its own writes as corrupt at a restart (a RecoveryFaithful finding).
    refused(
        &|k| k.records_per_segment = SEGMENT_RECORDS_MAX + 1,
        "records_per_segment: 1..=1048576",
    );
    // At its size a knob is taken: an hour-long safety phase.
    let mut longest = drawn.clone();
    longest.safety_micros = DURATION_MAX_MICROS;
    assert_eq!(longest.validate(), Ok(()));
}
