"""The simplest code a numba user writes for what the bucket kernels and the engine's round
compute, next to fastcdl's: the floors of results/benchmarks/bucket-speed.md
(scripts/bench_buckets.py times these definitions too).

The simplest binning bins with ceil(p m) - 1 and adds n, s and p into three arrays (no edge rule,
no checks); the simplest exact table sorts uint64 outcome keys with numpy and counts their runs in
one numba loop; the simplest game plays truthful against bernoulli(prob) on the grid of m + 1
points. setup() compiles each first.
"""

import numpy as np
from numba import njit

import fastcdl as fc
from ._compat import optional
from .data import sample_rounds

simulate = optional("fastcdl.online", "simulate")

GAME_T = 1 << 22  # rounds of the game, and the probability of bernoulli
GAME_PROB = 0.3


@njit(cache=False)
def simplest_binning(y, p, m):
    """The loop a numba user writes: no edge rule, no checks, three scattered adds."""
    n = np.zeros(m, dtype=np.int64)
    s = np.zeros(m)
    ps = np.zeros(m)
    for t in range(p.shape[0]):
        x = p[t]
        j = max(0, min(int(np.ceil(x * m)) - 1, m - 1))
        n[j] += 1
        s[j] += y[t]
        ps[j] += x
    return n, s, ps


@njit(cache=False)
def runs_of_sorted_keys(keys):
    """Exact table from sorted outcome keys (bits of p, then y): values' bits, counts, positives."""
    m = 0
    for i in range(keys.shape[0]):
        if i == 0 or (keys[i] >> 1) != (keys[i - 1] >> 1):
            m += 1
    v = np.empty(m, dtype=np.uint64)
    n = np.zeros(m, dtype=np.int64)
    s = np.zeros(m, dtype=np.int64)
    j = -1
    for i in range(keys.shape[0]):
        if i == 0 or (keys[i] >> 1) != (keys[i - 1] >> 1):
            j += 1
            v[j] = keys[i] >> 1
        n[j] += 1
        s[j] += keys[i] & 1
    return v, n, s


def simplest_exact(y, p):
    """The exact table (values, counts, positives, prediction sums) the plain way."""
    keys = (p.view(np.uint64) << np.uint64(1)) | y.view(np.uint8).astype(np.uint64)
    keys.sort()
    v, n, s = runs_of_sorted_keys(keys)
    q = v.view(np.float64)
    return q, n, s, q * n


@njit(cache=False)
def simplest_truthful_game(T, m, prob, seed):
    """truthful against bernoulli(prob), written plainly: state the grid point nearest the
    probability, draw the outcome, count it in the table."""
    np.random.seed(seed)
    n = np.zeros(m + 1, dtype=np.int64)
    s = np.zeros(m + 1, dtype=np.int64)
    for t in range(T):
        j = min(max(int(np.floor(prob * m + 0.5)), 0), m)
        y = 1 if np.random.random() < prob else 0
        n[j] += 1
        s[j] += y
    return n, s


class SimplestBinningSuite:
    """bucket_stats(bins=1000) on one thread next to the simplest loop, T = 1e7 (float64 and bool
    outcomes)."""

    params = ["float64", "bool"]
    param_names = ["outcomes"]

    def setup(self, outcomes):
        self.y, self.p = sample_rounds(10**7)
        if outcomes == "float64":
            self.y = self.y.astype(np.float64)
        simplest_binning(self.y[:10], self.p[:10], 1000)
        fc.bucket_stats(self.y[:10], self.p[:10], bins=1000, n_jobs=1)

    def time_bucket_stats(self, outcomes):
        fc.bucket_stats(self.y, self.p, bins=1000, n_jobs=1)

    def time_simplest_loop(self, outcomes):
        simplest_binning(self.y, self.p, 1000)


class SimplestExactTableSuite:
    """The exact table (bins=None) next to the simplest code computing it, T = 1e7."""

    def setup(self):
        self.y, self.p = sample_rounds(10**7)
        simplest_exact(self.y[:10], self.p[:10])
        fc.bucket_stats(self.y[:10], self.p[:10])

    def time_bucket_stats_exact(self):
        fc.bucket_stats(self.y, self.p)

    def time_simplest_exact(self):
        simplest_exact(self.y, self.p)

    def time_numpy_sort(self):
        np.sort(self.p)

    def time_numpy_unique(self):
        np.unique(self.p, return_counts=True)


class SimplestGameSuite:
    """simulate('truthful', 'bernoulli') next to the simplest loop playing the same game, T = 2^22."""

    def setup(self):
        simulate("truthful", "bernoulli", horizon=1024, seed=0, adversary_params={"p": GAME_PROB})
        simplest_truthful_game(1024, 32, GAME_PROB, 0)

    def time_simulate_truthful(self):
        simulate("truthful", "bernoulli", horizon=GAME_T, seed=1, adversary_params={"p": GAME_PROB})

    def time_simplest_game(self):
        simplest_truthful_game(GAME_T, int(np.ceil(np.sqrt(GAME_T))), GAME_PROB, 1)
