"""The gallery's examples (gallery/plot_*.py) run, draw, and print what their text says: every
line of a "prints::" block of an example's text is a line of what the example prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "gallery").glob("plot_*.py"))


def stated_output(source: str) -> list[str]:
    """The lines of every literal block that follows "prints::" in the example's text."""
    lines = source.splitlines()
    stated = []
    for i, line in enumerate(lines):
        if not re.search(r"prints::\s*$", line):
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() == "#":
            j += 1
        while j < len(lines) and lines[j].startswith("#     "):
            stated.append(lines[j][len("#     ") :].rstrip())
            j += 1
    return stated


def test_the_gallery_has_its_examples():
    assert len(EXAMPLES) >= 7
    for path in EXAMPLES:
        text = path.read_text()
        assert text.startswith('"""\n'), f"{path.name}: sphinx-gallery needs the title docstring first"
        assert stated_output(text), f"{path.name} states no output"


def test_stated_output_is_read():
    src = "# %%\n# It prints::\n#\n#     a = 1\n#     b = 2\n#\n# then text\nprint(1)\n"
    assert stated_output(src) == ["a = 1", "b = 2"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_prints_what_its_text_says(path, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    out = subprocess.run(
        [sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    printed = out.stdout.splitlines()
    for line in stated_output(path.read_text()):
        assert line in printed, f"{path.name} states {line!r}; it printed:\n{out.stdout}"
