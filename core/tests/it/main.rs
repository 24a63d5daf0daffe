//! The integration tests of `felix-core`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

mod broker_accessors;
mod broker_catch_up;
mod broker_durable;
mod broker_engine;
mod broker_in_flight;
mod broker_read_index;
mod broker_schedule;
mod broker_terms;
mod client_checkpoint;
mod client_cluster;
mod client_driver;
mod client_fold_property;
mod client_holder;
mod client_pipeline;
mod client_reader;
mod client_robustness;
mod five_step_trace;
mod history_node;
mod journal_jump;
mod journal_model;
mod journal_rules;
mod journal_support;
mod journal_walk_order;
