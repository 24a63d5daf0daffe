//! The integration tests of `felix-audits`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

mod fnv;
mod linearizable_cross_check;
mod reference_histories;
mod seed_63706;
