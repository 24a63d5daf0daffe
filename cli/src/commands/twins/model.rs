//! `felix twins --model`: every model twin must break its named invariant.
//!
//! Called by `felix twins` (`twins/mod.rs`), for FelixHeadTrim's twins and then ParosTrimJump's.
//! Each twin is searched as CI does it: breadth-first,
//! one thread, stopping at the first discovery of the twin's invariant. A twin is ok only if that
//! invariant broke and no other broke as early, but those `TwinName::breaks_beside` names.

use felix_core::rules::Invariant;
use felix_model::check;
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::paros::spec::ParosTrimJump;
use felix_model::spec::Spec;
use serde_json::json;

use crate::exit;

/// Runs every model twin, prints one line per twin (a JSON object per twin with `json`), and
/// returns 0 only if every twin broke its named invariant (and nothing undeclared), else 1.
pub fn run(json: bool) -> u8 {
    let mut code = exit::OK;
    for twin in FelixHeadTrim::twins() {
        let run = check::run_twin(twin);
        if !report(json, twin.short_name(), &run, FELIX_COLUMN) {
            code = exit::VIOLATION;
        }
    }
    // The second spec's twins (ParosTrimJump), searched the same way.
    for twin in ParosTrimJump::twins() {
        let run = felix_model::check::run_twin(twin);
        if !report(json, twin.short_name(), &run, PAROS_COLUMN) {
            code = exit::VIOLATION;
        }
    }
    code
}

/// The width of the invariant columns of each spec's lines: FelixHeadTrim's were laid out for its
/// names (16 characters), ParosTrimJump's for its longer ones (18); longer names push on.
const FELIX_COLUMN: usize = 16;
const PAROS_COLUMN: usize = 18;

/// Prints one twin's line (a JSON object with `json`), its invariant columns `column` wide;
/// returns whether it is ok.
fn report(json: bool, name: &str, run: &check::TwinRun, column: usize) -> bool {
    let found = if run.found.is_empty() {
        "none".to_string()
    } else {
        Invariant::names(&run.found).join("+")
    };
    if json {
        crate::output::text(&format!(
            "{}\n",
            json!({
                "twin": name,
                "layer": "model",
                "expected": run.expected.name(),
                "found": found,
                "ok": run.ok(),
                "seeds_to_detect": null,
            })
        ));
    } else {
        crate::output::text(&format!(
            "model  {:<17} expected {:<column$} found {:<column$} {}  ({} steps, {} states, {:.3} s)\n",
            name,
            run.expected,
            found,
            if run.ok() { "ok" } else { "NOT OK" },
            run.trace.len().saturating_sub(1),
            run.unique_states,
            run.seconds,
        ));
    }
    run.ok()
}
