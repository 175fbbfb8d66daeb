"""The discretised minimax solver for 2 x K games (docs/algorithm1.md), public wrapper."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._compiled.minimax import minimax_2xk
from fastcdl._validate import check_gains

__all__ = ["MinimaxSolution", "minimax"]


@dataclass(frozen=True)
class MinimaxSolution:
    """The solution of a 2 x K game (:func:`minimax`); frozen.

    Attributes
    ----------
    value : float
        The forecaster's guaranteed loss max_y E[A[j, y]] under ``probs`` on ``points``.
    lam : float
        An optimal P(y = 1) for the adversary.
    points : tuple of int
        One or two rows of the game, the forecaster's optimal support.
    probs : tuple of float
        Their probabilities.

    Examples
    --------
    >>> minimax([[0.0, 1.0], [1.0, 0.0]])
    MinimaxSolution(value=0.5, lam=0.5, points=(0, 1), probs=(0.5, 0.5))
    """

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

    Parameters
    ----------
    gains : array-like of shape (K, 2)
        gains[j, y], finite.

    Returns
    -------
    MinimaxSolution
        The value, the adversary's optimal P(y = 1), and the forecaster's optimal rows with
        their probabilities.

    Raises
    ------
    ValidationError
        (a ValueError) for a wrong shape or a non-finite entry.

    Examples
    --------
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
