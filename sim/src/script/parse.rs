//! The scenario file format: datadriven golden files in the style of etcd-io/raft's
//! `testdata/*.txt`.
//!
//! ```text
//! Prose saying what the scenario proves: every line before the first command.
//!
//! # a comment between blocks
//! verb arg key=value
//! ----
//! expected output, one or more lines
//! ending at a blank line (or the end of the file)
//! ```
//!
//! A command is one line immediately followed by a `----` line. Lines before the first command
//! are prose; after it, blank lines and `#` comments may sit between blocks, and any other line
//! is a command that lost its `----` (an error). Arguments are words separated by spaces:
//! `key=value` or a bare value. Errors name the file and the line, and never panic.
//!
//! Traps that are errors, not guesses: a `----` line inside an expected output (an empty
//! expectation not closed by a blank line would otherwise swallow the next command, and
//! `--rewrite` would delete it), and a file with no command at all (it would pass vacuously).
//! `rewrite` re-parses what it produced and refuses any result whose commands differ.

use std::fmt;

/// One argument of a command: `key=value`, or a bare `value` (`key` is None).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    pub key: Option<String>,
    pub value: String,
}

/// One `command / ---- / expected output` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// 1-based line of the command.
    pub line: usize,
    /// The command line as written (trimmed).
    pub command: String,
    pub verb: String,
    pub args: Vec<Arg>,
    pub expected: Vec<String>,
    /// 0-based index of the first expected line in the file; the expectation spans
    /// `expected_start .. expected_start + expected.len()`.
    pub expected_start: usize,
}

/// A parsed scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub path: String,
    /// The file's lines, as read (for `--rewrite`).
    pub lines: Vec<String>,
    pub blocks: Vec<Block>,
}

/// A bad scenario file: where, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    pub path: String,
    /// 1-based line; 0 when the file as a whole is the problem (unreadable).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(formatter, "{}: {}", self.path, self.message)
        } else {
            write!(formatter, "{}:{}: {}", self.path, self.line, self.message)
        }
    }
}

impl std::error::Error for ScriptError {}

/// The line that separates a command from its expected output.
pub const SEPARATOR: &str = "----";

/// Parses `text` (the contents of `path`); `verbs` are the known verbs.
pub fn parse(path: &str, text: &str, verbs: &[&str]) -> Result<Script, ScriptError> {
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let error = |line: usize, message: String| ScriptError {
        path: path.to_string(),
        line,
        message,
    };
    let mut blocks = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index].trim();
        if line.is_empty() || line.starts_with('#') {
            index += 1;
            continue;
        }
        if line == SEPARATOR {
            return Err(error(
                index + 1,
                "a `----` line with no command line right above it".to_string(),
            ));
        }
        let separated = lines
            .get(index + 1)
            .is_some_and(|next| next.trim() == SEPARATOR);
        if !separated {
            if blocks.is_empty() {
                index += 1; // prose at the top
                continue;
            }
            return Err(error(
                index + 1,
                format!(
                    "missing `----` after `{line}` (a command line is followed by a `----` line, then its expected output)"
                ),
            ));
        }
        let mut words = line.split_whitespace();
        let verb = words.next().unwrap_or_default().to_string();
        if !verbs.contains(&verb.as_str()) {
            return Err(error(
                index + 1,
                format!("unknown verb `{verb}` (known: {})", verbs.join(", ")),
            ));
        }
        let mut args = Vec::new();
        for word in words {
            args.push(parse_arg(word).map_err(|message| error(index + 1, message))?);
        }
        let expected_start = index + 2;
        let mut end = expected_start;
        while end < lines.len() && !lines[end].trim().is_empty() {
            if lines[end].trim() == SEPARATOR {
                return Err(error(
                    end + 1,
                    format!(
                        "a `----` line inside the expected output of `{line}` (line {}): an \
                         expected output ends at the first blank line, so put a blank line \
                         before the next command",
                        index + 1
                    ),
                ));
            }
            end += 1;
        }
        blocks.push(Block {
            line: index + 1,
            command: line.to_string(),
            verb,
            args,
            expected: lines[expected_start..end].to_vec(),
            expected_start,
        });
        index = end;
    }
    if blocks.is_empty() {
        return Err(error(
            0,
            "no command in the file (a scenario needs at least one `verb args` line followed \
             by `----` and its expected output)"
                .to_string(),
        ));
    }
    Ok(Script {
        path: path.to_string(),
        lines,
        blocks,
    })
}

fn parse_arg(word: &str) -> Result<Arg, String> {
    match word.split_once('=') {
        None => Ok(Arg {
            key: None,
            value: word.to_string(),
        }),
        Some((key, value)) if !key.is_empty() && !value.is_empty() => Ok(Arg {
            key: Some(key.to_string()),
            value: value.to_string(),
        }),
        Some(_) => Err(format!(
            "bad argument `{word}`: write key=value with both sides non-empty"
        )),
    }
}

/// The file with every block's expected output replaced by `actual` (one Vec per block), or an
/// error if the result would not parse back to the same commands (an output line that reads as a
/// `----` or a blank line would change the file's structure): a rewrite never drops a command.
pub fn rewrite(script: &Script, actual: &[Vec<String>]) -> Result<String, ScriptError> {
    let text = rewrite_text(script, actual);
    let verbs: Vec<&str> = script
        .blocks
        .iter()
        .map(|block| block.verb.as_str())
        .collect();
    let commands = |script: &Script| -> Vec<String> {
        script
            .blocks
            .iter()
            .map(|block| block.command.clone())
            .collect()
    };
    let refuse = |message: String| ScriptError {
        path: script.path.clone(),
        line: 0,
        message: format!("refusing to rewrite: {message}"),
    };
    match parse(&script.path, &text, &verbs) {
        Ok(again) if commands(&again) == commands(script) => Ok(text),
        Ok(_) => Err(refuse(
            "the new expected output would change the file's commands".to_string(),
        )),
        Err(error) => Err(refuse(format!(
            "the rewritten file would not parse ({error})"
        ))),
    }
}

fn rewrite_text(script: &Script, actual: &[Vec<String>]) -> String {
    assert_eq!(script.blocks.len(), actual.len());
    let mut text = String::new();
    let mut index = 0;
    for (block, output) in script.blocks.iter().zip(actual) {
        while index < block.expected_start.min(script.lines.len()) {
            text.push_str(&script.lines[index]);
            text.push('\n');
            index += 1;
        }
        for line in output {
            text.push_str(line);
            text.push('\n');
        }
        index = index.max(block.expected_start + block.expected.len());
    }
    while index < script.lines.len() {
        text.push_str(&script.lines[index]);
        text.push('\n');
        index += 1;
    }
    text
}
