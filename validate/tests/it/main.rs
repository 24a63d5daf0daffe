//! The integration tests of `felix-validate`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

mod bite;
mod conform;
mod conform_paros;
mod support;
mod twins;
