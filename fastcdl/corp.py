"""The CORP decomposition of a proper score through isotonic regression: :func:`corp` (docs/corp.md).

Dimitriadis, Gneiting and Jordan ("Stable reliability diagrams for probabilistic classifiers",
PNAS 118(8), 2021) recalibrate the predictions by isotonic regression, computed by the pool-
adjacent-violators algorithm (PAV; CORP: Consistent, Optimally binned, Reproducible, PAV-based),
and split the mean score S of the predictions into three parts,

    S(p) = MCB - DSC + UNC,   MCB = S(p) - S(c),   DSC = S(ybar) - S(c),   UNC = S(ybar),

where c is the isotonic recalibration of p, ybar the frequency of y = 1, and S(.) the mean score of
the forecasts in brackets: miscalibration (what recalibrating would gain), discrimination (what the
recalibrated forecasts gain over the climatology ybar) and uncertainty (the climatology's score).
This is Murphy's (1973) decomposition with the bins chosen by PAV, which needs no tuning and whose
identity holds exactly. The recalibration is the one fastcdl's CDL_M judges
(:func:`fastcdl.cdl_monotone_report`): MCB is the gain of the best monotone recalibration in one
proper score, CDL_M the largest gain over all decision tasks, and MCB of the Brier score is at most
CDL_M.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._compiled import estimators as _k
from fastcdl._compiled._jit import readonly
from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._validate import ValidationError, check_name

__all__ = ["CORPDecomposition", "corp", "SCORES", "isotonic_table"]

#: The scores :func:`corp` decomposes.
SCORES = ("brier", "log")


def _binned_table_error():
    return ValidationError(
        "y_true",
        "is a binned BucketStats",
        message="the isotonic recalibration and the scores need each round's prediction, which a binned "
        "BucketStats does not keep (it carries sums of p per bin): pass y_true and y_prob, or an exact "
        "table (bins=None)",
    )


def _pav_blocks(st):
    """(q, n, s, start): the exact table and the first bucket of each block that the isotonic
    (PAV) fit pools. O(m)."""
    if st.edges is not None:
        raise _binned_table_error()
    q, n, s = st.table()
    n = np.asarray(n, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    fit = _k.pav_kernel(readonly(n), readonly(s))  # one compilation for every caller
    return q, n, s, np.flatnonzero(np.r_[True, fit[1:] != fit[:-1]])


def _per_bucket(block_values, start, m):
    return np.repeat(block_values, np.diff(np.r_[start, m]))


def isotonic_table(st):
    """(q, n, s, c) of an exact bucket table: the distinct predictions, the counts (or weight
    sums), the counts (or weights) of y = 1, and c_i, the isotonic (PAV) recalibration of bucket
    i: the non-decreasing fit of s_i / n_i with weights n_i. Tied rounds are one bucket, so they
    share a value. O(m).

    Each block of buckets that PAV pools gets its own ones over its own count, summed over the
    block alone (not as differences of sums over the whole table): the values lie in [0, 1], and
    are exactly 0 (or 1) where the block's outcomes are all 0 (or all 1). A binned table is
    refused (ValueError naming y_true): its bins stand for predictions it does not keep.

    >>> import fastcdl as fc
    >>> isotonic_table(fc.bucket_stats([1, 0, 1, 1], [0.2, 0.4, 0.6, 0.8]))[3].tolist()
    [0.5, 0.5, 1.0, 1.0]
    """
    q, n, s, start = _pav_blocks(st)
    c = _per_bucket(np.add.reduceat(s, start) / np.add.reduceat(n, start), start, q.shape[0])
    return q, n, s, c


def _brier_scores(p, s, z):
    """Per bucket, the summed Brier score of the prediction p_i over its s_i ones and z_i zeros."""
    return s * (1.0 - p) ** 2 + z * p * p


def _log_scores(log_p, log_1mp, s, z):
    """Per bucket, the summed log score -(s_i log p_i + z_i log(1 - p_i)) from the logarithms,
    with 0 log 0 = 0."""
    with np.errstate(invalid="ignore"):
        return -(np.where(s == 0, 0.0, s * log_p) + np.where(z == 0, 0.0, z * log_1mp))


def _log(x):
    with np.errstate(divide="ignore"):
        return np.log(x)


def _log1m(x):
    with np.errstate(divide="ignore"):
        return np.log1p(-x)


@dataclass(frozen=True, eq=False)
class CORPDecomposition:
    """A mean score split as score = mcb - dsc + unc (to rounding), and the CORP reliability
    diagram it comes from.

    Attributes
    ----------
    score : float
        The mean score of the predictions: Brier, mean (p - y)^2; log, mean -log of the
        probability given to the outcome that happened (inf when a prediction of 0 or 1 met
        the other outcome).
    mcb : float
        Miscalibration: score minus the score of the isotonic recalibration. At least 0 (to
        rounding), exactly 0 when the recalibration leaves every prediction as it is; inf with
        the score.
    dsc : float
        Discrimination: the score of the constant ybar minus that of the recalibration. At
        least 0 (to rounding); always finite.
    unc : float
        Uncertainty: the score of the constant prediction ybar (Brier ybar (1 - ybar); log its
        entropy in nats).
    score_name : str
        "brier" or "log".
    values : ndarray
        The distinct predictions, increasing (the table's buckets).
    recalibrated : ndarray
        Their isotonic (PAV) recalibration, non-decreasing: the CORP reliability diagram is
        the graph of ``recalibrated`` against ``values``.
    weights : ndarray
        The rounds (or weight) at each prediction, for a histogram under the diagram.
    value : float
        The same as ``mcb`` (the number a report ranks by).

    Examples
    --------
    >>> d = corp([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    >>> d
    CORPDecomposition(brier: score=0.17 = MCB 0.07 - DSC 0.14 + UNC 0.24)
    >>> d.blocks()
    (array([0.1, 0.3, 0.7]), array([0.1, 0.5, 0.9]), array([0. , 0.5, 1. ]), array([1., 2., 2.]))
    """

    score: float
    mcb: float
    dsc: float
    unc: float
    score_name: str
    values: np.ndarray
    recalibrated: np.ndarray
    weights: np.ndarray

    @property
    def value(self) -> float:
        """MCB, the miscalibration."""
        return self.mcb

    def blocks(self):
        """The PAV step function, one entry per block of pooled buckets: (lo, hi, level, weight),
        the block's lowest and highest prediction, its recalibrated value and its rounds (or
        weight). A display draws the level from lo to hi; a line through (values, recalibrated)
        instead joins consecutive blocks linearly. O(m).
        """
        c = self.recalibrated
        start = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        end = np.r_[start[1:], c.shape[0]] - 1
        return self.values[start], self.values[end], c[start], np.add.reduceat(self.weights, start)

    def __repr__(self) -> str:
        return (
            f"CORPDecomposition({self.score_name}: score={self.score:.6g} = MCB {self.mcb:.6g} "
            f"- DSC {self.dsc:.6g} + UNC {self.unc:.6g})"
        )


@accepts_multiclass(kind="report")
@fill_docstring
def corp(y_true, y_prob=None, *, sample_weight=None, score="brier") -> CORPDecomposition:
    """The CORP decomposition of the mean Brier or log score, score = MCB - DSC + UNC
    (Dimitriadis, Gneiting and Jordan 2021; docs/corp.md). O(m) after the bucket table.

    c is the isotonic (PAV) recalibration of the predictions, fitted to the outcomes with the
    bucket counts (or weight sums) as weights; tied predictions are one bucket and get one
    value. Then MCB = S(p) - S(c), DSC = S(ybar) - S(c) and UNC = S(ybar), S the mean score over
    the rounds. Both MCB and DSC are at least 0: PAV minimises every proper score over the
    non-decreasing recalibrations, the identity and the constant ybar among them.

    The log score of a prediction of 0 (or 1) for a round whose outcome was 1 (or 0) is
    infinite, and so are ``score`` and ``mcb`` then (inf: the predictions called an outcome
    impossible and it happened; ``dsc`` and ``unc`` stay finite, and the identity holds in the
    extended reals). 0 log 0 counts as 0: a prediction of 0 or 1 that was right costs nothing,
    and so does a recalibrated value of 0 or 1, which PAV gives only to blocks whose outcomes
    agree, so S(c) is always finite.

    Parameters
    ----------
    {{y_true}}
        A binned BucketStats is refused: both scores need each round's prediction.
    {{y_prob}}
    {{sample_weight}}
    score : {"brier", "log"}, default "brier"
        The proper score to decompose: "brier", (p - y)^2; "log", -log of the probability
        given to the outcome (natural logarithm).
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    CORPDecomposition
        score, mcb, dsc, unc and the CORP reliability diagram (``values``, ``recalibrated``,
        ``blocks()``); with ``multiclass="classwise"`` a :class:`fastcdl.ClasswiseResult` of
        decompositions.

    Raises
    ------
    {{raises}}
        Also for a score other than "brier" or "log" (argument ``score``) and for a binned
        BucketStats (argument ``y_true``).

    Examples
    --------
    >>> d = corp([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.7, 0.9])
    >>> round(d.score, 4), round(d.mcb, 4), round(d.dsc, 4), round(d.unc, 4)
    (0.17, 0.07, 0.14, 0.24)
    >>> d.recalibrated.round(4).tolist()
    [0.0, 0.5, 0.5, 1.0, 1.0]
    >>> corp([0, 1, 1], [0.0, 0.5, 1.0], score="log")  # certain and right: costs nothing
    CORPDecomposition(log: score=0.231049 = MCB 0.231049 - DSC 0.636514 + UNC 0.636514)
    >>> corp([1, 1, 1], [0.0, 0.5, 1.0], score="log").mcb  # certain and wrong
    inf
    """
    check_name(score, SCORES, "score")
    st = stats_of(y_true, y_prob, None, sample_weight)
    q, n, s, start = _pav_blocks(st)
    m, z = q.shape[0], n - s
    n_B, ones_B, zeros_B = (np.add.reduceat(a, start) for a in (n, s, z))
    c = _per_bucket(ones_B / n_B, start, m)
    T, ones, zeros = n.sum(), s.sum(), z.sum()
    ybar = float(ones / T)
    if score == "brier":
        S_p = _brier_scores(q, s, z)
        S_c = _brier_scores(c, s, z)
        S_0 = _brier_scores(ybar, s, z)
        unc = ybar * (1.0 - ybar)
    else:
        # the logarithms of the fit and of ybar from their own sums, log(zeros) - log(count):
        # 1 - c would round to 0 for a block whose zeros weigh below 2^-53 of it
        log_q, log_1mq = _log(q), _log1m(q)
        # where the fit leaves a prediction as it is, the same logarithms: MCB is then exactly 0
        same = c == q
        log_c = np.where(same, log_q, _per_bucket(_log(ones_B) - _log(n_B), start, m))
        log_1mc = np.where(same, log_1mq, _per_bucket(_log(zeros_B) - _log(n_B), start, m))
        S_p = _log_scores(log_q, log_1mq, s, z)
        S_c = _log_scores(log_c, log_1mc, s, z)
        log_ybar, log_1mybar = _log(ones) - _log(T), _log(zeros) - _log(T)
        S_0 = _log_scores(log_ybar, log_1mybar, s, z)
        unc = float(-((ones * log_ybar if ones else 0.0) + (zeros * log_1mybar if zeros else 0.0)) / T)
    # S_c is finite: c is 0 (or 1) only on blocks whose outcomes are all 0 (or all 1); each part
    # sums its own per-bucket differences, so MCB is exactly 0 where PAV changes nothing
    return CORPDecomposition(
        score=float(S_p.sum() / T),
        mcb=float((S_p - S_c).sum() / T),
        dsc=float((S_0 - S_c).sum() / T),
        unc=unc,
        score_name=score,
        values=q.copy(),
        recalibrated=c,
        weights=n.copy(),
    )
