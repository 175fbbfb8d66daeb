"""Metric kernels, each next to the baseline a user would otherwise run, in the same run.

Data come from a fixed numpy Generator; setup() calls every kernel once so that timings
never include JIT compilation.
"""

import numpy as np

import fastcdl as fc

from .data import numpy_binning, sample_rounds, table


class BucketStatsSuite:
    """bucket_stats against numpy: summing the same arrays (the memory bound) and bincount."""

    params = ([10**5, 10**7, 10**8], [None, 15, 1000])
    param_names = ["T", "bins"]
    timeout = 600

    def setup(self, T, bins):
        if bins is None and T > 10**7:
            raise NotImplementedError("exact buckets sort; 10^8 rounds is out of this suite's budget")
        self.y, self.p = sample_rounds(T)
        self.edges = np.linspace(0.0, 1.0, (bins or 1) + 1)
        # warmed on the whole input: the large-input kernels (the radix sort, the threaded binning)
        # compile only for inputs that use them, so a warm-up on a few rounds left their compile in
        # the first timed call, which a --quick run times alone (docs/asv-history.md)
        fc.bucket_stats(self.y, self.p, bins=bins)

    def time_bucket_stats(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins=bins)

    def time_numpy_sum(self, T, bins):
        self.p.sum()
        self.y.sum()

    def peakmem_bucket_stats(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins=bins)


class BucketStatsThreadsSuite:
    """One thread against two for each kernel that can use a second one (results/benchmarks/
    bucket-speed.md): binning with uniform, quantile and weighted bins, and the exact table
    (bins=None, whose sort runs in two halves side by side); float64 outcomes, which are
    converted to bytes first, next to bool ones."""

    params = (["uniform", "uniform-float64-y", "quantile", "weighted", "exact"], [1, 2])
    param_names = ["kind", "threads"]
    timeout = 600

    def setup(self, kind, threads):
        T = 10**7 if kind == "exact" else 3 * 10**7
        self.y, self.p = sample_rounds(T)
        if kind == "uniform-float64-y":
            self.y = self.y.astype(np.float64)
        self.w = np.random.default_rng(1).random(T) if kind == "weighted" else None
        self.kw = {"bins": None} if kind == "exact" else {"bins": 1000, "n_jobs": threads}
        if kind == "quantile":
            self.kw["strategy"] = "quantile"
        self.threads = threads
        self.time_bucket_stats(kind, threads)

    def time_bucket_stats(self, kind, threads):
        import numba

        if kind != "exact" or threads == 2:
            fc.bucket_stats(self.y, self.p, sample_weight=self.w, **self.kw)
            return
        old = numba.config.NUMBA_NUM_THREADS  # the exact table's paired sort runs when it is >= 2
        numba.config.NUMBA_NUM_THREADS = 1
        try:
            fc.bucket_stats(self.y, self.p, **self.kw)
        finally:
            numba.config.NUMBA_NUM_THREADS = old

    def time_numpy_sum(self, kind, threads):
        self.p.sum()
        self.y.sum()


class BincountBaselineSuite:
    """What a numpy user writes for the same binning: searchsorted and three bincounts."""

    params = ([10**5, 10**7, 10**8], [15, 1000])
    param_names = ["T", "bins"]
    timeout = 600

    def setup(self, T, bins):
        self.y, self.p = sample_rounds(T)
        self.edges = np.linspace(0.0, 1.0, bins + 1)

    def time_numpy_bincount(self, T, bins):
        numpy_binning(self.edges, self.y, self.p)


class CDLSuite:
    """Envelope kernels on a bucket table of m buckets (O(m log m))."""

    params = [10**2, 10**4, 10**6]
    param_names = ["m"]

    def setup(self, m):
        self.stats = table(m)
        self.x2 = np.random.default_rng(2).random(2 * m)
        small = table(3)
        self.payoff = np.array([[1.0, 0.0], [0.55, 0.6], [0.0, 1.0]])
        for f in (fc.cdl, fc.cdl_report, fc.vcdl, fc.ucal, fc.ece, fc.k2, fc.decision_loss_curve):
            f(small)
        fc.cfdl(small, payoff=self.payoff)
        fc.swap_regret(small, payoff=self.payoff)

    def time_cdl(self, m):
        fc.cdl(self.stats)

    def time_numpy_sort_2m(self, m):
        """The O(m log m) floor of the exact CDL: numpy sorting 2 m floats (issue 28: cdl within 5x)."""
        np.sort(self.x2)

    def time_cdl_report(self, m):
        fc.cdl_report(self.stats)

    def time_vcdl(self, m):
        fc.vcdl(self.stats)

    def time_ucal(self, m):
        fc.ucal(self.stats)

    def time_ece(self, m):
        fc.ece(self.stats)

    def time_decision_loss_curve(self, m):
        fc.decision_loss_curve(self.stats)

    def time_cfdl(self, m):
        fc.cfdl(self.stats, payoff=self.payoff)

    def time_swap_regret(self, m):
        fc.swap_regret(self.stats, payoff=self.payoff)

    def track_cdl(self, m):
        return fc.cdl(self.stats)

    track_cdl.unit = "CDL"


class CrowdedQuantileSuite:
    """Equal-mass bins of 10^6 scores crowded into one cell of the counting grid (width 2^-20
    around 1/2): the cell's values are sorted (fastcdl._compiled.buckets.intro_sort, 15 ranks in
    one cell) or selected (select, 3 ranks), not counted."""

    params = [3, 15]
    param_names = ["bins"]

    def setup(self, bins):
        rng = np.random.default_rng(2)
        self.p = 0.5 + rng.random(10**6) * 2.0**-21
        self.y = rng.random(10**6) < 0.5
        fc.bucket_stats(self.y, self.p, bins=bins, strategy="quantile")

    def time_bucket_stats(self, bins):
        fc.bucket_stats(self.y, self.p, bins=bins, strategy="quantile")
