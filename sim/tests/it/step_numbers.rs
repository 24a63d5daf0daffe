//! One step number everywhere: on the first failing seed of every simulator twin, every step a
//! finding names (its own, and each "step N" in its sentence) is a line of the run's trace that
//! is the event the sentence's words describe there: the client, node and offset they name, and
//! the kind of event (a request, an answer, a commit, an acknowledgement, a fold, an election, a
//! send). The why and the window of the summary print each step with that line's own sentence,
//! the why holds every event the first finding names, and the trace's verdict lines carry the
//! finding's step and words unchanged.
//!
//! The audits see only the history and name events by their index there (`step_ref`); the judge
//! renders those as trace steps. Before, a message said "at step 12263" (a history index) beside
//! "VIOLATION ... at step 13517" (a trace step): two numberings in one sentence.

use felix_core::rules::{Invariant, Layer, TwinName};
use felix_sim::render::describe::trace_line;
use felix_sim::render::trace::{violation_lines, SimEvent, TraceEvent, TraceLine};
use felix_sim::{run, Finding, RunSpec};

/// The first failing seed of each twin lies well inside this range (`felix twins --sim`).
const SEEDS: u64 = 1_000;

/// Where the hunt for a twin's failing seed starts: 0, but for StaleSuffix, whose runs break
/// anything rarely (seed 584 is the only failing one of 0..1500 under its swarm when written, as
/// `judges_alone` says): its hunt starts at 500 as there, to keep the test short (500 runs less),
/// and moves with the swarm like every seed here.
fn hunt_from(twin: TwinName) -> u64 {
    match twin {
        TwinName::StaleSuffix => 500,
        _ => 0,
    }
}

/// What a piece of a sentence says about the event a step names.
#[derive(Debug, Default)]
struct Named {
    client: Option<u64>,
    node: Option<u64>,
    offset: Option<u64>,
    kind: Option<&'static str>,
    /// The word after "answered" (the reply's kind).
    answer: Option<String>,
}

/// Every `<word> N` in `text`, in order, as (position, N).
fn numbers_after(text: &str, word: &str) -> Vec<(usize, u64)> {
    let pattern = format!("{word} ");
    let mut found = Vec::new();
    for (position, _) in text.match_indices(&pattern) {
        // A whole word: "node 3", not "anode 3".
        let whole = text[..position]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let digits: String = text[position + pattern.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if whole {
            if let Ok(number) = digits.parse() {
                found.push((position, number));
            }
        }
    }
    found
}

/// What `text` names: the first (`first`) or last mentioned client, node and offset, and the
/// kind of event its words describe.
fn named(text: &str, first: bool) -> Named {
    let pick = |word: &str| {
        let all = numbers_after(text, word);
        let chosen = if first { all.first() } else { all.last() };
        chosen.map(|(_, number)| *number)
    };
    let kinds: [(&str, &'static str); 10] = [
        ("compared", "compare"),
        ("requested", "request"),
        ("answered", "answer"),
        ("acknowledged", "ack"),
        ("was told", "ack"),
        ("committed", "commit"),
        ("folded", "fold"),
        ("leader", "leader"),
        ("leads", "leader"),
        (" sent ", "send"),
    ];
    // The kind whose word comes first (last, for the words before an inline step).
    let mut kind = None;
    let mut at = None;
    for (word, name) in kinds {
        if let Some(position) = if first {
            text.find(word)
        } else {
            text.rfind(word)
        } {
            let better = at.is_none_or(|best| {
                if first {
                    position < best
                } else {
                    position > best
                }
            });
            if better {
                kind = Some(name);
                at = Some(position);
            }
        }
    }
    let answer = text.rfind("answered ").map(|position| {
        text[position + "answered ".len()..]
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or_default()
            .to_string()
    });
    Named {
        client: pick("client"),
        node: pick("node"),
        offset: pick("offset"),
        kind,
        answer,
    }
}

/// The words of a trace line's sentence ("n2 -> c5: Appended at 26" gives n2, c5, Appended, at,
/// 26).
fn tokens(sentence: &str) -> Vec<&str> {
    sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|token| !token.is_empty())
        .collect()
}

/// Why the trace line at `step` is not the event `said` describes (None: it is).
fn mismatch(lines: &[TraceLine], step: u64, said: &Named) -> Option<String> {
    let Some(line) = lines.get(step as usize) else {
        return Some(format!(
            "step {step} is past the trace's {} lines",
            lines.len()
        ));
    };
    if !matches!(line.event, TraceEvent::History(_)) {
        return Some(format!(
            "step {step} is not a history event: {}",
            trace_line(line)
        ));
    }
    let sentence = sentence_of(line);
    let words = tokens(&sentence);
    let has = |word: &str| words.contains(&word);
    let client = said.client.map(|client| format!("c{client}"));
    let wrong = |what: String| Some(format!("step {step} ({sentence}) {what}"));
    if let Some(client) = &client {
        if !has(client) {
            return wrong(format!("does not name {client}"));
        }
    }
    if let Some(node) = said.node {
        if !has(&format!("n{node}")) {
            return wrong(format!("does not name n{node}"));
        }
    }
    if let Some(offset) = said.offset {
        if !has(&offset.to_string()) {
            return wrong(format!("does not name offset {offset}"));
        }
    }
    let kind_holds = match said.kind {
        None => true,
        Some("request") => client
            .as_ref()
            .is_some_and(|client| sentence.contains(&format!("{client} -> "))),
        Some("answer") => {
            let to_client = client
                .as_ref()
                .is_none_or(|client| sentence.contains(&format!("-> {client}: ")));
            let reply = said
                .answer
                .as_ref()
                .is_none_or(|answer| sentence.contains(&format!(": {answer}")));
            to_client && reply
        }
        Some("ack") => sentence.contains(" -> c") && has("Appended"),
        Some("commit") => has("committed"),
        Some("fold") => has("folded"),
        Some("leader") => has("leader"),
        Some("send") => has("sent"),
        Some("compare") => has("compared"),
        Some(other) => unreachable!("{other}"),
    };
    if kind_holds {
        None
    } else {
        wrong(format!("is not the {:?} the words describe", said.kind))
    }
}

/// Every problem with the steps `finding` names.
fn problems(lines: &[TraceLine], finding: &Finding) -> Vec<String> {
    let detail = &finding.detail;
    let mut found = Vec::new();
    let Some(step) = finding.step else {
        return vec!["names no step".to_string()];
    };
    if matches!(finding.invariant, Invariant::Panic | Invariant::EventBudget) {
        // It stopped the run: its step is the run's last line, whatever that was.
        if step + 1 != lines.len() as u64 {
            found.push(format!(
                "step {step} is not the last of {} lines",
                lines.len()
            ));
        }
        return found;
    }
    if matches!(
        finding.invariant,
        Invariant::Progress | Invariant::Convergence
    ) {
        // Judged at a moment (the deadline, the first event past a bound), not at an event of the
        // node it names: its step is a time, and the step its words name is when the stall
        // began, at or before it.
        if step >= lines.len() as u64 {
            found.push(format!("step {step} is past the {} lines", lines.len()));
        }
        for (_, named) in numbers_after(detail, "step") {
            if named > step {
                found.push(format!("the stall's start {named} is after step {step}"));
            }
        }
        return found;
    }
    // Each "step N" inside the sentence: the words since the last comma before it (or since the
    // previous step) describe it; an answer's client is the one the request before it named
    // ("client 5's Read (requested at step 10, answered ... at step 12)").
    let inline = numbers_after(detail, "step");
    let mut start = 0;
    let mut carried: Option<u64> = None;
    for (position, number) in &inline {
        let clause = &detail[start..*position];
        let piece = clause.rsplit(", ").next().unwrap_or(clause);
        let mut said = named(piece, false);
        // The answer to a request the sentence just named is that client's.
        if said.client.is_none() && said.node.is_none() && said.kind == Some("answer") {
            said.client = carried;
        }
        carried = said.client.or(carried);
        if let Some(problem) = mismatch(lines, *number, &said) {
            found.push(format!("{problem}; the words: {piece:?}"));
        }
        start = position + "step ".len() + number.to_string().len();
    }
    // The finding's own step: one the sentence names inline, or the event its opening words
    // describe (up to the first comma, colon, "follows" or "while").
    if !inline.iter().any(|(_, number)| *number == step) {
        let end = [", ", ": ", " follows ", " while "]
            .iter()
            .filter_map(|stop| detail.find(stop))
            .min()
            .unwrap_or(detail.len());
        let head = &detail[..end];
        if let Some(problem) = mismatch(lines, step, &named(head, true)) {
            found.push(format!("{problem}; the words: {head:?}"));
        }
    }
    found
}

/// The summary's lines that start with a step and a time ("  1735   8.082868s  n2: ..."), as
/// (step, sentence).
fn numbered_lines(summary: &str) -> Vec<(u64, String)> {
    summary
        .lines()
        .filter_map(|line| {
            let mut parts = line.trim_start().splitn(2, "  ");
            let step = parts.next()?.parse().ok()?;
            let rest = parts.next()?.trim_start();
            let (time, sentence) = rest.split_once("s  ")?;
            time.parse::<f64>().ok()?;
            Some((step, sentence.to_string()))
        })
        .collect()
}

/// The steps the summary's why lists.
fn why_steps(summary: &str) -> Vec<u64> {
    let section: String = summary
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("why:"))
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with("events leading to"))
        .map(|line| format!("{line}\n"))
        .collect();
    numbered_lines(&section)
        .into_iter()
        .map(|(step, _)| step)
        .collect()
}

/// The steps the summary's story names ("step 5", "steps 5, 9"), line by line.
fn story_steps(summary: &str) -> Vec<u64> {
    summary
        .lines()
        .skip_while(|line| !line.starts_with("  in short"))
        .skip(1)
        .take_while(|line| line.starts_with("    "))
        .flat_map(|line| {
            line.split("(step")
                .skip(1)
                .flat_map(|part| {
                    part.trim_start_matches('s')
                        .split(')')
                        .next()
                        .unwrap_or("")
                        .split(", ")
                        .filter_map(|number| number.trim().parse().ok())
                        .collect::<Vec<u64>>()
                })
                .collect::<Vec<u64>>()
        })
        .collect()
}

/// A trace line's sentence, without the step and time `trace show` prints before it.
fn sentence_of(line: &TraceLine) -> String {
    let shown = trace_line(line);
    match numbered_lines(&shown).pop() {
        Some((step, sentence)) if step == line.step => sentence,
        _ => panic!("not a numbered line: {shown:?}"),
    }
}

#[test]
fn every_step_a_finding_names_is_the_event_its_words_describe() {
    let twins: Vec<TwinName> = TwinName::ALL
        .into_iter()
        .filter(|twin| twin.expected(Layer::Sim).is_some())
        .collect();
    assert!(twins.len() >= 13, "{twins:?}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for twin in twins {
        let from = hunt_from(twin);
        let seed = (from..SEEDS)
            .find(|&seed| !run(&RunSpec::new(seed, Some(twin))).violations.is_empty())
            .unwrap_or_else(|| panic!("{twin} fails no seed of {from}..{SEEDS}"));
        let mut spec = RunSpec::new(seed, Some(twin));
        spec.keep_trace = true;
        let report = run(&spec);
        let lines = report.trace_lines.as_deref().expect("the trace is kept");
        for finding in &report.violations {
            checked += 1;
            for problem in problems(lines, finding) {
                failures.push(format!(
                    "{twin} seed {seed} {} at step {:?}: {problem}\n    {}",
                    finding.invariant, finding.step, finding.detail
                ));
            }
        }
        // The summary (the why and the window before the violation) prints each step with its
        // own line's sentence.
        let summary = report.summary();
        let numbered = numbered_lines(&summary);
        assert!(
            numbered.len() > 1,
            "{twin} seed {seed}: no numbered line in\n{summary}"
        );
        for (step, sentence) in numbered {
            let own = lines.get(step as usize).map(sentence_of);
            if own.as_deref() != Some(sentence.as_str()) {
                failures.push(format!(
                    "{twin} seed {seed}: the summary prints step {step} as {sentence:?}, the trace holds {own:?}"
                ));
            }
        }
        // The why holds every event the first finding names (the acknowledgement and the commit
        // an AckedWritesKept names, the request and the answer a Linearizable names).
        let first = &report.violations[0];
        let why = why_steps(&summary);
        for named in numbers_after(&first.detail, "step")
            .into_iter()
            .map(|(_, step)| step)
            .chain(first.step)
            .filter(|_| !matches!(first.invariant, Invariant::Panic | Invariant::EventBudget))
        {
            if !why.contains(&named) {
                failures.push(format!(
                    "{twin} seed {seed}: the why of {} leaves out step {named}: {why:?}",
                    first.invariant
                ));
            }
        }
        // The story retells the why: every step it names is one of the why's.
        let told = story_steps(&summary);
        if why.len() >= 2 && told.is_empty() {
            failures.push(format!("{twin} seed {seed}: no story for a why of {why:?}"));
        }
        for step in told.iter().filter(|step| !why.contains(step)) {
            failures.push(format!(
                "{twin} seed {seed}: the story names step {step}, not in the why {why:?}"
            ));
        }
        // The trace's verdict lines: each finding's step and words, unchanged.
        for (line, finding) in violation_lines(lines, &report.violations)
            .iter()
            .zip(&report.violations)
        {
            let TraceEvent::Sim(SimEvent::Violation {
                at_step, detail, ..
            }) = &line.event
            else {
                panic!("not a verdict line: {line:?}");
            };
            assert_eq!((at_step, detail), (&finding.step, &finding.detail));
        }
    }
    assert!(checked >= 16, "only {checked} findings checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The check itself bites: a finding whose step is off by one, or whose words name another
/// client, node or offset than the event at its step, is refused.
#[test]
fn the_check_refuses_a_step_that_is_not_the_event_described() {
    let twin = TwinName::StaleVotes;
    // The first seed where the twin breaks ElectionSafety (on some seeds it breaks another
    // judge alone: judges_alone).
    let seed = (0..SEEDS)
        .find(|&seed| {
            run(&RunSpec::new(seed, Some(twin)))
                .violations
                .iter()
                .any(|finding| finding.invariant == Invariant::ElectionSafety)
        })
        .expect("a seed breaking ElectionSafety");
    let mut spec = RunSpec::new(seed, Some(twin));
    spec.keep_trace = true;
    let report = run(&spec);
    let lines = report.trace_lines.as_deref().expect("the trace is kept");
    let finding = report
        .violations
        .iter()
        .find(|finding| finding.invariant == Invariant::ElectionSafety)
        .expect("ElectionSafety");
    assert!(problems(lines, finding).is_empty());
    let off_by_one = Finding {
        step: finding.step.map(|step| step - 1),
        ..finding.clone()
    };
    assert!(!problems(lines, &off_by_one).is_empty());
    let inline = numbers_after(&finding.detail, "step");
    let (_, since) = inline.first().expect("the first leader's step");
    let shifted = Finding {
        detail: finding
            .detail
            .replace(&format!("step {since}"), &format!("step {}", since - 1)),
        ..finding.clone()
    };
    assert!(!problems(lines, &shifted).is_empty());
    let other_node = Finding {
        detail: finding.detail.replacen("node ", "node 9", 1),
        ..finding.clone()
    };
    assert!(!problems(lines, &other_node).is_empty());
}
