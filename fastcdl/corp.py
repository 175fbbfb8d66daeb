"""The CORP decomposition of a proper score through isotonic regression: :func:`corp`.

Dimitriadis, Gneiting and Jordan ("Stable reliability diagrams for probabilistic classifiers",
PNAS 118(8), 2021) recalibrate the predictions by isotonic regression (the pool-adjacent-
violators algorithm, PAV: Consistent, Optimally binned, Reproducible, PAV-based: CORP) and split
the mean score S of the predictions into three parts,

    S(p) = MCB - DSC + UNC,   MCB = S(p) - S(c),   DSC = S(ybar) - S(c),   UNC = S(ybar),

where c is the isotonic recalibration of p, ybar the frequency of y = 1, and S(.) the mean score of
the forecasts in brackets: miscalibration (what recalibrating would gain), discrimination (what the
recalibrated forecasts gain over the climatology ybar) and uncertainty (the climatology's score).
This is Murphy's (1973) decomposition with the bins chosen by PAV, which needs no tuning and
whose identity holds exactly. The recalibration is the one fastcdl's CDL_M judges
(:func:`fastcdl.cdl_monotone_report`): MCB is the gain of the best monotone recalibration in one
proper score, CDL_M the largest gain in any decision task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._compiled import estimators as _k
from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._validate import ValidationError, check_name

__all__ = ["CORPDecomposition", "corp", "SCORES", "isotonic_table"]

#: The scores :func:`corp` decomposes.
SCORES = ("brier", "log")


def isotonic_table(st):
    """(q, n, s, c): the exact table's predictions, counts, ones and the isotonic (PAV)
    recalibration c_i of each bucket (weights n_i; ties are one bucket, so they share a value).
    O(m). A binned table is refused: its bins stand for predictions it does not keep.

    >>> import fastcdl as fc
    >>> isotonic_table(fc.bucket_stats([1, 0, 1, 1], [0.2, 0.4, 0.6, 0.8]))[3].tolist()
    [0.5, 0.5, 1.0, 1.0]
    """
    if st.edges is not None:
        raise ValidationError(
            "y_true",
            "is a binned BucketStats",
            message="the isotonic recalibration needs each round's prediction, which a binned BucketStats does not "
            "keep: pass y_true and y_prob, or an exact table (bins=None)",
        )
    q, n, s = st.table()
    n = np.asarray(n, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    return q, n, s, _k.pav_kernel(n, s)


def _xlogy(x, y):
    """x log y with 0 log 0 = 0 (and x log 0 = -inf for x > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    return np.where(x == 0, 0.0, out)


def _mean_score(score, p, n, s):
    """(1/T) sum over buckets of the score of prediction p_i for s_i ones and n_i - s_i zeros."""
    T = n.sum()
    if score == "brier":
        return float(np.sum(s * (1.0 - p) ** 2 + (n - s) * p * p) / T)
    return float(-np.sum(_xlogy(s, p) + _xlogy(n - s, 1.0 - p)) / T)


@dataclass(frozen=True)
class CORPDecomposition:
    """A mean score split as score = mcb - dsc + unc (to rounding).

    Attributes
    ----------
    score : float
        The mean score of the predictions (Brier: mean (p - y)^2; log: mean -log of the
        probability given to what happened; inf when a prediction of 0 or 1 met the other
        outcome).
    mcb : float
        Miscalibration, score - score of the isotonic recalibration: at least 0 (up to rounding).
    dsc : float
        Discrimination, score of ybar - score of the recalibration: at least 0 (up to rounding).
    unc : float
        Uncertainty, the score of the constant prediction ybar.
    kind : str
        "brier" or "log".
    values, recalibrated : ndarray
        The distinct predictions and their isotonic recalibration: the CORP reliability
        diagram (a step function).

    Examples
    --------
    >>> d = corp([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    >>> round(d.mcb - d.dsc + d.unc, 12) == round(d.score, 12)
    True
    """

    score: float
    mcb: float
    dsc: float
    unc: float
    kind: str
    values: np.ndarray
    recalibrated: np.ndarray

    @property
    def value(self) -> float:
        """MCB, the miscalibration."""
        return self.mcb

    def __repr__(self) -> str:
        return (
            f"CORPDecomposition({self.kind}: score={self.score:.6g} = MCB {self.mcb:.6g} - DSC {self.dsc:.6g} "
            f"+ UNC {self.unc:.6g})"
        )


@accepts_multiclass(kind="report")
@fill_docstring
def corp(y_true, y_prob=None, *, sample_weight=None, score="brier"):
    """The CORP decomposition of the mean Brier or log score: MCB - DSC + UNC. O(m) after the table.

    The isotonic (PAV) recalibration c of the predictions, fitted with the bucket counts as
    weights (tied predictions are one bucket and get one value), gives MCB = S(p) - S(c), DSC =
    S(ybar) - S(c) and UNC = S(ybar), whose combination MCB - DSC + UNC is S(p) (Dimitriadis,
    Gneiting and Jordan 2021). Both parts are at least 0: PAV minimises the Brier score, and every
    proper score, over non-decreasing recalibrations, and the constant ybar is one of them. For the
    log score, a prediction of 0 (or 1) for a round whose outcome was 1 (or 0) makes the score and
    MCB infinite (inf, not an error: the log score is infinite there); 0 log 0 counts as 0, so a
    recalibrated value of 0 or 1 where the outcomes agree costs nothing. Sample weights weigh the
    rounds.

    Parameters
    ----------
    {{y_true}}
        A binned BucketStats is refused (the scores need each round's prediction).
    {{y_prob}}
    {{sample_weight}}
    score : {"brier", "log"}, default "brier"
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    CORPDecomposition

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> d = corp([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    >>> round(d.score, 4), round(d.mcb, 4), round(d.dsc, 4), round(d.unc, 4)
    (0.17, 0.07, 0.14, 0.24)
    """
    check_name(score, SCORES, "score")
    st = stats_of(y_true, y_prob, None, sample_weight)
    q, n, s, c = isotonic_table(st)
    ybar = float(s.sum() / n.sum())
    S_p = _mean_score(score, q, n, s)
    S_c = _mean_score(score, c, n, s)
    S_0 = _mean_score(score, np.full_like(q, ybar), n, s)
    # S(c) is finite (PAV's values are 0 or 1 only where the outcomes agree): inf - S(c) = inf
    return CORPDecomposition(S_p, S_p - S_c, S_0 - S_c, S_0, score, q, c)
