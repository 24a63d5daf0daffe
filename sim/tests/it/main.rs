//! The integration tests of `felix-sim`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

/// mimalloc instead of the system allocator, as the `felix` binary has (cli/src/main.rs): these
/// tests run thousands of simulated runs, which allocate and free small objects at a high rate,
/// and glibc's malloc/free took about a fifth of their time. The allocator decides no run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
mod unit;
