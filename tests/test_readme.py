"""The README's Python examples run as written (the long simulation shortened)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _runnable(code: str) -> str:
    """The block without the lines that need the reader's own data or write into results/."""
    code = code.replace("horizon=10**7", "horizon=10**4")
    return "\n".join(line for line in code.splitlines() if not re.search(r'y_dask|"data/"|"results/', line))


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_block_runs(i, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block that saves a figure writes here
    namespace = {}
    if i > 0:  # later blocks use the names of the first (y, p, st)
        exec(compile(BLOCKS[0], "README block 0", "exec"), namespace)
    code = _runnable(BLOCKS[i])
    if "cdl_multiclass(y, P)" in code:
        namespace["y"], namespace["P"] = [0, 1, 2, 0], [[0.5, 0.25, 0.25]] * 4
        code = code.replace("fc.cdl(st)", "")  # st came from the dask lines
    exec(compile(code, f"README block {i}", "exec"), namespace)


def test_readme_shows_the_two_commands_first():
    text = README.read_text()
    first = text[text.index("```bash") : text.index("```", text.index("```bash") + 3)]
    lines = [line.split("#")[0].strip() for line in first.splitlines()[1:] if line.strip()]
    assert lines[:2] == ["make run", "make test"]
