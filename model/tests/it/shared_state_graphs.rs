//! Which twins share a state graph, per checker, so that a change that merges or splits them is
//! noticed.
//!
//! Two twins share a state graph when their switches give the same reachable states and the same
//! steps between them: no checker can then tell them apart (the seed's HiddenTrims and Untagged
//! differ in the code they remove, the trim index or only the tag field, not in what a holder
//! sees). The test searches every twin's whole graph (invariants ignored) on one small bound and
//! groups the twins by it. TLC runs the same state machine (its distinct-state counts equal
//! Stateright's), so the same groups hold there; `scripts/check_tla.sh` holds TLC to the
//! README's table ("Twins that share a state graph": same trace and same states explored).

use felix_model::spec::Spec;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use felix_model::head_trim::config::{Bounds, Config};
use felix_model::head_trim::spec::{FelixHeadTrim, State};
use stateright::Model;

/// The groups of twins that share a state graph in Stateright (groups of one left out).
const STATERIGHT_SHARED: &[&[&str]] = &[&["HiddenTrims", "Untagged", "ReadFromEarliest"]];
/// The same for TLC: the same state machine, so the same groups.
const TLC_SHARED: &[&[&str]] = STATERIGHT_SHARED;

/// The bound every twin is compared on: one trim with every floor it may ask for, one promotion,
/// two writes, two-record segments (every twin's bug is reachable within it).
const BOUNDS: Bounds = Bounds {
    brokers: 3,
    holders: 2,
    max_writes: 2,
    max_trims: 1,
    max_promotions: 1,
    max_crashes: 0,
    seg_size: 2,
};

fn fingerprint(state: &State) -> u64 {
    let mut hasher = DefaultHasher::new();
    state.hash(&mut hasher);
    hasher.finish()
}

/// `(states, steps, digest)` of the whole reachable graph: the digest mixes every state with the
/// set of its successors, independently of the search order.
fn graph(config: &'static Config) -> (usize, usize, u64) {
    let model = FelixHeadTrim::new(config);
    let mut seen: HashMap<u64, ()> = HashMap::new();
    let mut queue: VecDeque<State> = VecDeque::new();
    for state in model.init_states() {
        if seen.insert(fingerprint(&state), ()).is_none() {
            queue.push_back(state);
        }
    }
    let mut steps = 0;
    let mut digest = 0u64;
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        model.actions(&state, &mut actions);
        let mut successors = BTreeSet::new();
        for action in actions.drain(..) {
            if let Some(next) = model.next_state(&state, action) {
                let print = fingerprint(&next);
                successors.insert(print);
                if seen.insert(print, ()).is_none() {
                    queue.push_back(next);
                }
            }
        }
        steps += successors.len();
        let mut hasher = DefaultHasher::new();
        (fingerprint(&state), &successors).hash(&mut hasher);
        digest = digest.wrapping_add(hasher.finish());
    }
    (seen.len(), steps, digest)
}

/// The twins grouped by their state graph on `BOUNDS`, groups of one left out.
fn shared_groups() -> BTreeSet<BTreeSet<&'static str>> {
    let mut groups: BTreeMap<(usize, usize, u64), BTreeSet<&'static str>> = BTreeMap::new();
    // One search per twin, side by side (each is independent and deterministic).
    let graphs: Vec<(&'static str, (usize, usize, u64))> = std::thread::scope(|scope| {
        let handles: Vec<_> = FelixHeadTrim::twins()
            .map(|twin| {
                let small: &'static Config = Box::leak(Box::new(Config {
                    bounds: BOUNDS,
                    ..*twin
                }));
                scope.spawn(move || (twin.short_name(), graph(small)))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a graph search does not panic"))
            .collect()
    });
    for (name, key) in graphs {
        groups.entry(key).or_default().insert(name);
    }
    groups
        .into_values()
        .filter(|group| group.len() > 1)
        .collect()
}

fn as_sets(groups: &[&[&'static str]]) -> BTreeSet<BTreeSet<&'static str>> {
    groups
        .iter()
        .map(|group| group.iter().copied().collect())
        .collect()
}

#[test]
fn the_twins_that_share_a_state_graph_are_exactly_the_listed_ones() {
    // Proves, for Stateright, that HiddenTrims, Untagged and ReadFromEarliest reach the same
    // states by the same steps, and that every other twin's graph differs from every other
    // twin's (a change that merges or splits two twins fails here).
    assert_eq!(shared_groups(), as_sets(STATERIGHT_SHARED));
}

#[test]
fn the_readme_names_the_same_shared_graphs_for_both_checkers() {
    // Proves docs/formal/README.md's table "Twins that share a state graph" (which
    // scripts/check_tla.sh holds TLC to) lists exactly the groups above, per checker.
    let readme = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/formal/README.md"),
    )
    .expect("docs/formal/README.md is readable");
    let mut in_table = false;
    let mut by_checker: BTreeMap<String, BTreeSet<BTreeSet<String>>> = BTreeMap::new();
    for line in readme.lines() {
        if line.starts_with("## ") {
            in_table = line.trim() == "## Twins that share a state graph";
            continue;
        }
        if !in_table || !line.starts_with('|') || line.contains("---") {
            continue;
        }
        let cells: Vec<String> = line
            .split('|')
            .map(|cell| cell.replace('`', "").trim().to_string())
            .collect();
        // | checker | twins | ... : the header row names the columns.
        if cells.len() < 3 || cells[1] == "checker" {
            continue;
        }
        let group: BTreeSet<String> = cells[2]
            .split(',')
            .map(|name| {
                name.trim()
                    .trim_start_matches(FelixHeadTrim::NAME)
                    .to_string()
            })
            .collect();
        by_checker
            .entry(cells[1].clone())
            .or_default()
            .insert(group);
    }
    let owned = |groups: &[&[&str]]| -> BTreeSet<BTreeSet<String>> {
        groups
            .iter()
            .map(|group| group.iter().map(|name| name.to_string()).collect())
            .collect()
    };
    assert_eq!(
        by_checker.get("Stateright"),
        Some(&owned(STATERIGHT_SHARED))
    );
    assert_eq!(by_checker.get("TLC"), Some(&owned(TLC_SHARED)));
}
