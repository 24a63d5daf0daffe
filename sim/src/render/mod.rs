//! What a run looks like to a user: the trace lines and their hash, each event in words
//! (`describe`), the causal why of a finding, and the story above it.

pub mod describe;
pub mod hash;
pub mod story;
pub mod trace;
pub mod why;
