#!/usr/bin/env bash
# The browser test: felix's --html pages and the Explorer in headless Chromium.
#   scripts/browser_check.sh [--readme-image docs/img/hidden-trims.png]
# Builds the felix binary if needed, writes the pages of a HiddenTrims seed and counterexample,
# loads them and the Explorer in Chromium (scripts/browser_check.py) and, beside them (each its
# own Chromium and profile; most of either is waiting), the page of a short nemesis run's trace
# (scripts/browser_check_nemesis.py, its output printed after the first's), saves screenshots under
# $FELIX_BROWSER_OUT (default target/browser-check). Exit 0 every check passed, 1 a check failed,
# 3 no Chromium: the browser checks did NOT run (said loudly).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
felix="$target/release/felix"
if [ ! -x "$felix" ]; then
    cargo build --release -p felix-cli
fi
out="${FELIX_BROWSER_OUT:-$target/browser-check}"
mkdir -p "$out"
nemesis_log="$(mktemp -t felix-browser-nemesis.XXXXXX)"
trap 'rm -f "$nemesis_log"' EXIT
set +e
python3 scripts/browser_check_nemesis.py --felix "$felix" --out "$out" >"$nemesis_log" 2>&1 &
nemesis_pid=$!
python3 scripts/browser_check.py --felix "$felix" --out "$out" "$@"
pages=$?
wait "$nemesis_pid"
nemesis=$?
cat "$nemesis_log"
set -e
if [ "$pages" -eq 1 ] || [ "$nemesis" -eq 1 ]; then exit 1; fi
if [ "$pages" -ne 0 ]; then exit "$pages"; fi
exit "$nemesis"
