"""fastcdl warmup compiles what later processes use: afterwards they load every kernel from the cache."""

import os
import subprocess
import sys

import pytest

from fastcdl.warmup import GROUPS, warmup

MISSES = """
import numpy as np
import fastcdl as fc
from fastcdl import _compiled
import importlib, pkgutil
y = np.array([1, 0, 1, 1, 0, 0]); p = np.array([0.3, 0.3, 0.8, 0.6, 0.1, 0.35])
fc.cdl(y, p); fc.cdl_report(y, p); fc.ece(y, p, bins=10); fc.ucal(y, p); fc.vcdl(y, p)
{extra}
misses = 0
for info in pkgutil.iter_modules(_compiled.__path__):
    mod = importlib.import_module("fastcdl._compiled." + info.name)
    for obj in vars(mod).values():
        stats = getattr(obj, "stats", None)
        if stats is not None and hasattr(stats, "cache_misses"):
            misses += sum(stats.cache_misses.values())
print(misses)
"""
ONLINE = "from fastcdl.online import simulate; simulate('cdl', 'greedy', horizon=100, seed=1); simulate('kt', 'drift', horizon=100)"


def _run(args, cache, **kw):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=900, **kw)


def test_after_warmup_a_new_process_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    cold = _run(["-c", MISSES.format(extra=ONLINE)], cache)
    assert cold.returncode == 0, cold.stderr
    assert int(cold.stdout) > 0  # an empty cache compiles: the count can be non-zero
    cache2 = tmp_path / "cache2"
    out = _run(["-m", "fastcdl", "warmup", "--only", "metrics,binning,online"], cache2)
    assert out.returncode == 0, out.stderr
    assert "compiled in" in out.stdout
    warm = _run(["-c", MISSES.format(extra=ONLINE)], cache2)
    assert warm.returncode == 0, warm.stderr
    assert int(warm.stdout) == 0


def test_warmup_reports_each_step_and_refuses_unknown_groups():
    seen = []
    steps = warmup(("metrics",), report=seen.append)
    assert steps == seen and all(s.seconds >= 0 for s in steps) and len(steps) >= 3
    with pytest.raises(ValueError, match="unknown warmup group 'nope'"):
        warmup(("nope",))
    assert set(GROUPS) == {"metrics", "binning", "online"}


def test_warmup_with_two_processes_runs_every_step_once():
    """jobs=2: this process and a fresh one take the steps from one queue; every step runs once."""
    one = warmup(("metrics",))
    seen = []
    two = warmup(("metrics",), report=seen.append, jobs=2)
    assert sorted(s.name for s in two) == sorted(s.name for s in one)
    assert two == seen and all(s.seconds >= 0 for s in two)
