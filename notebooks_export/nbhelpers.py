"""What every notebook of notebooks_export/ shares: finding and running the npusim CLI, reading
its JSON and CSV, and the Markdown readings the exporter puts under each figure.

Which npusim runs: $NPUSIM if set, else the release build of this checkout
(build/release/app/npusim, from `cmake --preset release && cmake --build --preset release`),
else `npusim` on PATH. Which profiles notebooks 5 and 6 read: $NPUSIM_PROFILES if set, else
../shared/profiles next to this checkout.
"""

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

import matplotlib
import pandas as pd

# Panels, their tick labels and a suptitle laid out without overlapping, in every notebook.
matplotlib.rcParams["figure.constrained_layout.use"] = True

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SCENARIO = REPO / "scenarios" / "default.toml"

# The exporter (nbexport.py) replaces this to turn a reading into a Markdown paragraph; run as a
# plain script or in Jupyter, a reading is printed.
_reading_sink = None


def npusim_binary() -> str:
    """The npusim executable the notebooks run (see the module comment for the order)."""
    env = os.environ.get("NPUSIM")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise RuntimeError(f"NPUSIM={env} is not an executable file")
        return env
    release = REPO / "build" / "release" / "app" / "npusim"
    if release.is_file():
        return str(release)
    on_path = shutil.which("npusim")
    if on_path:
        return on_path
    raise RuntimeError(
        "no npusim found: set NPUSIM=/path/to/npusim, or build the release binary with "
        "`cmake --preset release && cmake --build --preset release` in " + str(REPO))


_workdir = None


def workdir() -> Path:
    """A scratch folder for this run's CSV, JSON and TOML files, removed at exit."""
    global _workdir
    if _workdir is None:
        _workdir = Path(tempfile.mkdtemp(prefix="npusim_nb_"))
        atexit.register(shutil.rmtree, _workdir, True)
    return _workdir


warnings_seen = []


def npusim(*args) -> str:
    """Runs `npusim ARGS...` and returns its stdout. A non-zero exit raises with the command and
    npusim's message; warnings (stderr of a successful run) are kept in `warnings_seen`."""
    cmd = [npusim_binary()] + [str(a) for a in args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` exited {proc.returncode}:\n{proc.stderr.strip()}")
    warnings_seen.extend(line for line in proc.stderr.splitlines() if line.strip())
    return proc.stdout


def npusim_json(*args):
    """Runs `npusim ARGS... --json` and returns the parsed JSON."""
    return json.loads(npusim(*args, "--json"))


def npusim_csv(*args, flag="--csv", name="out.csv"):
    """Runs `npusim ARGS... FLAG FILE` and loads FILE with pandas."""
    path = workdir() / name
    npusim(*args, flag, path)
    return pd.read_csv(path)


def sets(**values):
    """--set arguments from keyword pairs: sets(workload__requests=2000) ->
    ['--set', 'workload.requests=2000'] (a double underscore stands for the dot)."""
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        out += ["--set", f"{key.replace('__', '.')}={value}"]
    return out


def scenario_without_core_limits(name="shared_card.toml") -> Path:
    """The default scenario with its per-stream core limits removed (streams share the card),
    written to the scratch folder: --set can change a limit but not remove it."""
    lines = DEFAULT_SCENARIO.read_text().splitlines(keepends=True)
    kept = [l for l in lines
            if not l.lstrip().startswith(("cube_cores_per_stream", "vector_cores_per_stream"))]
    path = workdir() / name
    path.write_text("".join(kept))
    return path


def scenario_gears(path=DEFAULT_SCENARIO):
    """The compiled batch sizes ([deployment] gears) of a scenario file."""
    with open(path, "rb") as f:
        return list(tomllib.load(f)["deployment"]["gears"])


def profiles_dir():
    """The folder of real profiles ($NPUSIM_PROFILES, else ../shared/profiles), or None."""
    env = os.environ.get("NPUSIM_PROFILES")
    path = Path(env) if env else REPO.parent / "shared" / "profiles"
    return path if path.is_dir() else None


def skip_rest(note: str):
    """Ends the notebook here without failing: prints NOTE (what is missing and how to provide
    it). The exporter records the note; a script exits 0; Jupyter shows SystemExit."""
    reading(note)
    raise SystemExit(0)


def reading(text: str):
    """The paragraph under a figure (or any prose computed from the run): the exporter writes
    it as Markdown text; elsewhere it is printed."""
    text = " ".join(text.split())
    if _reading_sink is not None:
        _reading_sink(text)
    else:
        print(text)
        print()


def table(df, floatfmt="{:.3g}") -> str:
    """A DataFrame as aligned text, for printed output."""
    return df.to_string(index=False, float_format=lambda v: floatfmt.format(v))
