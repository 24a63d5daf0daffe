#!/usr/bin/env python3
"""Tests of mutants_doc_only.py, the mutation step's doc-comment check (run by scripts/test.sh)."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutants_doc_only as check  # noqa: E402

# A file's new text, numbered from 1: a module doc, then an item doc above a function.
NEW = """//! The module.
//! It says what it does.

/// The function, now
/// documented anew.
pub fn f(a: u64) -> u64 {
    // a plain comment
    a + 1
}
"""


def diff(path, hunks, old=None):
    """A git diff of one file: `hunks` are (header, lines) as git writes them."""
    text = f"diff --git a/{old or path} b/{path}\nindex 1111111..2222222 100644\n"
    text += f"--- a/{old or path}\n+++ {'b/' + path if path != '/dev/null' else path}\n"
    for header, lines in hunks:
        text += header + "\n" + "".join(line + "\n" for line in lines)
    return text


def code(text, files=None):
    files = files or {"core/src/x.rs": NEW}
    return check.code_lines(text, lambda path: files[path])


class DocOnly(unittest.TestCase):
    def test_a_rewrapped_item_doc_is_doc_only(self):
        rewrap = diff("core/src/x.rs", [("@@ -3,4 +3,4 @@", [
            " ",
            "-/// The function,",
            "-/// now documented anew.",
            "+/// The function, now",
            "+/// documented anew.",
            " pub fn f(a: u64) -> u64 {",
        ])])
        self.assertEqual(code(rewrap), [])

    def test_a_changed_module_doc_is_doc_only(self):
        module = diff("core/src/x.rs", [("@@ -1,3 +1,3 @@", [
            " //! The module.",
            "-//! It said what it does.",
            "+//! It says what it does.",
            " ",
        ])])
        self.assertEqual(code(module), [])

    def test_a_changed_code_line_counts(self):
        body = diff("core/src/x.rs", [("@@ -7,3 +7,3 @@", [
            "     // a plain comment",
            "-    a + 2",
            "+    a + 1",
            " }",
        ])])
        # The removal marks the line before it too.
        self.assertEqual(code(body), [("core/src/x.rs", 7, "    // a plain comment"),
                                      ("core/src/x.rs", 8, "    a + 1")])

    def test_a_plain_comment_in_a_body_counts(self):
        comment = diff("core/src/x.rs", [("@@ -6,3 +6,3 @@", [
            " pub fn f(a: u64) -> u64 {",
            "-    // an old comment",
            "+    // a plain comment",
            "     a + 1",
        ])])
        self.assertEqual(code(comment), [("core/src/x.rs", 6, "pub fn f(a: u64) -> u64 {"),
                                         ("core/src/x.rs", 7, "    // a plain comment")])

    def test_a_removed_doc_line_marks_the_line_after_it(self):
        # cargo-mutants marks the lines on both sides of a removal: here the function's first
        # line, which its body's mutants span.
        removal = diff("core/src/x.rs", [("@@ -4,4 +4,3 @@", [
            " /// The function, now",
            " /// documented anew.",
            "-/// A third line.",
            " pub fn f(a: u64) -> u64 {",
        ])])
        self.assertEqual(code(removal), [("core/src/x.rs", 6, "pub fn f(a: u64) -> u64 {")])

    def test_a_removal_on_the_first_line_marks_only_the_line_after_it(self):
        removal = diff("core/src/x.rs", [("@@ -1,2 +1,1 @@", [
            "-//! An old first line.",
            " //! The module.",
        ])])
        self.assertEqual(code(removal), [])

    def test_a_blank_line_before_code_counts(self):
        blank = diff("core/src/x.rs", [("@@ -6,3 +6,4 @@", [
            " pub fn f(a: u64) -> u64 {",
            "+",
            "     // a plain comment",
        ])])
        body = NEW.replace("{\n", "{\n\n", 1)
        self.assertEqual(code(blank, {"core/src/x.rs": body}), [("core/src/x.rs", 7, "")])

    def test_a_blank_line_before_a_doc_is_outside_code(self):
        # The line before a removal at the top of an item's doc: the blank line above it.
        top = diff("core/src/x.rs", [("@@ -3,3 +3,3 @@", [
            " ",
            "-/// The function, then",
            "+/// The function, now",
            " /// documented anew.",
        ])])
        self.assertEqual(code(top), [])

    def test_a_deleted_file_counts(self):
        deleted = diff("/dev/null", [("@@ -1,2 +0,0 @@", ["-//! Gone.", "-pub fn g() {}"])],
                       old="core/src/y.rs")
        self.assertEqual(code(deleted), [("/dev/null", 0, "a deleted file")])

    def test_a_new_file_counts_its_code(self):
        new = diff("core/src/z.rs", [("@@ -0,0 +1,2 @@", ["+//! New.", "+pub fn g() {}"])],
                   old="/dev/null")
        self.assertEqual(code(new, {"core/src/z.rs": "//! New.\npub fn g() {}\n"}),
                         [("core/src/z.rs", 2, "pub fn g() {}")])

    def test_the_end_of_file_marker_is_not_a_line(self):
        last = diff("core/src/x.rs", [("@@ -9,1 +9,1 @@", [
            "-/// old",
            "+/// new",
            "\\ No newline at end of file",
        ])])
        self.assertEqual(code(last, {"core/src/x.rs": "\n" * 8 + "/// new"}), [])

    def test_two_files_each_read_as_its_own(self):
        both = diff("core/src/x.rs", [("@@ -8,1 +8,1 @@", ["-    a + 2", "+    a + 1"])]) + diff(
            "store/src/w.rs", [("@@ -1,1 +1,1 @@", ["-//! Old.", "+//! New."])])
        files = {"core/src/x.rs": NEW, "store/src/w.rs": "//! New.\n"}
        self.assertEqual(code(both, files), [("core/src/x.rs", 7, "    // a plain comment"),
                                             ("core/src/x.rs", 8, "    a + 1")])


class Spans(unittest.TestCase):
    def mutant(self, start, end):
        return {"file": "core/src/x.rs", "name": f"x.rs:{start}", "span": {
            "start": {"line": start, "column": 1}, "end": {"line": end, "column": 2}}}

    def test_a_body_holds_no_doc(self):
        self.assertEqual(check.in_spans([self.mutant(6, 9)], lambda path: NEW), [])

    def test_a_span_over_a_doc_is_found(self):
        nested = NEW.replace("    // a plain comment", "    /// a nested item's doc")
        self.assertEqual(check.in_spans([self.mutant(6, 9)], lambda path: nested),
                         [("core/src/x.rs", 7, "    /// a nested item's doc", "x.rs:6")])


class Command(unittest.TestCase):
    def run_on(self, text, files):
        with tempfile.TemporaryDirectory() as root:
            for path, body in files.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w", encoding="utf-8") as handle:
                    handle.write(body)
            with open(os.path.join(root, "d.patch"), "w", encoding="utf-8") as handle:
                handle.write(text)
            return subprocess.run(
                [sys.executable, os.path.join(HERE, "mutants_doc_only.py"), "d.patch"],
                cwd=root, capture_output=True, text=True)

    def test_exit_codes(self):
        docs = diff("core/src/x.rs", [("@@ -1,1 +1,1 @@", ["-//! Old.", "+//! The module."])])
        self.assertEqual(self.run_on(docs, {"core/src/x.rs": NEW}).returncode, 0)
        body = diff("core/src/x.rs", [("@@ -8,1 +8,1 @@", ["-    a + 2", "+    a + 1"])])
        found = self.run_on(body, {"core/src/x.rs": NEW})
        self.assertEqual((found.returncode, found.stdout),
                         (1, "core/src/x.rs:7: // a plain comment\ncore/src/x.rs:8: a + 1\n"))
        broken = self.run_on("diff --git a/x b/x\n+++ b/x\n@@ nonsense @@\n", {})
        self.assertEqual(broken.returncode, 2)
        self.assertIn("cannot read the diff", broken.stderr)
        coloured = self.run_on("\x1b[1mdiff --git a/x b/x\x1b[m\n\x1b[32m+fn g() {}\x1b[m\n", {})
        self.assertEqual(coloured.returncode, 2)
        self.assertIn("no file header", coloured.stderr)
        missing = self.run_on(docs, {})
        self.assertEqual(missing.returncode, 2)
        self.assertIn("cannot read the diff", missing.stderr)


if __name__ == "__main__":
    unittest.main()
