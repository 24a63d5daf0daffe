#!/usr/bin/env python3
"""Which surviving mutants mutants-equivalent.txt excuses (scripts/mutants.sh calls this).

A line of the list is

    FILE: DESCRIPTION  @ `SOURCE LINE`  # why

FILE: DESCRIPTION is the mutant's name as cargo-mutants prints it without its line and column (so
the list survives edits above it); SOURCE LINE is the text of the line the mutant changes (trimmed,
runs of spaces as one), so a line excuses that one mutant and not another mutant of the same name
in the same function, and goes stale when the code it talks about changes. `#` lines are comments.

Usage: mutants_equivalent.py MUTANTS_JSON LIST NAMES EXCUSED UNEXPLAINED SUGGESTED [UNUSED]
  MUTANTS_JSON  cargo-mutants' mutants.json (each mutant's name, span and diff)
  NAMES         the survivors, one full name per line
  EXCUSED       written: the survivors the list excuses
  UNEXPLAINED   written: the others
  SUGGESTED     written: for each of the others, the list line that would excuse it (why to fill in)
  UNUSED        written if given: list lines that excuse none of MUTANTS_JSON's mutants
Exit 0, or 2 with a message naming the line when the list is malformed.
"""

import json
import re
import sys

ENTRY = re.compile(r"^(?P<key>\S+: .*?)\s+@ `(?P<text>[^`]*)`\s+#\s*(?P<why>\S.*)$")


def norm(text):
    return " ".join(text.split())


def key_of(name):
    """The name without its line and column."""
    return re.sub(r"^([^:]+):[0-9]+:[0-9]+: ", r"\1: ", name)


def mutated_line(mutant):
    """The original text of the line the mutant's span starts on, read from its diff."""
    want = mutant["span"]["start"]["line"]
    old = None
    for line in mutant["diff"].splitlines():
        hunk = re.match(r"^@@ -(\d+)", line)
        if hunk:
            old = int(hunk.group(1))
            continue
        if old is None or line.startswith("\\"):
            continue  # the file header before the first hunk; "\ No newline at end of file"
        if line.startswith("+"):
            continue
        if old == want:
            return norm(line[1:])
        old += 1
    return ""


def load_list(path):
    entries = []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except FileNotFoundError:
        return entries
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = ENTRY.match(line)
        if not match:
            print(
                f"{path}:{number}: not `FILE: DESCRIPTION  @ `SOURCE LINE`  # why`:\n  {line}",
                file=sys.stderr,
            )
            sys.exit(2)
        entries.append((number, match.group("key"), norm(match.group("text")), line))
    return entries


def main():
    if len(sys.argv) not in (7, 8):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    mutants_json, list_path, names_path, excused_path, unexplained_path = sys.argv[1:6]
    suggested_path = sys.argv[6]
    with open(mutants_json, encoding="utf-8") as handle:
        mutants = {mutant["name"]: mutant for mutant in json.load(handle)}
    entries = load_list(list_path)
    wanted = {(key, text) for _, key, text, _ in entries}
    names = [name for name in open(names_path, encoding="utf-8").read().splitlines() if name]
    excused, unexplained, suggested = [], [], []
    for name in names:
        mutant = mutants.get(name)
        text = mutated_line(mutant) if mutant else ""
        if (key_of(name), text) in wanted:
            excused.append(name)
        else:
            unexplained.append(name)
            suggested.append(f"{key_of(name)}  @ `{text}`  # WHY")
    with open(excused_path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{name}\n" for name in excused)
    with open(unexplained_path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{name}\n" for name in unexplained)
    with open(suggested_path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{line}\n" for line in suggested)
    if len(sys.argv) == 8:
        present = {(key_of(name), mutated_line(mutant)) for name, mutant in mutants.items()}
        with open(sys.argv[7], "w", encoding="utf-8") as handle:
            for number, key, text, line in entries:
                if (key, text) not in present:
                    handle.write(f"{list_path}:{number}: {line}\n")


if __name__ == "__main__":
    main()
