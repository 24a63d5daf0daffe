#!/usr/bin/env python3
"""The README runs as printed: every `felix` command in its ```sh blocks, checked against the claim
written beside it.

Usage: python3 scripts/readme_test.py [--felix PATH] [--readme README.md] [--list]

Each line of a ```sh block that starts with `felix` is run, in order, as a user would run it from a
fresh directory (a temporary one holding a link to the repository's scenarios/, since `felix
scenario` reads scenarios/ of the directory it runs in), with the built `felix` first on PATH. The
comment after `#` is the claim, read by these rules and no other:
  - `exit N` names the exit code; a comment that starts with "the same" claims the exit code of
    the line before; a line with no `exit N` claims 0.
  - a command claimed to fail (exit 1) must name, in its output, every invariant-like word of its
    comment (CamelCase, such as StaleTrimRefused): a failing example fails for the reason it gives.
  - text in double quotes in the comment must appear in the command's output.
  - every file or directory a command is told to write (--trace, --html, --store-dir, --out) must
    exist afterwards and not be empty.
  - the one rewrite: an argument under /tmp/ (the cluster's directory) is moved into the temporary
    directory, so that two runs never share a cluster; the run says so.
A command that runs for a minute or more (`--time 60s`: the nemesis) is started first, in the
background: it works while the others run, and its claim is checked at the end.
Before anything runs, the rules are tried on made-up claims that they must refuse (a wrong exit
code, a missing invariant, missing quoted text, a file not written, "the same" after a failure):
a rule that stopped biting fails the run.

Exit 0 when every command kept its claim, 1 when one did not, 2 when the README holds no command
or a line cannot be read.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

OUTPUT_FLAGS = ("--trace", "--html", "--store-dir", "--out")
BACKGROUND = re.compile(r"--time\s+(\d+)s")
TIMEOUT_SECONDS = 900


class Example:
    def __init__(self, number, line, args, comment, code):
        self.number = number
        self.line = line
        self.args = args
        self.comment = comment
        self.code = code


def examples(readme):
    """Every `felix` line of the README's sh blocks, with its claimed exit code."""
    found = []
    inside = False
    previous_code = 0
    for number, raw in enumerate(readme.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("```"):
            inside = line == "```sh"
            continue
        if not inside or not line.startswith("felix"):
            continue
        command, _, comment = line.partition(" #")
        try:
            args = shlex.split(command)
        except ValueError as error:
            raise SystemExit(f"README line {number}: cannot read {line!r}: {error}")
        comment = comment.strip()
        claimed = re.search(r"\bexit (\d+)\b", comment)
        if claimed:
            code = int(claimed.group(1))
        elif comment.startswith("the same"):
            code = previous_code
        else:
            code = 0
        previous_code = code
        found.append(Example(number, line, args, comment, code))
    return found


def invariant_words(comment):
    return re.findall(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b", comment)


def quoted(comment):
    return re.findall(r'"([^"]+)"', comment)


def written_paths(args):
    return [args[i + 1] for i, arg in enumerate(args[:-1]) if arg in OUTPUT_FLAGS]


def rewrite(args, scratch):
    """Moves arguments under /tmp/ into the scratch directory; says which."""
    moved = []
    result = []
    for arg in args:
        if arg.startswith("/tmp/"):
            new = os.path.join(scratch, "tmp", arg[len("/tmp/"):])
            moved.append((arg, new))
            arg = new
        result.append(arg)
    return result, moved


def judge(example, code, output, cwd):
    """What the example's claim says that its run did not do (empty: it kept its claim)."""
    problems = []
    if code != example.code:
        problems.append(f"exit {code}, the README claims exit {example.code}")
    if example.code == 1:
        for word in invariant_words(example.comment):
            if word not in output:
                problems.append(f"the output does not name {word}")
    for text in quoted(example.comment):
        if text not in output:
            problems.append(f"the output does not contain {text!r}")
    for path in written_paths(example.args):
        full = os.path.join(cwd, path)
        empty = (
            not os.path.exists(full)
            or (os.path.isdir(full) and not os.listdir(full))
            or (os.path.isfile(full) and os.path.getsize(full) == 0)
        )
        if empty:
            problems.append(f"{path} was not written")
    return problems


def self_test():
    """The rules refuse what they must; a rule that stopped biting is an error of this script."""
    readme = "```sh\nfelix a --out f.txt   # exit 1: BrokenThing \"said\"\nfelix b   # the same\n```\n"
    first, second = examples(readme)
    assert (first.code, second.code) == (1, 1), "the same inherits the exit code"
    scratch = tempfile.mkdtemp(prefix="felix-readme-self.")
    try:
        assert judge(first, 0, "BrokenThing said", scratch), "a wrong exit code"
        assert judge(first, 1, "said", scratch), "a missing invariant"
        assert judge(first, 1, "BrokenThing", scratch), "missing quoted text"
        assert judge(first, 1, "BrokenThing said", scratch) == ["f.txt was not written"]
        with open(os.path.join(scratch, "f.txt"), "w") as file:
            file.write("x")
        assert judge(first, 1, "BrokenThing said", scratch) == []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--felix", default="target/release/felix")
    parser.add_argument("--readme", default="README.md")
    parser.add_argument("--list", action="store_true", help="print the commands and claims only")
    options = parser.parse_args()
    self_test()
    root = os.path.dirname(os.path.abspath(options.readme))
    with open(options.readme, encoding="utf-8") as file:
        found = examples(file.read())
    if not found:
        print(f"{options.readme}: no `felix` command in a ```sh block", file=sys.stderr)
        return 2
    if options.list:
        for example in found:
            print(f"line {example.number}: exit {example.code}: {' '.join(example.args)}")
        return 0
    felix = os.path.abspath(options.felix)
    if not os.access(felix, os.X_OK):
        print(f"--felix {felix}: not an executable (build it: cargo build --release -p felix-cli)", file=sys.stderr)
        return 2
    scratch = tempfile.mkdtemp(prefix="felix-readme.")
    os.symlink(os.path.join(root, "scenarios"), os.path.join(scratch, "scenarios"))
    env = dict(os.environ, PATH=os.path.dirname(felix) + os.pathsep + os.environ.get("PATH", ""))
    failures = 0
    background = []
    started = time.monotonic()

    def report(example, seconds, problems, output):
        nonlocal failures
        verdict = "ok  " if not problems else "FAIL"
        print(f"{verdict} [{seconds:6.1f} s] exit {example.code} claimed, line {example.number}: {example.line}", flush=True)
        if problems:
            failures += 1
            for problem in problems:
                print(f"       {problem}")
            tail = output.strip().splitlines()[-30:]
            print("       output (last 30 lines):")
            for line in tail:
                print(f"       | {line}")

    try:
        def argv_of(example):
            args, moved = rewrite(example.args, scratch)
            for old, new in moved:
                print(f"       (line {example.number}: {old} is {new} in this run)")
            return [felix] + args[1:]

        def long_run(example):
            minimum = BACKGROUND.search(example.line)
            return minimum is not None and int(minimum.group(1)) >= 60

        for example in filter(long_run, found):
            # Its output goes to a file: a pipe nobody reads would stop it once full.
            log = tempfile.TemporaryFile(mode="w+")
            process = subprocess.Popen(
                argv_of(example), cwd=scratch, env=env, stdout=log,
                stderr=subprocess.STDOUT, text=True, start_new_session=True,
            )
            background.append((example, process, time.monotonic(), log))
            print(f"     [ started ] line {example.number} in the background: {example.line}", flush=True)
        for example in found:
            if long_run(example):
                continue
            argv = argv_of(example)
            begin = time.monotonic()
            try:
                run = subprocess.run(
                    argv, cwd=scratch, env=env, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_SECONDS,
                )
                output, code = run.stdout, run.returncode
            except subprocess.TimeoutExpired as timeout:
                output, code = str(timeout.stdout or ""), -1
            report(example, time.monotonic() - begin, judge(example, code, output, scratch), output)
        for example, process, begin, log in background:
            try:
                code = process.wait(timeout=TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                code = -1
            log.seek(0)
            output = log.read()
            report(example, time.monotonic() - begin, judge(example, code, output, scratch), output)
    finally:
        for _, process, _, _ in background:
            if process.poll() is None:
                os.killpg(process.pid, 9)
        # A cluster an example started and a failure left up: stop it, whatever happened.
        cluster = os.path.join(scratch, "tmp")
        if os.path.isdir(cluster):
            for name in os.listdir(cluster):
                subprocess.run([felix, "cluster", "down", "--dir", os.path.join(cluster, name)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(scratch, ignore_errors=True)
    total = time.monotonic() - started
    print(f"README: {len(found)} commands, {len(found) - failures} kept their claim, {failures} did not ({total:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
