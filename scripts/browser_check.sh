#!/usr/bin/env bash
# The browser test: felix's --html pages and the Explorer in headless Chromium.
#   scripts/browser_check.sh [--readme-image docs/img/hidden-trims.png]
# Builds the felix binary if needed, writes the pages of a HiddenTrims seed and counterexample,
# loads them and the Explorer in Chromium (scripts/browser_check.py), saves screenshots under
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
exec python3 scripts/browser_check.py --felix "$felix" --out "$out" "$@"
