"""Exact multiclass CDL: the constraint-generation LP (fastcdl.cdl_multiclass) next to the first
formulation (every ordered pair of R, point masses included; fastcdl.multiclass._cdl_lp_all_pairs)
on the same inputs. The inputs are the ones scripts/bench_multiclass.py times
(results/benchmarks/multiclass.md), where the larger cases run in fresh processes with the old
formulation under a time limit; here the cases small enough for both.
"""

import numpy as np

import fastcdl as fc
from ._compat import optional

_cdl_lp_all_pairs = optional("fastcdl.multiclass", "_cdl_lp_all_pairs")


def synthetic(m, k=10, per=20, seed=0):
    """m Dirichlet(0.5) rows over k outcomes rounded to 0.01, per rounds each, outcomes drawn from
    the rows pulled 30% toward uniform."""
    rng = np.random.default_rng(seed)
    Q = np.round(rng.dirichlet(np.full(k, 0.5), size=m), 2)
    Q[:, -1] = 0.0
    Q[:, -1] = 1.0 - Q.sum(axis=1)
    Q = Q[(Q >= 0).all(axis=1)]
    P = Q[rng.integers(0, Q.shape[0], per * m)]
    truth = 0.7 * P + 0.3 / k
    y = np.minimum((rng.random(P.shape[0])[:, None] > np.cumsum(truth, axis=1)).sum(axis=1), k - 1)
    return y, P


def digits():
    """The scikit-learn digits test split (T = 899), a logistic regression's predict_proba rounded
    to 0.01 and renormalised."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=0)
    P = LogisticRegression(max_iter=5000).fit(Xtr, ytr).predict_proba(Xte)
    R = np.round(P, 2)
    return yte, R / R.sum(axis=1, keepdims=True)


def case(name):
    """The inputs of a case: "digits" or a number of distinct rows m."""
    return digits() if name == "digits" else synthetic(int(name))


class MulticlassCDLSuite:
    """cdl_multiclass (new) and the all-pairs LP (old) on m = 50 synthetic rows and on digits."""

    params = (["50", "digits"], ["new", "old"])
    param_names = ["case", "formulation"]
    timeout = 300

    def setup(self, name, formulation):
        try:
            self.y, self.P = case(name)
        except ImportError:
            raise NotImplementedError("scikit-learn is not installed") from None
        self.f = fc.cdl_multiclass if formulation == "new" else _cdl_lp_all_pairs

    def time_cdl_multiclass(self, name, formulation):
        self.f(self.y, self.P)
