//! The one per-node loop of `Validator::observe`, for either spec: each voter's projection
//! before and after the step, a baseline where a rule hides the step (a crash, a restart, a jump
//! FelixHeadTrim does not model), and otherwise the step walked through the spec's chain
//! (`crate::steps`).

use std::collections::BTreeMap;

use felix_core::broker::Broker;

use crate::head_trim::projection::BrokerProjection;
use crate::paros::{ParosNode, Sent};
use crate::steps::{self as checker, Abstraction, Verdict};
use crate::steps::{self, Steps};
use crate::{at, Divergence, Validator};

/// A spec's projection of one voter, as the observe loop keeps it.
pub(crate) trait Projection: Steps {
    /// The tail condition the step's delivered request gives node `node`.
    fn tail(delivered: Option<(u32, u64)>, node: u32) -> Self::Tail;
    /// The jump to `point` node `node` made, with what it was sent (`None`: never seen sent).
    fn sent(sent: &BTreeMap<(u32, u64), Sent>, node: u32, point: u64) -> Option<Self::Jump>;
    /// The validator's last projections of this spec.
    fn kept(validator: &mut Validator) -> &mut Vec<Option<(Key, Self)>>;
}

impl Projection for BrokerProjection {
    fn tail(delivered: Option<(u32, u64)>, node: u32) -> Option<u64> {
        delivered
            .filter(|(target, _)| *target == node)
            .map(|(_, tail)| tail)
    }
    fn sent(_: &BTreeMap<(u32, u64), Sent>, _: u32, _: u64) -> Option<std::convert::Infallible> {
        unreachable!("FelixHeadTrim takes a jump as a new baseline")
    }
    fn kept(validator: &mut Validator) -> &mut Vec<Option<(Key, Self)>> {
        &mut validator.brokers
    }
}

impl Projection for ParosNode {
    fn tail(delivered: Option<(u32, u64)>, node: u32) -> bool {
        delivered.is_some_and(|(target, _)| target == node)
    }
    fn sent(sent: &BTreeMap<(u32, u64), Sent>, node: u32, point: u64) -> Option<Sent> {
        sent.get(&(node, point)).copied()
    }
    fn kept(validator: &mut Validator) -> &mut Vec<Option<(Key, Self)>> {
        &mut validator.paros
    }
}

/// What `observe` read off the step's history for the per-node loop.
pub(crate) struct Step<'a> {
    pub voters: usize,
    /// The rule that makes a node's step a new baseline (empty: none).
    pub rebase: &'a [Option<Abstraction>],
    /// The point a node jumped to, where its spec models the jump (empty: none).
    pub jumps: &'a [Option<u64>],
    /// The node a request with a tail condition was delivered to, and the tail.
    pub delivered: Option<(u32, u64)>,
    pub line: u64,
}

impl Validator {
    /// Each voter's step held to its spec (`P`); a jump is the spec's when `step.jumps` names
    /// it, a new baseline when `step.rebase` does.
    pub(crate) fn observe_nodes<'b, P: Projection>(
        &mut self,
        brokers: impl Iterator<Item = Option<&'b Broker>>,
        step: &Step<'_>,
    ) {
        let mut kept = std::mem::take(P::kept(self));
        if kept.len() < step.voters {
            kept.resize(step.voters, None);
        }
        let mut changed = false;
        let mut matched = false;
        for (index, broker) in brokers.take(step.voters).enumerate() {
            match self.observe_node(index, broker, &mut kept[index], step) {
                Node::Same => {}
                Node::Changed => changed = true,
                Node::Matched => (changed, matched) = (true, true),
                Node::Diverged => break,
            }
        }
        *P::kept(self) = kept;
        if self.divergence.is_some() {
            return;
        }
        if !changed {
            self.counts.stutters += 1;
        }
        if matched {
            self.counts.matched += 1;
        }
    }

    /// One voter's step.
    fn observe_node<P: Projection>(
        &mut self,
        index: usize,
        broker: Option<&Broker>,
        kept: &mut Option<(Key, P)>,
        step: &Step<'_>,
    ) -> Node {
        let node = index as u32;
        let Some(broker) = broker else {
            if kept.take().is_some() {
                self.abstracted(Abstraction::Crash);
                return Node::Changed;
            }
            return Node::Same;
        };
        let key = Key::of(broker);
        // Most events change no voter: compare keys before cloning a projection.
        let (rule, point) = (at(step.rebase, index), at(step.jumps, index));
        if rule.is_none()
            && point.is_none()
            && matches!(kept, Some((before_key, _)) if *before_key == key)
        {
            return Node::Same;
        }
        let (before_key, before) = match (kept.take(), rule) {
            (Some(previous), None) => previous,
            (previous, rule) => return self.rebase(step.line, node, broker, kept, previous, rule),
        };
        let jump = point.map(|point| P::sent(&self.sent, node, point));
        if before_key == key && jump.is_none() {
            *kept = Some((before_key, before));
            return Node::Same;
        }
        let after = match jump {
            // A jump drops what lay below the point: re-read in full.
            Some(_) => P::read(broker),
            None => before.advance(broker),
        };
        let tail = P::tail(step.delivered, node);
        let (verdict, hidden) = match jump {
            Some(None) => (Verdict::Abstracted(Abstraction::UnseenSender), Vec::new()),
            Some(Some(sent)) => steps::check(node, &before, &after, tail, Some(sent)),
            None => steps::check(node, &before, &after, tail, None),
        };
        for rule in hidden {
            self.abstracted(rule);
        }
        let outcome = match verdict {
            Verdict::Matched(actions) => {
                self.count_actions(node, step.line, actions);
                Node::Matched
            }
            Verdict::Abstracted(rule) => {
                self.abstracted(rule);
                // An unchecked jump still may not lower the term.
                if let Some(reason) = steps::lowered_term(&before, &after, "the term went back") {
                    return self.diverged(step.line, node, &before, &after, reason.into());
                }
                Node::Changed
            }
            Verdict::Diverged(mismatch) => {
                return self.diverged_with(step.line, node, &before, &after, mismatch);
            }
        };
        *kept = Some((key, after));
        outcome
    }

    /// A new baseline for node `node`: after a crash or a restart, a jump its spec does not model,
    /// or its first sample.
    fn rebase<P: Projection>(
        &mut self,
        line: u64,
        node: u32,
        broker: &Broker,
        kept: &mut Option<(Key, P)>,
        previous: Option<(Key, P)>,
        rule: Option<Abstraction>,
    ) -> Node {
        // A restart after a crash was already counted as a crash; count it once more as the
        // restart that sets the new baseline.
        let rule = rule.unwrap_or(Abstraction::Baseline);
        self.abstracted(rule);
        let fresh = P::read(broker);
        // A jump hides the log, commit, floor and start, never the term: no model action lowers
        // a term (the jump "never touches the term or the vote").
        if let (Abstraction::Jump, Some((_, before))) = (rule, previous) {
            if let Some(reason) = steps::lowered_term(&before, &fresh, "a jump lowered the term") {
                return self.diverged(line, node, &before, &fresh, reason.into());
            }
        }
        *kept = Some((Key::of(broker), fresh));
        Node::Changed
    }

    /// A divergence without tried actions.
    fn diverged<P: Projection>(
        &mut self,
        line: u64,
        node: u32,
        before: &P,
        after: &P,
        reason: std::borrow::Cow<'static, str>,
    ) -> Node {
        let mismatch = checker::Mismatch {
            reason: reason.into_owned(),
            taken: Vec::new(),
            model_state: None,
            tried: Vec::new(),
        };
        self.diverged_with(line, node, before, after, mismatch)
    }

    /// The divergence of node `node`'s step.
    fn diverged_with<P: Projection>(
        &mut self,
        line: u64,
        node: u32,
        before: &P,
        after: &P,
        mismatch: checker::Mismatch,
    ) -> Node {
        self.divergence = Some(Divergence {
            line,
            who: format!("node {node}"),
            before: before.describe(),
            after: after.describe(),
            mismatch,
        });
        Node::Diverged
    }
}

/// What one voter's step did.
enum Node {
    /// Nothing changed.
    Same,
    /// A change not matched by model actions (a baseline, a crash, an abstraction).
    Changed,
    /// A step matched by model actions.
    Matched,
    /// A divergence (recorded in the validator).
    Diverged,
}

/// What changes when a broker's state changes: read on every event, cheap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    term: u64,
    leader: bool,
    tail: u64,
    last_term: u64,
    commit: u64,
    floor: u64,
    start: u64,
}

impl Key {
    pub fn of(broker: &Broker) -> Key {
        let journal = broker.journal();
        Key {
            term: broker.term(),
            leader: broker.is_leader(),
            tail: journal.tail(),
            last_term: journal.last_term(),
            commit: broker.committed(),
            floor: broker.floor(),
            start: broker.first_held(),
        }
    }
}
