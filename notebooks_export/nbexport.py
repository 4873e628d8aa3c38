"""Executes percent-format notebooks (`# %%` code cells, `# %% [markdown]` cells) and writes each
as Markdown: markdown cells as text, code cells as fenced Python, printed output as text blocks,
readings (nbhelpers.reading) as paragraphs, figures as PNG files linked where plt.show() is
called (or at the end of their cell).

usage: nbexport.py OUTDIR NOTEBOOK.py...

Each figure must have a title, and each of its axes x and y labels, and a reading must follow it
in the same cell; otherwise the notebook fails, as it does when a cell raises. A cell ending
the notebook with SystemExit(0) (nbhelpers.skip_rest) stops it without failing. Exit status:
0 when every notebook ran, 1 otherwise.
"""

import io
import re
import sys
import time
import traceback
from contextlib import redirect_stdout
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MARKER = re.compile(r"^# %%(.*)$")


def parse_cells(text):
    """[(kind, source)] with kind 'markdown' or 'code'; text before the first marker is dropped."""
    cells, kind, lines = [], None, []
    for line in text.splitlines():
        m = MARKER.match(line)
        if m:
            if kind is not None:
                cells.append((kind, "\n".join(lines).strip("\n")))
            kind = "markdown" if "[markdown]" in m.group(1) else "code"
            lines = []
        elif kind is not None:
            lines.append(line)
    if kind is not None:
        cells.append((kind, "\n".join(lines).strip("\n")))
    return [(k, s) for k, s in cells if s.strip()]


def markdown_text(source):
    out = []
    for line in source.splitlines():
        if line.startswith("# "):
            out.append(line[2:])
        elif line.strip() == "#":
            out.append("")
        else:
            out.append(line.lstrip("#"))
    return "\n".join(out)


def figure_defects(fig):
    """What the figure lacks: a title, axis labels (colorbars and hidden axes excepted)."""
    defects = []
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""
    for i, ax in enumerate(fig.axes):
        if not ax.axison or hasattr(ax, "_colorbar"):
            continue
        name = f"axes {i + 1}"
        if not (ax.get_title() or suptitle):
            defects.append(f"{name} has no title")
        if not ax.get_xlabel():
            defects.append(f"{name} has no x label")
        if not ax.get_ylabel():
            defects.append(f"{name} has no y label")
    return defects


class Export:
    """The Markdown of one notebook being executed, as a list of blocks."""

    def __init__(self, stem, outdir):
        self.stem, self.outdir = stem, outdir
        self.blocks, self.text = [], io.StringIO()
        self.figures = 0
        self.awaiting_reading = []  # figure files of this cell with no reading after them yet

    def flush_text(self):
        out = self.text.getvalue().rstrip()
        if out:
            self.blocks.append("```text\n" + out + "\n```")
        self.text = io.StringIO()

    def save_figures(self):
        self.flush_text()
        for num in plt.get_fignums():
            fig = plt.figure(num)
            defects = figure_defects(fig)
            if defects:
                raise RuntimeError("figure " + "; ".join(defects))
            self.figures += 1
            name = f"{self.stem}_{self.figures}.png"
            fig.savefig(self.outdir / name, dpi=100, bbox_inches="tight",
                        metadata={"Software": None})
            plt.close(fig)
            title = fig._suptitle.get_text() if fig._suptitle is not None else \
                next((ax.get_title() for ax in fig.axes if ax.get_title()), name)
            self.blocks.append(f"![{title}]({name})")
            self.awaiting_reading.append(name)

    def add_reading(self, text):
        self.flush_text()
        self.blocks.append(text)
        self.awaiting_reading = []


def run_notebook(path, outdir):
    """Executes one notebook and writes OUTDIR/<stem>.md; returns an error text or None."""
    import nbhelpers  # the notebooks' folder is on sys.path

    stem = path.stem
    export = Export(stem, outdir)
    nbhelpers._reading_sink = export.add_reading
    plt.show = lambda *a, **k: export.save_figures()
    namespace = {"__name__": "__main__", "__file__": str(path)}
    error = None
    cells = parse_cells(path.read_text())
    for number, (kind, source) in enumerate(cells, 1):
        if kind == "markdown":
            export.blocks.append(markdown_text(source))
            continue
        export.blocks.append("```python\n" + source + "\n```")
        try:
            with redirect_stdout(export.text):
                exec(compile(source, f"{path.name} cell {number}", "exec"), namespace)
            export.save_figures()
            if export.awaiting_reading:
                raise RuntimeError("no reading (nbhelpers.reading) after figure(s) " +
                                   ", ".join(export.awaiting_reading))
        except SystemExit as e:
            export.flush_text()
            if e.code not in (None, 0):
                error = f"{path.name} cell {number}: SystemExit({e.code})"
            else:
                export.blocks.append("*The notebook stopped here (see the note above).*")
            break
        except Exception:
            export.flush_text()
            error = f"{path.name} cell {number}:\n{traceback.format_exc()}"
            break
    plt.close("all")
    header = (f"<!-- Generated by notebooks_export/export.sh from {path.name}: edit the .py, "
              "not this file. -->")
    (outdir / f"{stem}.md").write_text(header + "\n\n" + "\n\n".join(export.blocks) + "\n")
    return error


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    outdir = Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for arg in argv[2:]:
        path = Path(arg).resolve()
        sys.path.insert(0, str(path.parent))
        start = time.monotonic()
        error = run_notebook(path, outdir)
        took = time.monotonic() - start
        if error:
            failed += 1
            print(f"FAILED {path.name} ({took:.1f} s): {error}", file=sys.stderr)
        else:
            print(f"ok {path.name} -> {outdir / (path.stem + '.md')} ({took:.1f} s)",
                  file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
