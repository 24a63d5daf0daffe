//! A paros node's step held to ParosTrimJump's own actions: the chain of `crate::steps`, with
//! this spec's window actions (see `super` for the chain and the rules it counts).

use super::projection::{ParosNode, ParosRecord, Sent};
use super::window::*;
use crate::steps::{
    self, mismatch, not_appended, Abstraction, Chain, Failure, Renaming, ReplicateWindow,
    Replicated, Steps, Verdict, Walk, OUT, UNSEEN,
};
use crate::voter::Projected;
use felix_model::paros::spec::{Action, Kind, Record, State};

/// Walks one node's step through the ParosTrimJump model. `tail`: the request the step
/// delivered had a tail condition; `jump`: the step is a jump to what `Sent` says. Returns the
/// verdict and the hiding rules the step used (each counted).
pub fn check(
    node: u32,
    before: &ParosNode,
    after: &ParosNode,
    tail: bool,
    jump: Option<Sent>,
) -> (Verdict, Vec<Abstraction>) {
    steps::check(node, before, after, tail, jump)
}

impl ParosNode {
    /// The node in a window: its term, writer and floor renamed by `names`, holding `records`
    /// (already renamed) with `commit` in the window, above a base sealed at term `sterm`.
    fn in_window(
        &self,
        names: &Names,
        leader: bool,
        records: Vec<Record>,
        commit: u8,
        sterm: u64,
    ) -> WindowNode {
        WindowNode {
            term: names.terms.to(self.term),
            leader,
            records,
            commit,
            writer: names.tokens().to(self.writer),
            floor: names.floors.to(self.floor),
            sterm: names.terms.to(sterm),
            ..WindowNode::absent(1)
        }
    }
}

impl Steps for ParosNode {
    type WindowRecord = Record;
    type Tail = bool;
    type Jump = Sent;
    const NO_TAIL: bool = false;
    const WINDOW_RECORDS: u64 = SLOTS;
    const TERMS_LAST: u8 = TERMS_LAST;
    const TERMS_NEVER_LOWER: &'static str =
        "no ParosTrimJump action lowers a term (TrimmedTo never touches it)";
    type Action = Action;
    const LEADER_COMMIT: Action = Action::Replicate(N1, N2);
    const PROMOTE: Action = Action::Promote(N1, 0b111);
    const STEP_DOWN: Action = Action::StepDown(N1, N2);
    const REPLICATE: Action = Action::Replicate(N1, N2);

    /// One appended record: `Write`, `Truncate` or `SetLeader` on a window holding the leader
    /// alone (the actions read nothing of its log but its length).
    fn append(
        &mut self,
        node: u32,
        appended: ParosRecord,
        tail: bool,
        walk: &mut Walk,
    ) -> Result<(), Failure> {
        if tail {
            walk.hidden.push(Abstraction::RunTail);
        }
        let offset = self.len() + 1;
        let tail_writer = self.tail_writer();
        let names = Names::new(
            std::slice::from_ref(&appended),
            &[self.term],
            &[self.floor],
            &[tail_writer, self.writer],
        )?;
        let me = WindowNode {
            term: names.terms.to(self.term),
            leader: true,
            writer: names.tokens().to(self.writer),
            floor: names.floors.to(self.floor),
            ..WindowNode::absent(1)
        };
        let state = window([me, WindowNode::absent(1), WindowNode::absent(1)]).ok_or(OUT)?;
        let record = names.record(&appended);
        let (action, label) = match appended.kind {
            Kind::Write => (Action::Write(0, N1), format!("Write(o, {node})")),
            Kind::Truncate => {
                if appended.up_to > offset {
                    return mismatch(format!(
                        "a truncate at {offset} asks for floor {} above its own slot: the model's Truncate is up to its own slot",
                        appended.up_to
                    ));
                }
                if appended.up_to < offset {
                    walk.hidden.push(Abstraction::TruncateUpTo);
                }
                (
                    Action::Truncate(record.o, N1),
                    format!("Truncate({}, {node})", appended.token),
                )
            }
            Kind::SetLeader => {
                if appended.old != tail_writer {
                    return mismatch(format!(
                        "a SetLeader {{ new: {}, old: {} }} appended where the token at the tail is {tail_writer}: the model's SetLeader {{ new: o, old: o - 1 }} replaces the token in force",
                        appended.token, appended.old
                    ));
                }
                (
                    Action::SetLeader(record.o, N1),
                    format!("SetLeader({}, {node})", appended.token),
                )
            }
            Kind::Noop | Kind::Empty => return not_appended(appended.describe()),
        };
        let next = take(&state, action, &label)?;
        let made = next.log[0].at(1);
        if made.k != record.k || made.o != record.o || made.t != record.t {
            return mismatch(format!(
                "{label} appends {made} (renamed) where the core appended {}",
                appended.describe()
            ));
        }
        self.log.push(appended);
        walk.took(action.into(), label);
        Ok(())
    }

    /// `Replicate(b, ghost)`, the ghost holding its log up to the new commit (the acknowledging
    /// majority). The model's `CommitIn` and walk give commit, writer and floor.
    fn leader_commit(&mut self, label: &str, commit: u64) -> Result<(), Failure> {
        let base = self.commit;
        let sterm = self.term_at(base).ok_or(UNSEEN)?;
        let records = &self.log[base as usize..commit as usize];
        let names = Names::new(records, &[self.term, sterm], &[self.floor], &[self.writer])?;
        let me = self.in_window(&names, true, names.records(records), 0, sterm);
        let ghost = WindowNode {
            leader: false,
            ..me.clone()
        };
        let state = window([me, ghost, WindowNode::absent(1)]).ok_or(OUT)?;
        let next = take(&state, Self::LEADER_COMMIT, label)?;
        self.commit = base + u64::from(next.commit[0]);
        self.writer = names.token(next.writer[0]);
        self.floor = names.floor(next.floor[0]);
        Ok(())
    }

    /// `Promote(b, {1, 2, 3})`, the two ghosts holding its log above `base`.
    fn promote(&mut self, label: &str, after: &Self, base: u64) -> Result<(), Failure> {
        let records = &self.log[base as usize..];
        let sterm = self.term_at(base).ok_or(UNSEEN)?;
        let promise = after.term - 1;
        let names = Names::new(records, &[promise, after.term, sterm], &[], &[])?;
        let voter = WindowNode {
            term: names.terms.to(promise),
            records: names.records(records),
            sterm: names.terms.to(sterm),
            ..WindowNode::absent(1)
        };
        let state = window([voter.clone(), voter.clone(), voter]).ok_or(OUT)?;
        let next = take(&state, Self::PROMOTE, label)?;
        let noop = next.log[0].at(next.log[0].len());
        self.term = names.term(next.term[0]);
        self.leader = next.leader[0];
        let term = self.term;
        self.log.push(ParosRecord {
            kind: noop.k,
            term,
            ..ParosRecord::UNSEEN
        });
        Ok(())
    }

    fn step_down(me: u8, ghost: u8, label: &str) -> Result<(u8, bool), Failure> {
        let me = WindowNode {
            leader: true,
            ..WindowNode::absent(me)
        };
        let state = window([me, WindowNode::absent(ghost), WindowNode::absent(1)]).ok_or(OUT)?;
        let next = take(&state, Self::STEP_DOWN, label)?;
        Ok((next.term[0], next.leader[0]))
    }

    /// The ghost leads at the term the follower ends in, with its writer and floor.
    fn replicate(
        &mut self,
        label: &str,
        after: &Self,
        span: &ReplicateWindow<'_, ParosRecord>,
    ) -> Result<Replicated<Record>, Failure> {
        let sterm = self.term_at(span.base).ok_or(UNSEEN)?;
        let names = Names::new(
            &span.all,
            &[self.term, after.term, sterm],
            &[self.floor, after.floor],
            &[self.writer, after.writer],
        )?;
        let ghost_window = names.records(span.ghost);
        let own_window = names.records(span.own);
        let ghost = after.in_window(&names, true, ghost_window.clone(), span.ghost_commit, sterm);
        let me = self.in_window(
            &names,
            self.leader,
            own_window.clone(),
            span.own_commit,
            sterm,
        );
        let third = WindowNode::absent(me.term);
        let state = window([ghost, me, third]).ok_or(OUT)?;
        let next = take(&state, Self::REPLICATE, label)?;
        self.writer = names.token(next.writer[1]);
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

    /// `Compact(b)`, which deletes every record below `min(floor, commit + 1)`; the core's
    /// deletion must be a part of it (rule `segments`).
    fn compact(&mut self, label: &str, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        let offsets = Renaming::new(
            [self.start, after.start, self.floor, self.commit + 1],
            1,
            SLOTS as u8,
        )
        .ok_or(OUT)?;
        let start = offsets.to(self.start);
        let held = offsets.to(self.commit + 1).saturating_sub(start);
        let filler = Record {
            k: Kind::Write,
            o: 0,
            t: 1,
            u: 0,
        };
        let me = WindowNode {
            leader: self.leader,
            records: vec![filler; usize::from(held)],
            start,
            commit: offsets.to(self.commit + 1) - 1,
            floor: offsets.to(self.floor),
            sterm: 1,
            ..WindowNode::absent(1)
        };
        let state = window([me, WindowNode::absent(1), WindowNode::absent(1)]).ok_or(OUT)?;
        let compact = Action::Compact(N1);
        let next = take(&state, compact, label)?;
        let target = offsets.to(after.start);
        if next.start[0] < target {
            return mismatch(format!(
                "the core deleted below {} where {label} deletes only below min(floor {}, commit {} + 1)",
                after.start, self.floor, self.commit
            ));
        }
        if next.start[0] > target {
            walk.hidden.push(Abstraction::Segments);
        }
        self.start = after.start;
        self.sterm = after.sterm;
        walk.took(compact.into(), label.to_string());
        Ok(())
    }

    /// A jump: `TrimmedTo`, then `Replicate` if the step also moved the log or the commit.
    fn jump(&mut self, sent: Sent, chain: &mut Chain<'_, Self>) -> Result<(), Failure> {
        let (after, walk) = (chain.after, &mut chain.walk);
        trimmed_to(chain.node, self, after, sent, walk)?;
        if self.commit != after.commit || self.len() != after.len() {
            chain.replicate(self)?;
        }
        Ok(())
    }
}

/// The jumper as the model's `TrimmedTo` left it (node 2 of the window `next`), its names read
/// back: it holds nothing below its new start.
fn jumped(
    current: &mut ParosNode,
    next: &State,
    offsets: &Renaming,
    terms: &Renaming,
    tokens: &Tokens,
) {
    let offset = |image: u8| {
        offsets
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's offsets come from the window"))
    };
    let start = offset(next.start[1]);
    assert!(next.log[1].is_empty(), "TrimmedTo empties the jumper's log");
    current.log = vec![ParosRecord::UNSEEN; (start - 1) as usize];
    current.start = start;
    current.commit = offset(next.commit[1]);
    current.floor = offset(next.floor[1]);
    current.writer = tokens
        .back(next.writer[1])
        .unwrap_or_else(|| unreachable!("the model's tokens come from the window"));
    current.sterm = terms
        .back(next.sterm[1])
        .unwrap_or_else(|| unreachable!("the model's terms come from the window"));
    current.term = terms
        .back(next.term[1])
        .unwrap_or_else(|| unreachable!("the model's terms come from the window"));
    current.leader = next.leader[1];
}

/// A jump: `TrimmedTo(ghost, b)`, the ghost holding nothing from the point it sent, with the
/// sealed state it sent, at the jumper's term.
fn trimmed_to(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    sent: Sent,
    walk: &mut Walk,
) -> Result<(), Failure> {
    let label = format!("TrimmedTo(·, {node})");
    let point = sent.point;
    if current.term_at(point - 1) == Some(sent.base_term) {
        return Err(Failure::Abstract(Abstraction::JumpInAgreement));
    }
    if sent.floor > point {
        walk.hidden.push(Abstraction::SealedFloor);
    }
    let sfloor = sent.floor.min(point);
    let last = current.len();
    let offsets = Renaming::new(
        [
            current.start - 1,
            current.start,
            current.commit,
            current.floor,
            last,
            point - 1,
            point,
            sfloor,
        ],
        0,
        SLOTS as u8,
    )
    .ok_or(OUT)?;
    // The jumper's records: only the term at the point's base matters to the guard (`CanReplicate`
    // reads the one slot the ghost knows).
    let fill = current
        .term_at(point - 1)
        .or_else(|| current.term_at(last))
        .unwrap_or(current.term);
    let terms = Renaming::new([fill, sent.base_term, current.term], 1, TERMS_LAST).ok_or(OUT)?;
    let tokens = Tokens::new(&[current.writer, sent.writer], &[]).ok_or(OUT)?;
    let filler = Record {
        k: Kind::Write,
        o: 0,
        t: terms.to(fill),
        u: 0,
    };
    let held = offsets.to(last) + 1 - offsets.to(current.start);
    let me = WindowNode {
        term: terms.to(current.term),
        leader: current.leader,
        records: vec![filler; usize::from(held)],
        start: offsets.to(current.start),
        commit: offsets.to(current.commit),
        writer: tokens.to(current.writer),
        floor: offsets.to(current.floor),
        sterm: terms.to(fill),
        ..WindowNode::absent(1)
    };
    let ghost = WindowNode {
        term: terms.to(current.term),
        leader: true,
        records: Vec::new(),
        start: offsets.to(point),
        commit: offsets.to(point - 1),
        writer: tokens.to(sent.writer),
        floor: offsets.to(sfloor),
        sterm: terms.to(sent.base_term),
        swriter: tokens.to(sent.writer),
        sfloor: offsets.to(sfloor),
    };
    let state = window([ghost, me, WindowNode::absent(1)]).ok_or(OUT)?;
    let action = Action::TrimmedTo(N1, N2);
    let next = take(&state, action, &label)?;
    jumped(current, &next, &offsets, &terms, &tokens);
    if after.start != current.start {
        return mismatch(format!(
            "{label} starts the jumper at {}, the core at {}",
            current.start, after.start
        ));
    }
    walk.took(action.into(), label);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voter::Voter;

    fn write(term: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::Write,
            term,
            ..ParosRecord::UNSEEN
        }
    }

    fn truncate(term: u64, token: u64, up_to: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::Truncate,
            token,
            fenced: true,
            term,
            up_to,
            ..ParosRecord::UNSEEN
        }
    }

    fn fence(term: u64, new: u64, old: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::SetLeader,
            token: new,
            old,
            term,
            ..ParosRecord::UNSEEN
        }
    }

    fn noop(term: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::Noop,
            term,
            ..ParosRecord::UNSEEN
        }
    }

    fn node(term: u64, leader: bool, log: Vec<ParosRecord>, commit: u64) -> ParosNode {
        ParosNode {
            voter: Voter::holding(term, leader, log, commit),
            writer: 0,
            sterm: 0,
        }
    }

    fn matched(verdict: &(Verdict, Vec<Abstraction>)) -> bool {
        matches!(verdict.0, Verdict::Matched(_))
    }

    /// Tokens keep each fence's `new` the successor of its `old`, and refuse a branch.
    #[test]
    fn tokens_keep_fence_successors() {
        let tokens = Tokens::new(&[0, 9], &[(0, 3), (3, 5)]).expect("fits");
        assert_eq!(tokens.to(0), 1);
        assert_eq!(tokens.to(3), 2);
        assert_eq!(tokens.to(5), 3);
        assert_eq!(tokens.to(9), 5);
        assert!(Tokens::new(&[], &[(1, 2), (1, 3)]).is_none());
    }

    /// A follower's walk moves the writer over a committed SetLeader and raises the floor over a
    /// committed truncate under the token in force; a truncate under a stale token leaves it.
    #[test]
    fn follower_walk_moves_writer_and_floor() {
        let log = vec![noop(1), fence(1, 1, 0), write(1), truncate(1, 1, 3)];
        let before = node(1, false, log.clone(), 1);
        let mut after = node(1, false, log.clone(), 4);
        after.writer = 1;
        after.floor = 3;
        assert!(matched(&check(1, &before, &after, false, None)));
        let mut stale = log;
        stale[3] = truncate(1, 7, 3);
        let before = node(1, false, stale.clone(), 1);
        let mut wrong = node(1, false, stale, 4);
        wrong.writer = 1;
        wrong.floor = 3;
        assert!(matches!(
            check(1, &before, &wrong, false, None).0,
            Verdict::Diverged(_)
        ));
    }

    /// A leader's fence must replace the token in force at its tail.
    #[test]
    fn set_leader_replaces_the_tail_token() {
        let before = node(1, true, vec![noop(1), fence(1, 1, 0)], 2);
        let before = ParosNode {
            writer: 1,
            ..before
        };
        let mut good = before.clone();
        good.log.push(fence(1, 2, 1));
        assert!(matched(&check(0, &before, &good, false, None)));
        let mut bad = before.clone();
        bad.log.push(fence(1, 3, 0));
        assert!(matches!(
            check(0, &before, &bad, false, None).0,
            Verdict::Diverged(_)
        ));
    }

    /// A jump is `TrimmedTo`: the jumper holds nothing below the point, commits to it, takes the
    /// sealed writer and the sealed floor (clamped to the point); another floor diverges.
    #[test]
    fn jump_is_trimmed_to() {
        let before = node(2, false, vec![noop(1), write(1)], 1);
        let sent = Sent {
            point: 20,
            writer: 4,
            floor: 25,
            base_term: 2,
        };
        let after = ParosNode {
            voter: Voter {
                term: 2,
                leader: false,
                log: vec![ParosRecord::UNSEEN; 19],
                commit: 19,
                floor: 20,
                start: 20,
            },
            writer: 4,
            sterm: 2,
        };
        let verdict = check(1, &before, &after, false, Some(sent));
        assert!(matched(&verdict), "{verdict:?}");
        assert_eq!(verdict.1, vec![Abstraction::SealedFloor]);
        let mut short = after.clone();
        short.floor = 19;
        assert!(matches!(
            check(1, &before, &short, false, Some(sent)).0,
            Verdict::Diverged(_)
        ));
    }
}
