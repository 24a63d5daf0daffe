//! The integration tests of `felix-sim`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

mod backoff;
mod buggify;
mod committed_durable;
mod determinism;
mod elections;
mod file_store;
mod forks;
mod judges_alone;
mod owner_fence;
mod pipeline;
mod progress;
mod quiesce;
mod read_index;
mod scenarios;
mod shrink;
mod shrink_unbiased;
mod step_numbers;
mod storage;
