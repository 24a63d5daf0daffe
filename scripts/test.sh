#!/usr/bin/env bash
# The test command named in README.md: every unit, property, scenario and engine test.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
