"""The inputs and numpy baselines the suites time, defined once: asv's suites import them, and
so do the scripts that write results/benchmarks/ (scripts/benchrecord.py's definitions())."""

import numpy as np

import fastcdl as fc


def sample_rounds(T, seed=0):
    """T rounds: p ~ U[0, 1] (distinct almost surely), y ~ Bernoulli(p) as bool."""
    rng = np.random.default_rng(seed)
    p = rng.random(T)
    y = rng.random(T) < p
    return y, p


def table(m, seed=0):
    """A bucket table of m buckets: q sorted uniform, n in 1..99, s ~ Bin(n, q)."""
    rng = np.random.default_rng(seed)
    q = np.sort(rng.random(m))
    n = rng.integers(1, 100, m)
    s = rng.binomial(n, q)
    return fc.BucketStats(q, n, s, q * n)


def numpy_binning(edges, y, p):
    """What a numpy user writes for fastcdl's right-closed bins: searchsorted and three bincounts
    (counts, outcome sums, prediction sums)."""
    bins = edges.shape[0] - 1
    j = np.searchsorted(edges[1:-1], p)
    return (
        np.bincount(j, minlength=bins),
        np.bincount(j, weights=y, minlength=bins),
        np.bincount(j, weights=p, minlength=bins),
    )


def fresh(stats):
    """A new table object holding the same arrays (no copy of them, O(1)). Some estimators keep
    what they computed for the last table they saw (a BucketStats is immutable; the report's
    measures and intervals share it: fastcdl._tables.last_table), so a benchmark that calls one
    twice on the same object would time that lookup, not the estimator."""
    import copy

    return copy.copy(stats)
