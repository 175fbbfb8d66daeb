"""First calls in a fresh interpreter, next to numba's own floor (asv timeraw_ benchmarks).

Cold benchmarks point NUMBA_CACHE_DIR at an empty folder before anything imports numba
(the setup part of each timeraw_ benchmark runs first and is not timed); warm ones at a
folder filled by a separate process in setup. Ratios that matter: cold fc.cdl and cold
`fastcdl metrics --bins 15` against cold_numba_trivial; warm import + fc.cdl against
warm_numba_import and warm_numba_trivial (docs in scripts/bench_startup.py).
"""

import os
import tempfile
from pathlib import Path

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "forecasts.csv")
# written by the setup code; no escapes in it (asv's timeraw template would expand them)
MODULE = "chr(10).join(['import numba', '@numba.njit(cache=True)', 'def f(x):', '    return x + 1', ''])"
TRIVIAL = "import trivial_numba\ntrivial_numba.f(1)\n"  # cached functions need a file
CDL = "import fastcdl as fc\nfc.cdl([0, 1, 1, 0, 1], [0.1, 0.5, 0.5, 0.9, 0.3])\n"
METRICS = (
    "import contextlib, io\nfrom fastcdl.cli import main\n"
    f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['metrics', {EXAMPLE!r}, '--bins', '15'])\n"
)
# 100,000 continuous scores (every score its own bucket: the sample estimators with their intervals)
SCORES = os.path.join(tempfile.gettempdir(), "fastcdl-scores-100000.csv")


def write_scores(path=SCORES, T=100_000):
    """The CSV of T continuous scores (y ~ Bernoulli(p), p uniform, seed 0) the startup rows read;
    written once, then reused."""
    if os.path.exists(path):
        return path
    import numpy as np

    rng = np.random.default_rng(0)
    p = rng.random(T)
    y = (rng.random(T) < p).astype(int)
    tmp = f"{path}.{os.getpid()}.tmp"
    np.savetxt(tmp, np.column_stack([y, p]), delimiter=",", header="y,p", comments="", fmt=["%d", "%.17g"])
    os.replace(tmp, path)
    return path


METRICS_100K = (
    "import contextlib, io\nfrom fastcdl.cli import main\n"
    f"with contextlib.redirect_stdout(io.StringIO()):\n    main(['metrics', {SCORES!r}])\n"
)
WARMUP = "from fastcdl.warmup import warmup\nwarmup()\n"
COLD = (
    "import os, sys, tempfile\n"
    "os.environ['NUMBA_CACHE_DIR'] = tempfile.mkdtemp()\n"
    "d = tempfile.mkdtemp()\n"
    f"open(os.path.join(d, 'trivial_numba.py'), 'w').write({MODULE})\n"
    "sys.path.insert(0, d)\n"
)


def _warm(code):
    folder = os.path.join(tempfile.gettempdir(), "fastcdl-asv-warm")
    return (
        "import os, subprocess, sys\n"
        f"os.makedirs({folder!r}, exist_ok=True)\n"
        f"open(os.path.join({folder!r}, 'trivial_numba.py'), 'w').write({MODULE})\n"
        f"os.environ['NUMBA_CACHE_DIR'] = os.path.join({folder!r}, 'cache')\n"
        f"sys.path.insert(0, {folder!r})\n"
        f"subprocess.run([sys.executable, '-c', chr(10).join({code.splitlines()!r})], check=True, env={{**os.environ, 'PYTHONPATH': {folder!r}}})\n"
    )


class StartupSuite:
    """Wall time of a fresh interpreter's first calls, cold (empty cache) and warm."""

    repeat = (3, 5, 120.0)
    number = 1
    timeout = 600

    def timeraw_cold_numba_trivial(self):
        return TRIVIAL, COLD

    def timeraw_cold_cdl(self):
        return CDL, COLD

    def timeraw_cold_cli_metrics_bins15(self):
        return METRICS, COLD

    def timeraw_warm_numba_import(self):
        return "import numba\n", _warm(TRIVIAL)

    def timeraw_warm_numba_trivial(self):
        return TRIVIAL, _warm(TRIVIAL)

    def timeraw_warm_cdl(self):
        return CDL, _warm(CDL)

    def timeraw_cold_cli_metrics_100k(self):
        write_scores()
        return METRICS_100K, COLD

    def timeraw_warm_cli_metrics_100k(self):
        write_scores()
        return METRICS_100K, _warm(METRICS_100K)


class WarmupSuite:
    """`fastcdl warmup` in a fresh interpreter on an empty cache: every kernel compiled once."""

    repeat = (1, 1, 1200.0)
    number = 1
    timeout = 1200

    def timeraw_cold_warmup(self):
        return WARMUP, COLD
