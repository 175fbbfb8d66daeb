"""The discretised minimax solver for 2 x K games (docs/algorithm1.md), public wrapper."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._kernels.minimax import minimax_2xk
from fastcdl._validate import check_gains

__all__ = ["MinimaxSolution", "minimax"]


@dataclass(frozen=True)
class MinimaxSolution:
    """value: the forecaster's guaranteed loss max_y E[A[j, y]] under ``probs`` on ``points``
    (indices into the rows of the game); lam: an optimal P(y = 1) for the adversary."""

    value: float
    lam: float
    points: tuple
    probs: tuple


def minimax(gains) -> MinimaxSolution:
    """Solve the zero-sum game "forecaster picks a row j of ``gains``, adversary picks y in {0, 1}",
    where gains[j, y] is the adversary's gain (the forecaster's loss). O(K log K).

    The value is max over lam in [0, 1] of min_j ((1 - lam) gains[j, 0] + lam gains[j, 1]),
    the maximum of a lower envelope of K lines; the forecaster's optimal strategy mixes at
    most two rows (the two lines crossing at the maximum).

    >>> sol = minimax([[0.0, 1.0], [1.0, 0.0]])
    >>> sol.value, sol.probs
    (0.5, (0.5, 0.5))
    """
    A = check_gains(gains)
    idx = np.full(2, -1, dtype=np.int64)
    prob = np.zeros(2)
    value, lam = minimax_2xk(A, idx, prob)
    k = 1 if idx[1] < 0 else 2
    return MinimaxSolution(float(value), float(lam), tuple(int(i) for i in idx[:k]), tuple(float(p) for p in prob[:k]))
