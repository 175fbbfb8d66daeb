"""Sample estimators (fastcdl.sample) and resampling (fastcdl.uncertainty), each next to a baseline
timed in the same run.

- SampleEstimatorsSuite: every estimator on the exact bucket table of T = 10^7 continuous
  predictions (10^7 buckets), next to np.sort of those predictions. Target (reported, not
  asserted): each estimator within 3x of np.sort.
- SmoothECEPeerSuite: smCE (exact LP value) next to relplot's smECE (a kernel-smoothed ECE,
  a different quantity) on the same rounds; skipped when relplot is not installed.
- ResamplingSuite: 1000 bootstrap replicates and 1000 consistency simulations of a table of
  10^3 buckets. Target: well under a second.
- QuantileBinningSuite: strategy="quantile" next to equal-width bins of the same rounds.
  Target: within 2x.

Tables are built in setup() and every kernel is called once on a small table there, so no
timing includes JIT compilation.
"""

import numpy as np

import fastcdl as fc
from ._compat import optional
from .data import fresh, sample_rounds

fs = optional("fastcdl.sample")
fu = optional("fastcdl.uncertainty")

ESTIMATORS = (
    "cdl_monotone",
    "vcdl_monotone",
    "cdl_monotone_report",
    "cutoff_ce",
    "cutoff_ce_test",
    "atb",
    "atb_unbiased",
    "smce",
    "mce",
    "rmsce",
    "brier",
    "brier_decomposition",
)


def _warm():
    fc.bucket_stats(*sample_rounds(1 << 14, seed=2))  # from 2^14 rounds the exact table is radix-sorted
    y, p = sample_rounds(100, seed=1)
    st = fc.bucket_stats(y, p)
    for name in ESTIMATORS:
        getattr(fs, name)(st)
    fs.decision_loss_curve_monotone(st)
    return st


class SampleEstimatorsSuite:
    params = [10**5, 10**7]
    param_names = ["T"]
    timeout = 900

    def setup(self, T):
        self.y, self.p = sample_rounds(T)
        self.stats = fc.bucket_stats(self.y, self.p)
        _warm()

    def time_np_sort(self, T):
        np.sort(self.p)

    def time_exact_table(self, T):
        fc.bucket_stats(self.y, self.p)  # the outcome keys radix-sorted, then their runs

    def time_cdl_monotone(self, T):
        fs.cdl_monotone(fresh(self.stats))

    def time_vcdl_monotone(self, T):
        fs.vcdl_monotone(fresh(self.stats))

    def time_cdl_monotone_report(self, T):
        fs.cdl_monotone_report(fresh(self.stats))

    def time_cutoff_ce(self, T):
        fs.cutoff_ce(fresh(self.stats))

    def time_cutoff_ce_test(self, T):
        fs.cutoff_ce_test(fresh(self.stats))

    def time_atb(self, T):
        fs.atb(fresh(self.stats))

    def time_atb_unbiased(self, T):
        fs.atb_unbiased(fresh(self.stats))

    def time_smce(self, T):
        fs.smce(fresh(self.stats))

    def time_mce(self, T):
        fs.mce(fresh(self.stats))

    def time_rmsce(self, T):
        fs.rmsce(fresh(self.stats))

    def time_brier(self, T):
        fs.brier(fresh(self.stats))

    def time_brier_decomposition(self, T):
        fs.brier_decomposition(fresh(self.stats))

    def track_cdl_monotone(self, T):
        return fs.cdl_monotone(self.stats)

    track_cdl_monotone.unit = "CDL_M"

    def track_smce(self, T):
        return fs.smce(self.stats)

    track_smce.unit = "smCE"


def _smece():
    try:
        from relplot import smECE
    except ImportError:
        try:
            from relplot.metrics import smECE
        except ImportError:
            raise NotImplementedError("relplot is not installed") from None
    return smECE


class SmoothECEPeerSuite:
    params = [10**5, 10**6, 10**7]
    param_names = ["T"]
    timeout = 900

    def setup(self, T):
        self.smECE = _smece()
        self.y, self.p = sample_rounds(T)
        self.yf = self.y.astype(np.float64)
        _warm()

    def time_fastcdl_smce_from_rounds(self, T):
        fs.smce(self.y, self.p)  # the bucket table (one sort) and the exact LP value

    def time_relplot_smece(self, T):
        self.smECE(self.p, self.yf)


class ResamplingSuite:
    params = ["cutoff_ce", "smce", "cdl", "ece"]
    param_names = ["metric"]
    timeout = 600

    def setup(self, metric):
        rng = np.random.default_rng(0)
        m = 1000
        q = np.sort(rng.random(m))
        n = rng.integers(1, 100, m)
        s = rng.binomial(n, q)
        self.stats = fc.BucketStats(q, n, s, q * n)
        fu.bootstrap(metric, self.stats, n_boot=100, seed=0, method="bca")
        fu.calibration_test(self.stats, metric=metric, n_sim=5, seed=0)

    def time_bootstrap_1000_percentile(self, metric):
        fu.bootstrap(metric, self.stats, n_boot=1000, seed=1)

    def time_bootstrap_1000_bca(self, metric):
        fu.bootstrap(metric, self.stats, n_boot=1000, seed=1, method="bca")

    def time_calibration_test_1000(self, metric):
        fu.calibration_test(self.stats, metric=metric, n_sim=1000, seed=1)


class QuantileBinningSuite:
    """Equal-mass bins (strategy="quantile") next to equal-width bins of the same rounds, and
    the quantile edges passed as an array (binning through the grid of cells), with the
    default thread count and on one thread. Target (reported, not asserted): quantile within
    2x of equal width."""

    params = [[10**6, 10**7], [15, 215, 10**4]]
    param_names = ["T", "bins"]
    timeout = 600

    def setup(self, T, bins):
        self.y, self.p = sample_rounds(T)
        self.edges = fc.bucket_stats(self.y, self.p, bins=bins, strategy="quantile").edges
        fc.bucket_stats(self.y, self.p, bins=bins)

    def time_equal_width(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins=bins)

    def time_quantile(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins=bins, strategy="quantile")

    def time_quantile_edges_as_array(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins=self.edges)

    def time_auto_quantile(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins="auto", strategy="quantile")

    def time_equal_width_one_thread(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins=bins, n_jobs=1)

    def time_quantile_one_thread(self, T, bins):
        fc.bucket_stats(self.y, self.p, bins=bins, strategy="quantile", n_jobs=1)


class LiteratureEstimatorsSuite:
    """The estimators from the literature (debiased K2, the monotone-sweep ECE, the cross-fitted
    CDL_M and VCDL_M) on the exact table of T continuous predictions, next to np.sort of them."""

    params = [10**5, 10**6]
    param_names = ["T"]
    timeout = 900

    def setup(self, T):
        self.y, self.p = sample_rounds(T)
        self.stats = fc.bucket_stats(self.y, self.p)
        small = fc.bucket_stats(*sample_rounds(1000, seed=1))
        for name in ("k2_debiased", "ece_sweep", "cdl_monotone_crossfit", "vcdl_monotone_crossfit"):
            getattr(fs, name)(small)  # compiled outside the timing

    def time_np_sort(self, T):
        np.sort(self.p)

    def time_k2_debiased(self, T):
        fs.k2_debiased(fresh(self.stats))

    def time_ece_sweep(self, T):
        fs.ece_sweep(fresh(self.stats))

    def time_cdl_monotone_crossfit(self, T):
        fs.cdl_monotone_crossfit(fresh(self.stats))

    def time_vcdl_monotone_crossfit(self, T):
        fs.vcdl_monotone_crossfit(fresh(self.stats))


class IntervalsSuite:
    """The intervals `fastcdl metrics` prints: five estimators on 100,000 continuous scores, one
    fc.interval each against fc.intervals (the subsample tables built once). Same numbers;
    target: intervals well under the sum of the five."""

    timeout = 600
    KEYS = ("cdl_monotone", "vcdl_monotone", "cutoff_ce", "smce", "atb")

    def setup(self):
        import warnings

        warnings.simplefilter("ignore")
        self.stats = fc.bucket_stats(*sample_rounds(10**5))
        small = fc.bucket_stats(*sample_rounds(2000, seed=3))
        fu.intervals(self.KEYS, small, seed=0, n_sub=100)  # compiled here, not timed

    def time_one_interval_each(self):
        for key in self.KEYS:
            fu.interval(key, self.stats, seed=0)

    def time_intervals_shared(self):
        fu.intervals(self.KEYS, self.stats, seed=0)
