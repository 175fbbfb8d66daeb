"""The measures of model scores (docs/model-scores.md), from the rounds, next to np.sort of the
same predictions timed in the same run (the baseline: every measure that needs the rounds in
order costs at least a sort).

- ModelScoresSuite: each measure on T continuous scores (T = 10^4, 10^5, 10^6), and np.sort.
  Target (reported by scripts/bench_model_scores.py, not asserted): each within a small multiple
  of np.sort, from O(T) or O(T log T) work.
- SmoothECERelplotSuite: fc.smece next to relplot's smECE on the same rounds (skipped without
  relplot). Target: at least 10x faster at 10^6 rounds.
- LDTCSuite: fc.ldtc's linear program on tables of 12 and 50 buckets.

Every function is called once in setup() on a small input, so no timing includes compilation.
"""

import numpy as np

import fastcdl as fc

from .data import fresh, sample_rounds

# name -> f(y, p): what ModelScoresSuite times (scripts/bench_model_scores.py reads this too)
MEASURES = {
    "calibration_error_l2": lambda y, p: fc.calibration_error(y, p, n_bins=15),
    "calibration_error_quantile": lambda y, p: fc.calibration_error(y, p, n_bins=15, strategy="quantile"),
    "smece": lambda y, p: fc.smece(y, p),
    "intce_shifted": lambda y, p: fc.intce(y, p, method="shifted"),
    "hosmer_lemeshow_test": lambda y, p: fc.hosmer_lemeshow_test(y, p),
    "spiegelhalter_test": lambda y, p: fc.spiegelhalter_test(y, p),
    "ks_test": lambda y, p: fc.ks_test(y, p),
    "calibration_slope": lambda y, p: fc.calibration_slope(y, p),
    "corp": lambda y, p: fc.corp(y, p),
    "ici": lambda y, p: fc.ici(y, p),
}


def scores(T, seed=0):
    """T continuous scores strictly inside (0, 1) (the slope needs logits) and their outcomes."""
    y, p = sample_rounds(T, seed=seed)
    return y, np.clip(p, 1e-6, 1 - 1e-6)


def _warm():
    y, p = scores(2000, seed=1)
    for f in MEASURES.values():
        f(y, p)


class ModelScoresSuite:
    params = [10**4, 10**5, 10**6]
    param_names = ["T"]
    timeout = 600

    def setup(self, T):
        self.y, self.p = scores(T)
        _warm()

    def time_np_sort(self, T):
        np.sort(self.p)


for _name, _f in MEASURES.items():

    def _timer(self, T, _f=_f):
        _f(self.y, self.p)

    _timer.__name__ = f"time_{_name}"
    setattr(ModelScoresSuite, f"time_{_name}", _timer)


class SmoothECERelplotSuite:
    params = [10**5, 10**6]
    param_names = ["T"]
    timeout = 600

    def setup(self, T):
        try:
            import relplot  # noqa: F401
        except ImportError:
            raise NotImplementedError("relplot is not installed")
        self.y, self.p = scores(T)
        self.yf = self.y.astype(np.float64)
        # warmed on the whole input: from 2^17 rounds smECE rounds onto its grids with a compiled
        # kernel, which a warm-up on 2000 rounds would leave to the first timed call
        fc.smece(self.y, self.p)

    def time_fastcdl_smece(self, T):
        fc.smece(self.y, self.p)

    def time_relplot_smece(self, T):
        import relplot

        relplot.smECE(self.p, self.yf)


class LDTCSuite:
    params = [12, 50]
    param_names = ["buckets"]
    timeout = 600

    def setup(self, m):
        rng = np.random.default_rng(0)
        p = np.round(rng.random(5000) * (m - 1)) / (m - 1)
        y = (rng.random(5000) < p**1.5).astype(np.int64)
        self.stats = fc.bucket_stats(y, p)
        fc.ldtc(fc.bucket_stats(y[:50], p[:50]), grid=20)

    def time_ldtc(self, m):
        fc.ldtc(fresh(self.stats))
