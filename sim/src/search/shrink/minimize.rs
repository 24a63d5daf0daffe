//! Minimizing a reproducing script: fewer verbs while the twin still breaks its invariant and
//! every rule on still passes (`script::reproduces`, behind the caller's `still`).
//!
//! The passes, repeated while a round makes the script shorter and the caller's budget of
//! scripts lasts: windows of the script replaced by one `stabilize` (a stretch whose order did
//! not matter), or by `stabilize hold=X` around the client and lease verbs they hold (a stretch
//! in which only X was slow: its messages stay queued, as a slow link's did in the world), then
//! neighbours merged (`sync n0 n1`, `deliver ... n=2`, `tick n2 3`), then chunks and single verbs
//! deleted.

use std::collections::BTreeSet;

/// The most ticks one `tick` verb gives (the verb's own bound).
const TICKS_MAX: u64 = 1_000;

/// `tick nK [count]` as the node and its count.
fn ticks(verb: &str) -> Option<(&str, u64)> {
    let mut words = verb.strip_prefix("tick ")?.split(' ');
    let node = words.next()?;
    let count = match words.next() {
        Some(count) => count.parse().ok()?,
        None => 1,
    };
    words.next().is_none().then_some((node, count))
}

/// The verb merging `first` and `second` when they are neighbours of one kind: two syncs are one
/// `sync` of both nodes; two ticks of one node are one `tick` (the same ticks in a row); two
/// deliveries of the next message on one link are `n=2` (which differs: the second message must be
/// queued before the first arrives, so the merge is verified).
fn merged(first: &str, second: &str) -> Option<String> {
    if let (Some(a), Some(b)) = (first.strip_prefix("sync "), second.strip_prefix("sync ")) {
        return Some(format!("sync {a} {b}"));
    }
    if let (Some((a, n)), Some((b, m))) = (ticks(first), ticks(second)) {
        return (a == b && n + m <= TICKS_MAX).then(|| format!("tick {a} {}", n + m));
    }
    let (a, n) = first.rsplit_once(" n=")?;
    let (b, m) = second.rsplit_once(" n=")?;
    let (n, m) = (n.parse::<u64>().ok()?, m.parse::<u64>().ok()?);
    (a == b && a.starts_with("deliver ") && !a.contains("skip="))
        .then(|| format!("{a} n={}", n + m))
}

/// `verbs` with each run of one node's neighbouring ticks written as one `tick`.
pub(super) fn merged_ticks(verbs: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for verb in verbs {
        let merge = out.last().and_then(|last| {
            let (a, n) = ticks(last)?;
            let (b, m) = ticks(verb)?;
            (a == b && n + m <= TICKS_MAX).then(|| format!("tick {a} {}", n + m))
        });
        match merge {
            Some(verb) => *out.last_mut().expect("a last verb") = verb,
            None => out.push(verb.clone()),
        }
    }
    out
}

/// `verbs` with neighbouring ticks merged (`merged_ticks`) when `still` holds for them (one
/// script, counted in `tries`), else `verbs` as they were.
pub(super) fn with_ticks_merged(
    verbs: Vec<String>,
    tries: &mut u64,
    still: &dyn Fn(&[String]) -> bool,
) -> Vec<String> {
    let fewer = merged_ticks(&verbs);
    if fewer.len() == verbs.len() {
        return verbs;
    }
    *tries += 1;
    if still(&fewer) {
        fewer
    } else {
        verbs
    }
}

/// Shortens `verbs` while `still` holds: what follows the violation cut off, the longest prefix
/// whose order did not matter settled, then rounds of `coarsened` and deletions (ddmin: chunks of
/// halving sizes) while a round makes the script shorter (`still` answers false once the caller's
/// budget of scripts is spent, so the rounds end).
pub(super) fn minimized(
    mut verbs: Vec<String>,
    still: &mut dyn FnMut(&[String]) -> bool,
) -> Vec<String> {
    // What follows the violation never mattered: the shortest prefix that still reproduces, by
    // bisection (a few scripts, however long the translation).
    let (mut low, mut high) = (0, verbs.len());
    while low + 1 < high {
        let middle = low + (high - low) / 2;
        if still(&verbs[..middle]) {
            high = middle;
        } else {
            low = middle;
        }
    }
    verbs.truncate(high);
    // Likewise the longest prefix whose order did not matter: one `stabilize` in its place.
    let with_prefix_settled = |verbs: &[String], cut: usize| -> Vec<String> {
        let mut edited = vec!["stabilize".to_string()];
        edited.extend_from_slice(&verbs[cut..]);
        edited
    };
    let (mut low, mut high) = (0, verbs.len());
    while low + 1 < high {
        let middle = low + (high - low) / 2;
        if still(&with_prefix_settled(&verbs, middle)) {
            low = middle;
        } else {
            high = middle;
        }
    }
    if low > 0 {
        verbs = with_prefix_settled(&verbs, low);
    }
    loop {
        let before = verbs.len();
        verbs = coarsened(verbs, still);
        verbs = deleted(verbs, still);
        if verbs.len() >= before {
            return verbs;
        }
    }
}

/// ddmin over verbs: chunks deleted, halving sizes, while `still` holds.
fn deleted(mut verbs: Vec<String>, still: &mut dyn FnMut(&[String]) -> bool) -> Vec<String> {
    let mut size = verbs.len() / 2;
    while size >= 1 {
        let mut start = 0;
        while start < verbs.len() {
            let end = (start + size).min(verbs.len());
            let mut edited = verbs.clone();
            edited.drain(start..end);
            if still(&edited) {
                verbs = edited;
            } else {
                start = end;
            }
        }
        size /= 2;
    }
    verbs
}

/// A verb that only moves what is already under way: messages, storage, clocks.
fn moves(verb: &str) -> bool {
    ["deliver ", "sync", "tick ", "stabilize"]
        .iter()
        .any(|prefix| verb.starts_with(prefix))
}

/// The names a `stabilize hold=` may hold for `window` of `verbs`: every client the script
/// creates (in order), then the nodes the window's deliveries name (in order).
fn hold_names(verbs: &[String], window: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    let mut seen = BTreeSet::new();
    for line in verbs.iter().flat_map(|verb| verb.lines()) {
        let mut words = line.split(' ');
        if let (Some("lease" | "owner" | "reader" | "folder"), Some(name)) =
            (words.next(), words.next())
        {
            if seen.insert(name.to_string()) {
                names.push(name.to_string());
            }
        }
    }
    for verb in window.iter().filter(|verb| verb.starts_with("deliver ")) {
        for word in verb.split(' ') {
            let node = word
                .strip_prefix("from=")
                .or_else(|| word.strip_prefix("to="));
            if let Some(node) = node.filter(|node| node.starts_with('n')) {
                if seen.insert(node.to_string()) {
                    names.push(node.to_string());
                }
            }
        }
    }
    names
}

/// `window` with every run of verbs that only move (`moves`) written as one `stabilize
/// hold=<held>`, the other verbs kept in their order.
fn settled_holding(window: &[String], held: &str) -> Vec<String> {
    let settle = format!("stabilize hold={held}");
    let mut out: Vec<String> = Vec::new();
    for verb in window {
        if !moves(verb) {
            out.push(verb.clone());
        } else if out.last() != Some(&settle) {
            out.push(settle.clone());
        }
    }
    out
}

/// Shortens `verbs` while `still` holds: windows (halving sizes, side by side) replaced by one
/// `stabilize` (a stretch of the schedule whose order did not matter) or, when that does not
/// hold, their moving verbs settled with one name held (`settled_holding`); then neighbours
/// merged, then single verbs deleted.
fn coarsened(mut verbs: Vec<String>, still: &mut dyn FnMut(&[String]) -> bool) -> Vec<String> {
    let mut size = verbs.len();
    while size >= 2 {
        let mut start = 0;
        while start + size <= verbs.len() {
            let window = &verbs[start..start + size];
            let mut replacements = Vec::new();
            if window.iter().any(|verb| verb != "stabilize") {
                replacements.push(vec!["stabilize".to_string()]);
            }
            for held in hold_names(&verbs, window) {
                let settled = settled_holding(window, &held);
                if settled.len() < window.len() {
                    replacements.push(settled);
                }
            }
            let kept = replacements.into_iter().find_map(|replacement| {
                let mut edited = verbs[..start].to_vec();
                edited.extend_from_slice(&replacement);
                edited.extend_from_slice(&verbs[start + size..]);
                still(&edited).then_some((edited, replacement.len()))
            });
            match kept {
                Some((edited, length)) => {
                    verbs = edited;
                    start += length;
                }
                None => start += size,
            }
        }
        size /= 2;
    }
    let mut index = 0;
    while index + 1 < verbs.len() {
        if let Some(verb) = merged(&verbs[index], &verbs[index + 1]) {
            let mut edited = verbs.clone();
            edited.splice(index..index + 2, [verb]);
            if still(&edited) {
                verbs = edited;
                continue;
            }
        }
        index += 1;
    }
    let mut index = 0;
    while index < verbs.len() {
        let mut edited = verbs.clone();
        edited.remove(index);
        if still(&edited) {
            verbs = edited;
        } else {
            index += 1;
        }
    }
    verbs
}
