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
use crate::head_trim::window::{self, Names, WindowBroker, TERMS_LAST, WINDOW};
use crate::steps::{
    self, mismatch, not_appended, Chain, Failure, Renaming, ReplicateWindow, Replicated, Steps,
    Verdict, Walk, OUT,
};
use crate::voter::Projected;
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

impl BrokerProjection {
    /// The broker in a window: its term and floor renamed by `names`, holding `records` (already
    /// renamed) with `commit` in the window, from offset 1.
    fn in_window(
        &self,
        names: &Names,
        leader: bool,
        records: Vec<Record>,
        commit: u8,
    ) -> WindowBroker {
        WindowBroker {
            term: names.terms.to(self.term),
            leader,
            records,
            commit,
            floor: names.floors.to(self.floor),
            start: 1,
        }
    }
}

impl Steps for BrokerProjection {
    type WindowRecord = Record;
    type Tail = Option<u64>;
    type Jump = std::convert::Infallible;
    const NO_TAIL: Option<u64> = None;
    const WINDOW_RECORDS: u64 = LOG_MAX as u64;
    const TERMS_LAST: u8 = TERMS_LAST;
    const TERMS_NEVER_LOWER: &'static str = "no model action lowers a term";
    type Action = Action;
    const LEADER_COMMIT: Action = Action::Replicate(SELF, GHOST);
    const PROMOTE: Action = Action::Promote(SELF, 0b111);
    const STEP_DOWN: Action = Action::StepDown(SELF, GHOST);
    /// The replicate window holds the ghost first: `Replicate(1, 2)` sends from it to the node.
    const REPLICATE: Action = Action::Replicate(1, 2);

    /// One appended record: `Write(1, b)` or `TrimAppend(1, b, fl)` on a window holding only
    /// the leader's tail and floor (the actions read nothing else of its log). Holder 1's
    /// `expected` is the request's tail - 1; a request without a tail condition (paros' fenced
    /// appends) is taken as expecting the leader's tail: the model's holders always condition
    /// on it.
    fn append(
        &mut self,
        node: u32,
        appended: ProjectedRecord,
        tail: Option<u64>,
        walk: &mut Walk,
    ) -> Result<(), Failure> {
        let len = self.len();
        let expected = tail.map_or(len, |tail| tail.saturating_sub(1));
        let mut offsets = vec![0, len, len + 1, expected, expected + 1, self.floor];
        if appended.kind == Kind::Trim {
            offsets.push(appended.floor);
        }
        let offsets = Renaming::new(offsets, 0, LOG_MAX as u8).ok_or(OUT)?;
        let terms = Renaming::new([self.term, appended.term], 1, TERMS_LAST).ok_or(OUT)?;
        let filler = Record {
            k: Kind::Write,
            h: 1,
            t: terms.to(self.term),
            f: 0,
        };
        let me = WindowBroker {
            term: terms.to(self.term),
            leader: true,
            records: vec![filler; usize::from(offsets.to(len))],
            commit: 0,
            floor: offsets.to(self.floor),
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
            Kind::Noop | Kind::Empty => return not_appended(appended.describe()),
        };
        let next = take(&state, action, &label)?;
        let model_record = next.log[0].at(tail + 1);
        if model_record.t != terms.to(appended.term) {
            return mismatch(format!(
                "{label} appends a record of the leader's term {}, the simulator's is of term {}",
                self.term, appended.term
            ));
        }
        self.log.push(appended);
        walk.took(action.into(), label);
        Ok(())
    }

    /// `Replicate(b, ·)` with the acknowledging majority standing in as two ghosts holding its
    /// log up to the new commit. The model's `CommitIn` and `Walk` decide the commit index and
    /// the floor.
    fn leader_commit(&mut self, label: &str, commit: u64) -> Result<(), Failure> {
        let base = self.commit;
        let records = &self.log[base as usize..commit as usize];
        let names = Names::new(records, [self.term], [self.floor])?;
        let window_records = names.records(records)?;
        let me = self.in_window(&names, true, window_records.clone(), 0);
        let ghost = WindowBroker {
            records: window_records,
            ..WindowBroker::absent(me.term)
        };
        let state = window::state([me, ghost.clone(), ghost], 0).ok_or(OUT)?;
        let next = take(&state, Self::LEADER_COMMIT, label)?;
        self.commit = base + u64::from(next.commit[0]);
        self.floor = names.floor(next.floor[0]);
        Ok(())
    }

    /// `Promote(b, {1, 2, 3})` with two ghosts that hold its log above `base`.
    fn promote(&mut self, label: &str, after: &Self, base: u64) -> Result<(), Failure> {
        let records = &self.log[base as usize..];
        let promise = after.term - 1;
        let names = Names::new(records, [promise, after.term], [self.floor])?;
        let voter = WindowBroker {
            term: names.terms.to(promise),
            leader: false,
            records: names.records(records)?,
            commit: self.commit.saturating_sub(base) as u8,
            floor: names.floors.to(self.floor),
            start: 1,
        };
        let state = window::state([voter.clone(), voter.clone(), voter], 0).ok_or(OUT)?;
        let next = take(&state, Self::PROMOTE, label)?;
        let noop = next.log[0].at(next.log[0].len());
        self.term = names.term(next.term[0]);
        self.leader = next.leader[0];
        self.log.push(ProjectedRecord {
            kind: noop.k,
            epoch: 0,
            term: self.term,
            floor: 0,
        });
        Ok(())
    }

    fn step_down(me: u8, ghost: u8, label: &str) -> Result<(u8, bool), Failure> {
        let me = WindowBroker {
            term: me,
            leader: true,
            ..WindowBroker::absent(1)
        };
        let ghost = WindowBroker::absent(ghost);
        let state = window::state([me, ghost, WindowBroker::absent(1)], 0).ok_or(OUT)?;
        let next = take(&state, Self::STEP_DOWN, label)?;
        Ok((next.term[0], next.leader[0]))
    }

    /// The ghost leads at the term the follower ends in.
    fn replicate(
        &mut self,
        label: &str,
        after: &Self,
        window: &ReplicateWindow<'_, ProjectedRecord>,
    ) -> Result<Replicated<Record>, Failure> {
        let names = Names::new(
            &window.all,
            [self.term, after.term],
            [self.floor, after.floor],
        )?;
        let ghost_window = names.records(window.ghost)?;
        let own_window = names.records(window.own)?;
        let ghost = after.in_window(&names, true, ghost_window.clone(), window.ghost_commit);
        let me = self.in_window(&names, self.leader, own_window.clone(), window.own_commit);
        let third = WindowBroker::absent(me.term);
        let state = window::state([ghost, me, third], 0).ok_or(OUT)?;
        let next = take(&state, Self::REPLICATE, label)?;
        self.floor = names.floor(next.floor[1]);
        self.term = names.term(next.term[1]);
        self.leader = next.leader[1];
        Ok(Replicated::of(
            ghost_window,
            own_window,
            &next.log[1],
            next.commit[1],
        ))
    }

    /// `Compact(b)` until the first held offset reaches the new start (segments of one record:
    /// the simulator's segments are its own; the model's guard is that everything deleted lies
    /// below the floor).
    fn compact(&mut self, label: &str, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        let offsets = Renaming::new(
            [self.start, after.start - 1, after.start, self.floor],
            1,
            63,
        )
        .ok_or(OUT)?;
        let target = offsets.to(after.start);
        let me = WindowBroker {
            term: 1,
            leader: self.leader,
            records: Vec::new(),
            commit: 0,
            floor: offsets.to(self.floor),
            start: offsets.to(self.start),
        };
        let mut state =
            window::state([me, WindowBroker::absent(1), WindowBroker::absent(1)], 0).ok_or(OUT)?;
        let compact = Action::Compact(SELF);
        while state.start[0] < target {
            state = take(&state, compact, label)?;
            walk.took(compact.into(), label.to_string());
        }
        self.start = after.start;
        Ok(())
    }

    fn jump(
        &mut self,
        jump: std::convert::Infallible,
        _: &mut Chain<'_, Self>,
    ) -> Result<(), Failure> {
        match jump {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::Taken;

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
        BrokerProjection::holding(term, leader, log, commit)
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
            Verdict::Matched(vec![Taken {
                kind: "Write",
                label: "Write(h, 0)".to_string()
            }])
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
                assert!(actions
                    .iter()
                    .all(|action| action.kind == "Replicate" && action.label == "Replicate(·, 2)"));
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
            Verdict::Matched(vec![Taken {
                kind: "Promote",
                label: "Promote(0, Q)".to_string()
            }])
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
