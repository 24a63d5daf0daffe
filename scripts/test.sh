#!/usr/bin/env bash
# The test command named in README.md. On a fresh machine it builds everything it needs.
#   1. every unit, property, engine, scenario and CLI test (cargo test, release profile; built
#      first, then felix-node's tests, which run real nodes on real time, beside the others);
#   2. every felix command of README.md as printed, held to the claim beside it
#      (scripts/readme_test.py): the scripted scenarios, a seed sweep with every rule on that
#      must reach every cataloged behaviour (1,000 seeds), every twin in the model, the
#      simulator and trace validation, a local cluster, a 60 s nemesis on real processes (run
#      beside steps 3 and 4: its minute is mostly real-time waiting);
#   3. 200 seeds with trace validation (every step held to a model's actions: FelixHeadTrim for
#      felixd runs, ParosTrimJump for paros runs);
#   4. every simulator twin must fail with its invariant with the default swarm (no per-twin
#      bias) within 1,000 runs, plain and guided, median at most 50;
#   4b. the model's paths on the real core: every twin's counterexample and each configuration's
#      transition cover (felix twins --conform and the Crash and ParosTrimJump covers in step 1's
#      cli tests, felix conform on the other configurations);
#   5. the TLA+ configurations through TLC, when TLA2TOOLS_JAR points at a tla2tools.jar (started
#      first, in the background, beside steps 1-4; its output is printed at the end).
#      Without it the TLA+ checks did NOT run, and this script says so loudly (exit 3 of
#      scripts/check_tla.sh); every other failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# mimalloc (the allocator of `felix` and of the simulator's, validate's and the model's tests)
# keeps the memory a run frees for the next run instead of handing it back to the kernel a
# second later: the next run's history and trace would otherwise fault every page in again. It
# changes no run, only how the memory is got (docs/dev/ci.md); mimalloc reads it from the
# environment only (setting it in the program takes an `unsafe` call, which the workspace forbids).
export MIMALLOC_PURGE_DELAY="${MIMALLOC_PURGE_DELAY:--1}"

step() { printf '\n==== [%d s] %s\n' "$SECONDS" "$*"; }

# Background jobs: each in its own process group (setsid), so that stopping it stops what it
# started (TLC's java, the README's cluster and nemesis); its output kept in a file and printed
# when it is awaited. A job still running when the script exits (a failure anywhere) is stopped.
declare -A job_pid=() job_log=()
stop_jobs() {
    local name
    for name in "${!job_pid[@]}"; do
        kill -TERM -- "-${job_pid[$name]}" 2>/dev/null || true
        rm -f "${job_log[$name]}"
    done
}
trap stop_jobs EXIT
# start_job NAME COMMAND...: runs COMMAND in the background.
start_job() {
    local name="$1"
    shift
    job_log[$name]="$(mktemp -t "felix-$name.XXXXXX")"
    setsid "$@" >"${job_log[$name]}" 2>&1 &
    job_pid[$name]=$!
}
# await_job NAME: waits for the job, prints its output, and returns its exit status.
await_job() {
    local name="$1" status=0
    wait "${job_pid[$name]}" || status=$?
    cat "${job_log[$name]}"
    rm -f "${job_log[$name]}"
    unset "job_pid[$name]" "job_log[$name]"
    return "$status"
}

# TLC (step 5) needs nothing that cargo builds: it starts now, in the background, and works beside
# the build and the tests (much of a release build runs on one core: the crates built as one
# codegen unit, the links). Its output is kept in a file and printed at its step below; a failure
# anywhere before then stops it.
start_job tla bash scripts/check_tla.sh

step "cargo test --workspace --release --no-run (build every test)"
artifacts="$(mktemp -t felix-test-artifacts.XXXXXX)"
cargo test --workspace --release --no-run --message-format=json-render-diagnostics >"$artifacts"
# felix-node's test executable (tests/it: the crate builds no unit-test harness, its Cargo.toml),
# read off cargo's report of that build.
mapfile -t node_tests < <(python3 - "$artifacts" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    message = json.loads(line)
    if (message.get("reason") == "compiler-artifact" and message.get("executable")
            and message["profile"]["test"]
            and message["manifest_path"].endswith("/node/Cargo.toml")):
        print(message["executable"])
PY
)
rm -f "$artifacts"
if (( ${#node_tests[@]} != 1 )); then
    echo "test.sh: found ${#node_tests[@]} of felix-node's 1 test executable in cargo's report" >&2
    exit 1
fi

step "felix-node's tests (in the background: real nodes, mostly waiting on real time)"
# felix-node's tests start real processes and wait on real time (a 15 s nemesis, restarts,
# elections), leaving a core idle for most of their half minute: they run beside the other
# crates' tests, which keep both cores busy. They run as cargo runs them (from the crate's
# directory), but straight from the build above: a `cargo test -p felix-node` would resolve the
# dependencies' features for that crate alone and build a dozen crates again (felix-node has no
# doc tests: its Cargo.toml). Their output is printed, and their verdict taken, after the other
# tests.
start_job node-tests bash -c 'cd node && echo "     Running $1" && exec "$1"' \
    node-tests "${node_tests[0]}"

step "cargo test --workspace --release --exclude felix-node"
cargo test --workspace --release --exclude felix-node

step "felix-node's tests (started before the other tests; waiting for them, then their output)"
node=0
await_job node-tests || node=$?
if [ "$node" != 0 ]; then
    echo "felix-node's tests FAILED (exit $node)"
    exit "$node"
fi

step "scripts/test_mutants_equivalent.py and test_mutants_doc_only.py (the mutation step's judges)"
python3 scripts/test_mutants_equivalent.py
python3 scripts/test_mutants_doc_only.py

step "scripts/bugbench.sh --check (every planted bug of the benchmark still applies to the core)"
# The benchmark itself (docs/dev/bugbench.md) takes about half an hour and is run by hand; CI only
# keeps its patches alive: a core change that breaks one must refresh it.
bash scripts/bugbench.sh --check >/dev/null

step "build the felix binary"
cargo build --release -p felix-cli
felix=target/release/felix

step "scripts/readme_test.py: every felix command of README.md as printed, held to its claim (in the background)"
# The README's examples are the first thing a user runs: each must keep the claim written beside
# it (exit code, the invariant a failure names, the files it writes). They include the main job
# `felix sweep --require-coverage` (the default 1,000 seeds must hold and reach every cataloged
# behaviour that the rules in force allow: audits/src/coverage.rs, CATALOG), `felix scenario`,
# `felix twins` (model, simulator and validation layers, the simulator's swarm biased per twin:
# the fast canary), a local cluster, and a 60 s `felix nemesis` on real processes.
# Most of its minute is the nemesis waiting on real time, so it runs beside the steps below, which
# keep the cores busy; its output is printed, and its verdict taken, after them.
start_job readme python3 scripts/readme_test.py --felix "$felix"

step "felix sweep --seeds ${FELIX_VALIDATE_SEEDS:-0..200} --validate (trace validation)"
"$felix" sweep --seeds "${FELIX_VALIDATE_SEEDS:-0..200}" --validate

step "felix conform on eight configurations of both specs (the model's paths on the real core; felix twins --conform and the Crash and ParosTrimJump covers ran in step 1)"
# Every model twin's shortest counterexample the core can follow, run on the core with the twin's
# switch, must break the same invariant (or be a named gap), and with every rule on it must hold;
# each configuration's transition cover (every action kind x state class edge of the steps the
# core can take) must run on the core with no divergence.
# Three of these ran in step 1 with this same binary, and are not run twice: `felix twins
# --conform --json` (cli/tests/it/conform_cli.rs, twins_conform_table: exit 0, and more: 13 twins
# caught, no gap), `felix conform Crash --json` (twice, the same report both times) and `felix
# conform ParosTrimJump --json` (exit 0, both covers whole). --json changes only the printing.
for config in Main Steady Promotions Failover Liveness Combined ParosTrimJumpReplica ParosTrimJumpCrashes; do
    "$felix" conform "$config"
done

step "felix twins --sim --unbiased --median-max 50 (the default swarm, no per-twin bias: plain seeds and a guided campaign)"
# The gate that measures the harness: every twin must be caught with its named invariant by the
# default swarm within 1,000 runs, by plain seeds and by the guided campaign each on its own, each
# catching run's control run clean, and each search's median runs to detect at most 50. A miss fails the run. Both searches are deterministic, so a miss is
# a change to the swarm, the campaign or the core, never bad luck.
"$felix" twins --sim --unbiased --median-max 50

step "scripts/readme_test.py (started before the sweeps above; waiting for it, then its output)"
readme=0
await_job readme || readme=$?
if [ "$readme" != 0 ]; then
    echo "README test FAILED (exit $readme)"
    exit "$readme"
fi

step "scripts/check_tla.sh (started before the build; waiting for it, then its output)"
tla=0
await_job tla || tla=$?
case "$tla" in
    0) echo "TLA+ checks: every configuration as expected." ;;
    3)
        echo "##################################################################"
        echo "## WARNING: the TLA+ checks DID NOT RUN (no TLC: set TLA2TOOLS_JAR)."
        echo "## The Stateright model and the simulator twins above did run."
        echo "##################################################################"
        ;;
    *) echo "TLA+ checks FAILED (exit $tla)"; exit "$tla" ;;
esac

step "all tests passed"
