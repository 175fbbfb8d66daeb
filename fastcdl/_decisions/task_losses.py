"""Losses of a given decision task: CFDL of a payoff matrix, swap regret, and the swap report.

The task is the user's (a payoff matrix over 2 or k outcomes, or a V-shaped kink), not the
worst one: fastcdl.cfdl, fastcdl.swap_regret and fastcdl.swap_report (docs/metrics.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring

from fastcdl._validate import (
    ValidationError,
    check_distributions,
    check_kinks,
    check_payoff,
    check_rounds,
    prepare_rounds,
)
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._compiled import envelope as _env
from fastcdl._compiled import tasks as _kt
from fastcdl._compiled.decisions import cfdl_kernel, swap_regret_kernel
from fastcdl._tables.tabulate import checked_stats, checked_table, stats_of, table_of
from fastcdl.bucket_table import BucketStats


@accepts_multiclass()
@fill_docstring
def cfdl(
    y_true, y_prob=None, *, payoff=None, kink=None, sample_weight=None, bins=None, strategy="uniform", n_jobs=None
) -> float:
    """Calibration fixed decision loss of one task (docs/metrics.md).

    What one decision maker gains per round by acting on each bucket's empirical frequency
    qhat_i instead of its prediction q_i, best responses with ties to the lowest action,
    evaluated exactly. O(m * n_actions) for a payoff matrix, O(m log m) for a kink.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    payoff : array-like of shape (n_actions, 2), optional
        The task U: rows are actions, columns the payoffs at y = 0 and y = 1, in [0, 1].
    kink : float, optional
        The V-shaped task with its kink at mu: the value is ``f(mu) / max(mu, 1 - mu)``.
        Exactly one of ``payoff`` and ``kink`` is given.
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The task's CFDL, at most :func:`cdl`; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also when both or neither of ``payoff`` and ``kink`` are given.

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> cfdl([1, 1, 0, 0], [0.3, 0.3, 0.7, 0.7], kink=0.5)
    1.0
    >>> cfdl([1, 1, 0, 0], [0.3, 0.3, 0.7, 0.7], payoff=[[1, 0], [0, 1]])
    1.0
    """
    if (payoff is None) == (kink is None):
        raise ValidationError(
            "payoff",
            "or kink is needed, not both",
            message="pass exactly one of payoff= (a matrix) or kink= (a V-shaped task)",
        )
    if payoff is not None:
        u = check_payoff(payoff)
        return float(cfdl_kernel(*checked_table("cfdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy), u))
    mu = check_kinks(kink, "kink")
    if mu.shape[0] != 1:
        raise ValidationError("kink", "must be a single number; use decision_loss_curve for many")
    return float(v_values(checked_stats("cfdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy), mu)[0])


@fill_docstring
def swap_regret(
    y_true,
    y_prob=None,
    *,
    payoff,
    sample_weight=None,
    bins=None,
    strategy="uniform",
    n_jobs=None,
    multiclass=None,
    pos_label=None,
) -> float:
    """Swap regret of task U: ``(1/T) sum_a max_a' sum_{t: a*(p_t)=a} [U(a',y_t) - U(a,y_t)]``.

    Two outcomes: payoff (n_actions, 2), y_prob the probability of y = 1 (or a BucketStats);
    O(m * n_actions + n_actions^2) on the bucket table. k outcomes: payoff (n_actions, k),
    y_prob (T, k) distributions, y_true labels 0..k-1; ``a*(P_t) = argmax_a sum_y P_ty U(a, y)``
    with ties to the lowest index, decided exactly; O(T k n_actions + n_actions^2 k).
    :func:`swap_report` says which actions the regret comes from.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    payoff : array-like of shape (n_actions, 2) or (n_actions, k)
        The task U, rows = actions, one column per outcome, entries in [0, 1].
    {{sample_weight}}
    {{bins}}
        Two outcomes only.
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
        Two-column payoffs only: a task over k outcomes takes the (T, k) forecasts as they are.
    {{pos_label}}

    Returns
    -------
    float
        The swap regret, at most the CDL of the forecasts; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for ``bins``, ``strategy``, ``n_jobs`` or ``multiclass`` with a task over k outcomes.

    Examples
    --------
    >>> swap_regret([0, 0, 1, 1], [0.9, 0.9, 0.9, 0.9], payoff=[[1, 0], [0, 1]])
    0.0
    >>> swap_regret([0, 1, 2], [[0.5, 0.25, 0.25]] * 3, payoff=[[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    0.0
    """
    if np.ndim(payoff) == 2 and np.shape(payoff)[1] > 2:
        if multiclass is not None or bins is not None or n_jobs is not None or strategy != "uniform":
            extra = (
                "multiclass"
                if multiclass is not None
                else "bins"
                if bins is not None
                else "n_jobs"
                if n_jobs is not None
                else "strategy"
            )
            raise ValidationError(
                extra,
                "does not apply to a task over k outcomes",
                message=f"{extra} does not apply to a task over k outcomes (payoff with {np.shape(payoff)[1]} columns)",
            )
        return swap_report(y_true, y_prob, payoff=payoff, sample_weight=sample_weight, pos_label=pos_label).value
    return _swap_regret_binary(
        y_true,
        y_prob,
        payoff=payoff,
        bins=bins,
        strategy=strategy,
        sample_weight=sample_weight,
        n_jobs=n_jobs,
        multiclass=multiclass,
        pos_label=pos_label,
    )


@accepts_multiclass()
def _swap_regret_binary(
    y_true, y_prob=None, *, payoff, sample_weight=None, bins=None, strategy="uniform", n_jobs=None
) -> float:
    u = check_payoff(payoff)
    return float(swap_regret_kernel(*table_of(y_true, y_prob, bins, sample_weight, n_jobs, strategy), u))


@dataclass(frozen=True)
class SwapReport:
    """Where the swap regret of a task comes from, action by action (rows = actions of U).

    Returned by :func:`swap_report`; frozen.

    Attributes
    ----------
    value : float
        The swap regret, ``gain.sum()``.
    counts : ndarray of shape (n_actions,)
        Rounds (or weight) on which ``a*(P_t) = a``.
    mean_prediction : ndarray of shape (n_actions, k)
        The mean predicted distribution on those rounds.
    frequency : ndarray of shape (n_actions, k)
        The empirical distribution of y on those rounds.
    bias : ndarray of shape (n_actions, k)
        ``mean_prediction - frequency``: what the forecasts over- (> 0) or under-state when
        they recommend a (NaN for actions never taken).
    swap_to : ndarray of int64, shape (n_actions,)
        The best replacement of each action on its rounds (itself when no replacement
        gains; ties to the lowest index).
    gain : ndarray of shape (n_actions,)
        ``(1/T) sum_{t: a*(P_t) = a} [U(swap_to[a], y_t) - U(a, y_t)] >= 0``.
    payoff : ndarray of shape (n_actions, k)
        The task, as float64.

    Examples
    --------
    >>> r = swap_report([1, 1, 0, 1], [0.2, 0.2, 0.9, 0.9], payoff=[[1, 0], [0, 1]])
    >>> r
    SwapReport(value=0.5, 2 actions, 1 of them better replaced)
    >>> r.swap_to.tolist(), r.gain.tolist()
    ([1, 1], [0.5, 0.0])
    """

    value: float
    counts: np.ndarray
    mean_prediction: np.ndarray
    frequency: np.ndarray
    bias: np.ndarray
    swap_to: np.ndarray
    gain: np.ndarray
    payoff: np.ndarray

    def __repr__(self) -> str:
        moved = int(np.sum(self.swap_to != np.arange(self.swap_to.shape[0])))
        return f"SwapReport(value={self.value:.6g}, {self.payoff.shape[0]} actions, {moved} of them better replaced)"


def _check_task(payoff, k: int) -> np.ndarray:
    u = np.asarray(payoff)
    if u.dtype.kind not in "biuf":
        raise ValidationError("payoff", f"must be numeric, got dtype {u.dtype}")
    if u.ndim != 2 or u.shape[0] < 1 or u.shape[1] != k:
        raise ValidationError(
            "payoff", f"must have shape (n_actions, {k}): rows = actions, one column per outcome; got shape {u.shape}"
        )
    u = np.ascontiguousarray(u, dtype=np.float64)
    bad = ~((u >= 0.0) & (u <= 1.0))
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        what = "contains NaN" if np.isnan(u[i]) else "entries must lie in [0, 1]"
        raise ValidationError("payoff", what, index=i, value=u[i], message=f"payoff {what}")
    return u


@fill_docstring
def swap_report(y_true, y_prob=None, *, payoff, sample_weight=None, pos_label=None) -> SwapReport:
    """Per-action report of a task's swap regret (see :class:`SwapReport`).

    Two outcomes: y_prob is the probability of y = 1 (or (T, 1), (T, 2) predict_proba, or a
    BucketStats), payoff (n_actions, 2), y_true 0/1 (or pos_label). k outcomes: y_prob
    (T, k) distributions, payoff (n_actions, k) with rows = actions and one column per
    outcome in [0, 1], y_true labels 0..k-1. The decision maker told P_t takes
    a*(P_t) = argmax_a sum_y P_ty U(a, y), ties to the lowest index (exactly). The swap
    regret is (1/T) sum_a max_a' sum_{t: a*(P_t) = a} [U(a', y_t) - U(a, y_t)]: what the
    best fixed replacement of each recommended action would have gained. At most the CDL
    of the forecasts (docs/metrics.md). O(T k n_actions + n_actions^2 k).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    payoff : array-like of shape (n_actions, 2) or (n_actions, k)
        The task U, rows = actions, one column per outcome, entries in [0, 1].
    {{sample_weight}}
    {{pos_label}}

    Returns
    -------
    SwapReport
        The regret and, per action, its rounds, mean prediction, frequency, bias, best
        replacement and gain.

    Raises
    ------
    {{raises}}

    Examples
    --------
    >>> r = swap_report([0, 0, 0, 1], [0.8, 0.8, 0.8, 0.8], payoff=[[1, 0], [0, 1]])
    >>> r.value, r.swap_to.tolist(), r.bias[1].tolist()
    (0.5, [0, 0], [-0.55, 0.55])
    """
    if isinstance(y_true, BucketStats) or (y_prob is not None and np.ndim(y_prob) < 2) or np.shape(payoff)[-1:] == (2,):
        stats = stats_of(*_binary_rounds(y_true, y_prob, pos_label), None, sample_weight)
        u = _check_task(payoff, 2)
        q, n, s = stats.table()
        act = np.empty(q.shape[0], dtype=np.int64)
        _kt.actions_of_values(q, u, act)
        A = u.shape[0]
        counts = np.bincount(act, weights=n, minlength=A)
        ones = np.bincount(act, weights=s, minlength=A)
        psum = np.bincount(act, weights=stats.prob_sums, minlength=A)
        outcomes = np.column_stack([counts - ones, ones])
        pred = np.column_stack([counts - psum, psum])
        return _swap_summary(u, counts, outcomes, pred, float(n.sum()))
    if pos_label is not None:
        raise ValidationError("pos_label", "applies to binary problems, not to y_prob with one column per class")
    y, P = check_distributions(y_true, y_prob, name="y_prob")
    k = P.shape[1]
    u = _check_task(payoff, k)
    T = P.shape[0]
    if sample_weight is None:
        w = np.empty(0, dtype=np.float64)
    else:
        w = prepare_rounds(np.zeros(T, np.uint8), np.zeros(T), sample_weight)[2]
        check_rounds(np.zeros(T, np.uint8), np.zeros(T), w)
    A = u.shape[0]
    counts = np.zeros(A)
    outcomes = np.zeros(A * k)
    pred = np.zeros(A * k)
    _kt.action_tallies(P, y, w, u, counts, outcomes, pred)
    total = float(w.sum()) if w.shape[0] else float(T)
    return _swap_summary(u, counts, outcomes.reshape(A, k), pred.reshape(A, k), total)


def _binary_rounds(y_true, y_prob, pos_label):
    if isinstance(y_true, BucketStats):
        if pos_label is not None:
            raise ValidationError("pos_label", "does not apply to a BucketStats (it already holds a binary table)")
        return y_true, y_prob
    from fastcdl._tables.binary_views import reduce

    _, ((y, p),) = reduce(y_true, y_prob, None, pos_label)
    return y, p


def _swap_summary(u, counts, outcomes, pred, T) -> SwapReport:
    """SwapReport from per-action weights, outcome counts (A, k) and prediction sums (A, k)."""
    A = u.shape[0]
    # G[a, b] = sum over a's rounds of U(b, y_t) - U(a, y_t)
    G = outcomes @ u.T
    G = G - np.diag(G)[:, None]
    G[np.arange(A), np.arange(A)] = 0.0
    best = np.argmax(G, axis=1)  # lowest index among the largest gains
    swap_to = np.where(G[np.arange(A), best] > 0.0, best, np.arange(A))
    gain = np.maximum(G[np.arange(A), best], 0.0) / T
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_prediction = pred / counts[:, None]
        frequency = outcomes / counts[:, None]
    return SwapReport(
        value=float(gain.sum()),
        counts=counts,
        mean_prediction=mean_prediction,
        frequency=frequency,
        bias=mean_prediction - frequency,
        swap_to=swap_to.astype(np.int64),
        gain=gain,
        payoff=u,
    )


def v_values(stats: BucketStats, mus: np.ndarray) -> np.ndarray:
    q, n, s = stats.table()
    f = _env.v_left(q, n, s, mus)
    return f / np.maximum(mus, 1.0 - mus)
