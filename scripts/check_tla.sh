#!/usr/bin/env bash
# Runs TLC on the configurations in docs/formal/ (FelixHeadTrim*.cfg against FelixHeadTrim.tla,
# ParosTrimJump*.cfg against ParosTrimJump.tla) and holds each one to the outcome pinned in
# docs/formal/README.md (the table under each "## Configurations" heading):
#   - a passing configuration must end with TLC exit 0 AND exactly the pinned distinct-state count;
#   - a twin must end with TLC exit 12 (invariant violated) AND the violated invariant, read from
#     TLC's -tool output (message 2110, or 2107 for an initial state), must be the expected one.
#     Twins run with one worker, so the counterexample is a shortest one; it is printed.
#     Exit 0 ("the twin no longer fails"), parse errors (150/151) and evaluation errors (75-77)
#     never count as expected.
#   - a twin's .cfg must differ from its base configuration's .cfg in exactly one line;
#   - twins that README.md's table "Twins that share a state graph" lists together for TLC must
#     give TLC the same counterexample (the same actions) after the same number of distinct
#     states, when they run in the same invocation (they reach the same states by the same steps).
#
# Usage: scripts/check_tla.sh [NAME...]    (no NAME: every configuration of "## Configurations")
#   A NAME may drop the FelixHeadTrim prefix (scripts/check_tla.sh HiddenTrims) or the
#   ParosTrimJump one when no FelixHeadTrim configuration has that name (JumpResetsTerm)
# Environment:
#   TLA2TOOLS_JAR   path to tla2tools.jar (required; Java 11 or later on PATH)
#   TLC_WORKERS     workers for passing configurations (default: auto); twins always use 1
#   TLC_SLOTS       how many TLC workers run at once (default: the number of processors): a
#                   passing configuration takes TLC_WORKERS of them (auto: all), a twin one, so
#                   twins run side by side; results are printed in table order
#   TLC_JAVA_OPTS   JVM options of passing configurations (default: -XX:+UseParallelGC -Xmx2g:
#                   the JVM's default heap, a quarter of the machine's memory, let the collector
#                   grow its young generation over memory the kernel then zeroes page by page;
#                   the largest configuration, FelixHeadTrim, peaks at 1.2 GiB under 2g)
#   TLC_TWIN_JAVA_OPTS  JVM options of twins (default: -XX:+UseParallelGC -XX:TieredStopAtLevel=1
#                   -Xmx1g: a twin's run lasts seconds, most of it spent compiling with C2 code it
#                   barely runs; C1 alone halves its CPU (docs/dev/ci.md). The JIT and the heap
#                   change no state TLC explores nor their order: the counterexample and the
#                   states until it are the same. A passing configuration runs long enough for C2
#                   to pay.)
# Exit: 0 everything as expected; 1 some configuration not as expected; 2 bad usage or a broken
#       table; 3 the TLA+ checks did not run (no TLC found).
# Needs only bash, java, coreutils, grep, sed and awk.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
formal="$root/docs/formal"
# The specs, by configuration-name prefix; a configuration runs against the spec it is named after.
specs=(FelixHeadTrim ParosTrimJump)
spec_of() {
    local s
    for s in "${specs[@]}"; do
        [[ "$1" == "$s"* ]] && { echo "$s"; return; }
    done
}
readme="$formal/README.md"

did_not_run() {
    echo "==================================================================" >&2
    echo "TLA+ checks did not run: $1" >&2
    echo "Set TLA2TOOLS_JAR to a tla2tools.jar (Java 11 or later) to run them." >&2
    echo "==================================================================" >&2
    exit 3
}

if [[ -z "${TLA2TOOLS_JAR:-}" ]]; then
    did_not_run "TLA2TOOLS_JAR is not set."
fi
if [[ ! -f "$TLA2TOOLS_JAR" ]]; then
    did_not_run "TLA2TOOLS_JAR=$TLA2TOOLS_JAR is not a file."
fi
# TLC runs from docs/formal (below): a path relative to where the script was started is made
# absolute here, where it was found.
TLA2TOOLS_JAR="$(cd "$(dirname "$TLA2TOOLS_JAR")" && pwd)/$(basename "$TLA2TOOLS_JAR")"
if ! command -v java >/dev/null 2>&1; then
    did_not_run "no java on PATH."
fi
java_major="$(java -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); if (v[1] == "1") print v[2]; else print v[1]; exit }')"
if [[ ! "$java_major" =~ ^[0-9]+$ ]] || (( java_major < 11 )); then
    did_not_run "java is version '${java_major:-unknown}', TLC needs 11 or later."
fi
# `tlc2.TLC -h` exits 1 even when it works: look for the JVM's own complaint instead.
tlc_help="$(java -cp "$TLA2TOOLS_JAR" tlc2.TLC -h 2>&1)"
if grep -qE 'Could not find or load main class|ClassNotFoundException|Invalid or corrupt jarfile' <<<"$tlc_help"; then
    did_not_run "$TLA2TOOLS_JAR does not hold tlc2.TLC."
fi

workers="${TLC_WORKERS:-auto}"
read -r -a java_opts <<<"${TLC_JAVA_OPTS:--XX:+UseParallelGC -Xmx2g}"
read -r -a twin_java_opts <<<"${TLC_TWIN_JAVA_OPTS:--XX:+UseParallelGC -XX:TieredStopAtLevel=1 -Xmx1g}"

# The configuration tables (the first table after each "## Configurations..." heading):
# rows "| `Name` | base | expected | distinct states | ...".
# expected is "pass" or an invariant name; base is "-" or the base configuration's name.
# A run without names takes the rows of "## Configurations"; a name is also looked up in the
# other "## Configurations ..." sections (configurations too large for the default run).
table_row() {
    awk -F'|' -v name="$1" '
        /^## Configurations/ { in_table = 1; seen = 0; next }
        in_table && /^## / { in_table = 0 }
        in_table && seen && !/^\|/ { in_table = 0 }
        in_table && /^\|/ {
            seen = 1
            cell = $2; gsub(/[ `]/, "", cell)
            if (cell == name) {
                base = $3; gsub(/[ `]/, "", base)
                expected = $4; gsub(/[ `]/, "", expected)
                states = $5; gsub(/[ ,`]/, "", states)
                print base, expected, states
                exit
            }
        }' "$readme"
}

table_names() {
    awk -F'|' '
        /^## Configurations[[:space:]]*$/ { in_table = 1; seen = 0; next }
        in_table && /^## / { in_table = 0 }
        in_table && seen && !/^\|/ { in_table = 0 }
        in_table && /^\|/ {
            seen = 1
            cell = $2; gsub(/[ `]/, "", cell)
            if (cell ~ /^(FelixHeadTrim|ParosTrimJump)[A-Za-z0-9]*$/) print cell
        }' "$readme"
}

# Whether two files differ in exactly one line (same number of lines).
differ_in_one_line() {
    awk 'NR == FNR { a[FNR] = $0; n = FNR; next }
         { m = FNR; if (!(FNR in a) || a[FNR] != $0) d++ }
         END { exit !(n == m && d == 1) }' "$1" "$2"
}

if [[ ! -f "$readme" ]]; then
    echo "check_tla: $readme is missing" >&2
    exit 2
fi

names=()
if (( $# == 0 )); then
    while read -r n; do names+=("$n"); done < <(table_names)
else
    for arg in "$@"; do
        n="${arg%.cfg}"
        n="${n##*/}"
        if [[ -z "$(spec_of "$n")" ]]; then
            if [[ -f "$formal/FelixHeadTrim$n.cfg" || ! -f "$formal/ParosTrimJump$n.cfg" ]]; then
                n="FelixHeadTrim$n"
            else
                n="ParosTrimJump$n"
            fi
        fi
        names+=("$n")
    done
fi
if (( ${#names[@]} == 0 )); then
    echo "check_tla: no configuration found in the table of $readme" >&2
    exit 2
fi

for n in "${names[@]}"; do
    if [[ ! -f "$formal/$n.cfg" ]]; then
        echo "check_tla: unknown configuration '$n' (no docs/formal/$n.cfg)" >&2
        exit 2
    fi
    if [[ -z "$(table_row "$n")" ]]; then
        echo "check_tla: '$n' has no row in the Configurations table of docs/formal/README.md" >&2
        exit 2
    fi
done

scratch="$(mktemp -d "${TMPDIR:-/tmp}/check_tla.XXXXXX")"
launched=()
stop_runs() {
    local p
    for p in "${launched[@]}"; do kill -TERM "$p" 2>/dev/null; done
    rm -rf "$scratch"
}
trap stop_runs EXIT

slots="${TLC_SLOTS:-$(nproc 2>/dev/null || echo 1)}"
if [[ ! "$slots" =~ ^[1-9][0-9]*$ ]]; then
    echo "check_tla: TLC_SLOTS must be a positive number, not '$slots'" >&2
    exit 2
fi
# The workers of each run and the slots it takes: a passing configuration runs with $workers
# (auto: every slot), a twin with 1 (a shortest counterexample).
weight_of() {
    if [[ "$1" != 1 && "$1" =~ ^[0-9]+$ ]] && (( $1 < slots )); then echo "$1"
    elif [[ "$1" == 1 ]]; then echo 1
    else echo "$slots"; fi
}

# TLC runs in the background, as many at once as the slots allow, in table order; each writes
# "<exit code> <seconds>" to $scratch/<name>.done when it ends.
run_tlc() {
    local n="$1" w="$2" spec opts
    spec="$(spec_of "$n")"
    if [[ "${run_twin[$3]}" == 1 ]]; then
        opts=("${twin_java_opts[@]}")
    else
        opts=("${java_opts[@]}")
    fi
    (
        cd "$formal" || exit 1
        started=$(date +%s)
        java "${opts[@]}" -cp "$TLA2TOOLS_JAR" tlc2.TLC -tool \
            -workers "$w" -noGenerateSpecTE -metadir "$scratch/meta-$n" \
            -config "$n.cfg" "$spec.tla" >"$scratch/$n.out" 2>&1 &
        tlc=$!
        trap 'kill -TERM "$tlc" 2>/dev/null; exit 143' TERM
        wait "$tlc"
        code=$?
        echo "$code $(( $(date +%s) - started ))" >"$scratch/$n.done.tmp" &&
            mv "$scratch/$n.done.tmp" "$scratch/$n.done"
    ) &
    launched+=("$!")
    run_pid[$3]=$!
}
declare -a run_workers=() run_weight=() run_pid=() run_twin=()
for i in "${!names[@]}"; do
    read -r _ expected _ <<<"$(table_row "${names[$i]}")"
    if [[ "$expected" == "pass" ]]; then
        run_workers[i]="$workers"; run_twin[i]=0
    else
        run_workers[i]=1; run_twin[i]=1
    fi
    run_weight[i]="$(weight_of "${run_workers[$i]}")"
done
next=0
busy=0
declare -A counted=()
# Starts the next runs in table order while their slots are free (always at least one run).
launch_ready() {
    local i
    for i in "${!counted[@]}"; do
        if [[ "${counted[$i]}" == running && -f "$scratch/${names[$i]}.done" ]]; then
            counted[$i]=done
            busy=$(( busy - run_weight[i] ))
        fi
    done
    while (( next < ${#names[@]} )) && { (( busy == 0 )) || (( busy + run_weight[next] <= slots )); }; do
        run_tlc "${names[$next]}" "${run_workers[$next]}" "$next"
        counted[$next]=running
        busy=$(( busy + run_weight[next] ))
        next=$(( next + 1 ))
    done
}

summary=()
failures=0
declare -A signature=()

for i in "${!names[@]}"; do
    n="${names[$i]}"
    read -r base expected pinned <<<"$(table_row "$n")"
    spec="$(spec_of "$n")"
    out="$scratch/$n.out"
    w="${run_workers[$i]}"
    problem=""
    if [[ "$expected" == "pass" ]]; then
        if [[ ! "$pinned" =~ ^[0-9]+$ ]]; then
            problem="no distinct-state count pinned in README.md"
        fi
    else
        if [[ "$base" == "-" || ! -f "$formal/$base.cfg" ]]; then
            problem="twin without a base configuration"
        elif ! differ_in_one_line "$formal/$base.cfg" "$formal/$n.cfg"; then
            problem="$n.cfg does not differ from $base.cfg in exactly one line"
        fi
    fi

    echo "== $n: expect $expected (workers $w)"
    launch_ready
    while [[ ! -f "$scratch/$n.done" ]]; do
        if ! kill -0 "${run_pid[$i]}" 2>/dev/null && [[ ! -f "$scratch/$n.done" ]]; then
            echo "255 0" >"$scratch/$n.done"    # the run ended without saying how
        fi
        sleep 0.2
        launch_ready
    done
    read -r code seconds <"$scratch/$n.done"

    # The violated invariant (2110 behaviour, 2107 initial state) and the final statistics (2199).
    found="$(awk '/@!@!@STARTMSG (2110|2107):/ { grab = 1; next }
                  grab { if (match($0, /Invariant [A-Za-z0-9_]+ is violated/)) {
                             s = substr($0, RSTART + 10, RLENGTH - 10); sub(/ is violated/, "", s)
                             print s; exit } }' "$out")"
    states="$(awk '/@!@!@STARTMSG 2199:/ { grab = 1; next }
                   grab { if (match($0, /[0-9]+ distinct states found/)) {
                              s = substr($0, RSTART, RLENGTH); sub(/ distinct.*/, "", s); print s; exit } }' "$out")"
    errors="$(grep -oE '@!@!@STARTMSG (150|151|75|76|77|1000|2103|2147|2148):' "$out" | head -1)"

    if [[ -z "$problem" ]]; then
        if [[ "$expected" == "pass" ]]; then
            if (( code != 0 )); then
                problem="TLC exit $code${found:+ (violated $found)}, expected 0"
            elif [[ "$states" != "$pinned" ]]; then
                problem="distinct states ${states:-?}, README pins $pinned"
            fi
        else
            if (( code == 0 )); then
                problem="the twin no longer fails (TLC exit 0)"
            elif (( code != 12 )); then
                problem="TLC exit $code (not an invariant violation)${errors:+, ${errors#@!@!@STARTMSG }}"
            elif [[ "$found" != "$expected" ]]; then
                problem="violated ${found:-nothing parsed}, expected $expected"
            fi
        fi
    fi

    if [[ "$expected" != "pass" ]]; then
        # The counterexample's actions in order, and the states explored until it.
        signature[$n]="$states $(awk '/^[0-9]+: </ { sub(/ line [0-9]+, col .*/, ""); printf "%s;", $0 }' "$out")"
    fi
    if [[ "$expected" != "pass" && -n "$found" ]]; then
        echo "-- counterexample ($n violates $found):"
        # The trace without the -tool markers: from the violation message to the end of the trace.
        awk '/@!@!@STARTMSG (2110|2107):/ { on = 1 }
             on && /@!@!@STARTMSG (2201|2200|2199|2186|2194):/ { exit }
             on && !/^@!@!@/ { print }' "$out"
    fi
    if [[ -n "$problem" ]]; then
        failures=$((failures + 1))
        verdict="NOT AS EXPECTED: $problem"
        echo "-- $n: $verdict; last lines of TLC's output:"
        grep -v '^@!@!@' "$out" | tail -n 25
    else
        verdict="ok"
    fi
    if [[ -n "$found" ]]; then
        shown="$found"
    elif (( code == 0 )); then
        shown="pass"
    else
        shown="TLC exit $code"
    fi
    summary+=("$(printf '%-34s %-18s %-18s %12s %7ss  %s' "$n" "$expected" \
        "$shown" "${states:--}" "$seconds" "$verdict")")
done

# Twins listed together for TLC under "## Twins that share a state graph": rows
# "| TLC | `A`, `B`, ... | why |". Each group's twins that ran here must look the same to TLC.
while IFS= read -r group; do
    first=""
    for t in $group; do
        [[ "$t" == "$spec"* ]] || t="$spec$t"
        [[ -n "${signature[$t]+set}" ]] || continue
        if [[ -z "$first" ]]; then
            first="$t"
        elif [[ "${signature[$t]}" != "${signature[$first]}" ]]; then
            failures=$((failures + 1))
            summary+=("$(printf '%-34s %s' "$t" "NOT AS EXPECTED: README says it shares a state graph with $first, but TLC's trace or state count differs")")
        fi
    done
done < <(awk -F'|' '
    /^## Twins that share a state graph/ { in_table = 1; next }
    in_table && /^## / { in_table = 0 }
    in_table && /^\|/ {
        checker = $2; gsub(/[ `]/, "", checker)
        if (checker == "TLC") { twins = $3; gsub(/[`,]/, " ", twins); print twins }
    }' "$readme")

echo
printf '%-34s %-18s %-18s %12s %8s  %s\n' configuration expected found "distinct*" time verdict
for line in "${summary[@]}"; do echo "$line"; done
echo "(* distinct states TLC found; for a twin, those explored until the violation)"
if (( failures > 0 )); then
    echo "check_tla: $failures configuration(s) not as expected"
    exit 1
fi
echo "check_tla: every configuration as expected"
exit 0
