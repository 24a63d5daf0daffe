//! The integration tests of `felix-model`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

/// mimalloc instead of the system allocator, as the `felix` binary has (cli/src/main.rs): these
/// tests run thousands of simulated runs, which allocate and free small objects at a high rate,
/// and glibc's malloc/free took about a fifth of their time. The allocator decides no run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cfg_files;
mod configs;
mod hidden_trims_trace;
mod paros;
mod pinned_counts;
mod properties;
mod shared_state_graphs;
mod support;
mod twins;
