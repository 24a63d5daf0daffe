//! The chain both checkers build: one node's step (its projection before and after one
//! simulator event) walked as a fixed chain of model actions, each taken through the model's own
//! `next_state` on a window state.
//!
//! What is shared lives here (`Chain`): the chain's shape (a jump, or the leader's appends and
//! commits, a promotion, a step down, a follower's replication (`crate::replicate`), then
//! compaction), what every action of both specs keeps (a term or a commit never goes back, a
//! leader keeps its log, a promotion keeps it and adds the noop, the first held offset never goes
//! back), where each action's window sits, a leader's commit cut into windows, one action taken
//! with the actions the model had enabled instead, and the verdict (the node's variables and log
//! compared with where the model's actions ended). What differs (each action's window, and the
//! variables compared) is each spec's `Steps`: `crate::head_trim::checker` (FelixHeadTrim) and
//! `crate::paros` (ParosTrimJump).

use stateright::Model;

pub use crate::renaming::Renaming;
pub(crate) use crate::replicate::{ReplicateWindow, Replicated};
use crate::voter::{NodeProjection, Projected, Voter};

/// Why a chain stopped.
pub(crate) enum Failure {
    /// Not a behaviour of the model: the reason and the actions tried.
    Mismatch(String, Vec<String>),
    /// Not checked, by a named rule.
    Abstract(Abstraction),
}

/// A mismatch without tried actions.
pub(crate) fn mismatch<T>(reason: String) -> Result<T, Failure> {
    Err(Failure::Mismatch(reason, Vec::new()))
}

/// A leader's append of a record no leader appends in its own term (a noop is a promotion's; an
/// unseen record none).
pub(crate) fn not_appended<T>(record: String) -> Result<T, Failure> {
    mismatch(format!(
        "a leader appended {record} in its own term, not as a promotion's noop"
    ))
}

pub(crate) const OUT: Failure = Failure::Abstract(Abstraction::OutOfBounds);
pub(crate) const LONG: Failure = Failure::Abstract(Abstraction::LongWindow);
pub(crate) const LONG_SUFFIX: Failure = Failure::Abstract(Abstraction::LongSuffix);
pub(crate) const UNSEEN: Failure = Failure::Abstract(Abstraction::Unseen);

/// What a chain records as it goes: the actions taken, and the hiding rules it used.
#[derive(Default)]
pub(crate) struct Walk {
    pub taken: Vec<Taken>,
    pub hidden: Vec<Abstraction>,
}

impl Walk {
    /// The chain took a model action of `kind`, named `label`.
    pub(crate) fn took(&mut self, kind: &'static str, label: String) {
        self.taken.push(Taken { kind, label });
    }
}

/// One model action a chain took: its kind (the model action's name, what the validation counts
/// count) and the chain's name for it, with the node and what stands for the rest
/// (`Replicate(3, majority)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taken {
    pub kind: &'static str,
    pub label: String,
}

/// One spec's projected node as the chain walks it: its Raft-shaped variables (a `Voter`), its
/// own, and the window actions that move it. The chain checks what both specs' actions share
/// (terms and commits never go back, a leader keeps its log, a promotion keeps the log and adds
/// the noop, the first held offset never goes back) and each action's window is the spec's.
pub(crate) trait Steps: NodeProjection {
    /// A model record, as a window holds it.
    type WindowRecord: PartialEq;
    /// What the step's request tells the first appended record (its tail condition).
    type Tail: Copy;
    /// A jump the step made, with what it was sent.
    type Jump;
    /// No tail condition.
    const NO_TAIL: Self::Tail;
    /// The most records a window holds above its base.
    const WINDOW_RECORDS: u64;
    /// The highest term a window holds (terms are renamed into `1..=TERMS_LAST`).
    const TERMS_LAST: u8;
    /// Why a term never goes back, in the spec's words.
    const TERMS_NEVER_LOWER: &'static str;
    /// A model action. The chain counts the actions it takes by their names (`Taken::kind`), and
    /// the four below are the ones the window methods take on their own: each is declared once,
    /// taken by its method and counted by the chain.
    type Action: Copy + Into<&'static str>;
    /// `leader_commit`'s action (`Replicate(b, majority)`).
    const LEADER_COMMIT: Self::Action;
    /// `promote`'s action (`Promote(b, Q)`).
    const PROMOTE: Self::Action;
    /// `step_down`'s action (`StepDown(b, ghost)`).
    const STEP_DOWN: Self::Action;
    /// `replicate`'s action (`Replicate(ghost, b)`).
    const REPLICATE: Self::Action;

    /// One record the leader appended.
    fn append(
        &mut self,
        node: u32,
        appended: Self::Record,
        tail: Self::Tail,
        walk: &mut Walk,
    ) -> Result<(), Failure>;
    /// `label`: the leader's commit rises to `commit`, at most `WINDOW_RECORDS` above its own.
    fn leader_commit(&mut self, label: &str, commit: u64) -> Result<(), Failure>;
    /// `label`: a new leader, promoted on a window of its log above `base` (at most
    /// `WINDOW_RECORDS - 1` records: room for the noop).
    fn promote(&mut self, label: &str, after: &Self, base: u64) -> Result<(), Failure>;
    /// `label`: `StepDown(1, 2)` on a window of a leader at term `me` (renamed) and a ghost at
    /// the higher term `ghost`: the leader's term and whether it still leads, after.
    fn step_down(me: u8, ghost: u8, label: &str) -> Result<(u8, bool), Failure>;
    /// `label`: one `Replicate(ghost, node)` on `window`. Sets the receiver's variables but its
    /// log and commit, which the chain sets from what it returns.
    fn replicate(
        &mut self,
        label: &str,
        after: &Self,
        window: &ReplicateWindow<'_, Self::Record>,
    ) -> Result<Replicated<Self::WindowRecord>, Failure>;
    /// `label`: the first held offset rises (not below where it was); each action taken is
    /// pushed to `walk.taken`.
    fn compact(&mut self, label: &str, after: &Self, walk: &mut Walk) -> Result<(), Failure>;
    /// A jump (and what follows it in the same step, walked on by `chain`).
    fn jump(&mut self, jump: Self::Jump, chain: &mut Chain<'_, Self>) -> Result<(), Failure>;
}

/// Walks one node's step through its model: the verdict, and the hiding rules the step used.
pub(crate) fn check<S: Steps>(
    node: u32,
    before: &S,
    after: &S,
    tail: S::Tail,
    jump: Option<S::Jump>,
) -> (Verdict, Vec<Abstraction>) {
    let mut chain = Chain {
        node,
        after,
        walk: Walk::default(),
    };
    let mut current = before.clone();
    let walked = chain.step(&mut current, tail, jump);
    let Walk { taken, hidden } = chain.walk;
    // A mismatch names the actions taken before it.
    let labels = |taken: Vec<Taken>| taken.into_iter().map(|taken| taken.label).collect();
    match walked {
        Ok(()) => {}
        Err(Failure::Abstract(rule)) => return (Verdict::Abstracted(rule), hidden),
        Err(Failure::Mismatch(reason, tried)) => {
            let verdict = Verdict::Diverged(Mismatch {
                reason,
                taken: labels(taken),
                model_state: Some(current.describe()),
                tried,
            });
            return (verdict, hidden);
        }
    }
    let mut differences = Vec::new();
    for ((name, model), (_, core)) in current.variables().into_iter().zip(after.variables()) {
        if model != core {
            differences.push(format!("{name} {model} (model) vs {core}"));
        }
    }
    // Records at or below the commit index before the step are the projection's, kept unchanged
    // by `advance` and by every chain (no action rewrites a committed record): compared above it.
    let (current_voter, after_voter) = (current.voter(), after.voter());
    let committed = before
        .voter()
        .commit
        .min(current_voter.len())
        .min(after_voter.len());
    if let Some(offset) = first_difference(current_voter, after_voter, committed) {
        differences.push(format!("log differs from offset {offset}"));
    }
    if differences.is_empty() {
        (Verdict::Matched(taken), hidden)
    } else {
        let verdict = Verdict::Diverged(Mismatch {
            reason: format!(
                "the model's actions end elsewhere: {}",
                differences.join(", ")
            ),
            taken: labels(taken),
            model_state: Some(current.describe()),
            tried: Vec::new(),
        });
        (verdict, hidden)
    }
}

/// Why `after` breaks the rule that no model action lowers a term, if it does (`what` says how
/// the term went down): checked by the chain, and by the observe loop where a rule hides the rest
/// of a step.
pub(crate) fn lowered_term<S: Steps>(before: &S, after: &S, what: &str) -> Option<String> {
    let (from, to) = (before.voter().term, after.voter().term);
    (to < from).then(|| format!("{what} from {from} to {to}: {}", S::TERMS_NEVER_LOWER))
}

/// The first offset above `from` where the logs differ (length included).
pub(crate) fn first_difference<R: Copy + PartialEq>(
    a: &Voter<R>,
    b: &Voter<R>,
    from: u64,
) -> Option<u64> {
    let shared = a.len().min(b.len());
    ((from + 1)..=shared)
        .find(|&offset| a.at(offset) != b.at(offset))
        .or_else(|| (a.len() != b.len()).then_some(shared + 1))
}

/// One node's step as its chain walks it: the node (named in the actions), the projection the
/// step ends in, and what the chain has taken so far. Each method moves the node's projection
/// (`current`) by the model's actions towards `after`.
pub(crate) struct Chain<'a, S> {
    pub node: u32,
    pub after: &'a S,
    pub walk: Walk,
}

impl<S: Steps> Chain<'_, S> {
    /// The chain of one step, fixed by the step (see the module doc).
    fn step(
        &mut self,
        current: &mut S,
        tail: S::Tail,
        jump: Option<S::Jump>,
    ) -> Result<(), Failure> {
        if let Some(reason) = lowered_term(current, self.after, "the term went back") {
            return mismatch(reason);
        }
        if let Some(jump) = jump {
            return current.jump(jump, self);
        }
        let (from, to) = (current.voter(), self.after.voter());
        if from.leader && to.leader && from.term == to.term {
            self.leader_steps(current, tail)?;
        } else if !from.leader && to.leader {
            self.promote(current)?;
            self.leader_steps(current, S::NO_TAIL)?;
        } else {
            if from.leader {
                self.step_down(current)?;
            }
            self.replicate(current)?;
        }
        if self.after.voter().start != current.voter().start {
            self.compact(current)?;
        }
        Ok(())
    }

    /// The leader appends, then commits.
    fn leader_steps(&mut self, current: &mut S, mut tail: S::Tail) -> Result<(), Failure> {
        let (from, to) = (current.voter(), self.after.voter());
        if to.len() < from.len()
            || first_difference(from, to, from.commit).is_some_and(|offset| offset <= from.len())
        {
            return mismatch(
                "a leader's log lost or changed a record in its own term: no model action does that"
                    .into(),
            );
        }
        for offset in (current.voter().len() + 1)..=to.len() {
            // The request's tail conditions the first record it appends (a request appends one).
            let first = std::mem::replace(&mut tail, S::NO_TAIL);
            current.append(self.node, to.at(offset), first, &mut self.walk)?;
        }
        if to.commit != current.voter().commit {
            self.commit_in_windows(current, to.commit)?;
        }
        Ok(())
    }

    /// A leader's commit over more records than a window holds: one commit per window, each
    /// ending on the window's last record of the leader's term (the only records the model's
    /// `CommitIn` commits by counting), then the rest.
    fn commit_in_windows(&mut self, current: &mut S, commit: u64) -> Result<(), Failure> {
        while commit > current.voter().commit + S::WINDOW_RECORDS && commit <= current.voter().len()
        {
            let voter = current.voter();
            let before = voter.commit;
            let end = ((before + 1)..=(before + S::WINDOW_RECORDS))
                .rev()
                .find(|&offset| voter.at(offset).term() == voter.term)
                .ok_or(LONG)?;
            self.leader_commit(current, end)?;
            if current.voter().commit <= before {
                return Err(LONG);
            }
        }
        self.leader_commit(current, commit)
    }

    /// The leader's commit rises within one window: `Replicate(b, majority)`, the acknowledging
    /// majority standing in as ghosts holding its log up to the new commit.
    fn leader_commit(&mut self, current: &mut S, commit: u64) -> Result<(), Failure> {
        let label = format!("Replicate({}, majority)", self.node);
        let voter = current.voter();
        if commit < voter.commit || commit > voter.len() {
            return mismatch(format!(
                "a leader's commit moved from {} to {commit} (log length {}): {label} only raises it within the log",
                voter.commit,
                voter.len()
            ));
        }
        if commit - voter.commit > S::WINDOW_RECORDS {
            return Err(LONG);
        }
        current.leader_commit(&label, commit)?;
        self.walk.took(S::LEADER_COMMIT.into(), label);
        Ok(())
    }

    /// A new leader: `Promote(b, Q)` from the term below its new one, on a window that holds its
    /// last records (the votes are hidden).
    fn promote(&mut self, current: &mut S) -> Result<(), Failure> {
        let label = format!("Promote({}, Q)", self.node);
        let (from, to) = (current.voter(), self.after.voter());
        if to.len() <= from.len()
            || first_difference(from, to, from.commit).is_some_and(|offset| offset <= from.len())
        {
            return mismatch(format!(
                "{label} keeps the log and appends a noop; the simulator's new leader did not"
            ));
        }
        // `Promote` reads only the voters' last terms and lengths: the window may start above the
        // commit index, as long as it holds the last record and room for the noop.
        let base = from
            .commit
            .min(from.len())
            .max(from.len().saturating_sub(S::WINDOW_RECORDS - 1));
        if from.len() - base >= S::WINDOW_RECORDS {
            return Err(LONG);
        }
        current.promote(&label, self.after, base)?;
        self.walk.took(S::PROMOTE.into(), label);
        Ok(())
    }

    /// A leader learns a higher term: `StepDown(b, ghost)` with the ghost at the new term.
    fn step_down(&mut self, current: &mut S) -> Result<(), Failure> {
        let label = format!("StepDown({}, ·)", self.node);
        let (from, to) = (current.voter().term, self.after.voter().term);
        let terms = Renaming::new([from, to], 1, S::TERMS_LAST).ok_or(OUT)?;
        let (term, leader) = S::step_down(terms.to(from), terms.to(to), &label)?;
        let voter = current.voter_mut();
        voter.term = terms
            .back(term)
            .unwrap_or_else(|| unreachable!("a step down takes the ghost's term"));
        voter.leader = leader;
        self.walk.took(S::STEP_DOWN.into(), label);
        Ok(())
    }

    /// The first held offset rises: `Compact(b)`, as often as the spec's window takes it.
    fn compact(&mut self, current: &mut S) -> Result<(), Failure> {
        let label = format!("Compact({})", self.node);
        let (from, to) = (current.voter().start, self.after.voter().start);
        if to < from {
            return mismatch(format!(
                "the first held offset went back from {from} to {to}"
            ));
        }
        current.compact(&label, self.after, &mut self.walk)
    }
}

/// Runs one action on a window and returns the next state, or the mismatch naming the action
/// and the actions of the same kind the model had enabled there. `model_words` names the model
/// and `window_words` the window's nodes, in a mismatch.
pub(crate) fn take<M: Model>(
    model: &M,
    state: &M::State,
    action: M::Action,
    label: &str,
    model_words: &str,
    window_words: &str,
) -> Result<M::State, Failure>
where
    M::Action: Copy + std::fmt::Display,
{
    if let Some(next) = model.next_state(state, action) {
        return Ok(next);
    }
    let mut enabled = Vec::new();
    model.actions(state, &mut enabled);
    // The nearest actions: the ones of the same kind the model had enabled there.
    let kind = |action: &M::Action| std::mem::discriminant(action);
    let same: Vec<String> = enabled
        .iter()
        .filter(|candidate| kind(candidate) == kind(&action))
        .map(|candidate| candidate.to_string())
        .collect();
    Err(Failure::Mismatch(
        format!("{label} is not enabled in {model_words}"),
        vec![
            format!("{label}: guard false (as {action} in the window, {window_words})"),
            if same.is_empty() {
                "no action of that kind is enabled in the window".to_string()
            } else {
                format!("enabled in the window instead: {}", same.join(", "))
            },
        ],
    ))
}

/// Why a step was not checked against the model (counted, never passed silently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Abstraction {
    /// The first projection of a broker: the model starts from its own `Init` (broker 1 leads
    /// term 1), the simulator elects its first leader; the first sample is the baseline.
    Baseline,
    /// A crash: the broker is down (the model's `Crash` keeps the log; disks are the
    /// simulator's). Its projection resumes from what it recovered, at restart.
    Crash,
    /// A restart: the recovered state is the new baseline.
    Restart,
    /// A TrimmedTo jump (not in FelixHeadTrim: ParosTrimJump's action): the jumped state is the
    /// new baseline.
    Jump,
    /// The step's values do not fit the model's bounds (`window`): more distinct terms, floors,
    /// epochs, tokens or offsets than a window renames.
    OutOfBounds,
    /// The step needs more records in one window than a model log holds (FelixHeadTrim's
    /// `LOG_MAX` = 8, ParosTrimJump's 7 slots): a leader committing more at once, a candidate
    /// with more uncommitted records than fit beside its noop.
    LongWindow,
    /// A follower's step where it holds more uncommitted records above the match point than a
    /// window holds, and the sender's log differs within them.
    LongSuffix,
    /// The step needs a record the projection never saw (received, committed and deleted in one
    /// step, or below the first held offset of a fresh baseline).
    Unseen,
    // ParosTrimJump's rules (`crate::paros`). The first three leave a step unchecked; the last
    // four hide one detail of a step that is still checked, and count each time they do.
    /// A jump of a node that already agreed with the sender at the point (the core's leader does
    /// not know it does; the model's leader would `Replicate` there, and its `TrimmedTo` is not
    /// enabled): the jumped state is the new baseline.
    JumpInAgreement,
    /// A jump whose `TrimmedTo` the validator did not see sent (the sender's sealed state is not
    /// known): the jumped state is the new baseline.
    UnseenSender,
    /// A trim without a fence in a paros run (the model's truncates are all fenced).
    Unfenced,
    /// A truncate asking for a floor below its own offset (a checkpoint's start): the model's
    /// `Truncate` is up to its own slot; the record keeps the core's floor.
    TruncateUpTo,
    /// A jump whose sender sealed a floor above the point (set by a trim at or above it): the
    /// model's `sfloor` is the fold below the point; the sender's is read as the point, as the
    /// core's jumper reads it.
    SealedFloor,
    /// A compaction that stopped at a segment boundary below the model's `Compact` point
    /// `min(floor, commit + 1)`.
    Segments,
    /// A conditional append (a checkpoint run's record): the model's appends have no tail
    /// condition; the core's tail check is the owner's.
    RunTail,
}

impl Abstraction {
    pub const ALL: [Abstraction; 15] = [
        Abstraction::Baseline,
        Abstraction::Crash,
        Abstraction::Restart,
        Abstraction::Jump,
        Abstraction::OutOfBounds,
        Abstraction::LongWindow,
        Abstraction::LongSuffix,
        Abstraction::Unseen,
        Abstraction::JumpInAgreement,
        Abstraction::UnseenSender,
        Abstraction::Unfenced,
        Abstraction::TruncateUpTo,
        Abstraction::SealedFloor,
        Abstraction::Segments,
        Abstraction::RunTail,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Abstraction::Baseline => "baseline",
            Abstraction::Crash => "crash",
            Abstraction::Restart => "restart",
            Abstraction::Jump => "jump",
            Abstraction::OutOfBounds => "out_of_bounds",
            Abstraction::LongWindow => "long_window",
            Abstraction::LongSuffix => "long_suffix",
            Abstraction::Unseen => "unseen",
            Abstraction::JumpInAgreement => "jump_in_agreement",
            Abstraction::UnseenSender => "unseen_sender",
            Abstraction::Unfenced => "unfenced",
            Abstraction::TruncateUpTo => "truncate_up_to",
            Abstraction::SealedFloor => "sealed_floor",
            Abstraction::Segments => "segments",
            Abstraction::RunTail => "run_tail",
        }
    }
}

/// A step the model cannot make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// What went wrong, in words.
    pub reason: String,
    /// The model actions taken before it, in order.
    pub taken: Vec<String>,
    /// The state the model reached (the projection the chain ended in), if it got that far.
    pub model_state: Option<String>,
    /// The nearest actions tried: the one that failed, and the actions the model had enabled in
    /// the window where it failed.
    pub tried: Vec<String>,
}

/// How a broker's step ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The step is this chain of model actions.
    Matched(Vec<Taken>),
    /// Not checked, by this rule.
    Abstracted(Abstraction),
    /// Not a behaviour of the model.
    Diverged(Mismatch),
}
