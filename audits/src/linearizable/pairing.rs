//! Which request a reply answers: a client keeps one request in flight, or a pipelining writer
//! several that never ask the same, answered in any order.

use super::operations::Operation;
use super::spec::Op;
use felix_core::api::Request;

/// The operation a reply to `request` answers: the latest of the client's unanswered operations
/// (`waiting`, in call order) asking the same, taken out of `waiting`.
pub(super) fn answered(
    waiting: Option<&mut Vec<usize>>,
    operations: &[Operation],
    request: &Request,
) -> Option<usize> {
    let waiting = waiting?;
    let asks = |index: &usize| operations[*index].op == Op::Client(request.clone());
    let position = waiting.iter().rposition(asks)?;
    Some(waiting.remove(position))
}
