//! A paros node's step held to ParosTrimJump's own actions: the chain of `crate::steps`, with
//! this spec's window actions (see `super` for the chain and the rules it counts).

use super::projection::{ParosNode, ParosRecord, Sent};
use super::window::*;
use crate::steps::{
    self, first_difference, mismatch, Abstraction, Failure, Renaming, Steps, Verdict, Walk, LONG,
    LONG_SUFFIX, OUT, UNSEEN,
};
use felix_model::paros::spec::{Action, Kind, Record};

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

impl Steps for ParosNode {
    type Record = ParosRecord;
    type Tail = bool;
    type Jump = Sent;
    const NO_TAIL: bool = false;
    const WINDOW_RECORDS: u64 = SLOTS;
    const TERMS_NEVER_LOWER: &'static str =
        "no ParosTrimJump action lowers a term (TrimmedTo never touches it)";

    fn len(&self) -> u64 {
        ParosNode::len(self)
    }
    fn at(&self, offset: u64) -> ParosRecord {
        ParosNode::at(self, offset)
    }
    fn record_term(record: &ParosRecord) -> u64 {
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
        ParosNode::describe(self)
    }
    fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("term", self.term.to_string()),
            ("leader", u64::from(self.leader).to_string()),
            ("start", self.start.to_string()),
            ("commit", self.commit.to_string()),
            ("writer", self.writer.to_string()),
            ("floor", self.floor.to_string()),
        ]
    }
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
        append(node, self, appended, &mut walk.taken, &mut walk.hidden)
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
        compact(node, self, after, &mut walk.taken, &mut walk.hidden)
    }
    /// A jump: `TrimmedTo`, then `Replicate` if the step also moved the log or the commit.
    fn jump(
        &mut self,
        node: u32,
        after: &Self,
        sent: Sent,
        walk: &mut Walk,
    ) -> Result<(), Failure> {
        trimmed_to(node, self, after, sent, &mut walk.taken, &mut walk.hidden)?;
        if self.commit != after.commit || self.len() != after.len() {
            replicate_chain(node, self, after, &mut walk.taken)?;
        }
        Ok(())
    }
}

/// One appended record: `Write`, `Truncate` or `SetLeader` on a window holding the leader alone
/// (the actions read nothing of its log but its length).
fn append(
    node: u32,
    current: &mut ParosNode,
    appended: ParosRecord,
    taken: &mut Vec<String>,
    hidden: &mut Vec<Abstraction>,
) -> Result<(), Failure> {
    let offset = current.len() + 1;
    let tail_writer = current.tail_writer();
    let names = Names::new(
        std::slice::from_ref(&appended),
        &[current.term],
        &[current.floor],
        &[tail_writer, current.writer],
    )?;
    let me = WindowNode {
        term: names.terms.to(current.term),
        leader: true,
        writer: names.tokens.to(current.writer),
        floor: names.floors.to(current.floor),
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
                hidden.push(Abstraction::TruncateUpTo);
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
        Kind::Noop | Kind::Empty => {
            return mismatch(format!(
                "a leader appended {} in its own term, not as a promotion's noop",
                appended.describe()
            ))
        }
    };
    let next = take(&state, action, &label)?;
    let made = next.log[0].at(1);
    if made.k != record.k || made.o != record.o || made.t != record.t {
        return mismatch(format!(
            "{label} appends {made} (renamed) where the core appended {}",
            appended.describe()
        ));
    }
    current.log.push(appended);
    taken.push(label);
    Ok(())
}

/// The leader's commit rises: `Replicate(b, ghost)`, the ghost holding its log up to the new
/// commit (the acknowledging majority). The model's `CommitIn` and walk give commit, writer and
/// floor.
fn leader_commit(
    node: u32,
    current: &mut ParosNode,
    commit: u64,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Replicate({node}, majority)");
    if commit < current.commit || commit > current.len() {
        return mismatch(format!(
            "a leader's commit moved from {} to {commit} (log length {}): {label} only raises it within the log",
            current.commit,
            current.len()
        ));
    }
    let base = current.commit;
    if commit - base > SLOTS {
        return Err(LONG);
    }
    let sterm = current.term_at(base).ok_or(UNSEEN)?;
    let records = &current.log[base as usize..commit as usize];
    let names = Names::new(
        records,
        &[current.term, sterm],
        &[current.floor],
        &[current.writer],
    )?;
    let term = names.terms.to(current.term);
    let me = WindowNode {
        term,
        leader: true,
        records: names.records(records),
        writer: names.tokens.to(current.writer),
        floor: names.floors.to(current.floor),
        sterm: names.terms.to(sterm),
        ..WindowNode::absent(1)
    };
    let ghost = WindowNode {
        leader: false,
        ..me.clone()
    };
    let state = window([me, ghost, WindowNode::absent(1)]).ok_or(OUT)?;
    let next = take(&state, Action::Replicate(N1, N2), &label)?;
    current.commit = base + u64::from(next.commit[0]);
    current.writer = names.token(next.writer[0]);
    current.floor = names.floor(next.floor[0]);
    taken.push(label);
    Ok(())
}

/// A new leader: `Promote(b, {1, 2, 3})` from the term below its new one, the two ghosts holding
/// its log.
fn promote(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Promote({node}, Q)");
    if after.len() <= current.len()
        || first_difference(current, after, current.commit)
            .is_some_and(|offset| offset <= current.len())
    {
        return mismatch(format!(
            "{label} keeps the log and appends a noop; the simulator's new leader did not"
        ));
    }
    // `Promote` reads only the voters' last terms and lengths: the window may start above the
    // commit index, as long as it holds the last record and room for the noop.
    let base = current
        .commit
        .min(current.len())
        .max(current.len().saturating_sub(SLOTS - 1));
    let records = &current.log[base as usize..];
    if records.len() as u64 >= SLOTS {
        return Err(LONG);
    }
    let sterm = current.term_at(base).ok_or(UNSEEN)?;
    let promise = after.term - 1;
    let names = Names::new(records, &[promise, after.term, sterm], &[], &[])?;
    let voter = WindowNode {
        term: names.terms.to(promise),
        records: names.records(records),
        sterm: names.terms.to(sterm),
        ..WindowNode::absent(1)
    };
    let state = window([voter.clone(), voter.clone(), voter]).ok_or(OUT)?;
    let next = take(&state, Action::Promote(N1, 0b111), &label)?;
    let noop = next.log[0].at(next.log[0].len());
    current.term = names.term(next.term[0]);
    current.leader = next.leader[0];
    current.log.push(ParosRecord {
        kind: noop.k,
        term: current.term,
        ..ParosRecord::UNSEEN
    });
    taken.push(label);
    Ok(())
}

/// A leader learns a higher term: `StepDown(b, ghost)`.
fn step_down(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("StepDown({node}, ·)");
    let terms = Renaming::new([current.term, after.term], 1, 15).ok_or(OUT)?;
    let me = WindowNode {
        leader: true,
        ..WindowNode::absent(terms.to(current.term))
    };
    let ghost = WindowNode::absent(terms.to(after.term));
    let state = window([me, ghost, WindowNode::absent(1)]).ok_or(OUT)?;
    let next = take(&state, Action::StepDown(N1, N2), &label)?;
    current.term = terms
        .back(next.term[0])
        .unwrap_or_else(|| unreachable!("a step down takes the ghost's term"));
    current.leader = next.leader[0];
    taken.push(label);
    Ok(())
}

/// A follower's step: `Replicate(ghost, b)` until it holds the ghost's log and commit, one record
/// per action, on windows of `SLOTS` offsets above a base (see `crate::head_trim::checker::replicate_chain`,
/// the same walk for FelixHeadTrim).
fn replicate_chain(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Replicate(·, {node})");
    let width = SLOTS;
    let limit = 2 * after.len() + 4;
    for _ in 0..limit {
        let mut matched = current.commit.min(current.len()).min(after.len());
        while matched < current.len().min(after.len())
            && current.at(matched + 1).term == after.at(matched + 1).term
        {
            matched += 1;
        }
        let commit = current.commit;
        let to_send = matched < after.len();
        let base_commit = commit.min(matched);
        let commit_can_move = after.commit > commit && base_commit == commit;
        let send_fits = to_send && matched < base_commit + width;
        let commit_mode = commit_can_move || send_fits || !to_send;
        let (base, log_only) = if commit_mode {
            (base_commit, false)
        } else {
            (matched.saturating_sub(width / 2).max(commit), true)
        };
        let window_end = base + width;
        if current.len() > window_end && matched < window_end {
            return Err(LONG_SUFFIX);
        }
        let sterm = current.term_at(base).ok_or(UNSEEN)?;
        let ghost_records = &after.log[base as usize..after.len().min(window_end) as usize];
        let own_records = &current.log[base as usize..current.len().min(window_end) as usize];
        let own_tail = &current.log[current.len().min(window_end) as usize..];
        let all: Vec<ParosRecord> = ghost_records.iter().chain(own_records).copied().collect();
        let names = Names::new(
            &all,
            &[current.term, after.term, sterm],
            &[current.floor, after.floor],
            &[current.writer, after.writer],
        )?;
        let ghost_window = names.records(ghost_records);
        let own_window = names.records(own_records);
        let (ghost_commit, own_commit) = if log_only {
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
        let ghost = WindowNode {
            term: names.terms.to(after.term),
            leader: true,
            records: ghost_window.clone(),
            commit: ghost_commit,
            writer: names.tokens.to(after.writer),
            floor: names.floors.to(after.floor),
            sterm: names.terms.to(sterm),
            ..WindowNode::absent(1)
        };
        let me = WindowNode {
            term: names.terms.to(current.term),
            leader: current.leader,
            records: own_window.clone(),
            commit: own_commit,
            writer: names.tokens.to(current.writer),
            floor: names.floors.to(current.floor),
            sterm: names.terms.to(sterm),
            ..WindowNode::absent(1)
        };
        let third = WindowNode::absent(names.terms.to(current.term));
        let state = window([ghost, me, third]).ok_or(OUT)?;
        let next = take(&state, Action::Replicate(N1, N2), &label)?;
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
        current.writer = names.token(next.writer[1]);
        current.floor = names.floor(next.floor[1]);
        current.term = names.term(next.term[1]);
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

/// A jump: `TrimmedTo(ghost, b)`, the ghost holding nothing from the point it sent, with the
/// sealed state it sent, at the jumper's term.
fn trimmed_to(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    sent: Sent,
    taken: &mut Vec<String>,
    hidden: &mut Vec<Abstraction>,
) -> Result<(), Failure> {
    let label = format!("TrimmedTo(·, {node})");
    let point = sent.point;
    if current.term_at(point - 1) == Some(sent.base_term) {
        return Err(Failure::Abstract(Abstraction::JumpInAgreement));
    }
    if sent.floor > point {
        hidden.push(Abstraction::SealedFloor);
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
    let terms = Renaming::new([fill, sent.base_term, current.term], 1, 15).ok_or(OUT)?;
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
    let next = take(&state, Action::TrimmedTo(N1, N2), &label)?;
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
    if after.start != current.start {
        return mismatch(format!(
            "{label} starts the jumper at {}, the core at {}",
            current.start, after.start
        ));
    }
    taken.push(label);
    Ok(())
}

/// The first held offset rises: `Compact(b)`, which deletes every record below
/// `min(floor, commit + 1)`; the core's deletion must be a part of it (rule `segments`).
fn compact(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
    hidden: &mut Vec<Abstraction>,
) -> Result<(), Failure> {
    let label = format!("Compact({node})");
    if after.start < current.start {
        return mismatch(format!(
            "the first held offset went back from {} to {}",
            current.start, after.start
        ));
    }
    let offsets = Renaming::new(
        [
            current.start,
            after.start,
            current.floor,
            current.commit + 1,
        ],
        1,
        SLOTS as u8,
    )
    .ok_or(OUT)?;
    let start = offsets.to(current.start);
    let held = offsets.to(current.commit + 1).saturating_sub(start);
    let filler = Record {
        k: Kind::Write,
        o: 0,
        t: 1,
        u: 0,
    };
    let me = WindowNode {
        leader: current.leader,
        records: vec![filler; usize::from(held)],
        start,
        commit: offsets.to(current.commit + 1) - 1,
        floor: offsets.to(current.floor),
        sterm: 1,
        ..WindowNode::absent(1)
    };
    let state = window([me, WindowNode::absent(1), WindowNode::absent(1)]).ok_or(OUT)?;
    let next = take(&state, Action::Compact(N1), &label)?;
    let target = offsets.to(after.start);
    if next.start[0] < target {
        return mismatch(format!(
            "the core deleted below {} where {label} deletes only below min(floor {}, commit {} + 1)",
            after.start, current.floor, current.commit
        ));
    }
    if next.start[0] > target {
        hidden.push(Abstraction::Segments);
    }
    current.start = after.start;
    current.sterm = after.sterm;
    taken.push(label);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            term,
            leader,
            log,
            start: 1,
            commit,
            writer: 0,
            floor: 1,
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
            term: 2,
            leader: false,
            log: vec![ParosRecord::UNSEEN; 19],
            start: 20,
            commit: 19,
            writer: 4,
            floor: 20,
            sterm: 2,
        };
        let verdict = check(1, &before, &after, false, Some(sent));
        assert!(matched(&verdict), "{verdict:?}");
        assert_eq!(verdict.1, vec![Abstraction::SealedFloor]);
        let short = ParosNode {
            floor: 19,
            ..after.clone()
        };
        assert!(matches!(
            check(1, &before, &short, false, Some(sent)).0,
            Verdict::Diverged(_)
        ));
    }
}
