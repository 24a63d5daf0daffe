#!/usr/bin/env python3
"""Tests of mutants_equivalent.py, the equivalent list's judge (run by scripts/test.sh)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutants_equivalent as judge  # noqa: E402

# Two mutants of one name in one function, on different lines (as cargo-mutants writes them).
DIFF_A = """--- core/src/x.rs
+++ replace < with <= in f
@@ -10,3 +10,3 @@
 fn f(a: u64, b: u64) -> bool {
-    a  <  b
+    a <= b
 }
"""
DIFF_B = """--- core/src/x.rs
+++ replace < with <= in f
@@ -20,4 +20,4 @@
 // a comment
 fn g() {
-    let c = 1 < 2;
+    let c = 1 <= 2;
 }
"""


def write(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def read(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def mutant(line, column, diff):
    return {
        "name": f"core/src/x.rs:{line}:{column}: replace < with <= in f",
        "diff": diff,
        "span": {"start": {"line": line, "column": column}, "end": {"line": line, "column": column + 1}},
    }


class Judge(unittest.TestCase):
    def run_judge(self, listing, names):
        with tempfile.TemporaryDirectory() as tmp:
            paths = {name: os.path.join(tmp, name) for name in ["m.json", "list", "names", "exc", "unx", "sug", "unused"]}
            write(paths["m.json"], json.dumps([mutant(11, 8, DIFF_A), mutant(22, 15, DIFF_B)]))
            write(paths["list"], listing)
            write(paths["names"], "".join(f"{name}\n" for name in names))
            done = subprocess.run(
                [sys.executable, os.path.join(HERE, "mutants_equivalent.py")]
                + [paths[key] for key in ["m.json", "list", "names", "exc", "unx", "sug", "unused"]],
                capture_output=True,
                text=True,
            )
            return done, *(read(paths[key]) for key in ["exc", "unx", "sug", "unused"])

    def test_the_line_is_read_from_the_diff(self):
        self.assertEqual(judge.mutated_line(mutant(11, 8, DIFF_A)), "a < b")
        self.assertEqual(judge.mutated_line(mutant(22, 15, DIFF_B)), "let c = 1 < 2;")
        self.assertEqual(judge.key_of("core/src/x.rs:11:8: replace < with <= in f"), "core/src/x.rs: replace < with <= in f")

    def test_a_line_excuses_only_the_mutant_of_its_source_line(self):
        names = [mutant(11, 8, DIFF_A)["name"], mutant(22, 15, DIFF_B)["name"]]
        listing = "# a comment\n\ncore/src/x.rs: replace < with <= in f  @ `a < b`  # equal when a == b\n"
        done, excused, unexplained, suggested, unused = self.run_judge(listing, names)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(excused, [names[0]])
        self.assertEqual(unexplained, [names[1]])
        self.assertEqual(suggested, ["core/src/x.rs: replace < with <= in f  @ `let c = 1 < 2;`  # WHY"])
        self.assertEqual(unused, [])

    def test_a_stale_line_is_reported(self):
        listing = "core/src/x.rs: replace < with <= in f  @ `a <= b`  # the code changed since\n"
        done, excused, unexplained, _, unused = self.run_judge(listing, [mutant(11, 8, DIFF_A)["name"]])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(excused, [])
        self.assertEqual(len(unexplained), 1)
        self.assertEqual(len(unused), 1)
        self.assertIn("list:1:", unused[0])

    def test_a_line_without_source_text_or_why_is_refused(self):
        for bad in ["core/src/x.rs: replace < with <= in f  # why\n", "core/src/x.rs: replace < with <= in f  @ `a < b`\n"]:
            done, *_ = self.run_judge(bad, [])
            self.assertEqual(done.returncode, 2, bad)
            self.assertIn("list:1:", done.stderr)


if __name__ == "__main__":
    unittest.main()
