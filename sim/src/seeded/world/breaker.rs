//! The broken writer (knob `broken_runs`, paros workloads): a checkpoint owner whose runs are now
//! and then broken on their way out, as a buggy or half-upgraded writer's would be.
//!
//! The first owner process of the run is the breaker. When it sends a record of a checkpoint run
//! (a fenced append whose body is a `RunRecord`), the record is sometimes altered before it
//! leaves, at most once per run: a chunk misnumbered, a chunk replaced by an application write (a
//! missing chunk), a chunk's payload altered (its `End` then sums wrong), or an `End` that counts
//! or sums wrong. The owner's state machine is the core's and never knows; the history records the
//! request as sent. The breaker never truncates (`world/clients.rs` holds its trim limit at 0), so
//! a broken run never becomes the start of the journal: its runs are simply ones that no folder may
//! restore, and FoldAgreement judges every restore and comparison against the committed run.

use super::Role;
use crate::env::rng::Stream;
use crate::seeded::knobs::Knobs;
use felix_core::api::Request;
use felix_core::client::checkpoint::RunRecord;
use felix_core::Offset;

/// The chance that one record of a run is broken, per record, until one is.
const BREAK_PER_MILLION: u32 = 250_000;

/// The breaker: which client it is, and whether the run it is writing is broken already.
pub(super) struct Breaker {
    pub client: usize,
    broke_this_run: bool,
}

/// The trim limit of owner `client`: the shared trim fence, or 0 for the breaker, which never
/// truncates.
pub(super) fn trim_limit(
    breaker: Option<&Breaker>,
    client: usize,
    fence: Option<Offset>,
) -> Option<Offset> {
    match breaker {
        Some(breaker) if breaker.client == client => Some(0),
        _ => fence,
    }
}

impl Breaker {
    /// The breaker of a world whose clients have `roles`: the first owner, when `broken_runs`.
    pub fn of(roles: &[(Role, bool)], knobs: &Knobs) -> Option<Breaker> {
        roles
            .iter()
            .position(|(role, _)| knobs.broken_runs && matches!(role, Role::Owner { .. }))
            .map(Breaker::new)
    }

    pub fn new(client: usize) -> Breaker {
        Breaker {
            client,
            broke_this_run: false,
        }
    }

    /// `request` as the breaker sends it: a run record maybe broken (drawing from `stream`), and
    /// whether it was.
    pub fn send(&mut self, stream: &mut Stream, mut request: Request) -> (Request, bool) {
        let Request::Append { body, .. } = &mut request else {
            return (request, false);
        };
        let Some(record) = RunRecord::decode(body) else {
            return (request, false);
        };
        if record == RunRecord::Begin {
            self.broke_this_run = false;
            return (request, false);
        }
        if self.broke_this_run || !stream.chance(BREAK_PER_MILLION) {
            return (request, false);
        }
        let broken = match record {
            RunRecord::Chunk { index, mut payload } => match stream.index(3) {
                0 => RunRecord::Chunk {
                    index: index + 1,
                    payload,
                }
                .encode(),
                1 => b"an application write where a chunk was due".to_vec(),
                _ => {
                    payload.push(0xA5);
                    RunRecord::Chunk { index, payload }.encode()
                }
            },
            RunRecord::End { chunks, checksum } => if stream.chance(500_000) {
                RunRecord::End {
                    chunks: chunks + 1,
                    checksum,
                }
            } else {
                RunRecord::End {
                    chunks,
                    checksum: checksum ^ 1,
                }
            }
            .encode(),
            RunRecord::Begin | RunRecord::Malformed => return (request, false),
        };
        *body = broken;
        self.broke_this_run = true;
        (request, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::rng::Component;
    use felix_core::client::checkpoint::{checksum, encode_run};
    use felix_core::client::Fold;
    use felix_core::Headers;

    fn append(record: &RunRecord) -> Request {
        Request::Append {
            expected_tail: Some(3),
            fence: None,
            body: record.encode(),
            headers: Headers::default(),
        }
    }

    /// Over many runs: at most one record per run is broken, never `Begin` and never an
    /// application write; every kind of break happens; a broken run no longer decodes to a whole
    /// run (chunks numbered in order, an `End` naming their count and checksum).
    #[test]
    fn breaks_at_most_one_record_per_run_and_every_kind() {
        let mut fold = Fold::empty();
        for offset in 1..40 {
            fold.apply(offset, format!("w{offset}").as_bytes());
        }
        let run = encode_run(fold, 2);
        assert!(run.len() > 4, "{}", run.len());
        let mut breaker = Breaker::new(0);
        let mut stream = Stream::new(5, Component::Workload);
        let mut kinds = std::collections::BTreeSet::new();
        for _ in 0..400 {
            let mut sent = Vec::new();
            let mut broken = 0;
            for record in &run {
                let (request, was) = breaker.send(&mut stream, append(record));
                broken += usize::from(was);
                let Request::Append { body, .. } = request else {
                    panic!("an append stays an append");
                };
                sent.push(RunRecord::decode(&body));
            }
            assert!(broken <= 1);
            assert_eq!(sent[0], Some(RunRecord::Begin));
            let chunks: Vec<Vec<u8>> = sent
                .iter()
                .filter_map(|record| match record {
                    Some(RunRecord::Chunk { payload, .. }) => Some(payload.clone()),
                    _ => None,
                })
                .collect();
            let numbered = sent
                .iter()
                .filter_map(|record| match record {
                    Some(RunRecord::Chunk { index, .. }) => Some(*index),
                    _ => None,
                })
                .enumerate()
                .all(|(at, index)| at as u32 == index);
            let whole = numbered
                && sent[1..sent.len() - 1]
                    .iter()
                    .all(|record| matches!(record, Some(RunRecord::Chunk { .. })))
                && matches!(sent.last(), Some(Some(RunRecord::End { chunks: count, checksum: sum }))
                    if *count as usize == chunks.len() && *sum == checksum(&chunks));
            assert_eq!(whole, broken == 0);
            if broken == 1 {
                let kind = sent
                    .iter()
                    .zip(&run)
                    .find(|(sent, record)| sent.as_ref() != Some(*record))
                    .map(|(sent, _)| match sent {
                        None => "missing",
                        Some(RunRecord::Chunk { .. }) if !numbered => "misnumbered",
                        Some(RunRecord::Chunk { .. }) => "altered",
                        Some(RunRecord::End { .. }) => "end",
                        _ => "other",
                    });
                kinds.extend(kind);
            }
        }
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            ["altered", "end", "misnumbered", "missing"]
        );
        // An application write goes out untouched.
        let write = Request::Append {
            expected_tail: None,
            fence: None,
            body: b"w1".to_vec(),
            headers: Headers::default(),
        };
        assert_eq!(breaker.send(&mut stream, write.clone()), (write, false));
    }
}
