#!/usr/bin/env python3
"""Runs the workspace's test binaries (release profile) in two lanes side by side.

`cargo test` runs one test binary after another. Most binaries keep both cores busy, but the
simulator's integration tests end in a long tail on one thread (each twin's shrink runs on a thread
of its own, and the slowest one is left alone for minutes): running the other binaries beside them
fills that idle core. Every test still runs, with the options cargo would give it.

  1. `cargo test --workspace --release --no-run --message-format=json` builds every test binary
     and names it;
  2. lane 1 runs the binaries of the longest suite (LONG, by default felix-sim's `it`); lane 2 runs
     every other binary in cargo's order. A binary runs as cargo runs it: in its package's
     directory, with CARGO_MANIFEST_DIR and CARGO_PKG_NAME set;
  3. each binary's output is printed whole when it ends (never interleaved), then a summary;
  4. the doc tests run last (`cargo test --workspace --release --doc`).

Exit 0 when every binary and the doc tests passed, 1 when one failed (each failure is named), 2 on
bad arguments.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

LONG = ("felix-sim", "it")


def build(cargo_args):
    """Builds every test binary; returns (package, target name, executable, manifest dir) each."""
    command = ["cargo", "test", "--workspace", "--release", "--no-run",
               "--message-format=json-render-diagnostics", *cargo_args]
    process = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if process.returncode != 0:
        print(f"test_lanes: the build failed: {' '.join(command)}", file=sys.stderr)
        sys.exit(1)
    binaries = []
    for line in process.stdout.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        if not message.get("profile", {}).get("test"):
            continue
        package = message["package_id"]
        name = message["target"]["name"]
        manifest = os.path.dirname(message["manifest_path"])
        crate = os.path.basename(manifest)
        package_name = package_name_of(manifest) or crate
        binaries.append((package_name, name, message["executable"], manifest))
    return binaries


def package_name_of(manifest_dir):
    """The `name` of the [package] table of manifest_dir/Cargo.toml."""
    try:
        with open(os.path.join(manifest_dir, "Cargo.toml"), encoding="utf-8") as manifest:
            in_package = False
            for line in manifest:
                line = line.strip()
                if line.startswith("["):
                    in_package = line == "[package]"
                elif in_package and line.startswith("name") and "=" in line:
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        return None
    return None


def run_binary(binary, results, lock):
    package, name, executable, manifest = binary
    env = dict(os.environ, CARGO_MANIFEST_DIR=manifest, CARGO_PKG_NAME=package)
    started = time.monotonic()
    process = subprocess.run([executable], cwd=manifest, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - started
    with lock:
        print(f"\n---- {package} {name} ({os.path.basename(executable)}): "
              f"exit {process.returncode}, {seconds:.1f} s")
        sys.stdout.write(process.stdout)
        sys.stdout.flush()
        results.append((package, name, process.returncode, seconds))


def lane(binaries, results, lock):
    for binary in binaries:
        run_binary(binary, results, lock)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--long", default=f"{LONG[0]}:{LONG[1]}",
                        help="PACKAGE:TARGET of the suite that gets a lane of its own")
    args = parser.parse_args()
    if ":" not in args.long:
        parser.error("--long needs PACKAGE:TARGET, e.g. felix-sim:it")
    long_package, long_target = args.long.split(":", 1)

    binaries = build([])
    if not binaries:
        print("test_lanes: cargo built no test binary", file=sys.stderr)
        return 1
    first = [b for b in binaries if (b[0], b[1]) == (long_package, long_target)]
    rest = [b for b in binaries if (b[0], b[1]) != (long_package, long_target)]
    if not first:
        print(f"test_lanes: no test binary {long_package}:{long_target}", file=sys.stderr)
        return 2
    results, lock = [], threading.Lock()
    threads = [threading.Thread(target=lane, args=(group, results, lock))
               for group in (first, rest)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    print("\n---- doc tests")
    sys.stdout.flush()
    doc = subprocess.run(["cargo", "test", "--workspace", "--release", "--doc"])
    failed = [f"{package} {name} (exit {code})" for package, name, code, _ in results if code != 0]
    if doc.returncode != 0:
        failed.append(f"doc tests (exit {doc.returncode})")
    ran = len(results)
    print(f"\ntest_lanes: {ran} test binaries and the doc tests, "
          f"{'every one passed' if not failed else str(len(failed)) + ' FAILED'}")
    for failure in failed:
        print(f"FAILED: {failure}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
