//! `--html FILE`: a failing run or a counterexample as a sequence diagram, on one page.
//!
//! A `Diagram` is what both sources share: lifelines (the lease service, clients, brokers,
//! replicas), one row per event (an arrow between two lifelines, a mark on one, or a band across
//! all of them), the violating row and its invariant, and what each lifeline knew at each row
//! (logs, floors, tags, a client's beliefs). `sim` builds one from a simulator run, `model` from a
//! Stateright counterexample. `page` writes it as one self-contained HTML file: the data as
//! JSON, the script that draws the SVG from it and the style sheet, all inline, so the page
//! works offline and from a CI artifact. The script windows long runs around the violation and
//! has a control to widen the window; hovering a row shows the state there, a click pins it.

pub mod model;
pub mod sim;
pub mod trace_file;
mod why;
mod words;

use felix_core::NodeId;
use serde::Serialize;
use std::path::Path;

/// The drawing script and style sheet, inlined into every page.
const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

/// Rows a page embeds at most; a longer run keeps the rows around its violation (the rest are in
/// `felix replay --trace`).
pub const ROWS_EMBEDDED_MAX: usize = 3000;

/// A sequence diagram of one run or one counterexample.
#[derive(Clone, Debug, Serialize)]
pub struct Diagram {
    /// The page title: what ran (`seed 34 twin HiddenTrims`, a configuration name).
    pub title: String,
    /// Lines under the title: knobs, the command that reproduces the run.
    pub subtitle: Vec<String>,
    /// The lifelines, left to right.
    pub lanes: Vec<Lane>,
    /// One row per event, in order.
    pub rows: Vec<Row>,
    /// The violations, the first one highlighted; empty for a run where everything held.
    pub violations: Vec<Violation>,
    /// What each lane knew, as the rows changed it: `states[lane]` lists changes in row order.
    pub states: Vec<Vec<StateChange>>,
    /// Display rows shown before and after the violation at first (the page can widen it).
    pub window: Window,
    /// A note on rows left out of the page (a long run), empty when every row is in.
    pub omitted: String,
    /// The rows of the first violation's why (`felix_sim::render::why::causal`), marked in the page; the
    /// first window reaches back to the earliest of them when it is near enough.
    pub why: Vec<usize>,
    /// The why told by party in a few lines (`felix_sim::render::story`), shown under the violation.
    pub story: Vec<String>,
}

/// A lifeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lane {
    /// Its name in the diagram (`c0`, `n2`, `h1`, `lease`).
    pub name: String,
    /// What it is.
    pub kind: LaneKind,
    /// A word under the name (`holder`, `replica`).
    pub note: String,
}

/// The kinds of lifelines (colours in the page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LaneKind {
    Lease,
    Client,
    Broker,
    Replica,
}

/// One event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The trace step (simulator) or the step of the counterexample (model).
    pub step: u64,
    /// Simulated time, if the source has one (`0.628065s`).
    pub time: String,
    /// The event's sentence, from the source's renderer.
    pub text: String,
    /// How the row is drawn.
    pub mark: Mark,
}

/// How a row is drawn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "shape", rename_all = "lowercase")]
pub enum Mark {
    /// An arrow between two lanes (indices into `lanes`).
    Arrow {
        from: usize,
        to: usize,
        label: String,
        style: Style,
    },
    /// A mark on one lane.
    Point {
        lane: usize,
        label: String,
        style: Style,
    },
    /// A band across every lane (a phase, a network fault described in words).
    Band { label: String, style: Style },
    /// Not drawn (a state sample); it still updates `states`.
    Hidden,
}

/// What a mark means (its colour and symbol in the page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// A client request.
    Request,
    /// An answer that did what was asked.
    Reply,
    /// An answer that refused (CursorTooOld, OffsetMismatch, NotLeader, ...).
    Refusal,
    /// A message between nodes.
    Peer,
    /// A fault: crash, partition, pause, a lease moved without telling its holder.
    Fault,
    /// The lease service granting a lease.
    Lease,
    /// A record committed (or sequenced) on a node.
    Commit,
    /// A floor moved, segments deleted, a jump.
    Floor,
    /// Anything else worth a mark (a retirement, a gap, a phase).
    Note,
}

/// A broken invariant at a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Index into `rows`.
    pub row: usize,
    /// The invariant's name (`StaleTrimRefused`).
    pub invariant: String,
    /// What broke, in words.
    pub detail: String,
}

/// A lane's state from `row` on: lines of text, shown on hover.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateChange {
    pub row: usize,
    pub lines: Vec<String>,
}

/// The window of display rows shown first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Window {
    pub before: usize,
    pub after: usize,
}

impl Diagram {
    /// Records `lines` as `lane`'s state from `row` on, unless nothing changed.
    pub fn set_state(&mut self, lane: usize, row: usize, lines: Vec<String>) {
        assert!(lane < self.states.len(), "state for an unknown lane");
        let changes = &mut self.states[lane];
        if changes.last().is_some_and(|last| last.lines == lines) {
            return;
        }
        assert!(
            changes.last().is_none_or(|last| last.row <= row),
            "state changes are recorded in row order"
        );
        if changes.last().is_some_and(|last| last.row == row) {
            changes.pop();
        }
        changes.push(StateChange { row, lines });
    }

    /// Keeps at most `ROWS_EMBEDDED_MAX` rows, centred on the first violation (or the start of a
    /// run where everything held), and says what was left out. Each lane keeps its state as of
    /// the first kept row.
    pub fn clip(&mut self) {
        let total = self.rows.len();
        if total <= ROWS_EMBEDDED_MAX {
            return;
        }
        let centre = self.violations.first().map_or(0, |violation| violation.row);
        let first = centre
            .saturating_sub(ROWS_EMBEDDED_MAX * 3 / 4)
            .min(total - ROWS_EMBEDDED_MAX);
        let end = first + ROWS_EMBEDDED_MAX;
        self.rows = self.rows[first..end].to_vec();
        self.violations
            .retain(|violation| violation.row >= first && violation.row < end);
        for violation in &mut self.violations {
            violation.row -= first;
        }
        self.why.retain(|row| *row >= first && *row < end);
        for row in &mut self.why {
            *row -= first;
        }
        for changes in &mut self.states {
            let before = changes.iter().rposition(|change| change.row <= first);
            let mut kept: Vec<StateChange> = Vec::new();
            for (index, change) in changes.iter().enumerate() {
                if Some(index) == before {
                    kept.push(StateChange {
                        row: 0,
                        lines: change.lines.clone(),
                    });
                } else if change.row > first && change.row < end {
                    kept.push(StateChange {
                        row: change.row - first,
                        lines: change.lines.clone(),
                    });
                }
            }
            *changes = kept;
        }
        self.omitted = format!(
            "rows {first}..{end} of {total} are on this page; the whole run is in `felix replay --trace`"
        );
    }
}

/// The page: one HTML file with the diagram's data, script and style inline (no network).
pub fn page(diagram: &Diagram) -> String {
    // Serializing plain owned data cannot fail; a failure here is a bug.
    let data = serde_json::to_string(diagram).expect("a diagram serializes");
    // Inside <script>, only `</` can end the element early; `<\/` is the same JSON string.
    let data = data.replace("</", "<\\/");
    let title = escape(&diagram.title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>felix: {title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <noscript>This page draws its diagram with JavaScript.</noscript>\n\
         <script id=\"felix-data\" type=\"application/json\">{data}</script>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

/// What a diagram shows above its rows, and its node lifelines: brokers numbered from
/// `first_node`, then the replicas.
pub struct Header {
    pub title: String,
    pub subtitle: Vec<String>,
    pub first_node: NodeId,
    pub brokers: NodeId,
    pub replicas: NodeId,
}

/// A violation to highlight, at the trace step it names.
pub struct Finding {
    pub step: Option<u64>,
    pub invariant: String,
    pub detail: String,
}

/// Writes the page to `path`; the error is a user-facing message (a bad path is bad input).
pub fn write(path: &Path, diagram: &Diagram) -> Result<usize, String> {
    let text = page(diagram);
    std::fs::write(path, &text)
        .map_err(|error| format!("--html {}: cannot write: {error}", path.display()))?;
    Ok(text.len())
}

/// Writes a simulator run's page; returns the line `felix replay` prints about it.
pub fn write_run(
    path: &Path,
    report: &felix_sim::RunReport,
    command: &str,
) -> Result<String, String> {
    let bytes = write(path, &sim::diagram(report, command))?;
    Ok(format!("html: {bytes} bytes written to {}", path.display()))
}

/// Writes a model counterexample's page; returns the line `felix check` prints about it.
pub fn write_counterexample(
    path: &Path,
    config: &'static felix_model::head_trim::config::Config,
    report: &felix_model::check::Report,
) -> Result<String, String> {
    let bytes = write(path, &model::diagram(config, report))?;
    Ok(format!("html: {bytes} bytes written to {}", path.display()))
}

/// Checks that `path` can be written before a long run, so a bad path fails fast.
pub fn check_writable(path: &Path) -> Result<(), String> {
    std::fs::File::create(path)
        .map(drop)
        .map_err(|error| format!("--html {}: cannot write: {error}", path.display()))
}

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagram(rows: usize) -> Diagram {
        Diagram {
            title: "a <test>".to_string(),
            subtitle: vec![],
            lanes: vec![Lane {
                name: "n0".to_string(),
                kind: LaneKind::Broker,
                note: String::new(),
            }],
            rows: (0..rows)
                .map(|step| Row {
                    step: step as u64,
                    time: String::new(),
                    text: format!("event </script> {step}"),
                    mark: Mark::Point {
                        lane: 0,
                        label: String::new(),
                        style: Style::Note,
                    },
                })
                .collect(),
            violations: vec![],
            states: vec![vec![]],
            window: Window {
                before: 10,
                after: 2,
            },
            omitted: String::new(),
            why: Vec::new(),
            story: Vec::new(),
        }
    }

    /// The page is self-contained and its data cannot close the script element early.
    #[test]
    fn page_inlines_everything_and_escapes_the_data() {
        let text = page(&diagram(3));
        assert_eq!(
            text.matches("</script>").count(),
            2,
            "only our two scripts end"
        );
        assert!(text.contains("event <\\/script> 2"));
        assert!(text.contains("<title>felix: a &lt;test&gt;</title>"));
        assert!(!text.contains("src=\""), "no external script");
        assert!(!text.contains("href=\"http"), "no external link");
        assert!(!text.contains("@import"), "no external style");
    }

    /// A state change equal to the previous one is not recorded again; a second change at the
    /// same row replaces the first.
    #[test]
    fn set_state_keeps_only_changes() {
        let mut diagram = diagram(3);
        diagram.set_state(0, 0, vec!["a".into()]);
        diagram.set_state(0, 1, vec!["a".into()]);
        diagram.set_state(0, 2, vec!["b".into()]);
        diagram.set_state(0, 2, vec!["c".into()]);
        let rows: Vec<(usize, &str)> = diagram.states[0]
            .iter()
            .map(|change| (change.row, change.lines[0].as_str()))
            .collect();
        assert_eq!(rows, vec![(0, "a"), (2, "c")]);
    }

    /// A long run keeps the rows around its violation, renumbered, with the state as of the
    /// first kept row, and says what it left out.
    #[test]
    fn clip_keeps_the_violation_and_its_state() {
        let total = ROWS_EMBEDDED_MAX * 2;
        let mut diagram = diagram(total);
        diagram.violations.push(Violation {
            row: total - 10,
            invariant: "StaleTrimRefused".into(),
            detail: String::new(),
        });
        diagram.set_state(0, 5, vec!["early".into()]);
        diagram.set_state(0, total - 20, vec!["late".into()]);
        diagram.clip();
        assert_eq!(diagram.rows.len(), ROWS_EMBEDDED_MAX);
        let first = total - ROWS_EMBEDDED_MAX;
        assert_eq!(diagram.rows[0].step, first as u64);
        assert_eq!(diagram.violations[0].row, ROWS_EMBEDDED_MAX - 10);
        assert_eq!(diagram.states[0][0].row, 0);
        assert_eq!(diagram.states[0][0].lines, vec!["early".to_string()]);
        assert_eq!(diagram.states[0][1].row, total - 20 - first);
        assert!(diagram.omitted.contains(&format!("of {total}")));
    }
}
