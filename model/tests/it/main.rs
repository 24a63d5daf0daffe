//! The integration tests of `felix-model`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

mod cfg_files;
mod configs;
mod hidden_trims_trace;
mod paros;
mod pinned_counts;
mod properties;
mod shared_state_graphs;
mod support;
mod twins;
