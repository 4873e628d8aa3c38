#!/usr/bin/env bash
# Executes every notebook of this folder (NN_*.py) and writes its Markdown and PNG figures into
# OUTDIR (default: this folder, next to the sources). The npusim binary is $NPUSIM, else
# build/release/app/npusim, else npusim on PATH; the profiles of notebooks 5 and 6 are
# $NPUSIM_PROFILES, else ../shared/profiles (absent: those notebooks say so and skip).
#
# usage: notebooks_export/export.sh [OUTDIR [NOTEBOOK.py...]]   (no NOTEBOOK: all of them)
# Exit status: 0 all notebooks ran; 1 a notebook failed; 4 no Python with pandas and matplotlib.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
outdir="${1:-$here}"
notebooks=("$here"/[0-9][0-9]_*.py)
if [ $# -gt 1 ]; then  # named notebooks only (tests/notebooks_test.sh: one ctest entry each)
  notebooks=()
  for nb in "${@:2}"; do notebooks+=("$here/$(basename "$nb")"); done
fi

# Debian's python3 comes first: a pyenv or venv python3 earlier on PATH often lacks the Debian
# packages python3-pandas and python3-matplotlib. The packages are looked up, not imported:
# importing them costs 0.8 CPU-s, paid again by the notebook itself (one ctest entry each).
python=""
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import importlib.util as u, sys
sys.exit(not all(u.find_spec(m) for m in ("pandas", "matplotlib")))' >/dev/null 2>&1; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "export.sh: no python3 with pandas and matplotlib (apt-get install python3-pandas python3-matplotlib)" >&2
  exit 4
fi

export MPLBACKEND=Agg
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
start=$(date +%s)
status=0
"$python" "$here/nbexport.py" "$outdir" "${notebooks[@]}" || status=$?
echo "export.sh: $(($(date +%s) - start)) s, output in $outdir" >&2
exit "$status"
