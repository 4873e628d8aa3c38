#!/usr/bin/env bash
# Regenerates the documentation the binary can print: docs/cli.md and docs/chips.md (the reference
# pages tests/docs_test.py keeps in step with the code) and the README's five-minute tour (every
# command between <!-- tour:NAME --> and <!-- /tour --> rerun, its real output spliced in).
#
#   scripts/gen_docs.sh               # both
#   scripts/gen_docs.sh --reference   # docs/cli.md, docs/chips.md only
#   scripts/gen_docs.sh --readme      # the README tour only
#   scripts/gen_docs.sh --accuracy    # the held-out figures table of docs/accuracy.md (its
#                                     # <!-- accuracy:table --> slot; needs ../shared/profiles)
#
# Uses the binary in $NPUSIM when set; otherwise builds npusim with the release preset (as
# scripts/demo.sh does) and uses build/release/app/npusim. The tour reads the real profiles in
# ../shared/profiles when they are there, else a fixture under tests/data/profiles.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${NPUSIM:-}" ]; then
  [ -f build/release/build.ninja ] || cmake --preset release >/dev/null
  cmake --build --preset release --target npusim -j"$(nproc)"
  NPUSIM=build/release/app/npusim
fi
exec python3 scripts/gen_docs.py --npusim "$NPUSIM" "$@"
