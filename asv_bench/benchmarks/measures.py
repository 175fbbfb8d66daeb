"""Every measure of the registry (fastcdl.measures) on one bucket table: a new measure is timed
here without naming it. Compare with CDLSuite (metrics.py) for the envelope kernels alone."""

import warnings

import numpy as np

import fastcdl as fc
from ._compat import optional
from .data import fresh

MEASURES = optional("fastcdl.measures", "TABLE_MEASURES")


def _table(m, seed=0):
    rng = np.random.default_rng(seed)
    q = np.sort(rng.random(m))
    n = rng.integers(1, 100, m)
    s = rng.binomial(n, q)
    return fc.BucketStats(q, n, s, q * n)


class MeasureSuite:
    """One measure of a table of m buckets (the sample estimators' cost grows as m log m, smCE's
    and CDL_M's fastest)."""

    params = ([10**3, 10**5], list(MEASURES) if MEASURES else ["cdl"])  # an older fastcdl: setup skips
    param_names = ["m", "measure"]
    timeout = 300

    def setup(self, m, measure):
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        self.measure = MEASURES[measure]
        self.stats = _table(m)
        if not self.measure.applies(self.stats):
            raise NotImplementedError(f"{measure} does not apply to this table")
        self.measure(_table(5))  # compiled before timing

    def time_measure(self, m, measure):
        self.measure(fresh(self.stats))


class SummarySuite:
    """fc.summary: every measure, the certificate and the cutoff test of one table."""

    params = [10**3, 10**5]
    param_names = ["m"]
    timeout = 300

    def setup(self, m):
        warnings.simplefilter("ignore", fc.SampleSizeWarning)
        self.stats = _table(m)
        fc.summary(_table(5))

    def time_summary(self, m):
        fc.summary(fresh(self.stats))
