"""Import layering: no cycles among fastcdl's modules, counting the imports inside functions
too (a cycle deferred to call time is still a cycle), and the front ends (cli, plot) use no
private kernels (plot.py and the modules it re-exports count as front ends). Read from the
sources, so it costs nothing to run."""

import ast
from pathlib import Path

import fastcdl

PACKAGE = Path(fastcdl.__file__).resolve().parent


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or (PACKAGE.parent / rel / "__init__.py").is_file()


def _imports(path: Path, top_level_only: bool):
    """The modules a file imports: for ``from X import Y`` the submodule X.Y when there is one,
    else X (a package's __init__ runs first either way, which is not a cycle between siblings)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                yield sub if _is_module(sub) else node.module


def _graph():
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    return {m: {i for i in _imports(p, False) if i in modules and i != m} for m, p in modules.items()}


def test_no_import_cycles():
    graph = _graph()
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", "import cycle: " + " -> ".join(path + [m])
        state[m] = "open"
        for n in sorted(graph[m]):
            visit(n, path + [m])
        state[m] = "done"

    for m in sorted(graph):
        visit(m, [])
    assert "fastcdl.online.engine" in graph  # the check saw the package
    # and it sees imports inside functions: summary imports uncertainty only when asked for intervals
    assert "fastcdl.uncertainty" in graph["fastcdl.summary"]


# The front ends: the command line and the figures (fastcdl.plot and the modules it re-exports).
FRONT_ENDS = (
    "cli.py",
    "plot.py",
    "_figures.py",
    "_reliability_display.py",
    "_decision_loss_display.py",
    "_run_figures.py",
)


def test_front_ends_use_no_private_kernels():
    for name in FRONT_ENDS:
        bad = [i for i in _imports(PACKAGE / name, False) if i.startswith("fastcdl._compiled")]
        assert not bad, (name, bad)
