#!/usr/bin/env python3
"""One layer of the planted-bug benchmark (scripts/bugbench.sh, docs/dev/bugbench.md).

Runs one `felix sweep` layer against a felix built with one planted bug and prints one line,
tab-separated: `caught <first> <invariants>`, `none - -`, or `error <exit code> <last stderr line>`.

    layer.py FELIX LAYER N JOBS TIMEOUT LOG

LAYER is `sweep` (`--seeds 0..N --fail-fast`), `guided` (`--guided --seeds 0..N`: N runs; the
campaign has no --fail-fast, so it is stopped at its first failing run, which it prints in run
order whatever --jobs says) or `validate` (`--seeds 0..N --validate --fail-fast`). A felix
without --fail-fast (an older core) is stopped at its first failing seed the same way. FIRST is
`seed S` (sweep, validate) or `run R (seed S)` (guided). INVARIANTS is the first failing
run's violation, then (after `+`) any other invariant the summary counts as broken.
Every line felix prints goes to LOG.
"""

import json
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    felix, layer, seeds, jobs, timeout, log_path = sys.argv[1:]
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
        process.wait()
    if first is not None:
        invariants = broken[0] + "".join(f" +{name}" for name in broken[1:])
        print(f"caught\t{first}\t{invariants}")
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


if __name__ == "__main__":
    sys.exit(main())
