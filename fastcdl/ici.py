"""The integrated calibration index and its quantiles on the isotonic curve: :func:`ici`.

Austin and Steyerberg ("The Integrated Calibration Index (ICI) and related metrics for
quantifying the calibration of logistic regression models", Statistics in Medicine 38(21), 2019)
summarise the distance between each prediction p and the calibration curve c(p) = E[y | p]: its
mean (ICI), median (E50), 90th percentile (E90) and largest value (Emax). They estimate c by a
LOESS smoother; fastcdl uses the isotonic (PAV) recalibration instead, the CORP curve
(:func:`fastcdl.corp`): it needs no span or bandwidth, its value on a sample is reproducible and
exact, and it converges to the population curve wherever that curve is non-decreasing (a
non-monotone curve is seen through its best monotone approximation, as CDL_M sees it). The
numbers therefore differ from a LOESS-based ICI on the same data by the smoother's choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl.corp import isotonic_table

__all__ = ["ICI", "ici", "weighted_lower_quantile"]


def weighted_lower_quantile(x, w, alpha: float) -> float:
    """The smallest x_i whose cumulative weight (x sorted) reaches alpha of the total: numpy's
    "inverted_cdf" quantile with weights. O(m log m).

    >>> weighted_lower_quantile(np.array([3.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0]), 0.5)
    2.0
    """
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    # alpha * total can land an ulp above a cumulative weight it equals (0.9 * 10 is
    # 9.000000000000002): a relative 1e-15 below it keeps that weight's value
    k = int(np.searchsorted(cum, alpha * cum[-1] * (1 - 1e-15)))
    return float(x[order][min(k, len(x) - 1)])


@dataclass(frozen=True)
class ICI:
    """The distance from each prediction to the isotonic calibration curve, summarised.

    Attributes
    ----------
    ici : float
        Mean of |p - c(p)| over the rounds.
    e50, e90 : float
        Its weighted median and 90th percentile over the rounds (the lower quantile: the
        smallest distance with at least half, or 90%, of the rounds at or below it).
    emax : float
        Its largest value over the predictions that occur.

    Examples
    --------
    >>> r = ici([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    >>> round(r.ici, 4), round(r.emax, 4)
    (0.14, 0.3)
    """

    ici: float
    e50: float
    e90: float
    emax: float

    @property
    def value(self) -> float:
        """The ICI."""
        return self.ici


@accepts_multiclass(kind="report")
@fill_docstring
def ici(y_true, y_prob=None, *, sample_weight=None):
    """ICI, E50, E90 and Emax of Austin and Steyerberg (2019), on the isotonic calibration curve.

    With c the isotonic (PAV) recalibration of the predictions (weights n_i, ties one bucket),
    ICI = (1/T) sum_t |p_t - c(p_t)|, E50 and E90 the weighted median and 90th percentile of
    |p_t - c(p_t)| over the rounds, Emax its largest value. O(m log m) after the table. The mean
    is at least the ECE of the table binned by PAV's blocks (each block's mean prediction against
    its frequency), with equality when every block holds one distinct prediction. Sample weights
    weigh the rounds.

    Parameters
    ----------
    {{y_true}}
        A binned BucketStats is refused (the curve is fitted on the rounds' predictions).
    {{y_prob}}
    {{sample_weight}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    ICI

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> r = ici([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    >>> round(r.e50, 4), round(r.e90, 4)
    (0.1, 0.3)
    """
    st = stats_of(y_true, y_prob, None, sample_weight)
    q, n, s, c = isotonic_table(st)
    d = np.abs(q - c)
    keep = n > 0
    return ICI(
        float(np.sum(n * d) / n.sum()),
        weighted_lower_quantile(d[keep], n[keep], 0.5),
        weighted_lower_quantile(d[keep], n[keep], 0.9),
        float(d[keep].max()),
    )
