"""Quick local speed comparisons (pytest-benchmark). Disabled in `make test`; run with

    make bench            # = .venv/bin/python -m pytest tests/bench --benchmark-enable

Each group times fastcdl next to the numpy code a user would otherwise write.
"""

import numpy as np
import pytest

import fastcdl as fc

T = 10**6


@pytest.fixture(scope="module")
def rounds():
    rng = np.random.default_rng(0)
    p = rng.random(T)
    y = rng.random(T) < p
    fc.bucket_stats(y[:10], p[:10], bins=15)
    fc.bucket_stats(y[:10], p[:10])
    return y, p


@pytest.mark.benchmark(group="binned ECE, T=1e6, 15 bins")
def test_ece_fastcdl(benchmark, rounds):
    y, p = rounds
    benchmark(fc.ece, y, p, bins=15)


@pytest.mark.benchmark(group="binned ECE, T=1e6, 15 bins")
def test_ece_numpy_bincount(benchmark, rounds):
    y, p = rounds
    edges = np.linspace(0, 1, 16)

    def ece_numpy():
        j = np.searchsorted(edges[1:-1], p)
        n = np.bincount(j, minlength=15)
        s = np.bincount(j, weights=y, minlength=15)
        ps = np.bincount(j, weights=p, minlength=15)
        return np.abs(ps - s).sum() / n.sum()

    value = benchmark(ece_numpy)
    assert value == pytest.approx(fc.ece(y, p, bins=15), abs=1e-12)


@pytest.mark.benchmark(group="exact bucket table, T=1e6")
def test_bucket_stats_exact(benchmark, rounds):
    y, p = rounds
    benchmark(fc.bucket_stats, y, p)


@pytest.mark.benchmark(group="exact bucket table, T=1e6")
def test_numpy_unique(benchmark, rounds):
    y, p = rounds
    benchmark(np.unique, p, return_counts=True)


@pytest.mark.benchmark(group="CDL of 1e5 buckets")
@pytest.mark.parametrize("name", ["cdl", "vcdl", "ucal", "cdl_report"])
def test_envelope(benchmark, name):
    rng = np.random.default_rng(1)
    q = np.sort(rng.random(10**5))
    n = rng.integers(1, 50, q.shape[0])
    st = fc.BucketStats(q, n, rng.binomial(n, q), q * n)
    f = getattr(fc, name)
    f(st)
    benchmark(f, st)
