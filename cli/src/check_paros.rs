//! `felix check ParosTrimJump...`: the second spec's configurations, checked with Stateright.
//!
//! Called by `felix check` (cli/src/check.rs) for every name that resolves to a ParosTrimJump
//! configuration (full name, or without the prefix when no FelixHeadTrim configuration has that
//! name); the report is printed in the same shapes as FelixHeadTrim's.

use felix_model::check::{Outcome, Progress};
use felix_model::config as felix_config;
use felix_model::paros::check;
use felix_model::paros::config::{self, ParosConfig};

use crate::check::{report_json, report_text, CheckArgs};
use crate::exit;

/// Splits `names` into ParosTrimJump configurations and the other names (left to FelixHeadTrim's
/// resolver, which reports unknown ones).
pub fn split(names: &[String]) -> (Vec<&'static ParosConfig>, Vec<String>) {
    let mut paros = Vec::new();
    let mut rest = Vec::new();
    for name in names {
        match config::lookup(name) {
            Some(found) if felix_config::lookup(name).is_none() => paros.push(found),
            _ => rest.push(name.clone()),
        }
    }
    (paros, rest)
}

/// Checks each configuration; returns 1 if any broke an invariant, else 0.
pub fn run(configs: &[&'static ParosConfig], args: &CheckArgs, threads: usize) -> u8 {
    if args.symmetry || args.compact {
        return exit::bad_input(
            "--symmetry and --compact apply to FelixHeadTrim only; ParosTrimJump's configurations \
             are checked in full",
        );
    }
    let show_progress = args.progress || std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut code = exit::OK;
    for &config in configs {
        let mut progress = |snapshot: Progress| {
            if show_progress {
                eprintln!(
                    "felix check {}: {} unique states, depth {}, {:.0} s",
                    config.name, snapshot.unique_states, snapshot.max_depth, snapshot.seconds,
                );
            }
        };
        let report = check::check_with_progress(config, threads, &mut progress);
        if args.json {
            crate::output::text(&format!("{}\n", report_json(&report)));
        } else {
            crate::output::text(&report_text(&report, threads));
        }
        if report.outcome == Outcome::Violated {
            code = exit::VIOLATION;
        }
    }
    code
}
