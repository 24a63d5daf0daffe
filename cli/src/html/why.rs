//! The first violation's why in a page: its rows marked, the first window reaching back to them,
//! and its story in a few lines under the violation.

use super::{Diagram, Finding};
use felix_sim::render::trace::TraceLine;
use felix_sim::{render::story, render::why};

/// The most rows the first window reaches back to show the why's earliest event.
const WHY_WINDOW_MAX: usize = 400;

/// Marks the first violation's why (the events it names and what they depend on) and widens the
/// first window back to the earliest of them, up to `WHY_WINDOW_MAX` rows before the violation;
/// tells its story (`felix_sim::render::story`) for the header.
pub fn mark_why(diagram: &mut Diagram, lines: &[TraceLine], findings: &[Finding]) {
    let Some(row) = diagram.violations.first().map(|violation| violation.row) else {
        return;
    };
    let step = diagram.rows[row].step;
    let Some(finding) = findings.iter().find(|finding| finding.step == Some(step)) else {
        return;
    };
    let named = why::Named::of(&finding.detail, finding.step, &[]);
    // Rows are the lines, one for one, and a line's index is its step in a whole trace.
    let whole = lines
        .iter()
        .enumerate()
        .all(|(index, line)| line.step == index as u64);
    let Some(why) = whole
        .then(|| why::causal(&named, lines, row, why::WHY_LINES_MAX))
        .flatten()
    else {
        return;
    };
    if let Some(&earliest) = why.first() {
        let reach = (row - earliest.min(row) + 2).min(WHY_WINDOW_MAX);
        diagram.window.before = diagram.window.before.max(reach);
    }
    diagram.story = story::story(lines, &why, &named.steps);
    diagram.why = why;
}
