"""`import fastcdl` and the CLI load only what the command uses (heavy optional modules lazily)."""

import subprocess
import sys
from pathlib import Path

HEAVY = ("pyarrow", "matplotlib", "dask", "distributed", "tqdm", "sklearn", "pandas")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "forecasts.csv"


def _loaded(code):
    probe = code + "\nimport sys\nprint(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_import_fastcdl_loads_no_optional_heavy_module():
    loaded = _loaded("import fastcdl as fc\nfc.cdl([0, 1], [0.2, 0.7])")
    assert "numba" in loaded  # the probe works
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_cli_metrics_on_a_csv_loads_no_plotting_or_cluster_module():
    loaded = _loaded(f"from fastcdl.cli import main\nmain(['metrics', {str(EXAMPLE)!r}, '--bins', '15'])")
    assert not loaded & {"matplotlib", "dask", "distributed", "tqdm", "sklearn", "pandas"}


def test_the_version_is_written_once():
    """pyproject.toml takes the version from fastcdl/_version.py; fastcdl.__version__ and the
    installed metadata agree."""
    import importlib.metadata
    import tomllib

    import fastcdl

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fastcdl._version.__version__"}
    assert importlib.metadata.version("fastcdl") == fastcdl.__version__
