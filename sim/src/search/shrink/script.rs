//! From a shrunk run to a scenario script: translate, verify in the scripted driver, minimize.
//!
//! The translation reads the shrunk run's trace in order and writes the verbs that make the
//! scripted driver do the same: the first leader campaigns, each lease grant is a `lease` to a new
//! holder `h<epoch>`, a paros owner taking the fence is an `owner`, readers and folders appear when
//! they first ask; each write, trim, truncate and checkpoint the world's clients asked for is its
//! verb; crashes, restarts, isolations, heals, pauses and resumes are theirs. Messages and syncs
//! are carried by `stabilize` before each verb that follows something the world delivered. A pause
//! is placed right after the client's last request before it (a paused client of the driver still
//! takes replies and sends nothing new, as the frozen process of the world did).
//!
//! The translation is a candidate, not a proof: the script is run twice in the driver (twin: its
//! `audit` must name the invariant; rules on: `audit` must print `ok`), and then verbs are deleted
//! ddmin-style while both still hold. `scenario` writes the file with its expectations filled in
//! by the driver itself, so `felix scenario` passes on it by construction.

use super::minimize::{self, with_ticks_merged};
use super::schedule::{kind_of, Kind};
use super::Shrunk;
use crate::render::trace::{SimEvent, TraceEvent, TraceLine};
use crate::script;
use crate::script::env::{ELECTION_TIMEOUT_TICKS, HEARTBEAT_TICKS};
use felix_core::api::Request;
use felix_core::client::checkpoint::MAGIC;
use felix_core::history::Event;
use felix_core::rules::Invariant;
use felix_core::TwinName;
use std::collections::{BTreeMap, BTreeSet};

/// The longest schedule translation worth minimizing (each try replays the whole script).
const SCHEDULE_VERBS_MAX: usize = 5_000;
/// The most scripts the minimization runs (each replays the whole script, so a long translation
/// costs more per try): past it, the smallest script found so far is written.
const SCRIPTS_MAX: u64 = 2_000;

/// The verbs translated from a run (without `cluster` and `audit`).
pub fn translate(shrunk: &Shrunk) -> Vec<String> {
    translate_with(shrunk, false)
}

/// The coarse translation in progress (`translate_with`).
#[derive(Default)]
struct Coarse {
    verbs: Vec<String>,
    /// Something was delivered or synced since the last verb: a `stabilize` comes first.
    pending: bool,
    /// The node the driver last made campaign.
    leader: Option<u32>,
    crashed: BTreeSet<u32>,
    /// When the network cut written last (`partition`) ends, for a clog (which ends on its own).
    cut_until: Option<u64>,
    /// Per world folder, the count of verbs when its last `fold` was written.
    folded: BTreeMap<u32, usize>,
}

impl Coarse {
    fn push(&mut self, verb: String) {
        if self.pending {
            self.verbs.push("stabilize".to_string());
            self.pending = false;
        }
        self.verbs.push(verb);
    }

    /// A world leader: the first campaigns, and one after a crash. `faithful`: every change of
    /// leader is a `campaign` (a new term the run's later steps may depend on).
    fn became_leader(&mut self, node: u32, faithful: bool) {
        let first = self.leader.is_none();
        let changed = faithful && self.leader != Some(node);
        if first || changed || !self.crashed.is_empty() {
            self.push(format!("campaign n{node}"));
            self.leader = Some(node);
        }
        self.pending = true;
    }

    /// A network fault: an isolated node is a `partition` until the partitions are repaired;
    /// `faithful`: a clogged node (its messages held for a while) likewise, `heal`ed at the
    /// clog's end.
    fn network(&mut self, description: &str, time: u64, faithful: bool) {
        if description == "partitions repaired" {
            self.cut_until = None;
            self.push("heal".to_string());
        } else if let Some((node, micros)) = clogged_node(description).filter(|_| faithful) {
            self.cut_until = Some(time + micros);
            self.push(format!("partition n{node}"));
        } else if let Some(node) = isolated_node(description).filter(|_| faithful) {
            self.push(format!("partition n{node}"));
        }
    }

    /// A folder's read: the folder is created at its first, and folds (`fold`, to the tail) at
    /// its first read after any other verb: a folder's later reads continue a fold only when
    /// something happened since its last.
    fn folder_read(&mut self, names: &mut BTreeMap<u32, String>, client: u32) {
        let name = format!("f{client}");
        if names.insert(client, name.clone()).is_none() {
            self.push(format!("folder {name}"));
        } else if self.folded.get(&client) == Some(&self.verbs.len()) {
            return;
        }
        self.push(format!("fold {name}"));
        self.folded.insert(client, self.verbs.len());
    }

    /// Before a line at `time`: a clog that has ended by then is healed.
    fn clock(&mut self, time: u64) {
        if self.cut_until.is_some_and(|until| until <= time) {
            self.cut_until = None;
            self.push("heal".to_string());
        }
    }
}

/// The verbs translated from a run. `faithful` also writes what the first translation leaves to
/// `stabilize`: every change of leader, and nodes isolated or clogged (as partitions).
pub fn translate_with(shrunk: &Shrunk, faithful: bool) -> Vec<String> {
    let lines: Vec<TraceLine> = shrunk.shrunk.trace_lines.clone().unwrap_or_default();
    let knobs = &shrunk.shrunk.knobs;
    let mut out = Coarse::default();
    // World client -> script name; names already used.
    let mut names: BTreeMap<u32, String> = BTreeMap::new();
    let mut seen_ops: BTreeSet<(String, String)> = BTreeSet::new();
    // Index in `verbs` just after each client's last request.
    let mut after_request: BTreeMap<u32, usize> = BTreeMap::new();
    for line in lines {
        out.clock(line.time);
        match line.event {
            TraceEvent::History(event) => match event {
                Event::BecameLeader { node, .. } => out.became_leader(node, faithful),
                Event::Crashed { node } => {
                    out.crashed.insert(node);
                    out.push(format!("crash n{node}"));
                }
                Event::Restarted { node } => {
                    out.crashed.remove(&node);
                    out.push(format!("restart n{node}"));
                }
                // Only felixd processes hold leases as holders (a paros owner's grant is no holder).
                Event::LeaseGranted { client, epoch } if kind_of(knobs, client) == Kind::Holder => {
                    let name = format!("h{epoch}");
                    names.insert(client, name.clone());
                    out.push(format!("lease {name}"));
                    after_request.insert(client, out.verbs.len());
                }
                Event::Requested {
                    client,
                    request: Request::Read { .. },
                    ..
                } if kind_of(knobs, client) == Kind::Folder => {
                    out.folder_read(&mut names, client);
                    after_request.insert(client, out.verbs.len());
                }
                Event::Requested {
                    client, request, ..
                } if kind_of(knobs, client) != Kind::Prober => {
                    if let Some(verb) = request_verb(&mut names, &mut seen_ops, client, &request) {
                        out.push(verb);
                    }
                    after_request.insert(client, out.verbs.len());
                }
                Event::PromiseChanged { .. }
                | Event::NodeState { .. }
                | Event::PhaseChanged { .. } => {}
                _ => out.pending = true,
            },
            TraceEvent::Sim(event) => match event {
                SimEvent::Paused { client } => {
                    if let Some(name) = names.get(&client) {
                        let at = after_request.get(&client).copied();
                        let at = at.unwrap_or(out.verbs.len()).min(out.verbs.len());
                        out.verbs.insert(at, format!("pause {name}"));
                    }
                }
                SimEvent::Resumed { client } => {
                    if let Some(name) = names.get(&client) {
                        out.push(format!("resume {name}"));
                    }
                }
                SimEvent::NetworkFault { description } => {
                    out.network(&description, line.time, faithful)
                }
                SimEvent::Healed => out.push("heal".to_string()),
                _ => {}
            },
        }
    }
    out.verbs.push("stabilize".to_string());
    out.verbs
}

/// `isolate nK for ...` names node K.
fn isolated_node(description: &str) -> Option<u32> {
    let rest = description.strip_prefix("isolate n")?;
    rest.split(' ').next()?.parse().ok()
}

/// `clog nK for Dus` names node K and the clog's length in microseconds.
fn clogged_node(description: &str) -> Option<(u32, u64)> {
    let rest = description.strip_prefix("clog n")?;
    let (node, micros) = rest.split_once(" for ")?;
    Some((node.parse().ok()?, micros.strip_suffix("us")?.parse().ok()?))
}

/// The verb for a client's request, when it is one the client chose (not one it sends on its own:
/// a holder's tail read and fenced write, a retry of the same operation, a folder's next read).
fn request_verb(
    names: &mut BTreeMap<u32, String>,
    seen: &mut BTreeSet<(String, String)>,
    client: u32,
    request: &Request,
) -> Option<String> {
    let mut first = |name: &str, key: String| seen.insert((name.to_string(), key));
    match request {
        Request::Fence { new, old } => {
            // A retry of the same fence is not a new owner.
            let name = format!("o{}", new.0);
            names.insert(client, name.clone());
            first(&name, "owner".to_string())
                .then(|| format!("owner {name} token={} old={}", new.0, old.0))
        }
        Request::Append { body, .. } => {
            let name = names.get(&client)?.clone();
            if body.starts_with(MAGIC) {
                return first(&name, "checkpoint".to_string())
                    .then(|| format!("checkpoint {name}"));
            }
            let text = String::from_utf8_lossy(body).to_string();
            if text.starts_with("fenced write of epoch") || text.contains(char::is_whitespace) {
                return None;
            }
            first(&name, format!("write {text}")).then(|| format!("write {name} {text}"))
        }
        Request::Trim { floor, fence, .. } => {
            let name = names.get(&client)?.clone();
            if fence.is_some() {
                // The truncate that ends an owner's checkpoint is the `checkpoint` verb's own
                // (the driver's owner truncates to its run's start); the next checkpoint is a new
                // verb.
                if seen.remove(&(name.clone(), "checkpoint".to_string())) {
                    return None;
                }
                seen.insert((name.clone(), format!("truncate {floor}")))
                    .then(|| format!("truncate {name} floor={floor}"))
            } else {
                first(&name, format!("trim {floor}")).then(|| format!("trim {name} floor={floor}"))
            }
        }
        Request::Read { .. } => {
            if names.contains_key(&client) {
                return None;
            }
            // A reader asking for the first time: created then.
            let name = format!("r{client}");
            names.insert(client, name.clone());
            Some(format!("reader {name}\nread {name} all"))
        }
    }
}

/// The scenario text for `verbs`: the control (rules on) with `audit`, then the twin with `audit`.
fn text(header: &str, cluster: &str, twin: TwinName, verbs: &[String]) -> String {
    let mut text = String::new();
    text.push_str(header);
    for (title, rules) in [
        ("every rule on: the same script passes", "none".to_string()),
        (
            &*format!("twin {twin}: the rule is off"),
            twin.name().to_string(),
        ),
    ] {
        text.push_str(&format!("\n# ---- {title} ----\n\n"));
        text.push_str(&format!("{cluster} twin={rules}\n----\n\n"));
        for verb in verbs.iter().flat_map(|verb| verb.lines()) {
            text.push_str(&format!("{verb}\n----\n\n"));
        }
        text.push_str("audit\n----\n\n");
    }
    text
}

/// One half of the scenario: `verbs` under `rules` (`none`: every rule on), then `audit`.
fn half(cluster: &str, rules: &str, verbs: &[String]) -> String {
    let mut text = format!("{cluster} twin={rules}\n----\n\n");
    for verb in verbs.iter().flat_map(|verb| verb.lines()) {
        text.push_str(&format!("{verb}\n----\n\n"));
    }
    text.push_str("audit\n----\n\n");
    text
}

/// The audit's lines of one half, when it ran without a panic; with `only`, that invariant's
/// audit's alone (`Env::audit_only`).
fn audited(
    cluster: &str,
    rules: &str,
    verbs: &[String],
    only: Option<Invariant>,
) -> Option<Vec<String>> {
    let text = half(cluster, rules, verbs);
    let outcome = script::run_text_quiet("shrunk.txt", &text, only).ok()?;
    let panicked = outcome
        .blocks
        .iter()
        .any(|block| block.actual.iter().any(|line| line.starts_with("panic:")));
    let mut audits = outcome
        .blocks
        .into_iter()
        .filter(|block| block.command == "audit");
    match (panicked, audits.next(), audits.next()) {
        (false, Some(audit), None) => Some(audit.actual),
        _ => None,
    }
}

/// True when the twin's audit names `invariant` and the control's is `ok`. The twin's half runs
/// first: most candidates of the minimization fail there, and the control is not run for them.
/// The twin's half asks only whether `invariant` breaks, so it runs that audit alone (the same
/// violations as the full audit's of that invariant); the control's runs every audit.
fn reproduces(cluster: &str, twin: TwinName, invariant: Invariant, verbs: &[String]) -> bool {
    let prefix = format!("{invariant}:");
    let breaks = audited(cluster, twin.name(), verbs, Some(invariant))
        .is_some_and(|audit| audit.iter().any(|line| line.starts_with(&prefix)));
    breaks && audited(cluster, "none", verbs, None).is_some_and(|audit| audit == ["ok"])
}

/// Clients renamed in order of appearance (`h1`, `h2`, ... for holders; owners keep their
/// token, readers their letter), so the holder of epoch K in the script is `hK`.
fn renamed(verbs: &[String]) -> Vec<String> {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut holders = 0;
    let mut readers = 0;
    for verb in verbs.iter().flat_map(|verb| verb.lines()) {
        let mut words = verb.split(' ');
        match (words.next(), words.next()) {
            (Some("lease"), Some(name)) => {
                holders += 1;
                names.insert(name.to_string(), format!("h{holders}"));
            }
            (Some("reader"), Some(name)) => {
                readers += 1;
                names.insert(name.to_string(), format!("r{readers}"));
            }
            _ => {}
        }
    }
    verbs
        .iter()
        .map(|verb| {
            verb.lines()
                .map(|line| {
                    line.split(' ')
                        .enumerate()
                        .map(|(index, word)| match word.split_once('=') {
                            // `deliver from=h2 to=n0`: a client named in a key.
                            Some((key, value)) if index > 0 => match names.get(value) {
                                Some(name) => format!("{key}={name}"),
                                None => word.to_string(),
                            },
                            _ => match names.get(word) {
                                Some(name) if index == 1 => name.clone(),
                                _ => word.to_string(),
                            },
                        })
                        .collect::<Vec<String>>()
                        .join(" ")
                })
                .collect::<Vec<String>>()
                .join("\n")
        })
        .collect()
}

/// The coarse candidates, in the order tried: the translation as it is, then with a stabilize
/// after every verb; then the faithful translation (`translate_with`: every change of leader,
/// isolated and clogged nodes), likewise.
fn coarse_candidates(shrunk: &Shrunk, translated: &[String]) -> Vec<Vec<String>> {
    let faithful = translate_with(shrunk, true);
    let mut candidates = Vec::new();
    for verbs in [translated, &faithful[..]] {
        candidates.push(verbs.to_vec());
        candidates.push(
            verbs
                .iter()
                .flat_map(|verb| [verb.clone(), "stabilize".to_string()])
                .collect(),
        );
    }
    candidates
}

/// A scenario that reproduces the shrunk run's violation in the driver.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file's text, expectations filled in.
    pub text: String,
    /// Verbs in each half (without `cluster` and `audit`).
    pub verbs: usize,
    /// Verbs of the translation before minimizing.
    pub translated: usize,
    /// Scripts the minimizer ran.
    pub tries: u64,
    /// The minimization stopped at its budget of scripts (`SCRIPTS_MAX`): partially minimized.
    pub budget_spent: bool,
}

/// Why no scenario could be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotReproduced {
    pub verbs: Vec<String>,
    /// The schedule translation (`schedule`), when one was made.
    pub timed: Vec<String>,
}

/// Translates, verifies and minimizes the shrunk run; renders the file with `header` prose. When
/// the shrunk run does not translate (the translation is a candidate, see the module doc), runs
/// the shrinker passed on its way are tried, from the smallest back to the seed's own run
/// (`fallbacks`): a run that shrank less may keep what the driver needs to follow it.
pub fn scenario(shrunk: &Shrunk, header: &str) -> Result<Scenario, NotReproduced> {
    let failed = match scenario_of(shrunk, header) {
        Ok(scenario) => return Ok(scenario),
        Err(failed) => failed,
    };
    let base = super::Base::twin(shrunk.seed, shrunk.twin, shrunk.fork);
    for kept in fallbacks(&shrunk.passed) {
        let run = kept.replay(&base);
        if run.broken_at(shrunk.invariant) != Some(kept.at) {
            continue;
        }
        let fallback = Shrunk {
            shrunk: run,
            ..shrunk.clone()
        };
        if let Ok(scenario) = scenario_of(&fallback, header) {
            return Ok(scenario);
        }
    }
    Err(failed)
}

/// The most passed runs tried as fallbacks (the seed's own run besides).
const FALLBACKS_MAX: usize = 6;

/// The passed runs to fall back on, in the order tried: the latest (smallest) first, then ever
/// further back (the step doubling), at most `FALLBACKS_MAX`, and last the seed's own run.
fn fallbacks(passed: &[super::Kept]) -> Vec<&super::Kept> {
    let Some((first, rest)) = passed.split_first() else {
        return Vec::new();
    };
    let mut chosen = Vec::new();
    let mut back = 1;
    while back <= rest.len() && chosen.len() < FALLBACKS_MAX {
        chosen.push(&rest[rest.len() - back]);
        back *= 2;
    }
    chosen.push(first);
    chosen
}

/// What `timed_candidate` found: the first schedule translation (for the report), and the one
/// that reproduces with the cluster line it needs, if any.
struct Timed {
    verbs: Vec<String>,
    found: Option<(String, Vec<String>)>,
}

/// The run's own schedule (deliveries, ticks, syncs: `schedule`), for bugs that need its timing;
/// each translation also with a final `stabilize`. Clients aimed where the world's clients sent,
/// then routed as the driver routes; then both again with the world's disks' syncs
/// (`syncs=eager`: a sync covers only the ops written before it started), for a bug that needs
/// one op of a step durable and the next not; then all of it with the world's election timeout
/// (its longest) and heartbeat ticks (`election=`, `heartbeat=`) and its bound on appends in
/// flight, if it has one (`in_flight=`).
fn timed_candidate(shrunk: &Shrunk, cluster: &str, tries: &mut u64) -> Timed {
    let (twin, invariant) = (shrunk.twin, shrunk.invariant);
    let mut first = Vec::new();
    // The world's tick counts, where they differ from the driver's (a follower the world ticked
    // short of its election timeout must not campaign in the driver).
    let knobs = &shrunk.shrunk.knobs;
    let in_flight = (knobs.appends_in_flight_max)
        .map(|max| format!(" in_flight={max}"))
        .unwrap_or_default();
    let ticks = format!(
        " election={} heartbeat={}{in_flight}",
        knobs.election_ticks_max, knobs.heartbeat_ticks
    );
    let mut clusters = vec![cluster.to_string(), format!("{cluster} syncs=eager")];
    if ticks != format!(" election={ELECTION_TIMEOUT_TICKS} heartbeat={HEARTBEAT_TICKS}") {
        clusters.push(format!("{cluster}{ticks}"));
        clusters.push(format!("{cluster} syncs=eager{ticks}"));
    }
    for syncs in clusters {
        for aiming in [true, false] {
            let timed = super::schedule::translate(&shrunk.shrunk, &syncs, twin.name(), aiming);
            if first.is_empty() {
                first = timed.clone();
            }
            if timed.len() > SCHEDULE_VERBS_MAX {
                continue;
            }
            let mut settled = timed.clone();
            settled.push("stabilize".to_string());
            for candidate in [timed, settled] {
                *tries += 1;
                if reproduces(&syncs, twin, invariant, &candidate) {
                    return Timed {
                        verbs: first,
                        found: Some((syncs, candidate)),
                    };
                }
            }
        }
    }
    Timed {
        verbs: first,
        found: None,
    }
}

fn scenario_of(shrunk: &Shrunk, header: &str) -> Result<Scenario, NotReproduced> {
    let knobs = &shrunk.shrunk.knobs;
    let cluster = format!(
        "cluster brokers={} replicas={} segment={}",
        knobs.brokers, knobs.replicas, knobs.records_per_segment
    );
    let twin = shrunk.twin;
    let invariant = shrunk.invariant;
    let translated = translate(shrunk);
    let candidates = coarse_candidates(shrunk, &translated);
    let mut tries = 0;
    let mut found = None;
    for candidate in candidates {
        tries += 1;
        if reproduces(&cluster, twin, invariant, &candidate) {
            found = Some(candidate);
            break;
        }
    }
    // The run's own schedule, for bugs that need its timing (`timed_candidate`).
    let mut timed_verbs = Vec::new();
    let mut cluster = cluster;
    if found.is_none() && !shrunk.shrunk.schedule.is_empty() {
        let timed = timed_candidate(shrunk, &cluster, &mut tries);
        timed_verbs = timed.verbs;
        if let Some((syncs, candidate)) = timed.found {
            cluster = syncs;
            found = Some(candidate);
        }
    }
    let Some(mut verbs) = found else {
        return Err(NotReproduced {
            verbs: translated,
            timed: timed_verbs,
        });
    };
    // Neighbouring ticks of one node are one `tick` (the same steps): fewer verbs to minimize.
    let check = |fewer: &[String]| reproduces(&cluster, twin, invariant, fewer);
    verbs = with_ticks_merged(verbs, &mut tries, &check);
    // Every minimizing try, within the budget of scripts (a try past it does not reproduce). The
    // passes ask again about scripts they tried before (a single verb deleted by `coarsened`, then
    // by `deleted` on the same script): a script's answer is remembered, and a repeat still counts
    // as a try, so the budget and every answer are as if it ran again.
    let mut answered: BTreeMap<Vec<String>, bool> = BTreeMap::new();
    let mut still = |edited: &[String]| -> bool {
        if tries >= SCRIPTS_MAX {
            return false;
        }
        tries += 1;
        if let Some(answer) = answered.get(edited) {
            return *answer;
        }
        let answer = reproduces(&cluster, twin, invariant, edited);
        answered.insert(edited.to_vec(), answer);
        answer
    };
    verbs = minimize::minimized(verbs, &mut still);
    let budget_spent = tries >= SCRIPTS_MAX;
    // The ticks the minimization left side by side, merged even past its budget (the same
    // steps; checked once all the same).
    verbs = with_ticks_merged(verbs, &mut tries, &check);
    let verbs = renamed(&verbs);
    let draft = text(header, &cluster, twin, &verbs);
    let filled = script::run_text("shrunk.txt", &draft)
        .ok()
        .and_then(|outcome| outcome.rewritten().ok())
        .ok_or_else(|| NotReproduced {
            verbs: verbs.clone(),
            timed: Vec::new(),
        })?;
    let count = verbs.iter().map(|verb| verb.lines().count()).sum::<usize>() + 2;
    Ok(Scenario {
        text: filled,
        verbs: count,
        translated: translated.len(),
        tries,
        budget_spent,
    })
}
