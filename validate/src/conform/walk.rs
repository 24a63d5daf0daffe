//! Coverage of the state graph: seeded random walks over a configuration's reachable states,
//! biased towards the edges no walk has taken yet, each walk run on the core (`Spec::run`).
//!
//! An *edge* is an action kind (`Promote`, `Replicate`, ...) taken from an abstract state class
//! (`Spec::class`): a handful of facts about the nodes that decide which schedules are
//! interesting (a deposed leader still leading, terms or logs that disagree, a commit index that
//! lags, a floor raised, and each spec's own: for FelixHeadTrim a holder retired, the lease moved).
//! `graph` enumerates every edge of the reachable graph by a breadth-first search over the model
//! (the denominator), keeping for each edge the shortest path that takes it: a transition cover.
//! Each walk follows the shortest path to an edge no earlier walk covered, then a tail that picks,
//! at each state, uniformly among the enabled actions whose edge is still uncovered, or among all
//! enabled actions when none is, for at most `TAIL_MAX` actions. An edge counts as covered once
//! the core took that action from that class without diverging before it.
//!
//! Deterministic for a seed: the generator is SplitMix64 over the seed and the walk's number, and
//! every set it iterates is ordered (its hash sets serve lookups only).

use super::spec::Spec;
use super::PathRun;
use felix_audits::synthetic::Draw;
use stateright::Model;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// The most actions a walk takes after the path to its edge.
pub const TAIL_MAX: usize = 12;

/// An abstract state class (the facts of `Spec::class`, packed).
pub use super::spec::Class;

/// An edge: an action kind from a class.
pub type Edge = (&'static str, Class);

/// The configuration's reachable graph (the steps the core can take), searched breadth-first: for
/// every edge, the shortest path from `Init` that ends with it.
pub struct Graph<A> {
    /// Distinct states.
    pub states: usize,
    /// Every edge, with the shortest path (its last action the edge's) that takes it.
    pub edges: BTreeMap<Edge, Vec<A>>,
    /// Edges of the whole graph that no path of steps the core can take reaches, each with why
    /// (searched only where `Spec::filters`).
    pub left_out: BTreeMap<Edge, &'static str>,
}

/// The most states `graph` searches (about 60 bytes each, some 600 MB at most): every passing
/// configuration but FelixHeadTrimAll (209,821,028 states) fits, and every twin but Retention
/// (17,182,473).
pub const STATES_MAX: usize = 10_000_000;

/// Why an edge is left out when no step taking it is refused itself.
pub const UNREACHED: &str = "taken only from states the core cannot reach";

fn fingerprint<T: std::hash::Hash>(state: &T) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    state.hash(&mut hasher);
    hasher.finish()
}

fn left_out_kind<S: Spec>(spec: S, action: &S::Action) -> bool {
    spec.no_core_verb()
        .iter()
        .any(|(kind, _)| *kind == S::kind(action))
}

/// The breadth-first search behind `Graph`: each state is kept as its fingerprint, its parent
/// and the action from it, so a path is rebuilt by walking the parents back; only steps the core
/// can take (`Spec::takes`) are followed. Err (the states searched) past `STATES_MAX`.
pub fn graph<S: Spec>(spec: S) -> Result<Graph<S::Action>, usize> {
    let model = spec.model();
    let mut index: HashMap<u64, u32> = HashMap::new();
    let mut parents: Vec<Option<(u32, S::Action)>> = Vec::new();
    let mut queue: VecDeque<(u32, S::State)> = VecDeque::new();
    let mut first: BTreeMap<Edge, (u32, S::Action)> = BTreeMap::new();
    let mut actions = Vec::new();
    for state in model.init_states() {
        index.insert(fingerprint(&state), 0);
        parents.push(None);
        queue.push_back((0, state));
    }
    while let Some((at, state)) = queue.pop_front() {
        if parents.len() > STATES_MAX {
            return Err(parents.len());
        }
        let from = spec.class(&state);
        spec.core_actions(&model, &state, &mut actions);
        for action in &actions {
            let Some(next) = model.next_state(&state, *action) else {
                continue;
            };
            if !left_out_kind(spec, action) {
                first
                    .entry((S::kind(action), from))
                    .or_insert((at, *action));
            }
            let print = fingerprint(&next);
            if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(print) {
                let id = parents.len() as u32;
                slot.insert(id);
                parents.push(Some((at, *action)));
                queue.push_back((id, next));
            }
        }
    }
    let path_to = |mut at: u32| {
        let mut path = Vec::new();
        while let Some((parent, action)) = parents[at as usize] {
            path.push(action);
            at = parent;
        }
        path.reverse();
        path
    };
    let edges: BTreeMap<Edge, Vec<S::Action>> = first
        .into_iter()
        .map(|(edge, (at, action))| {
            let mut path = path_to(at);
            path.push(action);
            (edge, path)
        })
        .collect();
    let left_out = if spec.filters() {
        whole_graph_edges(spec)?
            .into_iter()
            .filter(|(edge, _)| !edges.contains_key(edge))
            .collect()
    } else {
        BTreeMap::new()
    };
    Ok(Graph {
        states: parents.len(),
        edges,
        left_out,
    })
}

/// Every edge of the whole graph (every step the model takes), each with the first reason the
/// core gave for not taking a step along it (`UNREACHED` if it never refused one).
fn whole_graph_edges<S: Spec>(spec: S) -> Result<BTreeMap<Edge, &'static str>, usize> {
    let model = spec.model();
    let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut queue: VecDeque<S::State> = VecDeque::new();
    let mut edges: BTreeMap<Edge, &'static str> = BTreeMap::new();
    let mut actions = Vec::new();
    for state in model.init_states() {
        seen.insert(fingerprint(&state));
        queue.push_back(state);
    }
    while let Some(state) = queue.pop_front() {
        if seen.len() > STATES_MAX {
            return Err(seen.len());
        }
        let from = spec.class(&state);
        actions.clear();
        model.actions(&state, &mut actions);
        for action in &actions {
            let Some(next) = model.next_state(&state, *action) else {
                continue;
            };
            if !left_out_kind(spec, action) {
                let reason = spec.takes(&state, action).err();
                let entry = edges.entry((S::kind(action), from)).or_insert(UNREACHED);
                if let (UNREACHED, Some(reason)) = (*entry, reason) {
                    *entry = reason;
                }
            }
            if seen.insert(fingerprint(&next)) {
                queue.push_back(next);
            }
        }
    }
    Ok(edges)
}

/// One walk: the path the model takes from `Init`, preferring edges not in `covered`, among the
/// steps the core can take.
pub fn walk<S: Spec>(
    spec: S,
    prefix: &[S::Action],
    covered: &BTreeSet<Edge>,
    seed: u64,
    index: u64,
) -> Vec<S::Action> {
    let model = spec.model();
    let mut random = Draw(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
    let mut state = model
        .init_states()
        .into_iter()
        .next()
        .expect("the model has an initial state");
    let mut taken: BTreeSet<Edge> = BTreeSet::new();
    let mut path = Vec::new();
    for &action in prefix {
        taken.insert((S::kind(&action), spec.class(&state)));
        state = model
            .next_state(&state, action)
            .expect("a path of the graph is enabled");
        path.push(action);
    }
    let mut actions = Vec::new();
    for _ in 0..TAIL_MAX {
        spec.core_actions(&model, &state, &mut actions);
        if actions.is_empty() {
            break;
        }
        let from = spec.class(&state);
        let fresh: Vec<S::Action> = actions
            .iter()
            .copied()
            .filter(|action| {
                let edge = (S::kind(action), from);
                !covered.contains(&edge) && !taken.contains(&edge)
            })
            .collect();
        let pool = if fresh.is_empty() { &actions } else { &fresh };
        let action = pool[random.below(pool.len() as u64) as usize];
        taken.insert((S::kind(&action), from));
        state = model
            .next_state(&state, action)
            .expect("an enabled action has a next state");
        path.push(action);
    }
    path
}

/// One walk that went wrong on the core.
#[derive(Clone, Debug)]
pub struct Failed<A, S> {
    /// The walk's number.
    pub index: u64,
    /// The walk.
    pub path: Vec<A>,
    /// What the core did with it.
    pub run: PathRun<A, S>,
}

/// What `cover_of` found.
#[derive(Clone, Debug)]
pub struct Cover<A, S> {
    pub config: &'static str,
    pub seed: u64,
    pub paths: u64,
    pub states: usize,
    /// Every edge of the graph of steps the core can take.
    pub total: BTreeSet<Edge>,
    /// The edges the core took without diverging before them.
    pub covered: BTreeSet<Edge>,
    /// Edges of the whole graph left out of `total`, each with why.
    pub left_out: BTreeMap<Edge, &'static str>,
    /// Action kinds with no core verb, left out of the edges, each with why.
    pub no_core_verb: &'static [(&'static str, &'static str)],
    /// Actions run on the core, over all walks.
    pub actions_run: usize,
    /// Walks that diverged, stopped at a gap or broke an invariant (every rule on: none should).
    pub failed: Vec<Failed<A, S>>,
}

impl<A, S> Cover<A, S> {
    /// The edges no walk covered, by kind.
    pub fn missed(&self) -> BTreeMap<&'static str, Vec<Class>> {
        let mut missed: BTreeMap<&'static str, Vec<Class>> = BTreeMap::new();
        for edge in self.total.difference(&self.covered) {
            missed.entry(edge.0).or_default().push(edge.1);
        }
        missed
    }
}

/// Up to `paths` walks over the spec's graph from `seed`, each run on the core under its rules:
/// walk `i` takes the shortest path to the first edge no earlier walk covered (edges in a seeded
/// order), then a tail biased to uncovered edges. Stops early once every edge is covered. Err (the
/// states searched) when the graph is beyond `STATES_MAX`.
pub fn cover_of<S: Spec>(
    spec: S,
    paths: u64,
    seed: u64,
) -> Result<Cover<S::Action, S::State>, usize> {
    let graph = graph(spec)?;
    let total: BTreeSet<Edge> = graph.edges.keys().copied().collect();
    let mut order: Vec<(&Edge, &Vec<S::Action>)> = graph.edges.iter().collect();
    let mut random = Draw(seed);
    for i in (1..order.len()).rev() {
        order.swap(i, random.below(i as u64 + 1) as usize);
    }
    let mut covered = BTreeSet::new();
    let mut failed = Vec::new();
    let mut actions_run = 0;
    let mut ran = 0;
    let mut targets = order.into_iter();
    while ran < paths {
        let prefix: &[S::Action] = match targets.by_ref().find(|(edge, _)| !covered.contains(*edge))
        {
            Some((_, path)) => path,
            None if covered.len() == total.len() => break,
            None => &[],
        };
        let path = walk(spec, prefix, &covered, seed, ran);
        let run = spec.run(&path);
        actions_run += run.actions_run;
        // An edge is covered when the core took the action from the state before it and the
        // model agreed with where it landed.
        let agreed = match &run.divergence {
            Some(divergence) => divergence.step.saturating_sub(1),
            None => run.actions_run,
        };
        for (state, action) in run.states.iter().zip(&path).take(agreed) {
            if !left_out_kind(spec, action) {
                covered.insert((S::kind(action), spec.class(state)));
            }
        }
        if run.divergence.is_some() || run.gap.is_some() || !run.violations.is_empty() {
            failed.push(Failed {
                index: ran,
                path,
                run,
            });
        }
        ran += 1;
    }
    Ok(Cover {
        config: spec.name(),
        seed,
        paths: ran,
        states: graph.states,
        total,
        covered,
        left_out: graph.left_out,
        no_core_verb: spec.no_core_verb(),
        actions_run,
        failed,
    })
}
