//! The unit tests of `felix_sim::script::parse` (sim/src/script/parse.rs).

use felix_sim::script::parse::*;

const VERBS: [&str; 2] = ["tick", "audit"];

/// Prose, comments, blocks and arguments parse into the blocks the runner needs.
#[test]
fn parses_prose_blocks_and_arguments() {
    let text = "Prose line one.\nProse two.\n\ntick n0 count=3\n----\nout a\nout b\n\n# c\naudit\n----\nok\n";
    let script = parse("s.txt", text, &VERBS).expect("parses");
    assert_eq!(script.blocks.len(), 2);
    let first = &script.blocks[0];
    assert_eq!(first.line, 4);
    assert_eq!(first.verb, "tick");
    assert_eq!(
        first.args,
        vec![
            Arg {
                key: None,
                value: "n0".to_string()
            },
            Arg {
                key: Some("count".to_string()),
                value: "3".to_string()
            }
        ]
    );
    assert_eq!(first.expected, vec!["out a", "out b"]);
    assert_eq!(script.blocks[1].line, 10);
    assert_eq!(script.blocks[1].expected, vec!["ok"]);
}

/// An unknown verb is reported at its file and line.
#[test]
fn unknown_verb_names_file_and_line() {
    let text = "prose\n\ntick n0\n----\nok\n\nfly n0\n----\nok\n";
    let error = parse("dir/x.txt", text, &VERBS).expect_err("unknown verb");
    assert_eq!(error.line, 7);
    assert!(
        error
            .to_string()
            .starts_with("dir/x.txt:7: unknown verb `fly`"),
        "{error}"
    );
}

/// A command line without its `----` (after the first block) is reported at its line.
#[test]
fn missing_separator_names_file_and_line() {
    let text = "prose\n\ntick n0\n----\nok\n\naudit\nok\n";
    let error = parse("y.txt", text, &VERBS).expect_err("missing separator");
    assert_eq!(
        error.to_string(),
        "y.txt:7: missing `----` after `audit` (a command line is followed by a `----` line, then its expected output)"
    );
}

/// A stray separator and an empty key or value are errors with a line, not panics.
#[test]
fn stray_separator_and_bad_argument_are_errors() {
    let error = parse("z.txt", "----\n", &VERBS).expect_err("stray");
    assert_eq!(error.line, 1);
    let error = parse("z.txt", "tick n0 count=\n----\nok\n", &VERBS).expect_err("bad arg");
    assert_eq!(
        error.to_string(),
        "z.txt:1: bad argument `count=`: write key=value with both sides non-empty"
    );
}

/// Rewriting replaces only the expected outputs, keeping prose, comments and commands, and
/// handles a separator on the last line.
#[test]
fn rewrite_replaces_only_expectations() {
    let text = "Prose.\n\ntick n0\n----\nold\nold2\n\n# keep\naudit\n----";
    let script = parse("r.txt", text, &VERBS).expect("parses");
    let rewritten =
        rewrite(&script, &[vec!["new".to_string()], vec!["ok".to_string()]]).expect("rewrites");
    assert_eq!(
        rewritten,
        "Prose.\n\ntick n0\n----\nnew\n\n# keep\naudit\n----\nok\n"
    );
    let again = parse("r.txt", &rewritten, &VERBS).expect("parses again");
    assert_eq!(again.blocks[1].expected, vec!["ok"]);
}

/// An empty expectation not closed by a blank line would swallow the next comment, command
/// and `----`: the `----` inside the expectation is an error at its own line.
#[test]
fn separator_inside_an_expectation_is_an_error() {
    let text = "prose\n\ntick n0\n----\n# next\naudit\n----\nok\n";
    let error = parse("t.txt", text, &VERBS).expect_err("swallowed command");
    assert_eq!(error.line, 7);
    assert!(
        error
            .to_string()
            .starts_with("t.txt:7: a `----` line inside the expected output of `tick n0` (line 3)"),
        "{error}"
    );
}

/// A file with no command (empty, prose only, or a command without `----` as prose) is an
/// error, not a vacuous pass.
#[test]
fn a_file_without_a_command_is_an_error() {
    for text in ["", "\n\n", "Just prose.\nMore prose.\n", "tick n0\nok\n"] {
        let error = parse("e.txt", text, &VERBS).expect_err("no command");
        assert_eq!(error.line, 0);
        assert!(
            error
                .to_string()
                .starts_with("e.txt: no command in the file"),
            "{error}"
        );
    }
}

/// A rewrite whose new output would change the file's commands (here an output line `----`)
/// is refused instead of writing a file that lost or gained a command.
#[test]
fn rewrite_refuses_to_change_the_commands() {
    let text = "tick n0\n----\nold\n\naudit\n----\nok\n";
    let script = parse("w.txt", text, &VERBS).expect("parses");
    let error = rewrite(
        &script,
        &[
            vec!["fine".to_string(), "----".to_string()],
            vec!["ok".to_string()],
        ],
    )
    .expect_err("changes the structure");
    assert!(
        error.to_string().starts_with("w.txt: refusing to rewrite"),
        "{error}"
    );
}
