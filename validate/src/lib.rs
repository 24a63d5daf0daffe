//! felix-validate: trace validation. Every simulated run held, step by step, to a model's own
//! actions.
//!
//! Which model, by the run's workload (`ModelKind::of`): a felixd run (lease holders with epochs
//! and expected tails, unfenced trims) is held to FelixHeadTrim, whose variables those are; a
//! paros run (a checkpoint owner's fences, fenced truncates, checkpoint runs, trim-point jumps)
//! to ParosTrimJump (`paros`), where a fence is `SetLeader`, a trim `Truncate` and a jump
//! `TrimmedTo` (under FelixHeadTrim a jump could only be a new baseline). The counts are kept
//! per model. Both specs are laid out the same (`head_trim/`, `paros/`: `projection`, `window`,
//! `checker`) over one loop (`observe`) and one chain (`steps`).
//!
//! The simulator runs the real core; the model checks the design. This crate ties the two: after
//! every event the simulator handles, each voter's state is projected onto the model's variables
//! (`projection`), and the step from the previous projection must be a short chain of the
//! model's own actions, taken through `Model::next_state` on a small renamed window of the state
//! (`window`, `checker`, `steps`). A step the model cannot make is a *divergence*: a finding like a
//! violation, named `TraceValidation`, with the step, the projections before and after, and the
//! model actions tried.
//!
//! - `head_trim::projection`: a voter as `term`, `leader`, `log` (kind, epoch, term, floor),
//!   `commit`, `floor`, `start`; what it hides (replicas, fences, deleted records) and why.
//! - `head_trim::window`: renaming a step's values into the model's bounds.
//! - `head_trim::checker`: the step → actions table and the ghosts that stand for hidden senders.
//! - `steps`: the chain both specs share, and the `Abstraction` rules (baseline, crash, restart,
//!   jump, out of bounds, ...), each counted; `replicate`: a follower's step, for both specs;
//!   `voter`: the Raft-shaped variables both projections read alike; `renaming`: values renamed
//!   into a window's bounds.
//! - `observe`: the per-voter loop, generic over a spec's `Projection`.
//! - `Validator` (here), behind the `felix_sim::seeded::world::Observer` (`Shared`) that runs the
//!   checker after every event, keeps the counts; `run_validated` runs one seed with it.
//!
//! Holders are projected only where the model's guards read them: the lease (`LeaseGranted`)
//! and the retired epochs (`HolderRetired`) hold every write or trim a holder sends to the model's
//! `Active(h)`, and an append's request carries the holder's expected tail (the `Write` and
//! `TrimAppend` guard `expected[h] = Len(log[s])`). Not projected: a holder's tail between
//! requests and its reads (the model's `Read`, `TrimNoop`, `Refused` and `MoveLease` are not
//! matched); StaleTrimRefused and NoReadBelowFloor stay the audits'.

pub mod conform;
pub mod head_trim;
mod observe;
pub mod paros;
mod renaming;
mod replicate;
pub mod steps;
pub mod voter;

use felix_core::api::Request;
use felix_core::history::Event;
use felix_core::rules::{Invariant, Layer};
use felix_sim::seeded::knobs::Workload;
use felix_sim::seeded::world::{Observer, World};
use felix_sim::{Finding, RunReport, RunSpec};
use head_trim::projection::BrokerProjection;
use head_trim::window;
use observe::Key;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use steps::Abstraction;

/// The model a run is held to, by its workload: felixd runs (lease holders, epochs, expected
/// tails, trims without fences) to FelixHeadTrim; paros runs (the checkpoint owner's fences,
/// fenced truncates, checkpoint runs, jumps) to ParosTrimJump, whose variables they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelKind {
    #[default]
    FelixHeadTrim,
    ParosTrimJump,
}

impl ModelKind {
    pub fn of(workload: &Workload) -> ModelKind {
        match workload {
            Workload::Felixd { .. } => ModelKind::FelixHeadTrim,
            Workload::Paros { .. } => ModelKind::ParosTrimJump,
        }
    }

    /// The model's layer: its spec.
    pub fn layer(self) -> Layer {
        match self {
            ModelKind::FelixHeadTrim => Layer::HeadTrim,
            ModelKind::ParosTrimJump => Layer::Paros,
        }
    }

    /// The spec's name.
    pub fn name(self) -> &'static str {
        self.layer().name()
    }
}

/// The counts of one validated run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// The model the run was held to.
    pub model: ModelKind,
    /// Events the simulator handled and the validator checked (up to the first divergence).
    pub steps: u64,
    /// Steps where no voter's projection changed (stuttering).
    pub stutters: u64,
    /// Steps matched to at least one model action.
    pub matched: u64,
    /// Broker steps not checked, and details hidden in checked steps, by rule.
    pub abstracted: BTreeMap<&'static str, u64>,
    /// Model actions matched, by action name (`Write`, `Replicate`, ...).
    pub actions: BTreeMap<&'static str, u64>,
    /// Holders' write and trim requests held to the model's `Active(h)` when sent.
    pub holder_requests: u64,
}

impl Counts {
    /// The counts as the tally a run's report carries and a sweep sums
    /// (`felix_audits::Validated`): the totals, and the same under the model's name.
    pub fn tally(&self) -> felix_audits::Validated {
        let named = |map: &BTreeMap<&'static str, u64>| -> BTreeMap<String, u64> {
            (map.iter())
                .map(|(name, count)| (name.to_string(), *count))
                .collect()
        };
        let model = felix_audits::validated::ModelTally {
            steps: self.steps,
            stutters: self.stutters,
            matched: self.matched,
            actions: named(&self.actions),
            abstracted: named(&self.abstracted),
        };
        felix_audits::Validated {
            steps: self.steps,
            stutters: self.stutters,
            matched: self.matched,
            holder_requests: self.holder_requests,
            models: BTreeMap::from([(self.model.name().to_string(), model)]),
        }
    }
}

/// One step the model matched, for the readable trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchedStep {
    /// The last trace line of the step's event.
    pub line: u64,
    pub node: u32,
    pub actions: Vec<String>,
}

/// A divergence: the first step the model cannot make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The last trace line of the step's event.
    pub line: u64,
    /// The node (or client) whose step it is, as `node 2` or `client 3`.
    pub who: String,
    pub before: String,
    pub after: String,
    pub mismatch: steps::Mismatch,
}

impl Divergence {
    /// The finding's text: the step, the projections, the actions taken and tried.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} at trace line {}: {}\n    before: {}\n    after:  {}",
            self.who, self.line, self.mismatch.reason, self.before, self.after
        );
        if !self.mismatch.taken.is_empty() {
            text.push_str(&format!(
                "\n    model actions taken: {}",
                self.mismatch.taken.join(", ")
            ));
        }
        if let Some(state) = &self.mismatch.model_state {
            text.push_str(&format!("\n    model reached: {state}"));
        }
        for tried in &self.mismatch.tried {
            text.push_str(&format!("\n    tried: {tried}"));
        }
        text
    }
}

/// The validator: the observer that projects and checks after every event.
#[derive(Default)]
pub struct Validator {
    /// Each voter's last projection and its key (None while down or before its first sample).
    brokers: Vec<Option<(Key, BrokerProjection)>>,
    /// The same for a paros run (`ModelKind::ParosTrimJump`).
    paros: Vec<Option<(Key, paros::ParosNode)>>,
    /// The `TrimmedTo` each node was last sent, by (receiver, point).
    sent: BTreeMap<(u32, u64), paros::Sent>,
    /// History events already seen.
    history_seen: usize,
    /// `lease`: the newest epoch the lease service granted.
    lease: u64,
    /// `retired`: the epochs whose holder retired.
    retired: std::collections::BTreeSet<u64>,
    pub counts: Counts,
    /// Every matched step (kept only when asked for: `keep_steps`).
    pub steps: Option<Vec<MatchedStep>>,
    pub divergence: Option<Divergence>,
}

impl Validator {
    pub fn new(keep_steps: bool) -> Validator {
        Validator::for_model(ModelKind::FelixHeadTrim, keep_steps)
    }

    /// A validator holding runs to `model`.
    pub fn for_model(model: ModelKind, keep_steps: bool) -> Validator {
        let mut validator = Validator {
            steps: keep_steps.then(Vec::new),
            ..Validator::default()
        };
        validator.counts.model = model;
        validator
    }

    fn abstracted(&mut self, abstraction: Abstraction) {
        *self
            .counts
            .abstracted
            .entry(abstraction.name())
            .or_insert(0) += 1;
    }

    /// A holder's write or trim request, held to the model's `Active(h)` (its epoch granted, its
    /// holder not retired) when it is sent: the model's `Write`, `TrimAppend` and `TrimNoop`
    /// all need it. Requests without an epoch (paros, readers) are not a holder's.
    fn holder_request(&mut self, request: &Request) -> Option<steps::Mismatch> {
        let epoch = match request {
            Request::Append { headers, .. } | Request::Trim { headers, .. } => headers.epoch()?,
            _ => return None,
        };
        self.counts.holder_requests += 1;
        let mut state = window::state(
            [
                window::WindowBroker::absent(1),
                window::WindowBroker::absent(1),
                window::WindowBroker::absent(1),
            ],
            0,
        )
        .unwrap_or_else(|| unreachable!("empty logs fit"));
        state.lease = u8::from(epoch <= self.lease);
        state.retired[0] = self.retired.contains(&epoch);
        if state.active(1) {
            return None;
        }
        Some(steps::Mismatch {
            reason: format!(
                "the holder of epoch {epoch} sent a write or trim while not Active(h) (the lease granted up to {}, retired: {}): the model's Write, TrimAppend and TrimNoop need it",
                self.lease,
                self.retired.contains(&epoch)
            ),
            taken: Vec::new(),
            model_state: None,
            tried: vec!["Active(h) on the window: false".to_string()],
        })
    }

    /// Checks the step the world just took.
    pub fn observe(&mut self, world: &World) {
        if self.divergence.is_some() {
            return;
        }
        self.counts.steps += 1;
        let voters = world.voters();
        if self.brokers.len() < voters {
            self.brokers.resize(voters, None);
        }
        // What the step's history says about nodes: restarts start a new baseline; jumps too
        // under FelixHeadTrim, while ParosTrimJump matches them (`TrimmedTo`).
        let paros_model = self.counts.model == ModelKind::ParosTrimJump;
        // Empty (no allocation) unless the step's history names a node: most steps do not.
        let mut rebase: Vec<Option<Abstraction>> = Vec::new();
        let mut jumps: Vec<Option<u64>> = Vec::new();
        let line = world.trace_steps().saturating_sub(1);
        for event in &world.history_events()[self.history_seen..] {
            match event {
                Event::Restarted { node } if (*node as usize) < voters => {
                    set(&mut rebase, voters, *node, Abstraction::Restart)
                }
                Event::Jumped { node, point, .. } if (*node as usize) < voters && paros_model => {
                    set(&mut jumps, voters, *node, *point)
                }
                Event::Jumped { node, .. } if (*node as usize) < voters => {
                    set(&mut rebase, voters, *node, Abstraction::Jump)
                }
                Event::TrimmedToSent { node, to, point } if paros_model => {
                    let sealed = world
                        .brokers()
                        .nth(*node as usize)
                        .flatten()
                        .map(|broker| paros::Sent::of(broker.journal().sealed()))
                        .filter(|sent| sent.point == *point);
                    match sealed {
                        Some(sent) => {
                            self.sent.insert((*to, *point), sent);
                        }
                        None => {
                            self.sent.remove(&(*to, *point));
                        }
                    }
                }
                Event::LeaseGranted { epoch, .. } => self.lease = self.lease.max(*epoch),
                Event::HolderRetired { epoch, .. } => {
                    self.retired.insert(*epoch);
                }
                Event::Requested {
                    client, request, ..
                } => {
                    if let Some(mismatch) = self.holder_request(request) {
                        self.divergence = Some(Divergence {
                            line,
                            who: format!("client {client}"),
                            before: format!(
                                "lease {} retired epochs {:?}",
                                self.lease, self.retired
                            ),
                            after: format!("the request sent: {request:?}"),
                            mismatch,
                        });
                        return;
                    }
                }
                _ => {}
            }
        }
        self.history_seen = world.history_events().len();
        let delivered = world
            .delivered_request()
            .and_then(|(node, request)| match request {
                Request::Append { expected_tail, .. } | Request::Trim { expected_tail, .. } => {
                    expected_tail.map(|tail| (node, tail))
                }
                _ => None,
            });
        let step = observe::Step {
            voters,
            rebase: &rebase,
            jumps: &jumps,
            delivered,
            line,
        };
        if paros_model {
            self.observe_nodes::<paros::ParosNode>(world.brokers(), &step);
        } else {
            self.observe_nodes::<BrokerProjection>(world.brokers(), &step);
        }
    }
}

impl Validator {
    /// Counts a matched step's actions by kind, and keeps their labels for the readable trace.
    fn count_actions(&mut self, node: u32, line: u64, taken: Vec<steps::Taken>) {
        for action in &taken {
            *self.counts.actions.entry(action.kind).or_insert(0) += 1;
        }
        if let Some(steps) = &mut self.steps {
            let actions = taken.into_iter().map(|action| action.label).collect();
            steps.push(MatchedStep {
                line,
                node,
                actions,
            });
        }
    }
}

/// Marks node `node` in a per-node list that is empty until first marked.
fn set<T: Copy>(list: &mut Vec<Option<T>>, voters: usize, node: u32, value: T) {
    if list.is_empty() {
        list.resize(voters, None);
    }
    list[node as usize] = Some(value);
}

/// Node `index` of a per-node list (`set`).
fn at<T: Copy>(list: &[Option<T>], index: usize) -> Option<T> {
    list.get(index).copied().flatten()
}

/// Shares the validator between the world (as its observer) and the caller.
struct Shared(Rc<RefCell<Validator>>);

impl Observer for Shared {
    fn after_event(&mut self, world: &World) {
        self.0.borrow_mut().observe(world);
    }

    /// A divergence, as a `TraceValidation` finding.
    fn finding(&self) -> Option<Finding> {
        let validator = self.0.borrow();
        let divergence = validator.divergence.as_ref()?;
        Some(Finding {
            invariant: Invariant::TraceValidation,
            step: Some(divergence.line),
            clients: Vec::new(),
            detail: divergence.describe(),
        })
    }
}

/// A validated run: the simulator's report (a divergence added as a `TraceValidation` finding,
/// the counts added to its coverage) and the validator.
pub struct Validated {
    pub report: RunReport,
    pub validator: Validator,
}

/// Runs one seed with trace validation.
pub fn run_validated(spec: &RunSpec, keep_steps: bool) -> Validated {
    let model = ModelKind::of(&spec.knobs().workload);
    let validator = Rc::new(RefCell::new(Validator::for_model(model, keep_steps)));
    let (mut report, observer) =
        felix_sim::run_observed(spec, Some(Box::new(Shared(Rc::clone(&validator)))));
    drop(observer);
    let validator = match Rc::try_unwrap(validator) {
        Ok(cell) => cell.into_inner(),
        Err(shared) => std::mem::take(&mut *shared.borrow_mut()),
    };
    report.coverage.add_validated(&validator.counts.tally());
    Validated { report, validator }
}

/// `felix_sim::run` with validation, for runners that take a plain function.
pub fn run(spec: &RunSpec) -> RunReport {
    run_validated(spec, false).report
}

#[cfg(test)]
mod tests {
    use super::*;
    use felix_core::Headers;

    fn append(epoch: u64) -> Request {
        Request::Append {
            expected_tail: Some(1),
            fence: None,
            body: Vec::new(),
            headers: Headers::with_epoch(epoch),
        }
    }

    /// A holder's request is held to the model's `Active(h)`: its epoch granted and not retired.
    #[test]
    fn holder_requests_need_an_active_holder() {
        let mut validator = Validator::new(false);
        validator.lease = 2;
        assert!(validator.holder_request(&append(2)).is_none());
        assert!(
            validator.holder_request(&append(3)).is_some(),
            "never granted"
        );
        validator.retired.insert(1);
        assert!(validator.holder_request(&append(1)).is_some(), "retired");
        assert_eq!(validator.counts.holder_requests, 3);
    }
}
