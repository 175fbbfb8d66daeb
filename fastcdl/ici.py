"""The integrated calibration index and its quantiles on the isotonic curve: :func:`ici` (docs/corp.md).

Austin and Steyerberg ("The Integrated Calibration Index (ICI) and related metrics for
quantifying the calibration of logistic regression models", Statistics in Medicine 38(21), 2019)
summarise the distance between each prediction p and the calibration curve c(p) = E[y | p]: its
mean (ICI), median (E50), 90th percentile (E90) and largest value (Emax). They estimate c by a
LOESS smoother; fastcdl uses the isotonic (PAV) recalibration instead, the curve of the CORP
reliability diagram (:func:`fastcdl.corp`): it needs no span or bandwidth, its value on a sample
is reproducible and exact, and it converges to the population curve wherever that curve is
non-decreasing (a non-monotone curve is seen through its best monotone approximation, as CDL_M
sees it). The numbers therefore differ from a LOESS-based ICI on the same data by the smoother's
choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl.corp import isotonic_table

__all__ = ["ICI", "ici", "weighted_lower_quantile"]

# below this many candidates a sort finishes the selection
_SORT_BELOW = 64


def weighted_lower_quantile(x, w, alpha: float) -> float:
    """The lower weighted alpha-quantile: the smallest x_i such that the x_j <= x_i carry at
    least alpha of the total weight, the share computed as (their weight) / (total weight).
    numpy's ``np.quantile(x, alpha, weights=w, method="inverted_cdf")``, up to the rounding of
    the weight sums (exactly for integer weights). x, w 1-D float arrays of one length >= 1,
    w > 0, alpha in (0, 1].

    O(m): a selection (np.partition at the median of the candidates, which halves them) rather
    than a sort.

    >>> weighted_lower_quantile(np.array([3.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0]), 0.5)
    2.0
    >>> weighted_lower_quantile(np.arange(10.0), np.ones(10), 0.9)  # 9 of 10 rounds at or below 8
    8.0
    """
    total = float(np.sum(w))
    below = 0.0  # the weight of the values already known to lie below every candidate
    while x.shape[0] > _SORT_BELOW:
        k = x.shape[0] // 2
        v = np.partition(x, k)[k]
        lower = x < v
        w_lower = float(np.sum(w[lower]))
        if (below + w_lower) / total >= alpha:
            x, w = x[lower], w[lower]
            continue
        w_at = float(np.sum(w[x == v]))
        if (below + w_lower + w_at) / total >= alpha:
            return float(v)
        below += w_lower + w_at
        upper = x > v
        x, w = x[upper], w[upper]
    order = np.argsort(x, kind="stable")
    share = (below + np.cumsum(w[order])) / total
    # the rounding of the weight sums can leave the last share a hair below alpha: the last value
    k = min(int(np.searchsorted(share, alpha, side="left")), x.shape[0] - 1)
    return float(x[order][k])


@dataclass(frozen=True)
class ICI:
    """The distance abs(p - c(p)) from the predictions to their isotonic recalibration c,
    summarised over the rounds.

    Attributes
    ----------
    ici : float
        Its mean over the rounds (weighted: by the weights).
    e50, e90 : float
        Its median and 90th percentile over the rounds, the lower weighted quantiles: the
        smallest distance with at least half (90%) of the rounds, or of the weight, at or below
        it (numpy's ``method="inverted_cdf"``).
    emax : float
        Its largest value over the rounds.
    value : float
        The same as ``ici``.

    Examples
    --------
    >>> ici([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    ICI(ici=0.14, e50=0.1, e90=0.3, emax=0.3)
    """

    ici: float
    e50: float
    e90: float
    emax: float

    @property
    def value(self) -> float:
        """The ICI."""
        return self.ici

    def __repr__(self) -> str:
        return f"ICI(ici={self.ici:.6g}, e50={self.e50:.6g}, e90={self.e90:.6g}, emax={self.emax:.6g})"


@accepts_multiclass(kind="report")
@fill_docstring
def ici(y_true, y_prob=None, *, sample_weight=None) -> ICI:
    """ICI, E50, E90 and Emax of Austin and Steyerberg (2019) on the isotonic calibration curve
    (docs/corp.md). O(m) after the bucket table.

    With c the isotonic (PAV) recalibration of the predictions (weights n_i; tied rounds are
    one bucket and share a value), the distance of round t is d_t = abs(p_t - c(p_t)): ICI is its
    mean over the rounds, E50 and E90 its lower weighted median and 90th percentile (the
    smallest d with at least 50% or 90% of the weight at or below it, numpy's "inverted_cdf"),
    Emax its maximum. Sample weights weigh the rounds.

    ICI is the expected calibration error of the exact table with each bucket's frequency
    replaced by its PAV value, (1/T) sum_i n_i abs(q_i - c_i). It lies between two ECEs: at least
    the ECE of the table binned by PAV's blocks (each block's mean prediction against its
    frequency; equal when within every block the predictions sit on one side of its
    frequency), at most the ECE of the exact buckets (:func:`fastcdl.ece`; PAV moves the
    frequencies no farther from the non-decreasing predictions). Also ICI^2 <= the Brier MCB
    of :func:`fastcdl.corp`.

    Parameters
    ----------
    {{y_true}}
        A binned BucketStats is refused: the distances need each round's prediction.
    {{y_prob}}
    {{sample_weight}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    ICI
        ici, e50, e90, emax (and ``value`` = ici); with ``multiclass="classwise"`` a
        :class:`fastcdl.ClasswiseResult` of them.

    Raises
    ------
    {{raises}}
        Also for a binned BucketStats (argument ``y_true``).

    Examples
    --------
    >>> r = ici([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    >>> round(r.ici, 4), round(r.e50, 4), round(r.e90, 4), round(r.emax, 4)
    (0.14, 0.1, 0.3, 0.3)
    """
    st = stats_of(y_true, y_prob, None, sample_weight)
    q, n, s, c = isotonic_table(st)
    d = np.abs(q - c)
    return ICI(
        ici=float(np.dot(n, d) / n.sum()),
        e50=weighted_lower_quantile(d, n, 0.5),
        e90=weighted_lower_quantile(d, n, 0.9),
        emax=float(d.max()),
    )
