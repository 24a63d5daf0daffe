//! The integration tests of `felix-cli`, one module per file, linked as one test binary
//! (one build and one link for the crate instead of one per file).

mod bench_sim_cli;
mod check_cli;
mod conform_cli;
mod guided_cli;
mod history_cli;
mod html_cli;
mod scenario_cli;
mod store_cli;
mod store_dir_cli;
mod support;
mod sweep_cli;
mod sweep_merge_cli;
mod tidy;
mod trace_html_cli;
mod twin_names;
mod usage_cli;
mod validate_cli;
