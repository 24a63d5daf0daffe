#!/usr/bin/env python3
"""One layer of the planted-bug benchmark (scripts/bugbench.sh, docs/dev/bugbench.md).

Runs one `felix sweep` layer against a felix built with one planted bug and prints one line,
tab-separated: `caught <first> <invariants>`, `none - -`, or `error <exit code> <last stderr line>`.

    layer.py FELIX LAYER N JOBS TIMEOUT LOG [BASE_LOG]

LAYER is `sweep` (`--seeds 0..N --fail-fast`), `guided` (`--guided --seeds 0..N`: N runs; the
campaign has no --fail-fast, so it is stopped at its first failing run, which it prints in run
order whatever --jobs says) or `validate` (`--seeds 0..N --validate --fail-fast`). A felix
without --fail-fast (an older core) is stopped at its first failing seed the same way. FIRST is
`seed S` (sweep, validate) or `run R (seed S)` (guided). INVARIANTS is the first failing
run's violation, then (after `+`) any other invariant the summary counts as broken.
Every line felix prints goes to LOG.

The sweep layer is the main job as CI runs it (`felix sweep --require-coverage`): a sweep that
finds no violation but leaves unreached a cataloged behaviour (its summary's `never_hit`) that the
unpatched sweep reached (BASE_LOG, that sweep's `--json` output) fails it, as
`caught <all N seeds> coverage(never hit: ...)`: the bug made a behaviour of the journal
unreachable, which no judge of a single run can see. The base's own `never_hit` is left out, so
a short `--seeds` does not count what the unpatched sweep does not reach either.
"""

import json
import subprocess
import sys


def main() -> int:
    if len(sys.argv) not in (7, 8):
        print(__doc__, file=sys.stderr)
        return 2
    felix, layer, seeds, jobs, timeout, log_path = sys.argv[1:7]
    base_log = sys.argv[7] if len(sys.argv) == 8 else None
    # No --coverage: older cores (--base) do not have it.
    base = [felix, "sweep", "--seeds", f"0..{int(seeds)}", "--jobs", jobs, "--json"]
    # Older cores (--base) have no --fail-fast: their sweep is stopped at its first failing seed
    # like the campaign (the output is in seed order whatever --jobs says).
    help_text = subprocess.run([felix, "sweep", "--help"], capture_output=True, text=True).stdout
    fail_fast = ["--fail-fast"] if "--fail-fast" in help_text else []
    extra = {
        "sweep": fail_fast,
        "guided": ["--guided"],
        "validate": ["--validate"] + fail_fast,
    }.get(layer)
    if extra is None:
        print(f"unknown layer {layer!r}", file=sys.stderr)
        return 2
    stop_at_first = layer == "guided" or not fail_fast
    # coreutils' timeout: a bug that makes a layer hang ends as `error timeout`.
    command = ["timeout", timeout] + base + extra
    first = None
    broken = []
    never_hit = None
    stopped = False
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
        for line in process.stdout:
            log.write(line)
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "violation" in record and first is None:
                if "run" in record:
                    first = f"run {record['run']} (seed {record['seed']})"
                else:
                    first = f"seed {record['seed']}"
                broken = [record["violation"]]
                if stop_at_first:
                    stopped = True
                    process.terminate()
                    break
            elif "broken" in record:
                for name in sorted(record["broken"]):
                    if name not in broken:
                        broken.append(name)
                never_hit = record.get("never_hit")
        process.wait()
    if first is not None:
        invariants = broken[0] + "".join(f" +{name}" for name in broken[1:])
        print(f"caught\t{first}\t{invariants}")
        return 0
    unreached = coverage_lost(never_hit, base_log) if layer == "sweep" else []
    if process.returncode == 0 and not stopped and unreached:
        print(f"caught\tall {int(seeds)} seeds\tcoverage(never hit: {', '.join(unreached)})")
        return 0
    if process.returncode == 124:
        print(f"error\ttimeout\tno verdict within {timeout} s")
        return 0
    if process.returncode == 0 and not stopped:
        print("none\t-\t-")
        return 0
    with open(log_path) as log:
        lines = [line.strip() for line in log if line.strip()]
    last = lines[-1] if lines else ""
    print(f"error\texit {process.returncode}\t{last[:200]}")
    return 0


def coverage_lost(never_hit, base_log):
    """The cataloged behaviours the sweep never reached and the unpatched sweep did."""
    if not never_hit or base_log is None:
        return []
    base_never = None
    with open(base_log) as log:
        for line in log:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "sweep_hash" in record:
                base_never = record.get("never_hit")
    if base_never is None:
        return []
    return [name for name in never_hit if name not in base_never]


if __name__ == "__main__":
    sys.exit(main())
