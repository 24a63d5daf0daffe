#!/usr/bin/env python3
"""The per-file table of a scripts/mutants.sh run (printed in its summary, written to table.md).

Usage: mutants_table.py OUT_DIR
  OUT_DIR  a scripts/mutants.sh --out directory: mutants.out/{caught,timeout,missed,unviable}.txt,
           sweep-killed.txt (stage 2's kills) and excused.txt (survivors on the equivalent list)
Columns: viable mutants; killed by the core's tests (timeouts count as killed); killed by the
tests plus scenarios and the sweep; survivors on mutants-equivalent.txt; survivors not on it;
killed by tests + sweep as a share of viable.
"""

import os
import sys


def names(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [line.split("  #")[0].strip() for line in handle if line.strip()]


def file_of(name):
    return name.split(":", 1)[0]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out = sys.argv[1]
    mo = os.path.join(out, "mutants.out")
    rows = {}

    def add(column, listed):
        for name in listed:
            rows.setdefault(file_of(name), {}).setdefault(column, 0)
            rows[file_of(name)][column] += 1

    add("tests", names(f"{mo}/caught.txt") + names(f"{mo}/timeout.txt"))
    add("missed", names(f"{mo}/missed.txt"))
    add("sweep", names(f"{out}/sweep-killed.txt"))
    add("unviable", names(f"{mo}/unviable.txt"))
    excused = set(names(f"{out}/excused.txt"))
    survivors = names(f"{out}/survivors.txt")
    add("listed", [name for name in survivors if name in excused])
    add("unlisted", [name for name in survivors if name not in excused])
    lines = [
        "| file | viable | killed by tests | + scenarios, sweep | listed equivalent | not listed | killed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    total = {}
    for file in sorted(rows):
        row = rows[file]
        viable = row.get("tests", 0) + row.get("missed", 0)
        if viable == 0:
            continue
        killed = row.get("tests", 0) + row.get("sweep", 0)
        for key, value in (("viable", viable), ("killed", killed)):
            total[key] = total.get(key, 0) + value
        for key in ("tests", "listed", "unlisted"):
            total[key] = total.get(key, 0) + row.get(key, 0)
        lines.append(
            f"| {file} | {viable} | {row.get('tests', 0)} | {killed} | {row.get('listed', 0)} "
            f"| {row.get('unlisted', 0)} | {100 * killed / viable:.1f}% |"
        )
    if total.get("viable"):
        lines.append(
            f"| **all** | {total['viable']} | {total['tests']} | {total['killed']} | {total['listed']} "
            f"| {total['unlisted']} | {100 * total['killed'] / total['viable']:.1f}% |"
        )
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.md"), "w", encoding="utf-8") as handle:
        handle.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
