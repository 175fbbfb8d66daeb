"""The discretised 2 x K minimax solver next to the linear program a user would write instead.

The game: the forecaster picks one of K grid points, the adversary y in {0, 1}. The LP
baseline (scipy's HiGHS) minimises v subject to sum_j x_j A[j, y] <= v for y = 0, 1 over
the simplex; fastcdl's solver walks the lower envelope of K lines, O(K log K).
"""

import numpy as np
from scipy.optimize import linprog

from ._compat import optional

minimax = optional("fastcdl.online", "minimax")


def _game(K, seed=0):
    """Step-1-like gains: c_j (p_j - y) on a grid p_j, with c changing sign once."""
    rng = np.random.default_rng(seed)
    p = np.linspace(0.0, 1.0, K)
    c = np.sort(rng.normal(size=K))
    return np.column_stack([c * p, c * (p - 1.0)])


def _lp_value(A):
    K = A.shape[0]
    obj = np.r_[np.zeros(K), 1.0]
    A_ub = np.column_stack([A.T, -np.ones(2)])
    A_eq = np.r_[np.ones(K), 0.0][None, :]
    bounds = [(0, None)] * K + [(None, None)]
    return linprog(obj, A_ub=A_ub, b_ub=np.zeros(2), A_eq=A_eq, b_eq=[1.0], bounds=bounds, method="highs").fun


class MinimaxSuite:
    params = [10, 1000, 100000]
    param_names = ["K"]

    def setup(self, K):
        self.A = _game(K)
        minimax(_game(4))

    def time_minimax(self, K):
        minimax(self.A)


class MinimaxLPSuite:
    """The HiGHS LP of the same games (up to K = 1000: it is dense in K)."""

    params = [10, 1000]
    param_names = ["K"]

    def setup(self, K):
        self.A = _game(K)
        minimax(_game(4))

    def time_highs_lp(self, K):
        _lp_value(self.A)

    def track_value_gap_to_lp(self, K):
        """|fastcdl value - HiGHS value|: a correctness track next to the timings."""
        return abs(minimax(self.A).value - _lp_value(self.A))

    track_value_gap_to_lp.unit = "abs difference"
