#!/usr/bin/env bash
# The README's second command, and exactly what CI runs: set up, build with the ci preset
# (address + undefined-behaviour sanitizers, warnings as errors) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$(nproc)"
ctest --preset ci
