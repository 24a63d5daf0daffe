#!/usr/bin/env bash
# The planted-bug benchmark (docs/dev/bugbench.md): the standing measure of the harness's power.
#
# For each patch of bugbench/patches/ (one realistic protocol bug each), in one scratch git
# worktree under target/bugbench/ (the working tree is never touched): `git apply` the patch,
# build felix with the `mutant-sweep` profile (incremental: one worktree, `git checkout -- .`
# between bugs), then run the layers in order until one catches the bug:
#   sweep     felix sweep --seeds 0..N --fail-fast (and, as the main job's --require-coverage,
#             every cataloged behaviour the unpatched sweep reaches must be reached)
#   guided    felix sweep --guided --seeds 0..N          (N runs; stopped at its first failing run)
#   validate  felix sweep --seeds 0..N --validate --fail-fast
# and print one table row per bug: the bug, the layer that caught it (sweep / guided / validate /
# none), the first failing seed or run, the invariant(s), and the seconds it took.
# A patch that no longer applies, or a bug that does not build, is a row of its own, said loudly.
#
# Usage: scripts/bugbench.sh [--bugs GLOB] [--seeds N] [--base COMMIT] [--jobs J] [--all-layers]
#                            [--timeout SECONDS] [--out FILE]
#        scripts/bugbench.sh --check
#   --bugs GLOB      only the patches whose file name matches GLOB (e.g. '0[1-5]-*'; default: all)
#   --seeds N        seeds of the sweep and of --validate, runs of the guided campaign (default 1000)
#   --base COMMIT    apply the patches to COMMIT instead of HEAD (the patches are always this tree's)
#   --jobs J         worker threads of each felix sweep (default 1: the machine is shared)
#   --all-layers     run every layer for every bug, not only until the first one catches it
#   --timeout S      a layer that runs longer is stopped and reported as an error (default 3600)
#   --out FILE       also write the table (markdown) to FILE (default target/bugbench/table-<commit>.md)
#   --check          only check that every patch still applies to the working tree (git apply
#                    --check); exit 1 naming the ones that do not (cheap enough for CI)
# Exit 0 when the benchmark ran (the table is the result; bugs caught or not), 1 when --check finds
# a patch that does not apply or when the unpatched base does not build or run, 2 on bad arguments.
# One run at a time: every run shares the scratch worktree and its target dir.
# The body is one block, read whole before it runs: editing this file mid-run is safe.
{
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

bugs_glob="*"
seeds=1000
base=""
jobs=1
all_layers=0
timeout=3600
out=""
check=0

usage() {
    sed -n '/^# Usage:/,/^# The body/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --bugs)
            [[ $# -ge 2 && -n "$2" ]] || { echo "--bugs needs a glob, e.g. '0[1-5]-*'" >&2; exit 2; }
            bugs_glob="$2"; shift 2 ;;
        --seeds)
            [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "--seeds needs a positive number (got '${2:-}')" >&2; exit 2; }
            seeds="$2"; shift 2 ;;
        --base)
            [[ $# -ge 2 && -n "$2" ]] || { echo "--base needs a commit" >&2; exit 2; }
            base="$2"; shift 2 ;;
        --jobs)
            [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "--jobs needs a positive number (got '${2:-}')" >&2; exit 2; }
            jobs="$2"; shift 2 ;;
        --all-layers) all_layers=1; shift ;;
        --timeout)
            [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "--timeout needs seconds (got '${2:-}')" >&2; exit 2; }
            timeout="$2"; shift 2 ;;
        --out)
            [[ $# -ge 2 && -n "$2" ]] || { echo "--out needs a file" >&2; exit 2; }
            out="$2"; shift 2 ;;
        --check) check=1; shift ;;
        -h|--help) usage ;;
        *) echo "unknown argument: $1" >&2; usage ;;
    esac
done

patches=()
for patch in "$root"/bugbench/patches/*.patch; do
    [[ -f "$patch" ]] || continue
    name="$(basename "$patch" .patch)"
    # shellcheck disable=SC2053 # the glob is meant to match
    [[ "$name" == $bugs_glob || "$name.patch" == $bugs_glob ]] && patches+=("$patch")
done
if [[ ${#patches[@]} -eq 0 ]]; then
    echo "no patch of bugbench/patches/ matches '$bugs_glob'" >&2
    exit 2
fi

# --- --check: every patch applies to the working tree -------------------------------------------
if [[ $check -eq 1 ]]; then
    failed=0
    for patch in "${patches[@]}"; do
        if git apply --check "$patch" 2>/dev/null; then
            echo "applies: $(basename "$patch")"
        else
            echo "DOES NOT APPLY: $(basename "$patch")" >&2
            git apply --check "$patch" 2>&1 | sed 's/^/    /' >&2 || true
            failed=$((failed + 1))
        fi
    done
    if [[ $failed -gt 0 ]]; then
        echo "$failed of ${#patches[@]} patch(es) no longer apply: refresh them (docs/dev/bugbench.md)" >&2
        exit 1
    fi
    echo "all ${#patches[@]} patch(es) apply"
    exit 0
fi

# --- the scratch worktree -------------------------------------------------------------------------
base="${base:-HEAD}"
if ! commit="$(git rev-parse --verify --quiet "$base^{commit}")"; then
    echo "--base: '$base' is not a commit of this repository" >&2
    exit 2
fi
short="$(git rev-parse --short "$commit")"
work="$root/target/bugbench"
tree="$work/tree"
target="$work/target"
logs="$work/logs/$short"
mkdir -p "$work" "$logs"
if [[ ! -e "$tree/.git" ]]; then
    git worktree prune
    git worktree add --detach "$tree" "$commit" >/dev/null
fi
(cd "$tree" && git checkout -q -- . && git clean -qfd && git checkout -q --detach "$commit")
felix="$target/mutant-sweep/felix"
out="${out:-$work/table-$short.md}"

build() {
    (cd "$tree" && CARGO_TARGET_DIR="$target" nice -n 19 cargo build --profile mutant-sweep -p felix-cli -q \
        -j "$jobs" > "$1" 2>&1)
}

# The unpatched base must build and pass the sweep's first seeds, or no row means anything.
started=$SECONDS
if ! build "$logs/base.build.log"; then
    tail -n 20 "$logs/base.build.log" >&2
    echo "felix does not build at $short without any patch (see $logs/base.build.log)" >&2
    exit 1
fi
echo "bugbench at $short: ${#patches[@]} bug(s), $seeds seeds/runs per layer, --jobs $jobs (base built in $((SECONDS - started)) s)"
# The unpatched sweep's hash (every seed's trace hash): a bug whose sweep finds nothing and
# prints the same hash never changed a run in those seeds (its code was never reached, or
# reached to no effect), which says more than `none`.
sweep_summary() {
    python3 -c 'import json, sys
for line in open(sys.argv[1]):
    try:
        record = json.loads(line)
    except ValueError:
        continue
    if "sweep_hash" in record:
        print(record["sweep_hash"], record["failed"])' "$1"
}
started=$SECONDS
(ulimit -v 10485760; cd "$tree" && nice -n 19 "$felix" sweep --seeds "0..$seeds" --jobs "$jobs" --json \
    > "$logs/base.sweep.log" 2>&1) || true
read -r base_hash base_failed <<< "$(sweep_summary "$logs/base.sweep.log")" || true
if [[ -z "${base_hash:-}" ]]; then
    echo "the unpatched sweep at $short printed no summary (see $logs/base.sweep.log)" >&2
    exit 1
fi
echo "unpatched sweep: hash $base_hash, $base_failed failing seed(s), $((SECONDS - started)) s"
if [[ "$base_failed" != 0 ]]; then
    echo "!!!! the unpatched sweep at $short already fails $base_failed seed(s): a sweep row may not be the bug's doing" >&2
fi

layers=(sweep guided validate)
joined() { local IFS=';'; echo "$*" | sed 's/;/; /g'; }
rows=()
caught_count=0
unusable=0
row() {
    rows+=("$1")
    printf '%s\n' "$1"
}
header="| bug | caught by | first failing | invariant(s) | sweep runs changed | build s | run s |"
rule="|---|---|---|---|---|---|---|"
printf '%s\n%s\n' "$header" "$rule"
for patch in "${patches[@]}"; do
    name="$(basename "$patch" .patch)"
    (cd "$tree" && git checkout -q -- . && git clean -qfd)
    if ! (cd "$tree" && git apply "$patch" 2> "$logs/$name.apply.log"); then
        echo "!!!! $name DOES NOT APPLY at $short (see $logs/$name.apply.log)" >&2
        row "| $name | **DOES NOT APPLY** | - | - | - | - | - |"
        unusable=$((unusable + 1))
        continue
    fi
    started=$SECONDS
    if ! build "$logs/$name.build.log"; then
        echo "!!!! $name DOES NOT BUILD at $short (see $logs/$name.build.log)" >&2
        row "| $name | **DOES NOT BUILD** | - | - | - | $((SECONDS - started)) | - |"
        unusable=$((unusable + 1))
        continue
    fi
    built=$((SECONDS - started))
    started=$SECONDS
    caught_by=()
    firsts=()
    invariants=()
    errors=()
    for layer in "${layers[@]}"; do
        # A memory cap (virtual, 10 GiB), as in scripts/mutants.sh: a bug can make a run grow
        # without bound.
        verdict="$(ulimit -v 10485760; cd "$tree" && nice -n 19 python3 "$root/bugbench/layer.py" \
            "$felix" "$layer" "$seeds" "$jobs" "$timeout" "$logs/$name.$layer.log" \
            "$logs/base.sweep.log")"
        IFS=$'\t' read -r outcome first invariant <<< "$verdict"
        case "$outcome" in
            caught)
                caught_by+=("$layer"); firsts+=("$first"); invariants+=("$invariant")
                [[ $all_layers -eq 1 ]] || break ;;
            none) ;;
            *)
                echo "!!!! $name: $layer ended in error: $first $invariant (see $logs/$name.$layer.log)" >&2
                errors+=("$layer error ($first)") ;;
        esac
    done
    ran=$((SECONDS - started))
    # Whether the bug changed any run of the sweep: yes when the sweep caught it, else its hash
    # against the unpatched one (only when the sweep ran every seed).
    changed="-"
    if [[ "${caught_by[0]:-}" == sweep ]]; then
        changed="yes"
    else
        read -r bug_hash _ <<< "$(sweep_summary "$logs/$name.sweep.log")" || true
        if [[ -n "${bug_hash:-}" ]]; then
            if [[ "$bug_hash" == "$base_hash" ]]; then changed="no"; else changed="yes"; fi
        fi
    fi
    if [[ ${#caught_by[@]} -gt 0 ]]; then
        caught_count=$((caught_count + 1))
        row "| $name | $(joined "${caught_by[@]}") | $(joined "${firsts[@]}") | $(joined "${invariants[@]}") | $changed | $built | $ran |"
    elif [[ ${#errors[@]} -gt 0 ]]; then
        row "| $name | **${errors[*]}** | - | - | $changed | $built | $ran |"
    else
        row "| $name | none | - | - | $changed | $built | $ran |"
    fi
done
(cd "$tree" && git checkout -q -- . && git clean -qfd)

total=${#patches[@]}
ran_count=$((total - unusable))
summary="caught: $caught_count of $ran_count bug(s) ($((caught_count * 100 / (ran_count > 0 ? ran_count : 1)))%) at $short, $seeds seeds/runs per layer"
if [[ $unusable -gt 0 ]]; then
    summary="$summary; $unusable of $total patch(es) DID NOT APPLY OR BUILD (rows in bold)"
fi
echo "$summary"
{
    echo "$summary ($(date -u +%Y-%m-%d), scripts/bugbench.sh --seeds $seeds --jobs $jobs$([[ "$base" != HEAD ]] && echo " --base $base")$([[ "$bugs_glob" != "*" ]] && echo " --bugs '$bugs_glob'")$([[ $all_layers -eq 1 ]] && echo " --all-layers"))"
    echo
    echo "$header"
    echo "$rule"
    printf '%s\n' "${rows[@]}"
} > "$out"
echo "table written to $out; logs in $logs"
exit 0
}
