//! The checker: one simulated broker's step held to the FelixHeadTrim model's own actions.
//!
//! A step of a voter (its projection before and after one simulator event) must be the result of
//! a short chain of model actions, each taken through `Model::next_state` (the model's guards
//! and its `apply`, never a copy of them) on a window state (`window`). The chain is fixed by the
//! step, not searched, so a step costs a few `next_state` calls:
//!
//! | the broker | model actions |
//! |---|---|
//! | stays leader, same term | `Write` / `TrimAppend` per appended record, then `Replicate(b, ·)` for its commit |
//! | becomes leader | `Promote(b, Q)` (the noop), then as above |
//! | stops leading, higher term | `StepDown(b, ·)`, then as a follower |
//! | follower | `Replicate(·, b)` once per record the step moved (at least once) |
//! | first held offset rises | `Compact(b)` until it reaches the new start |
//!
//! `k`, the chain length, is 1 + the number of records the step appended or received (each model
//! `Replicate` carries one record, each append is one action), plus one `Replicate` per further
//! window of a leader's commit over more than `LOG_MAX` records (each window ending on a record of
//! its term), plus at most 3 `Compact` actions.
//!
//! A step that needs more records in one window than a model log holds is counted, not checked:
//! `long_suffix` (a follower holding more than `LOG_MAX` uncommitted records above the match
//! point where the sender differs: 0 in seeds 0..1000) and `long_window` (a leader whose commit
//! crosses more than `LOG_MAX` records of older terms at once, which the model's `CommitIn`
//! commits only together with one of its own term). Raising the bound means raising the model's
//! `LOG_MAX`, which every model state carries (`Log` is a fixed array): not free for the model
//! checkers.
//!
//! Hidden by the projection, each by a named rule (`Abstraction`): the sender of a message
//! (a *ghost leader* stands for it: its log and commit are the receiver's after the step, its term
//! the receiver's new term; the model's `Replicate` then decides whether the receiver's log,
//! commit, floor and term follow); the acknowledgements behind a leader's commit (its log up to
//! the new commit stands for the majority's); a candidate's own term bump (a new leader is promoted
//! from the term below its new one); the holder behind an append (model holder 1 with the tail the
//! leader had: the tail check is the client's, and epochs are not compared here).

use crate::head_trim::projection::{BrokerProjection, ProjectedRecord};
use crate::head_trim::window::{self, WindowBroker, WINDOW};
use crate::steps::Renaming;
use crate::steps::{
    self, first_difference, Failure, Steps, Verdict, Walk, LONG, LONG_SUFFIX, OUT, UNSEEN,
};
use felix_model::head_trim::spec::{Action, FelixHeadTrim, Kind, Record, State, LOG_MAX};

/// Broker numbers in the window: the stepping broker is 1, a ghost is 2.
const SELF: u8 = 1;
const GHOST: u8 = 2;

fn model() -> FelixHeadTrim {
    FelixHeadTrim::new(&WINDOW)
}

/// Walks one broker's step through the model. `node` names the broker in action names; `tail`
/// is the expected tail of the client request the step delivered to it, if the request had one
/// (the model's holder believes the stream ends at `tail - 1`).
pub fn check(
    node: u32,
    before: &BrokerProjection,
    after: &BrokerProjection,
    tail: Option<u64>,
) -> Verdict {
    steps::check(node, before, after, tail, None).0
}

/// Runs one action on a window (`steps::take`).
fn take(state: &State, action: Action, label: &str) -> Result<State, Failure> {
    steps::take(
        &model(),
        state,
        action,
        label,
        "the model",
        "where broker 1 is the stepping node and broker 2 a ghost",
    )
}

impl Steps for BrokerProjection {
    type Record = ProjectedRecord;
    type Tail = Option<u64>;
    type Jump = std::convert::Infallible;
    const NO_TAIL: Option<u64> = None;
    const WINDOW_RECORDS: u64 = LOG_MAX as u64;
    const TERMS_NEVER_LOWER: &'static str = "no model action lowers a term";

    fn len(&self) -> u64 {
        BrokerProjection::len(self)
    }
    fn at(&self, offset: u64) -> ProjectedRecord {
        BrokerProjection::at(self, offset)
    }
    fn record_term(record: &ProjectedRecord) -> u64 {
        record.term
    }
    fn term(&self) -> u64 {
        self.term
    }
    fn leader(&self) -> bool {
        self.leader
    }
    fn commit(&self) -> u64 {
        self.commit
    }
    fn start(&self) -> u64 {
        self.start
    }
    fn describe(&self) -> String {
        BrokerProjection::describe(self)
    }
    fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("term", self.term.to_string()),
            ("leader", self.leader.to_string()),
            ("commit", self.commit.to_string()),
            ("floor", self.floor.to_string()),
            ("start", self.start.to_string()),
        ]
    }
    fn append(
        &mut self,
        node: u32,
        appended: ProjectedRecord,
        tail: Option<u64>,
        walk: &mut Walk,
    ) -> Result<(), Failure> {
        append(node, self, appended, tail, &mut walk.taken)
    }
    fn leader_commit(&mut self, node: u32, commit: u64, walk: &mut Walk) -> Result<(), Failure> {
        leader_commit(node, self, commit, &mut walk.taken)
    }
    fn promote(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        promote(node, self, after, &mut walk.taken)
    }
    fn step_down(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        step_down(node, self, after, &mut walk.taken)
    }
    fn replicate_chain(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        replicate_chain(node, self, after, &mut walk.taken)
    }
    fn compact(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        compact(node, self, after, &mut walk.taken)
    }
    fn jump(
        &mut self,
        _: u32,
        _: &Self,
        jump: std::convert::Infallible,
        _: &mut Walk,
    ) -> Result<(), Failure> {
        match jump {}
    }
}

/// Epochs, densely (see `window`): the model's actions only compare them.
fn epoch_renaming(records: &[ProjectedRecord]) -> Result<Renaming, Failure> {
    Renaming::dense(
        records
            .iter()
            .map(|record| record.epoch)
            .chain(std::iter::once(0)),
        0,
        7,
    )
    .ok_or(OUT)
}

fn record(
    projected: &ProjectedRecord,
    terms: &Renaming,
    floors: &Renaming,
    epochs: &Renaming,
) -> Result<Record, Failure> {
    if projected.kind == Kind::Empty {
        return Err(UNSEEN);
    }
    Ok(Record {
        k: projected.kind,
        h: epochs.to(projected.epoch),
        t: terms.to(projected.term),
        f: if projected.kind == Kind::Trim {
            floors.to(projected.floor)
        } else {
            0
        },
    })
}

/// One appended record: `Write(1, b)` or `TrimAppend(1, b, fl)` on a window holding only the
/// leader's tail and floor (the actions read nothing else of its log). Holder 1's `expected` is
/// the request's tail - 1; a request without a tail condition (paros' fenced appends) is taken
/// as expecting the leader's tail: the model's holders always condition on it.
fn append(
    node: u32,
    current: &mut BrokerProjection,
    appended: ProjectedRecord,
    tail: Option<u64>,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let len = current.len();
    let expected = tail.map_or(len, |tail| tail.saturating_sub(1));
    let mut offsets = vec![0, len, len + 1, expected, expected + 1, current.floor];
    if appended.kind == Kind::Trim {
        offsets.push(appended.floor);
    }
    let offsets = Renaming::new(offsets, 0, LOG_MAX as u8).ok_or(OUT)?;
    let terms = Renaming::new([current.term, appended.term], 1, 31).ok_or(OUT)?;
    let filler = Record {
        k: Kind::Write,
        h: 1,
        t: terms.to(current.term),
        f: 0,
    };
    let me = WindowBroker {
        term: terms.to(current.term),
        leader: true,
        records: vec![filler; usize::from(offsets.to(len))],
        commit: 0,
        floor: offsets.to(current.floor),
        start: 1,
    };
    let tail = offsets.to(len);
    let state = window::state(
        [me, WindowBroker::absent(1), WindowBroker::absent(1)],
        offsets.to(expected),
    )
    .ok_or(OUT)?;
    let (action, label) = match appended.kind {
        Kind::Write => (Action::Write(1, SELF), format!("Write(h, {node})")),
        Kind::Trim => (
            Action::TrimAppend(1, SELF, offsets.to(appended.floor)),
            format!("TrimAppend(h, {node}, {})", appended.floor),
        ),
        Kind::Noop | Kind::Empty => {
            return Err(Failure::Mismatch(
                format!(
                    "a leader appended {} in its own term, not as a promotion's noop",
                    appended.describe()
                ),
                Vec::new(),
            ))
        }
    };
    let next = take(&state, action, &label)?;
    let model_record = next.log[0].at(tail + 1);
    if model_record.t != terms.to(appended.term) {
        return Err(Failure::Mismatch(
            format!(
                "{label} appends a record of the leader's term {}, the simulator's is of term {}",
                current.term, appended.term
            ),
            Vec::new(),
        ));
    }
    current.log.push(appended);
    taken.push(label);
    Ok(())
}

/// The leader's commit rises: `Replicate(b, ·)` with the acknowledging majority standing in as
/// two ghosts holding its log up to the new commit. The model's `CommitIn` and `Walk` decide the
/// commit index and the floor.
fn leader_commit(
    node: u32,
    current: &mut BrokerProjection,
    commit: u64,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Replicate({node}, majority)");
    if commit < current.commit || commit > current.len() {
        return Err(Failure::Mismatch(
            format!(
                "a leader's commit moved from {} to {commit} (log length {}): {label} only raises it within the log",
                current.commit,
                current.len()
            ),
            Vec::new(),
        ));
    }
    let base = current.commit;
    if commit - base > LOG_MAX as u64 {
        return Err(LONG);
    }
    let records = &current.log[base as usize..commit as usize];
    let terms = Renaming::new(
        records
            .iter()
            .map(|record| record.term)
            .chain(std::iter::once(current.term)),
        1,
        31,
    )
    .ok_or(OUT)?;
    let floors = Renaming::new(
        records
            .iter()
            .filter(|record| record.kind == Kind::Trim)
            .map(|record| record.floor)
            .chain(std::iter::once(current.floor)),
        1,
        63,
    )
    .ok_or(OUT)?;
    let epochs = epoch_renaming(records)?;
    let window_records: Vec<Record> = records
        .iter()
        .map(|projected| record(projected, &terms, &floors, &epochs))
        .collect::<Result<_, _>>()?;
    let term = terms.to(current.term);
    let me = WindowBroker {
        term,
        leader: true,
        records: window_records.clone(),
        commit: 0,
        floor: floors.to(current.floor),
        start: 1,
    };
    let ghost = WindowBroker {
        term,
        leader: false,
        records: window_records,
        commit: 0,
        floor: 1,
        start: 1,
    };
    let state = window::state([me, ghost.clone(), ghost], 0).ok_or(OUT)?;
    let next = take(&state, Action::Replicate(SELF, GHOST), &label)?;
    current.commit = base + u64::from(next.commit[0]);
    current.floor = floors
        .back(next.floor[0])
        .unwrap_or_else(|| unreachable!("the model's walk ends on a floor it was given"));
    taken.push(label);
    Ok(())
}

/// A new leader: `Promote(b, {1, 2, 3})` from the term below its new one, with two ghosts that
/// hold its log (the votes are hidden).
fn promote(
    node: u32,
    current: &mut BrokerProjection,
    after: &BrokerProjection,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Promote({node}, Q)");
    if after.len() <= current.len()
        || first_difference(current, after, current.commit)
            .is_some_and(|offset| offset <= current.len())
    {
        return Err(Failure::Mismatch(
            format!("{label} keeps the log and appends a noop; the simulator's new leader did not"),
            Vec::new(),
        ));
    }
    // `Promote` reads only the voters' last terms and lengths: the window may start above the
    // commit index, as long as it holds the last record and room for the noop.
    let base = current
        .commit
        .min(current.len())
        .max(current.len().saturating_sub(LOG_MAX as u64 - 1));
    let records = &current.log[base as usize..];
    let promise = after.term - 1;
    let terms = Renaming::new(
        records
            .iter()
            .map(|record| record.term)
            .chain([promise, after.term]),
        1,
        31,
    )
    .ok_or(OUT)?;
    let floors = Renaming::new(
        records
            .iter()
            .filter(|record| record.kind == Kind::Trim)
            .map(|record| record.floor)
            .chain(std::iter::once(current.floor)),
        1,
        63,
    )
    .ok_or(OUT)?;
    let epochs = epoch_renaming(records)?;
    let window_records: Vec<Record> = records
        .iter()
        .map(|projected| record(projected, &terms, &floors, &epochs))
        .collect::<Result<_, _>>()?;
    if window_records.len() >= LOG_MAX {
        return Err(LONG);
    }
    let voter = WindowBroker {
        term: terms.to(promise),
        leader: false,
        records: window_records,
        commit: current.commit.saturating_sub(base) as u8,
        floor: floors.to(current.floor),
        start: 1,
    };
    let state = window::state([voter.clone(), voter.clone(), voter], 0).ok_or(OUT)?;
    let next = take(&state, Action::Promote(SELF, 0b111), &label)?;
    let noop = next.log[0].at(next.log[0].len());
    current.term = terms
        .back(next.term[0])
        .unwrap_or_else(|| unreachable!("the promoted term is the one after the promise"));
    current.leader = next.leader[0];
    current.log.push(ProjectedRecord {
        kind: noop.k,
        epoch: 0,
        term: current.term,
        floor: 0,
    });
    taken.push(label);
    Ok(())
}

/// A leader learns a higher term: `StepDown(b, ghost)` with the ghost at the new term.
fn step_down(
    node: u32,
    current: &mut BrokerProjection,
    after: &BrokerProjection,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("StepDown({node}, ·)");
    let terms = Renaming::new([current.term, after.term], 1, 31).ok_or(OUT)?;
    let me = WindowBroker {
        term: terms.to(current.term),
        leader: true,
        ..WindowBroker::absent(1)
    };
    let ghost = WindowBroker::absent(terms.to(after.term));
    let state = window::state([me, ghost, WindowBroker::absent(1)], 0).ok_or(OUT)?;
    let next = take(&state, Action::StepDown(SELF, GHOST), &label)?;
    current.term = terms
        .back(next.term[0])
        .unwrap_or_else(|| unreachable!("a step down takes the ghost's term"));
    current.leader = next.leader[0];
    taken.push(label);
    Ok(())
}

/// A follower's step: `Replicate(ghost, b)` until the follower holds the ghost's log (one record
/// per action) and its commit. The ghost is the sender as the step shows it: the follower's log,
/// commit and term after the step.
///
/// Each action runs on a window of `LOG_MAX` offsets above a base. With the base at the
/// follower's commit, the action may also commit (the model walks the newly committed records);
/// when the next record to send lies beyond that window, the base moves up to the match point and
/// the ghost's commit is taken as at most the follower's (a leader may send before it commits
/// more), so the action moves the log only.
fn replicate_chain(
    node: u32,
    current: &mut BrokerProjection,
    after: &BrokerProjection,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Replicate(·, {node})");
    let width = LOG_MAX as u64;
    let limit = 2 * after.len() + 4;
    for _ in 0..limit {
        // The match point: records at or below the follower's commit are taken as agreed.
        let mut matched = current.commit.min(current.len()).min(after.len());
        while matched < current.len().min(after.len())
            && current.at(matched + 1).term == after.at(matched + 1).term
        {
            matched += 1;
        }
        let commit = current.commit;
        let to_send = matched < after.len();
        // Commit mode: the base at the follower's commit (or the match point below it).
        let base_commit = commit.min(matched);
        let commit_can_move = after.commit > commit && base_commit == commit;
        let send_fits = to_send && matched < base_commit + width;
        let commit_mode = commit_can_move || send_fits || !to_send;
        let (base, log_only) = if commit_mode {
            (base_commit, false)
        } else {
            (matched.saturating_sub(width / 2).max(commit), true)
        };
        // The follower's records above the window must be ones the ghost holds too.
        let window_end = base + width;
        if current.len() > window_end && matched < window_end {
            return Err(LONG_SUFFIX);
        }
        let ghost_records = &after.log[base as usize..after.len().min(window_end) as usize];
        let own_records = &current.log[base as usize..current.len().min(window_end) as usize];
        let own_tail = &current.log[current.len().min(window_end) as usize..];
        let all: Vec<ProjectedRecord> = ghost_records.iter().chain(own_records).copied().collect();
        let terms = Renaming::new(
            all.iter()
                .map(|record| record.term)
                .chain([current.term, after.term]),
            1,
            31,
        )
        .ok_or(OUT)?;
        let floors = Renaming::new(
            all.iter()
                .filter(|record| record.kind == Kind::Trim)
                .map(|record| record.floor)
                .chain([current.floor, after.floor]),
            1,
            63,
        )
        .ok_or(OUT)?;
        let epochs = epoch_renaming(&all)?;
        let ghost_window: Vec<Record> = ghost_records
            .iter()
            .map(|projected| record(projected, &terms, &floors, &epochs))
            .collect::<Result<_, _>>()?;
        let own_window: Vec<Record> = own_records
            .iter()
            .map(|projected| record(projected, &terms, &floors, &epochs))
            .collect::<Result<_, _>>()?;
        let (ghost_commit, own_commit) = if log_only {
            // Both commits at or below the base: the window's 0.
            (0, 0)
        } else {
            (
                after
                    .commit
                    .saturating_sub(base)
                    .min(ghost_window.len() as u64) as u8,
                (commit - base) as u8,
            )
        };
        let ghost = WindowBroker {
            term: terms.to(after.term),
            leader: true,
            records: ghost_window.clone(),
            commit: ghost_commit,
            floor: floors.to(after.floor),
            start: 1,
        };
        let me = WindowBroker {
            term: terms.to(current.term),
            leader: current.leader,
            records: own_window.clone(),
            commit: own_commit,
            floor: floors.to(current.floor),
            start: 1,
        };
        let state = window::state([ghost, me, WindowBroker::absent(terms.to(current.term))], 0)
            .ok_or(OUT)?;
        let next = take(&state, Action::Replicate(1, 2), &label)?;
        let previous = current.clone();
        let mut log = current.log[..base as usize].to_vec();
        for (index, model_record) in next.log[1].records().enumerate() {
            let offset = base + index as u64 + 1;
            let projected = if ghost_window.get(index) == Some(&model_record) {
                after.at(offset)
            } else if own_window.get(index) == Some(&model_record) {
                current.at(offset)
            } else {
                unreachable!("a replicated record comes from the sender or the receiver")
            };
            log.push(projected);
        }
        if usize::from(next.log[1].len()) == own_window.len() {
            log.extend_from_slice(own_tail);
        } else {
            assert!(
                own_tail.is_empty(),
                "a window cut above the match point is never changed"
            );
        }
        current.log = log;
        current.commit = if log_only {
            commit
        } else {
            base + u64::from(next.commit[1])
        };
        current.floor = floors
            .back(next.floor[1])
            .unwrap_or_else(|| unreachable!("the model's walk ends on a floor it was given"));
        current.term = terms
            .back(next.term[1])
            .unwrap_or_else(|| unreachable!("a replicate takes the sender's term"));
        current.leader = next.leader[1];
        taken.push(label.clone());
        let done = current.commit == after.commit
            && current.len() == after.len()
            && first_difference(current, after, base).is_none();
        if done || *current == previous {
            return Ok(());
        }
    }
    Ok(())
}

/// The first held offset rises: `Compact(b)` (segments of one record: the simulator's segments
/// are its own; the model's guard is that everything deleted lies below the floor).
fn compact(
    node: u32,
    current: &mut BrokerProjection,
    after: &BrokerProjection,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Compact({node})");
    if after.start < current.start {
        return Err(Failure::Mismatch(
            format!(
                "the first held offset went back from {} to {}",
                current.start, after.start
            ),
            Vec::new(),
        ));
    }
    let offsets = Renaming::new(
        [current.start, after.start - 1, after.start, current.floor],
        1,
        63,
    )
    .ok_or(OUT)?;
    let target = offsets.to(after.start);
    let me = WindowBroker {
        term: 1,
        leader: current.leader,
        records: Vec::new(),
        commit: 0,
        floor: offsets.to(current.floor),
        start: offsets.to(current.start),
    };
    let mut state =
        window::state([me, WindowBroker::absent(1), WindowBroker::absent(1)], 0).ok_or(OUT)?;
    while state.start[0] < target {
        state = take(&state, Action::Compact(SELF), &label)?;
        taken.push(label.clone());
    }
    current.start = after.start;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(term: u64) -> ProjectedRecord {
        ProjectedRecord {
            kind: Kind::Write,
            epoch: 1,
            term,
            floor: 0,
        }
    }

    fn trim(term: u64, floor: u64) -> ProjectedRecord {
        ProjectedRecord {
            kind: Kind::Trim,
            epoch: 1,
            term,
            floor,
        }
    }

    fn noop(term: u64) -> ProjectedRecord {
        ProjectedRecord {
            kind: Kind::Noop,
            epoch: 0,
            term,
            floor: 0,
        }
    }

    fn broker(term: u64, leader: bool, log: Vec<ProjectedRecord>, commit: u64) -> BrokerProjection {
        BrokerProjection {
            term,
            leader,
            log,
            commit,
            floor: 1,
            start: 1,
        }
    }

    fn diverged(verdict: &Verdict) -> bool {
        matches!(verdict, Verdict::Diverged(_))
    }

    /// A leader's append in its own term is the model's `Write`; one in another term is not.
    #[test]
    fn leader_append_is_a_write_of_its_term() {
        let before = broker(2, true, vec![noop(2)], 1);
        let mut after = before.clone();
        after.log.push(write(2));
        assert_eq!(
            check(0, &before, &after, None),
            Verdict::Matched(vec!["Write(h, 0)".to_string()])
        );
        let mut wrong_term = before.clone();
        wrong_term.log.push(write(1));
        assert!(diverged(&check(0, &before, &wrong_term, None)));
    }

    /// An append is the model's `Write` only when the request's tail is the leader's: a write
    /// appended under a stale tail is a divergence (the tail check is the model's guard).
    #[test]
    fn append_needs_the_right_tail() {
        let before = broker(2, true, vec![noop(2), write(2)], 1);
        let mut after = before.clone();
        after.log.push(write(2));
        assert!(matches!(
            check(0, &before, &after, Some(3)),
            Verdict::Matched(_)
        ));
        assert!(diverged(&check(0, &before, &after, Some(2))));
        assert!(diverged(&check(0, &before, &after, Some(40))));
    }

    /// A trim appended with a floor at or below the leader's floor is a divergence: the model
    /// appends only a trim that raises the floor (a lower one is a no-op, `TrimNoop`).
    #[test]
    fn trim_not_above_the_floor_is_not_appended() {
        let mut before = broker(1, true, vec![noop(1), write(1), trim(1, 3), write(1)], 3);
        before.floor = 3;
        let mut raising = before.clone();
        raising.log.push(trim(1, 5));
        assert!(matches!(
            check(0, &before, &raising, None),
            Verdict::Matched(_)
        ));
        let mut lowering = before.clone();
        lowering.log.push(trim(1, 2));
        assert!(diverged(&check(0, &before, &lowering, None)));
    }

    /// A follower's floor is the model's walk over its newly committed records: applied when the
    /// walk reaches the trim, never before.
    #[test]
    fn follower_floor_follows_the_walk() {
        let log = vec![noop(1), write(1), write(1), trim(1, 3)];
        let before = broker(1, false, log.clone(), 2);
        let mut committed = before.clone();
        committed.commit = 4;
        committed.floor = 3;
        assert!(matches!(
            check(1, &before, &committed, None),
            Verdict::Matched(_)
        ));
        let mut early = before.clone();
        early.commit = 3;
        early.floor = 3;
        assert!(diverged(&check(1, &before, &early, None)));
    }

    /// A follower catching up many records at once is a chain of `Replicate`s, one per record,
    /// across windows wider than the model's logs; its floor is still the walk's.
    #[test]
    fn long_catch_up_is_a_chain_of_replicates() {
        let before = broker(1, false, vec![noop(1)], 1);
        let mut log = vec![noop(1)];
        for index in 0..20u64 {
            log.push(if index % 5 == 4 {
                trim(1, index)
            } else {
                write(1)
            });
        }
        let mut after = broker(2, false, log, 18);
        after.floor = 14;
        match check(2, &before, &after, None) {
            Verdict::Matched(actions) => {
                assert!(actions.len() >= 20, "{actions:?}");
                assert!(actions.iter().all(|action| action == "Replicate(·, 2)"));
            }
            other => panic!("expected a match, got {other:?}"),
        }
        let mut wrong_floor = after.clone();
        wrong_floor.floor = 19;
        assert!(diverged(&check(2, &before, &wrong_floor, None)));
    }

    /// No model action lowers a term or a commit index.
    #[test]
    fn terms_and_commits_never_go_back() {
        let before = broker(3, false, vec![noop(1), write(1)], 2);
        let mut lower_term = before.clone();
        lower_term.term = 2;
        assert!(diverged(&check(0, &before, &lower_term, None)));
        let mut lower_commit = before.clone();
        lower_commit.commit = 1;
        assert!(diverged(&check(0, &before, &lower_commit, None)));
    }

    /// A new leader is `Promote`: its log kept, its term's noop appended.
    #[test]
    fn promotion_appends_the_noop() {
        let before = broker(4, false, vec![noop(1), write(1)], 2);
        let mut after = broker(5, true, vec![noop(1), write(1), noop(5)], 2);
        assert_eq!(
            check(0, &before, &after, None),
            Verdict::Matched(vec!["Promote(0, Q)".to_string()])
        );
        after.log.pop();
        assert!(diverged(&check(0, &before, &after, None)));
    }

    /// A leader committing more records than a window holds is a chain of `Replicate`s, one per
    /// window ending on a record of its term; a candidate with more uncommitted records than a
    /// window holds is still `Promote` (it reads only the last term and length).
    #[test]
    fn long_commits_and_promotions_fit_in_windows() {
        let mut log = vec![noop(2)];
        log.extend((0..19).map(|_| write(2)));
        let before = broker(2, true, log.clone(), 1);
        let after = broker(2, true, log.clone(), 20);
        match check(0, &before, &after, None) {
            Verdict::Matched(actions) => assert_eq!(actions.len(), 3, "{actions:?}"),
            other => panic!("expected a match, got {other:?}"),
        }
        let candidate = broker(2, false, log.clone(), 1);
        let mut promoted = broker(3, true, log, 1);
        promoted.log.push(noop(3));
        assert!(matches!(
            check(0, &candidate, &promoted, None),
            Verdict::Matched(_)
        ));
    }

    /// Compaction deletes only below the floor (`Compact`'s guard).
    #[test]
    fn compaction_stays_below_the_floor() {
        let mut before = broker(1, false, vec![noop(1), write(1), trim(1, 3), write(1)], 4);
        before.floor = 3;
        let mut below = before.clone();
        below.start = 3;
        assert!(matches!(
            check(0, &before, &below, None),
            Verdict::Matched(_)
        ));
        let mut past = before.clone();
        past.start = 4;
        assert!(diverged(&check(0, &before, &past, None)));
    }
}
