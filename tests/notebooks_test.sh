#!/usr/bin/env bash
# Runs notebooks_export/export.sh into a temporary folder with the given npusim, so the worked
# analyses cannot rot: fails when a notebook raises, when a figure it links is missing or empty,
# or when a notebook produced no figure without saying it skipped (notebooks 5 and 6 skip when
# the real profiles are absent). Exit 77 (ctest: skipped) when no python3 has pandas and
# matplotlib. With NOTEBOOK names, runs and checks only those: tests/CMakeLists.txt makes one
# ctest entry per notebook, so the notebooks (the longest tests under the sanitizers) run on
# both cores and start first instead of ending the run alone on one.
#
# usage: tests/notebooks_test.sh NPUSIM_BINARY [NOTEBOOK.py...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source_dir="$(dirname "$here")"
npusim_bin="${1:?usage: notebooks_test.sh NPUSIM_BINARY [NOTEBOOK.py...]}"
shift

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
NPUSIM="$npusim_bin" "$source_dir/notebooks_export/export.sh" "$out" "$@" || status=$?
if [ "$status" -eq 4 ]; then  # export.sh found no python3 with pandas and matplotlib
  echo "skipped: no python3 with pandas and matplotlib (apt-get install python3-pandas python3-matplotlib)"
  exit 77
fi
[ "$status" -eq 0 ] || exit "$status"

python3 - "$source_dir/notebooks_export" "$out" "$@" <<'EOF'  # stdlib only: any python3
import re
import sys
from pathlib import Path

src, md = Path(sys.argv[1]), Path(sys.argv[2])
failures = []
notebooks = ([src / Path(n).name for n in sys.argv[3:]] if len(sys.argv) > 3
             else sorted(src.glob("[0-9][0-9]_*.py")))
if not notebooks:
    failures.append(f"no notebooks in {src}")
for nb in notebooks:
    page = md / f"{nb.stem}.md"
    if not page.is_file():
        failures.append(f"{page.name}: not written")
        continue
    text = page.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    for link in links:
        png = md / link
        if not png.is_file() or png.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            failures.append(f"{page.name}: figure {link} missing or not a PNG")
    skipped = "The notebook stopped here" in text
    if not links and not skipped:
        failures.append(f"{page.name}: no figure, and no note saying why")
    print(f"{page.name}: {len(links)} figure(s){' (skipped: no profiles)' if skipped else ''}")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
EOF
