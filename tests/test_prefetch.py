"""The command line's compile helper (fastcdl.prefetch): when it starts, what it runs, and that a
report is the same with it as without it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from fastcdl import prefetch
from fastcdl.bucket_table import BucketStats
from fastcdl.measures import MEASURES


def test_the_steps_follow_the_report_and_cover_its_measures():
    steps = prefetch.report_steps(rounds=512)
    names = [name for name, _ in steps]
    q = np.linspace(0.01, 0.99, 512)
    st = BucketStats._owned(q, np.ones(512, dtype=np.int64), (q > 0.5).astype(np.int64), q.copy())
    applying = [k for k, m in MEASURES.items() if m.applies(st)]
    assert names[: len(applying)] == applying  # the report's order (fastcdl.summary)
    assert names[len(applying) :] == ["subsample tables (intervals)", "binned ECE of the report", "diagnostics"]
    assert "smce" in names


def test_every_step_runs():
    prefetch.run("report", rounds=1 << 12)


def test_the_helper_takes_smce_first_then_the_rest_last_first():
    steps = [(name, None) for name in ("cdl", "ece", "smce", "atb", "binned", "diagnostics")]
    assert [n for n, _ in prefetch.helper_order(steps)] == ["smce", "diagnostics", "binned", "atb", "ece", "cdl"]


@pytest.fixture
def helpful(monkeypatch):
    """A machine where the helper would start: two CPUs, the cache on and cold, not turned off."""
    monkeypatch.setenv("FASTCDL_PREFETCH", "1")
    monkeypatch.delenv("FASTCDL_CACHE", raising=False)
    monkeypatch.setattr(prefetch, "_cpus", lambda: 2)
    monkeypatch.setattr(prefetch, "cold", lambda: True)
    return monkeypatch


def test_wanted_only_where_it_can_help(helpful):
    assert prefetch.wanted()
    helpful.setenv("FASTCDL_PREFETCH", "0")
    assert not prefetch.wanted()
    helpful.setenv("FASTCDL_PREFETCH", "1")
    helpful.setenv("FASTCDL_CACHE", "0")  # no on-disk cache: nothing to share
    assert not prefetch.wanted()
    helpful.delenv("FASTCDL_CACHE")
    helpful.setattr(prefetch, "_cpus", lambda: 1)  # one core: the helper would take the command's
    assert not prefetch.wanted()
    helpful.setattr(prefetch, "_cpus", lambda: 2)
    helpful.setattr(prefetch, "cold", lambda: False)  # a warm cache: nothing to compile
    assert not prefetch.wanted()
    assert prefetch.start("report") is None


def test_cold_reads_the_cache_index_of_smce():
    from fastcdl._compiled import estimators

    index = estimators.smce_side._cache._cache_file._index_path
    assert prefetch.cold() == (not os.path.exists(index))


def test_start_runs_the_plan_in_a_process_and_stop_ends_it(helpful):
    proc = prefetch.start("report")
    assert proc is not None
    assert proc.wait(timeout=600) == 0  # the cache of the suite is warm: it loads and computes
    prefetch.stop(proc)  # already ended: nothing to do
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    prefetch.stop(proc)
    assert proc.returncode is not None


def test_an_unknown_plan_is_refused():
    with pytest.raises(ValueError, match="unknown prefetch plan 'nope'; choose from report"):
        prefetch.start("nope")


@pytest.mark.slow
def test_a_first_report_is_the_same_with_the_helper_and_without(tmp_path):
    """Two first runs of `fastcdl metrics` on continuous scores, each with an empty cache of its
    own: with the helper compiling beside it, and without; the same output, byte for byte."""
    rng = np.random.default_rng(3)
    p = rng.random(40_000)
    y = (rng.random(40_000) < p).astype(int)
    path = tmp_path / "scores.csv"
    path.write_text("y,p\n" + "".join(f"{a},{float(b)!r}\n" for a, b in zip(y, p)))
    out = {}
    for flag in ("1", "0"):
        env = {**os.environ, "FASTCDL_PREFETCH": flag, "NUMBA_CACHE_DIR": str(tmp_path / f"cache{flag}")}
        run = subprocess.run(
            [sys.executable, "-m", "fastcdl", "metrics", str(path), "--json"], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr[-2000:]
        out[flag] = run.stdout
    assert out["1"] == out["0"]
    assert any(f.suffix == ".nbi" for f in (tmp_path / "cache1").rglob("*"))
