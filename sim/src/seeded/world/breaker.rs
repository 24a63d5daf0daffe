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
pub struct Breaker {
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
    pub(super) fn of(roles: &[(Role, bool)], knobs: &Knobs) -> Option<Breaker> {
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
