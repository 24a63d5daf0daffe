//! The key of the checker's index of requests by content (`operations::operations`): what a record
//! says, without the conditions of its request, so that a committed record finds the requests
//! that asked for it.

use crate::fnv;
use felix_core::api::Request;
use felix_core::record::{Command, Headers, Offset, Token};

/// What a record says, without the conditions of its request: the index of requests by content.
/// Its second field is the body's FNV-1a digest (`crate::fnv`), so that most comparisons of two
/// keys end before the bodies: the map is only looked up, never walked, so its order is free.
pub(super) type ContentKey = (u8, u64, Vec<u8>, Headers, u64, u64);

/// An append's key: its body's digest (equal bodies, equal digests), the body and the headers.
fn body_key(body: &[u8], headers: &Headers) -> ContentKey {
    let digest = fnv::fnv1a(fnv::OFFSET, body);
    (0, digest, body.to_vec(), headers.clone(), 0, 0)
}

fn trim_key(floor: Offset, headers: &Headers, fence: Option<Token>) -> ContentKey {
    let fence = fence.map_or(u64::MAX, |token| token.0);
    (1, 0, Vec::new(), headers.clone(), floor, fence)
}

fn fence_key(new: Token, old: Token) -> ContentKey {
    (2, 0, Vec::new(), Headers::default(), new.0, old.0)
}

pub(super) fn request_key(request: &Request) -> Option<ContentKey> {
    match request {
        Request::Append { body, headers, .. } => Some(body_key(body, headers)),
        Request::Trim {
            floor,
            headers,
            fence,
            ..
        } => Some(trim_key(*floor, headers, *fence)),
        Request::Fence { new, old } => Some(fence_key(*new, *old)),
        Request::Read { .. } => None,
    }
}

pub(super) fn command_key(command: &Command) -> Option<ContentKey> {
    match command {
        Command::Write { body, headers } => Some(body_key(body, headers)),
        Command::Trim {
            floor,
            headers,
            fence,
        } => Some(trim_key(*floor, headers, *fence)),
        Command::Fence { new, old } => Some(fence_key(*new, *old)),
        Command::Noop => None,
    }
}
