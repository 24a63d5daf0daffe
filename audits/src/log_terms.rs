//! The terms of a log's records, offset by offset, kept as runs of one term: what PromiseDurable
//! knows of a node's durable log from its `DurableLog` events, and what the simulator's host keeps
//! of its own disk to record them (`LogTerms::steps_to` is the list of events).
//!
//! Terms stand for the records themselves: two logs that hold a record of the same term at one
//! offset hold the same record there (one leader per term writes it), so a log's terms are all an
//! acknowledgement's judge needs to know which records it holds.

use felix_core::record::{Offset, Term};

/// A log's records as runs of one term; the first run starts at offset 1 and each next run right
/// after the one before. Records folded below a store's first held offset keep the terms they were
/// known by (or the sealed base's term, for a trim-point jump past them): they are committed, so
/// every acknowledgement of them is of the same records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogTerms {
    /// (the run's last offset, its term), in offset order.
    runs: Vec<(Offset, Term)>,
}

impl LogTerms {
    /// The last offset (0 for an empty log).
    pub fn last(&self) -> Offset {
        self.runs.last().map_or(0, |&(end, _)| end)
    }

    /// The term of the record at `offset`, `None` outside `1..=last`.
    pub fn term_at(&self, offset: Offset) -> Option<Term> {
        if offset == 0 || offset > self.last() {
            return None;
        }
        let run = self.runs.partition_point(|&(end, _)| end < offset);
        Some(self.runs[run].1)
    }

    /// Whether every record `first..=last` (`first >= 1`, `first <= last`) is of `term`.
    pub fn holds(&self, first: Offset, last: Offset, term: Term) -> bool {
        if first == 0 || last > self.last() {
            return false;
        }
        // Runs of one term are merged, so one run holds them all or they differ.
        let run = self.runs.partition_point(|&(end, _)| end < first);
        let (end, run_term) = self.runs[run];
        run_term == term && end >= last
    }

    /// Drops every record above `last` (nothing, when the log ends at or below it).
    pub fn cut(&mut self, last: Offset) {
        let run = self.runs.partition_point(|&(end, _)| end < last);
        if last == 0 || run == self.runs.len() {
            self.runs.truncate(run);
            return;
        }
        // The run at `run` is the first to reach `last`, and it starts at or below it.
        self.runs[run].0 = last;
        self.runs.truncate(run + 1);
    }

    /// Extends the log through `last` (above its end) with records of `term`.
    pub fn extend(&mut self, last: Offset, term: Term) {
        assert!(last > self.last(), "a log extends past its end");
        match self.runs.last_mut() {
            Some(run) if run.1 == term => run.0 = last,
            _ => self.runs.push((last, term)),
        }
    }

    /// The log now ends at `last` with a record of `term` (a `DurableLog` event): cut back to it,
    /// or extended through it with records of `term`.
    pub fn end_at(&mut self, last: Offset, term: Term) {
        self.cut(last);
        if last == 0 || self.term_at(last) == Some(term) {
            return;
        }
        if self.last() == last {
            self.cut(last - 1);
        }
        self.extend(last, term);
    }

    /// The highest offset through which `self` and `other` hold records of the same terms.
    pub fn common(&self, other: &LogTerms) -> Offset {
        let (mut mine, mut theirs, mut through) = (0, 0, 0);
        while let (Some(&(my_end, my_term)), Some(&(their_end, their_term))) =
            (self.runs.get(mine), other.runs.get(theirs))
        {
            if my_term != their_term {
                break;
            }
            through = my_end.min(their_end);
            mine += usize::from(my_end == through);
            theirs += usize::from(their_end == through);
        }
        through
    }

    /// How many runs hold records above `offset`: the round trips a leader may spend walking a
    /// follower's log back from its end to `offset`, one rejection per run (a follower that cannot
    /// take an append names the first offset of the run it conflicts in, never inside its committed
    /// prefix).
    pub fn runs_above(&self, offset: Offset) -> u64 {
        (self.runs.len() - self.runs.partition_point(|&(end, _)| end <= offset)) as u64
    }

    /// The `(last, term)` steps that take a log known as `self` to `target` through `end_at`: a cut
    /// back to what they share, if `self` holds more, then one step per run of `target` past it.
    pub fn steps_to(&self, target: &LogTerms) -> Vec<(Offset, Term)> {
        let common = self.common(target);
        let mut steps = Vec::new();
        if self.last() > common {
            steps.push((common, target.term_at(common).unwrap_or(0)));
        }
        steps.extend(target.runs.iter().copied().filter(|&(end, _)| end > common));
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(runs: &[(Offset, Term)]) -> LogTerms {
        let mut log = LogTerms::default();
        for &(end, term) in runs {
            log.extend(end, term);
        }
        log
    }

    /// Terms are read run by run; a cut keeps the part of a run below it, and an extension in the
    /// last run's term grows that run.
    #[test]
    fn runs_answer_terms_and_cut() {
        let mut terms = log(&[(3, 1), (5, 2), (9, 4)]);
        let read = |terms: &LogTerms| (0..=10).map(|o| terms.term_at(o)).collect::<Vec<_>>();
        let (n, s) = (None, Some);
        assert_eq!(
            read(&terms),
            vec![n, s(1), s(1), s(1), s(2), s(2), s(4), s(4), s(4), s(4), n]
        );
        terms.cut(12);
        assert_eq!(terms.last(), 9);
        terms.cut(4);
        assert_eq!(terms, log(&[(3, 1), (4, 2)]));
        terms.cut(3);
        assert_eq!(terms, log(&[(3, 1)]));
        terms.extend(6, 1);
        assert_eq!(terms.runs, vec![(6, 1)]);
        terms.cut(0);
        assert_eq!(terms.last(), 0);
    }

    /// A run counts above an offset when any of its records lies above it.
    #[test]
    fn runs_above_count_the_runs_past_an_offset() {
        let terms = log(&[(3, 1), (5, 2), (9, 4)]);
        let counts: Vec<u64> = (0..=10).map(|o| terms.runs_above(o)).collect();
        assert_eq!(counts, vec![3, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0]);
        assert_eq!(LogTerms::default().runs_above(0), 0);
    }

    /// `end_at` cuts back, replaces the last record's term, or extends; the steps from one log to
    /// another, applied with it, give the other, whatever they share.
    #[test]
    fn steps_take_one_log_to_another() {
        let mut cut_into = log(&[(3, 1), (6, 2)]);
        cut_into.end_at(5, 2);
        assert_eq!(cut_into, log(&[(3, 1), (5, 2)]));
        cut_into.end_at(5, 3);
        assert_eq!(cut_into, log(&[(3, 1), (4, 2), (5, 3)]));
        cut_into.end_at(8, 3);
        assert_eq!(cut_into, log(&[(3, 1), (4, 2), (8, 3)]));
        let logs = [
            log(&[]),
            log(&[(4, 1)]),
            log(&[(3, 1), (6, 2)]),
            log(&[(3, 1), (4, 3), (7, 5)]),
            log(&[(6, 1)]),
            log(&[(2, 1)]),
        ];
        for from in &logs {
            for to in &logs {
                let mut walked = from.clone();
                for (last, term) in from.steps_to(to) {
                    walked.end_at(last, term);
                }
                assert_eq!(&walked, to, "from {from:?}");
            }
        }
        assert_eq!(logs[2].common(&logs[3]), 3);
        assert_eq!(logs[1].common(&logs[4]), 4);
        assert_eq!(logs[2].steps_to(&logs[3]), vec![(3, 1), (4, 3), (7, 5)]);
        assert_eq!(logs[1].steps_to(&logs[4]), vec![(6, 1)]);
        assert_eq!(logs[4].steps_to(&logs[5]), vec![(2, 1)]);
        assert_eq!(logs[4].steps_to(&logs[0]), vec![(0, 0)]);
        assert!(logs[3].steps_to(&logs[3]).is_empty());
    }
}
