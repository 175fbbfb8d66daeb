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
    "_display/figures.py",
    "_display/reliability.py",
    "_display/decision_loss.py",
    "experiments/run_figures.py",
)


def test_front_ends_use_no_private_kernels():
    for name in FRONT_ENDS:
        bad = [i for i in _imports(PACKAGE / name, False) if i.startswith("fastcdl._compiled")]
        assert not bad, (name, bad)


def _underscore_imports(path: Path):
    """(line, module, name) of every import in a file that takes an underscore name of another
    module: ``from X import _y`` (a private function, constant or module, wherever in the file)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if a.name.startswith("_") and not (a.name.startswith("__") and a.name.endswith("__")):
                    yield node.lineno, node.module, a.name


def test_no_module_imports_another_modules_underscore_name():
    """What modules share has a public name (a private module's public names are the package's
    own rooms: ``from fastcdl._validate import check_name`` is fine, ``from fastcdl import
    _validate`` or ``from fastcdl.experiments.runner import _dask`` is not)."""
    bad = [(str(p.relative_to(PACKAGE)), *hit) for p in sorted(PACKAGE.rglob("*.py")) for hit in _underscore_imports(p)]
    assert not bad, bad


def test_the_underscore_check_can_fail(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        "from fastcdl import _validate\nfrom fastcdl.io import read_file\n\ndef g():\n    from a.b import _c\n"
    )
    assert list(_underscore_imports(f)) == [(1, "fastcdl", "_validate"), (5, "a.b", "_c")]


# -- the layers of docs/architecture.toml (drawn in docs/architecture.md) --------------------
def _layers():
    import tomllib

    return tomllib.loads((PACKAGE.parent / "docs" / "architecture.toml").read_text())["layer"]


def _layer_of(module, layers):
    """The index of the layer whose longest prefix names the module ("fastcdl" alone names only
    the package itself), or None."""
    best = None
    for i, layer in enumerate(layers):
        for pre in layer["modules"]:
            hit = module == pre or (pre != "fastcdl" and module.startswith(pre + "."))
            if hit and (best is None or len(pre) > best[1]):
                best = (i, len(pre))
    return None if best is None else best[0]


def _upward(graph, layers):
    return [
        (m, layers[_layer_of(m, layers)]["name"], n, layers[_layer_of(n, layers)]["name"])
        for m in sorted(graph)
        for n in sorted(graph[m])
        if _layer_of(n, layers) > _layer_of(m, layers)
    ]


def test_every_module_sits_in_a_layer_of_the_architecture():
    layers = _layers()
    assert [layer["name"] for layer in layers][0] == "compiled kernels" and len(layers) >= 8
    unplaced = [m for m in _graph() if _layer_of(m, layers) is None]
    assert not unplaced, f"modules in no layer of docs/architecture.toml: {unplaced}"


def test_imports_go_down_the_layers():
    """A module imports from its own layer or the layers below (imports inside functions too)."""
    bad = _upward(_graph(), _layers())
    assert not bad, bad


def test_the_layer_check_can_fail():
    layers = _layers()
    graph = {"fastcdl._compiled.sort": {"fastcdl.exact"}, "fastcdl.exact": set()}
    assert _upward(graph, layers) == [("fastcdl._compiled.sort", "compiled kernels", "fastcdl.exact", "measures")]
