#!/usr/bin/env bash
# Mutation testing of felix-core and felix-store (docs/dev/mutation-testing.md).
#
# Two stages, so the expensive test runs only where it can matter:
#   1. cargo-mutants mutates felix-core and felix-store and runs their own tests (`cargo test -p
#      felix-core`, and `-p felix-store` for the storage files) against every mutant; a mutant the
#      tests fail on, or that times out, is killed.
#   2. Every mutant that survives stage 1 is applied to a scratch copy of the tree, the felix
#      binary is built from it, and `felix scenario scenarios/` plus `felix sweep --seeds 0..500`
#      run against it; a failure there kills it too.
# Survivors of both stages are compared with mutants-equivalent.txt (one line per mutant that no
# test can kill, with why). Exit 0: every survivor is on that list; 1: a survivor is not (printed);
# 2: bad usage.
#
# Usage: scripts/mutants.sh [--shard K/N] [--in-diff [BASE]] [--file PATH]... [--no-sweep]
#                           [--stage2-of DIR]... [--list] [--out DIR] [--timeout SECONDS] [--jobs N]
#   --shard K/N      run only shard K of N (cargo-mutants' own sharding; K counts from 0)
#   --in-diff [BASE] only the mutants on lines changed since BASE (default: the commit in
#                    .ci/landed, the last landed main; the diff is BASE..HEAD plus uncommitted
#                    changes under core/src and store/src)
#   --file PATH      only this source file of core/src or store/src (repeatable), e.g.
#                    core/src/broker/mod.rs
#   --no-sweep       stage 1 only
#   --re RE, --exclude-re RE  only / not the mutants whose names match RE (cargo-mutants')
#   --stage2-of DIR  skip stage 1: take the outcomes of an earlier run from DIR (a mutants.out
#                    directory; repeatable) and run stage 2 on its survivors
#   --list           list the mutants that would run, and stop
#   --out DIR        where the results go (default \$CARGO_TARGET_DIR/mutants, or target/mutants): DIR/mutants.out is
#                    cargo-mutants' output, DIR/survivors.txt the stage-2 survivors,
#                    DIR/sweep-killed.txt the mutants stage 2 killed
#   --timeout S      stage 1: a mutant whose build or tests take longer is killed (default 120)
#   --jobs N         stage 1: mutants built and tested at once, each in its own copy (default 1)
# Environment: FELIX_MUTANTS_SEEDS overrides the sweep's seeds (default 0..500).
#
# Everything runs under `nice -n 19`, one job unless --jobs says more: the machine is shared. cargo-mutants is
# installed (`cargo install cargo-mutants --locked`, the version below) when it is missing.
# The body is one block, read whole before it runs: editing this file mid-run is safe.
{
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

mutants_version="27.1.0"
shard=""
in_diff=0
base=""
files=()
sweep=1
list=0
resume=""
resume_dirs=()
extra=()
out=""
timeout=120
jobs=1
seeds="${FELIX_MUTANTS_SEEDS:-0..500}"

usage() {
    sed -n '/^# Usage:/,/^# Everything/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --shard)
            [[ $# -ge 2 && "$2" =~ ^[0-9]+/[0-9]+$ ]] || { echo "--shard needs K/N, e.g. 0/8" >&2; exit 2; }
            shard="$2"; shift 2 ;;
        --in-diff)
            in_diff=1
            if [[ $# -ge 2 && "$2" != --* ]]; then base="$2"; shift; fi
            shift ;;
        --file)
            [[ $# -ge 2 && -f "$2" && ( "$2" == core/src/* || "$2" == store/src/* ) ]] || { echo "--file needs a file under core/src/ or store/src/ (got '${2:-}')" >&2; exit 2; }
            files+=("$2"); shift 2 ;;
        --no-sweep) sweep=0; shift ;;
        --re|--exclude-re)
            [[ $# -ge 2 ]] || { echo "$1 needs a regular expression" >&2; exit 2; }
            extra+=("$1" "$2"); shift 2 ;;
        --stage2-of)
            [[ $# -ge 2 && -f "$2/mutants.json" ]] || { echo "--stage2-of needs a mutants.out directory" >&2; exit 2; }
            resume=1; resume_dirs+=("$(cd "$2" && pwd)"); shift 2 ;;
        --list) list=1; shift ;;
        --out)
            [[ $# -ge 2 ]] || { echo "--out needs a directory" >&2; exit 2; }
            out="$2"; shift 2 ;;
        --timeout)
            [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || { echo "--timeout needs seconds" >&2; exit 2; }
            timeout="$2"; shift 2 ;;
        --jobs)
            [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "--jobs needs a positive number" >&2; exit 2; }
            jobs="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "unknown argument: $1" >&2; usage ;;
    esac
done

step() { printf '\n==== %s\n' "$*"; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
# The mutants' builds carry no debuginfo: the test profile's full debuginfo made linking the
# core's test binary most of each mutant's build (a panic's message and line still print).
export CARGO_PROFILE_TEST_DEBUG=0 CARGO_PROFILE_DEV_DEBUG=0
out="${out:-$CARGO_TARGET_DIR/mutants}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# cargo-mutants builds each mutant in a copy of the tree (ignored files, such as target/, are not
# copied). Cargo names a workspace crate's artifacts by its path *within* the workspace, so a
# copy built in the tree's own target dir would overwrite the tree's felix-core with mutants:
# the copies get a target dir of their own, kept between runs.
mutants_target="$out/target"
common=(mutants --jobs "$jobs" --gitignore true --baseline skip --timeout "$timeout")
# Round-robin: a shard is then a sample of every file (the default slices: one shard, a few files).
[[ -n "$shard" ]] && common+=(--shard "$shard" --sharding round-robin)
[[ ${#extra[@]} -gt 0 ]] && common+=("${extra[@]}")

# --- the diff (--in-diff) ---------------------------------------------------------------------
if [[ $in_diff -eq 1 ]]; then
    if [[ -z "$base" ]]; then
        [[ -f .ci/landed ]] || { echo "no BASE given and no .ci/landed file" >&2; exit 2; }
        base="$(grep -v '^#' .ci/landed | head -n 1 | tr -d '[:space:]')"
    fi
    if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
        echo "--in-diff: '$base' is not a commit of this repository (a shallow clone? fetch more history)" >&2
        exit 2
    fi
    if ! git merge-base --is-ancestor "$base" HEAD; then
        echo "--in-diff: $base is not an ancestor of HEAD" >&2
        exit 2
    fi
    diff_file="$out/in-diff.patch"
    # As cargo-mutants and mutants_doc_only.py read it, whatever the user's git config says: no
    # colour, no external diff tool, the a/ and b/ prefixes.
    git diff --no-color --no-ext-diff --src-prefix=a/ --dst-prefix=b/ "$base" -- core/src store/src \
        > "$diff_file"
    changed=$(grep -c '^+++ ' "$diff_file" || true)
    echo "diff against $(git rev-parse --short "$base") (with uncommitted changes): $changed file(s) of core/src and store/src changed"
    if [[ ! -s "$diff_file" ]]; then
        echo "no change under core/src or store/src since $base: no mutant to run."
        exit 0
    fi
    # A diff of doc comments alone (`///`, `//!`) selects no mutant: it is answered here, without
    # installing cargo-mutants (scripts/mutants_doc_only.py says why, and reads the diff as
    # cargo-mutants does). Any other affected line (code, a plain `//` comment, a blank line) goes
    # to cargo-mutants.
    doc_only=0
    python3 scripts/mutants_doc_only.py "$diff_file" >"$out/in-diff-code.txt" || doc_only=$?
    if [[ $doc_only -eq 0 ]]; then
        echo "only doc comments (/// and //!) changed under core/src and store/src since $base:" \
            "cargo-mutants mutates code, so no mutant to run."
        exit 0
    elif [[ $doc_only -ne 1 ]]; then
        exit 2
    fi
    common+=(--in-diff "$diff_file")
fi

# --- cargo-mutants (installed only once a mutant is to run) -----------------------------------
if ! command -v cargo-mutants >/dev/null 2>&1; then
    step "installing cargo-mutants $mutants_version (cargo install --locked; a few minutes on 2 cores)"
    started=$SECONDS
    nice -n 19 cargo install cargo-mutants --version "$mutants_version" --locked
    echo "installed in $((SECONDS - started)) s"
fi
echo "cargo-mutants: $(cargo mutants --version)"

# Two groups, each under the tests that can see it: the storage files (felix-store's, the core's
# storage module and the codec, which the file store writes with) under the tests of both crates;
# everything else of the core under the core's own tests (the store's crash tests, ~30 s of
# fsyncs per run, touch no broker, journal or client). The selection goes to the build as well as
# the test command (--cargo-arg), so the test step never compiles (its time limit is for tests).
logic_args=(--package felix-core --test-package felix-core
            --exclude 'core/src/storage/**' --exclude core/src/codec.rs --cargo-arg=--lib
            --cargo-arg=--test --cargo-arg=it)
logic_test_args=()
store_packages=(--package felix-core --package felix-store --test-package felix-core
                --test-package felix-store)
store_args=("${store_packages[@]}" --file 'store/src/**' --file 'core/src/storage/**'
            --file core/src/codec.rs)
if [[ ${#files[@]} -gt 0 ]]; then
    logic_files=(); store_files=()
    for file in "${files[@]}"; do
        if [[ "$file" == store/src/* || "$file" == core/src/storage/* || "$file" == core/src/codec.rs ]]; then
            store_files+=(--file "$file")
        else
            logic_files+=(--file "$file")
        fi
    done
    if [[ ${#logic_files[@]} -gt 0 ]]; then logic_args=("${logic_files[@]}" "${logic_args[@]}"); else logic_args=(); fi
    if [[ ${#store_files[@]} -gt 0 ]]; then store_args=("${store_packages[@]}" "${store_files[@]}"); else store_args=(); fi
fi

if [[ $list -eq 1 ]]; then
    if [[ ${#logic_args[@]} -gt 0 ]]; then nice -n 19 cargo "${common[@]}" "${logic_args[@]}" --list; fi
    if [[ ${#store_args[@]} -gt 0 ]]; then nice -n 19 cargo "${common[@]}" "${store_args[@]}" --list; fi
    exit 0
fi

# --- stage 1: the core's own tests ------------------------------------------------------------
# cargo-mutants exits 0 (all caught), 2 (some missed), 3 (some timed out: counted as killed). The
# baseline run is skipped: CI has just run these tests, and a developer runs them first.
run_group() {
    local group="$1"; shift
    step "stage 1 ($group): cargo ${common[*]} $*"
    local started=$SECONDS status=0
    # One job: the copies share one target dir, kept warm between runs. More jobs: each copy
    # builds in a target dir of its own (two copies in one target dir overwrite each other's
    # felix-core and rebuild it on every mutant: measured 22 s a build instead of 3).
    local target_env=(CARGO_TARGET_DIR="$mutants_target")
    [[ "$jobs" -gt 1 ]] && target_env=(-u CARGO_TARGET_DIR)
    # A memory cap (virtual, 10 GiB) per process: some mutants make a test loop while it grows
    # (one read-index mutant took a test binary to 13.7 GB in a minute); past the cap the test
    # aborts and the mutant counts as killed, instead of the machine running out of memory.
    (ulimit -v 10485760; env "${target_env[@]}" nice -n 19 cargo "${common[@]}" --output "$out/$group" "$@") 2>&1 \
        | tee "$out/$group.log" || true
    status=${PIPESTATUS[0]}
    echo "stage 1 ($group) took $((SECONDS - started)) s (cargo-mutants exit $status)"
    case "$status" in
        0|2|3) ;;
        *)
            # --in-diff with no mutant on this group's changed lines is not a failure.
            if grep -qi 'no mutants' "$out/$group.log"; then return 0; fi
            echo "cargo-mutants failed (exit $status): see $out/$group.log" >&2
            exit 1 ;;
    esac
}
mo="$out/mutants.out"
if [[ -n "$resume" ]]; then
    # --stage2-of: stage 1 ran before (its output dirs are given); take its outcomes as they are.
    groups=("${resume_dirs[@]}")
else
    rm -rf "$mo" "$out/logic" "$out/store"
    groups=()
    for group in logic store; do
        if [[ $group == logic ]]; then args=("${logic_args[@]}"); else args=("${store_args[@]}"); fi
        [[ ${#args[@]} -gt 0 ]] || continue
        [[ $group == logic ]] && args+=("${logic_test_args[@]}")
        run_group "$group" "${args[@]}"
        groups+=("$out/$group/mutants.out")
    done
fi
mkdir -p "$mo"
# One view of both groups: the outcome lists concatenated, mutants.json merged.
for list_name in caught missed timeout unviable; do
    : > "$mo/$list_name.txt.new"
    for group in "${groups[@]}"; do
        cat "$group/$list_name.txt" >> "$mo/$list_name.txt.new" 2>/dev/null || true
    done
    mv "$mo/$list_name.txt.new" "$mo/$list_name.txt"
done
python3 - "$mo/mutants.json.new" "${groups[@]}" <<'PY'
import json, os, sys
merged = []
for group in sys.argv[2:]:
    # A group with no mutant to run (--in-diff) writes no mutants.out at all.
    if os.path.exists(f"{group}/mutants.json"):
        with open(f"{group}/mutants.json") as handle:
            merged.extend(json.load(handle))
with open(sys.argv[1], "w") as handle:
    json.dump(merged, handle)
PY
mv "$mo/mutants.json.new" "$mo/mutants.json"
# The premise of the doc-comment check above (--in-diff): no mutant listed spans a doc comment.
# Checked on every listing of this tree, so an item declared with a doc inside a function fails
# here, before a doc-only change to it could skip the mutants it selects.
if [[ -z "$resume" ]]; then
    premise=0
    python3 scripts/mutants_doc_only.py --spans "$mo/mutants.json" || premise=$?
    if [[ $premise -ne 0 ]]; then
        echo "a mutant spans a doc comment (above): scripts/mutants_doc_only.py's premise no" \
            "longer holds, and --in-diff would skip mutants a doc-only change selects" >&2
        exit 1
    fi
fi
missed="$mo/missed.txt"
touch "$missed"
: > "$out/survivors.txt"
: > "$out/sweep-killed.txt"

# --- the equivalent list ------------------------------------------------------------------------
# A line of mutants-equivalent.txt is `FILE: DESCRIPTION  @ `SOURCE LINE`  # why`: the mutant's
# name without its line and column, and the text of the line it changes (scripts/
# mutants_equivalent.py: a line excuses one mutant, and goes stale when that code changes).
# excuses NAMES: writes $out/excused.txt, $out/unexplained.txt and $out/suggested.txt (the list
# line each unexplained survivor would need); exit 2 on a malformed list.
excuses() {
    local unused=()
    # Unsharded and unfiltered, every mutant of the core was listed: a list line no mutant
    # matches is stale, and is reported.
    [[ -z "$shard" && -z "$resume" && $in_diff -eq 0 && ${#files[@]} -eq 0 && ${#extra[@]} -eq 0 ]] && unused=("$out/equivalent-unused.txt")
    python3 "$root/scripts/mutants_equivalent.py" "$mo/mutants.json" "$root/mutants-equivalent.txt" "$1" \
        "$out/excused.txt" "$out/unexplained.txt" "$out/suggested.txt" "${unused[@]}" || exit 2
}
excuses "$missed"
# --- stage 2: scenarios and a sweep, for each stage-1 survivor --------------------------------
if [[ $sweep -eq 1 && -s "$missed" ]]; then
    count=$(wc -l < "$missed")
    step "stage 2: felix scenario scenarios/ and felix sweep --seeds $seeds, for $count survivor(s)"
    started=$SECONDS
    scratch="$out/tree"
    # A copy of the tree as cargo-mutants makes it (tracked and untracked, not ignored files),
    # kept between runs: only files that differ are copied, so the incremental build stays warm.
    mkdir -p "$scratch"
    git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' path; do
        if [[ -f "$path" ]] && ! cmp -s "$path" "$scratch/$path"; then
            mkdir -p "$scratch/$(dirname "$path")"
            cp -p "$path" "$scratch/$path"
        fi
    done
    # The scratch tree builds with the `mutant-sweep` profile (Cargo.toml: release semantics,
    # opt-level 1, incremental) in the copies' target dir, so the real felix binary is never
    # replaced by a mutant and each rebuild after a one-line change in the core is quick.
    felix="$mutants_target/mutant-sweep/felix"
    while IFS= read -r name; do
        [[ -n "$name" ]] || continue
        # A mutant already listed as equivalent needs no sweep to be judged (it is excused
        # either way): it stays a survivor, and the builds and the sweep are saved.
        if grep -qxF "$name" "$out/excused.txt"; then
            echo "survived (on mutants-equivalent.txt, stage 2 not run): $name"
            echo "$name" >> "$out/survivors.txt"
            continue
        fi
        # mutants.json holds each mutant's file and diff; the mutated file is written from the
        # diff's hunks (no patch tool needed), the original kept to put back.
        file="$(python3 - "$mo/mutants.json" "$name" "$scratch" <<'PY'
import json, re, sys
mutants = [m for m in json.load(open(sys.argv[1])) if m["name"] == sys.argv[2]]
if not mutants:
    sys.exit(0)
mutant = mutants[0]
path = f"{sys.argv[3]}/{mutant['file']}"
lines = open(path).read().splitlines(keepends=True)
hunks = re.split(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@.*\n", mutant["diff"], flags=re.M)
shift = 0
for index in range(1, len(hunks), 2):
    start = int(hunks[index]) - 1 + shift
    old, new = [], []
    for line in hunks[index + 1].splitlines(keepends=True):
        if not line.endswith("\n"):
            line += "\n"
        kind, text = line[:1], line[1:]
        if kind in (" ", "-"):
            old.append(text)
        if kind in (" ", "+"):
            new.append(text)
    if lines[start:start + len(old)] != old:
        sys.exit(f"the diff of {mutant['name']} does not apply to {path}")
    lines[start:start + len(old)] = new
    shift += len(new) - len(old)
open(path, "w").write("".join(lines))
print(mutant["file"])
PY
)"
        if [[ -z "$file" ]]; then
            echo "no diff for '$name' in mutants.json, or it does not apply" >&2
            exit 1
        fi
        verdict="survived"
        if ! (cd "$scratch" && CARGO_TARGET_DIR="$mutants_target" nice -n 19 cargo build --profile mutant-sweep -p felix-cli -q -j 1 \
                > "$out/last-build.log" 2>&1); then
            # It compiled for stage 1, so this is not the mutant's doing.
            tail -n 20 "$out/last-build.log" >&2
            echo "stage 2: felix did not build with '$name' applied (see $out/last-build.log)" >&2
            cp -p "$root/$file" "$scratch/$file"
            exit 1
        elif ! (cd "$scratch" && ulimit -v 10485760 && nice -n 19 timeout 600 "$felix" scenario scenarios/ > "$out/last-scenario.log" 2>&1); then
            verdict="killed by felix scenario"
        elif ! (cd "$scratch" && ulimit -v 10485760 && nice -n 19 timeout 600 "$felix" sweep --seeds "$seeds" --jobs 1 > "$out/last-sweep.log" 2>&1); then
            verdict="killed by felix sweep --seeds $seeds"
        fi
        cp "$root/$file" "$scratch/$file"
        echo "$verdict: $name"
        if [[ "$verdict" == survived ]]; then
            echo "$name" >> "$out/survivors.txt"
        else
            echo "$name  # $verdict" >> "$out/sweep-killed.txt"
        fi
    done < "$missed"
    echo "stage 2 took $((SECONDS - started)) s"
else
    cp "$missed" "$out/survivors.txt"
fi

excuses "$out/survivors.txt"

# --- summary ------------------------------------------------------------------------------------
n() { if [[ -f "$1" ]]; then grep -c . "$1" || true; else echo 0; fi; }
caught=$(n "$mo/caught.txt"); timeouts=$(n "$mo/timeout.txt"); unviable=$(n "$mo/unviable.txt")
stage1_missed=$(n "$missed"); killed2=$(n "$out/sweep-killed.txt"); survivors=$(n "$out/survivors.txt")
unexplained=$(n "$out/unexplained.txt")
viable=$((caught + timeouts + stage1_missed))
step "summary"
echo "viable mutants:                $viable (unviable: $unviable)"
echo "killed by the core's tests:    $((caught + timeouts)) (of which timeouts: $timeouts)"
echo "killed by scenarios + sweep:   $killed2"
echo "survivors:                     $survivors (on mutants-equivalent.txt: $((survivors - unexplained)))"
if [[ $viable -gt 0 ]]; then
    echo "killed:                        $(( (caught + timeouts + killed2) * 1000 / viable / 10 )).$(( (caught + timeouts + killed2) * 1000 / viable % 10 ))%"
    echo
    echo "per file ($out/table.md):"
    python3 "$root/scripts/mutants_table.py" "$out"
fi
if [[ $unexplained -gt 0 ]]; then
    echo
    echo "SURVIVING MUTANTS NOT ON mutants-equivalent.txt (kill each with a test, or add it with why):"
    sed 's/^/  /' "$out/unexplained.txt"
    echo "(the list lines they would need, the why to be written: $out/suggested.txt)"
    sed 's/^/  /' "$out/suggested.txt"
    exit 1
fi
echo "every surviving mutant is on mutants-equivalent.txt."
if [[ -s "$out/equivalent-unused.txt" ]]; then
    echo
    echo "STALE LINES of mutants-equivalent.txt (no mutant of this run has that name and source line: delete them):"
    sed 's/^/  /' "$out/equivalent-unused.txt"
    exit 1
fi
exit 0
}
