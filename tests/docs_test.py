#!/usr/bin/python3
"""Docs cannot drift from the code: a ctest (tests/CMakeLists.txt) run as

    python3 tests/docs_test.py PATH/TO/npusim

It fails, with a diff or a list of what is wrong, when
  - docs/cli.md or docs/chips.md differ from what scripts/gen_docs.py makes of the built binary
    (regenerated into a temporary folder; the fix is `scripts/gen_docs.sh --reference`);
  - a scenario key the binary accepts (--set, --vary) has no row in docs/scenarios.md, or a
    [[graph.op]] key is not in its graph file example;
  - a relative link in README.md or docs/*.md points to a file or heading that does not exist;
  - the README lost a tour marker or one of its two fresh-machine commands, or a tour block does
    not start from the command gen_docs.py runs for it (the README was not regenerated).
The README tour's output is not compared: its numbers move with the model.
"""
from __future__ import annotations

import difflib
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, str(ROOT / "scripts"))
import gen_docs  # noqa: E402  (the generator itself, so the test and the script cannot disagree)


def stale_reference_pages(npusim: Path) -> list[str]:
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, generate in gen_docs.REFERENCE_PAGES.items():
            fresh = generate(npusim)
            (Path(tmp) / name).write_text(fresh)
            committed_path = ROOT / "docs" / name
            committed = committed_path.read_text() if committed_path.is_file() else ""
            if fresh != committed:
                diff = "".join(difflib.unified_diff(
                    committed.splitlines(keepends=True), fresh.splitlines(keepends=True),
                    fromfile=f"docs/{name} (committed)", tofile=f"docs/{name} (from the binary)"))
                problems.append(f"docs/{name} is stale; run scripts/gen_docs.sh --reference "
                                f"(or NPUSIM={npusim} scripts/gen_docs.sh --reference) and commit "
                                f"it.\n{diff}")
    return problems


def strip_code(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines outside fenced code blocks."""
    out, fenced = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append((i, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    s = heading.strip().lower().replace("`", "")
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(md: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for _, line in strip_code(md.read_text()):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


LINK_RE = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)")


def broken_links(files: list[Path]) -> list[str]:
    problems = []
    for md in files:
        for lineno, line in strip_code(md.read_text()):
            line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
            for target in LINK_RE.findall(line):
                if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                    continue
                path_part, _, anchor = target.partition("#")
                dest = (md.parent / path_part).resolve() if path_part else md
                where = f"{md.relative_to(ROOT)}:{lineno}"
                if not dest.exists():
                    problems.append(f"{where}: link to '{target}': no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    problems.append(f"{where}: link to '{target}': no heading with that anchor "
                                    f"in {dest.relative_to(ROOT)}")
    return problems


def undocumented_keys(npusim: Path) -> list[str]:
    text = (ROOT / "docs" / "scenarios.md").read_text()
    documented: set[str] = set()
    for line in text.splitlines():
        m = re.match(r"^\|\s*`\[(\w+)\]\s*(\w+)`((?:,\s*`\w+`)*)\s*\|", line)
        if m:
            documented.add(f"{m.group(1)}.{m.group(2)}")
            documented.update(f"{m.group(1)}.{k}" for k in re.findall(r"`(\w+)`", m.group(3)))
    problems = [f"docs/scenarios.md: scenario key '{k}' (accepted by the binary) has no row in "
                f"the table of scenario keys" for k in gen_docs.scenario_keys(npusim)
                if k not in documented]
    example = text[text.find("## Graph files"):]
    for k in gen_docs.graph_op_keys(npusim):
        if not re.search(rf"^{re.escape(k)}\s*=", example, re.MULTILINE):
            problems.append(f"docs/scenarios.md: graph op key '{k}' (accepted by the binary) is "
                            f"not in the graph file example")
    return problems


def readme_problems() -> list[str]:
    text = (ROOT / "README.md").read_text()
    problems = []
    for cmd in ("./scripts/demo.sh", "./scripts/test.sh"):
        if not re.search(rf"^{re.escape(cmd)}\b", text, re.MULTILINE):
            problems.append(f"README.md: the fresh-machine command '{cmd}' is missing")
    blocks = {m.group(2): m.group(3).splitlines() for m in gen_docs.TOUR_RE.finditer(text)}
    # The README may have been generated with the real profiles or with the fixture.
    variants = [gen_docs.tour_commands(use_real=True), gen_docs.tour_commands(use_real=False)]
    for name in variants[0]:
        if name not in blocks:
            problems.append(f"README.md: the tour marker <!-- tour:{name} --> ... <!-- /tour --> "
                            f"is missing")
            continue
        lines = [["$ npusim " + " ".join(gen_docs.shell_quote(a) for a in args)
                  for args in v[name].commands] for v in variants]
        if not any(all(line in blocks[name] for line in want) for want in lines):
            problems.append(f"README.md: tour:{name} does not show `{lines[0][0]}` (its output "
                            f"was not generated by the current scripts/gen_docs.py); run "
                            f"scripts/gen_docs.sh --readme")
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: docs_test.py PATH/TO/npusim", file=sys.stderr)
        return 2
    npusim = Path(sys.argv[1]).resolve()
    md_files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    problems = (stale_reference_pages(npusim) + undocumented_keys(npusim)
                + broken_links(md_files) + readme_problems())
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"docs_test: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"docs_test: reference pages current, keys documented, links in {len(md_files)} "
          f"files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
