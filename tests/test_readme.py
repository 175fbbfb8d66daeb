"""The README's Python examples run as written, top to bottom in one Python process (one
namespace), as a reader pasting them in order runs them; the long simulation is shortened."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text()
BLOCKS = [(TEXT.count("\n", 0, m.start(1)), m.group(1)) for m in re.finditer(r"```python\n(.*?)```", TEXT, flags=re.S)]


def _runnable(code: str) -> str:
    """The block with the lines that need the reader's own data or write into results/ left
    blank (so tracebacks keep the README's line numbers)."""
    code = code.replace("horizon=10**7", "horizon=10**4")
    return "\n".join("" if re.search(r'y_dask|"data/"|"results/', line) else line for line in code.splitlines())


# a comment that states an expression's value: "# 0.25: ...", "# True", "# 0.25, from Python"
STATED = re.compile(r"#\s*(True|False|-?\d+(?:\.\d+)?(?:e-?\d+)?)(?=\s*(?:[:,]|$))")


def _check_stated(stmt, lines, namespace):
    """Evaluate a statement whose line states its value in a comment, and compare."""
    import ast

    m = STATED.search(lines[stmt.lineno - 1])
    if m is None or not isinstance(stmt, ast.Expr):
        return False
    got = eval(compile(ast.Expression(stmt.value), str(README), "eval"), namespace)
    stated = m.group(1)
    if stated in ("True", "False"):
        assert bool(got) == (stated == "True"), f"README.md:{stmt.lineno} states {stated}, got {got!r}"
    else:
        digits = len(stated.split(".")[1]) if "." in stated else 0
        assert round(float(got), digits) == float(stated), f"README.md:{stmt.lineno} states {stated}, got {got!r}"
    return True


def test_readme_blocks_run_in_order_in_one_namespace(tmp_path, monkeypatch):
    """Statement by statement; a statement whose comment states its value ("# 0.25") is checked."""
    import ast

    monkeypatch.chdir(tmp_path)  # a block that saves a figure writes here
    namespace = {"__name__": "readme"}
    lines = TEXT.splitlines()
    checked = 0
    for first_line, code in BLOCKS:
        # the block's lines keep their README line numbers: an error points into README.md
        tree = ast.parse("\n" * first_line + _runnable(code), str(README))
        for stmt in tree.body:
            if _check_stated(stmt, lines, namespace):
                checked += 1
                continue
            exec(compile(ast.Module([stmt], type_ignores=[]), str(README), "exec"), namespace)
    assert checked >= 3  # fc.cdl's 0.25, the njit loop's True, the kernel's 0.25


def test_the_blocks_are_found():
    """Every python block is run: the last one ends the plug-in section."""
    assert len(BLOCKS) >= 9
    assert "plugin_forecaster" in BLOCKS[-1][1] and "fastcdl.plot" in "".join(code for _, code in BLOCKS)


def test_readme_shows_the_two_commands_first():
    first = TEXT[TEXT.index("```bash") : TEXT.index("```", TEXT.index("```bash") + 3)]
    lines = [line.split("#")[0].strip() for line in first.splitlines()[1:] if line.strip()]
    assert lines[:2] == ["make run", "make test"]
