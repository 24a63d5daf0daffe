#!/usr/bin/env python3
"""Whether a diff of core/src and store/src can select a mutant: scripts/mutants.sh --in-diff asks
it before installing cargo-mutants.

cargo-mutants (`--in-diff`) selects a mutant when one of the diff's affected lines lies in the code
the mutant replaces: a function's body, an operator, a match arm. The affected lines of a file are
the lines the diff adds and, for each run of removed lines, the line before it and the line after
it (cargo-mutants' own reading of a diff). A doc comment (`///` on an item, `//!` on a module)
never lies in such code, unless it documents an item declared inside a function, which the core
and the store do not do (`--spans` below checks it on every listing scripts/mutants.sh makes).
Nor does a blank line whose next line that is not blank is a doc comment (a blank line before an
item's or a module's doc, which a change to the doc's first line marks). So when every affected
line is one of these two, no mutant can be selected, and the mutation step has nothing to run.

Usage: mutants_doc_only.py DIFF (paths in it relative to the working directory, whose files are
the diff's new side). Prints each affected line that is neither (`path:line: text`, at most 20)
and exits 1 when there is one, 0 when there is none; 2 on a diff it cannot read.
       mutants_doc_only.py --spans MUTANTS_JSON (a cargo-mutants listing): checks the premise
above on every mutant listed. Prints each doc comment, or blank line before one, that lies in a
mutant's span, and exits 1 when there is one, 0 when there is none; 2 on a file it cannot read.
"""

import json

import re
import sys

DOC = re.compile(r"\s*//[/!]")


def affected_lines(diff):
    """The affected lines of each file the diff changes, as {path: set of line numbers}; a file
    the diff deletes is under the path None."""
    affected, path, line, removed, header = {}, None, 0, False, False
    for text in diff.splitlines():
        if text.startswith("diff --git "):
            header = True
        elif header and text.startswith("+++ "):
            path = text[4:]
            path = None if path == "/dev/null" else path[2:] if path.startswith("b/") else path
            affected.setdefault(path, set())
        elif text.startswith("@@ "):
            found = re.match(r"@@ -\S+ \+(\d+)", text)
            if found is None:
                raise ValueError(f"a hunk header without a new range: {text!r}")
            line, removed, header = int(found.group(1)), False, False
        elif header or text.startswith("\\"):
            continue
        elif text[:1] in ("+", " ", ""):
            if removed or text[:1] == "+":
                affected[path].add(line)
            line, removed = line + 1, False
        elif text[:1] == "-":
            removed = True
            if line > 1:
                affected[path].add(line - 1)
    if diff.strip() and not affected:
        raise ValueError("no file header (`diff --git` and `+++`) in a diff that is not empty")
    return affected


def outside_code(source, number):
    """Whether line `number` (from 1) of `source` (a file's lines) is a doc comment, or a blank
    line whose next line that is not blank is one."""
    for text in source[number - 1:]:
        if text.strip():
            return DOC.match(text) is not None
    return False


def code_lines(diff, read):
    """The affected lines that are neither doc comments nor blank lines before one, as (path,
    line, text); `read(path)` gives a file's new text. A file the diff deletes counts as one."""
    found = []
    for path, lines in sorted(affected_lines(diff).items(), key=lambda item: str(item[0])):
        if path is None:
            found.append(("/dev/null", 0, "a deleted file"))
            continue
        source = read(path).split("\n")
        for number in sorted(lines):
            if not outside_code(source, number):
                found.append((path, number, source[number - 1] if number <= len(source) else ""))
    return found


def in_spans(mutants, read):
    """The doc comments and blank lines before one that lie in a listed mutant's span, as (path,
    line, text, the mutant's name); `read(path)` gives a file's text."""
    found, sources = set(), {}
    for mutant in mutants:
        path = mutant["file"]
        if path not in sources:
            sources[path] = read(path).split("\n")
        source = sources[path]
        for number in range(mutant["span"]["start"]["line"], mutant["span"]["end"]["line"] + 1):
            if outside_code(source, number):
                found.add((path, number, source[number - 1], mutant["name"]))
    return sorted(found)


def read_file(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def spans(listing):
    try:
        found = in_spans(json.loads(read_file(listing)), read_file)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        print(f"mutants_doc_only.py: cannot read the listing {listing}: {error}", file=sys.stderr)
        return 2
    for path, number, text, name in found[:20]:
        print(f"{path}:{number}: {text.strip()} (in the span of {name})")
    return 1 if found else 0


def main(words):
    if len(words) == 2 and words[0] == "--spans":
        return spans(words[1])
    if len(words) != 1 or words[0].startswith("-"):
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    try:
        found = code_lines(read_file(words[0]), read_file)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"mutants_doc_only.py: cannot read the diff {words[0]}: {error}", file=sys.stderr)
        return 2
    for path, number, text in found[:20]:
        print(f"{path}:{number}: {text.strip()}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
