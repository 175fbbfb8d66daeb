"""Public calibration metrics for binary outcomes (docs/metrics.md).

Every function takes ``(y_true, y_prob)`` (outcomes first) or a :class:`BucketStats` in
their place, validates once, builds the bucket table and calls a compiled kernel. Every
one also takes ``pos_label=`` (labels other than 0/1), a (T, 1) or (T, 2) predict_proba
output, and k-class forecasts y_prob (T, k) with ``multiclass="top-label" | "classwise"``
(fastcdl._tables.binary_views); :func:`swap_regret` and :func:`swap_report` take a task over k outcomes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring

from fastcdl._validate import check_kinks
from fastcdl._tables.binary_views import ClasswiseResult, accepts_multiclass
from fastcdl._compiled import envelope as _env
from fastcdl._compiled.decisions import best_response, cfdl_kernel
from fastcdl._compiled.errors import ece_kernel, k2_kernel
from fastcdl._compiled.tablecdl import cdl_of_table
from fastcdl._tables.outcome_keys import numpy_sorts_faster as numpy_sorts_faster
from fastcdl._tables.outcome_keys import sort_outcome_keys as sort_outcome_keys
from fastcdl._tables.outcome_keys import sorted_outcome_keys as sorted_outcome_keys
from fastcdl._tables.outcome_keys import sorted_outcome_keys_and_spare as sorted_outcome_keys_and_spare
from fastcdl._tables.sample_size import SAMPLE_SIZE_ADVICE as SAMPLE_SIZE_ADVICE
from fastcdl._tables.sample_size import SampleSizeWarning
from fastcdl._tables.sample_size import check_sample_size as check_sample_size
from fastcdl._tables.sample_size import one_round_share as one_round_share
from fastcdl._tables.sample_size import sample_size_check_off as sample_size_check_off
from fastcdl._tables.sample_size import single_round_share as single_round_share
from fastcdl._tables.sample_size import warn_sample_size as warn_sample_size
from fastcdl._tables.tabulate import checked_stats, checked_table, bucket_stats
from fastcdl._tables.tabulate import auto_rounds as auto_rounds
from fastcdl._decisions.task_losses import SwapReport, v_values, cfdl, swap_regret, swap_report
from fastcdl._decisions.certificate import (
    V_TASK,
    CertificateWarning,
    ordered_v_task,
    three_action_task,
    stated_actions,
    worst_task,
)

__all__ = [
    "bucket_stats",
    "ece",
    "k2",
    "cfdl",
    "swap_regret",
    "decision_loss_curve",
    "vcdl",
    "cdl",
    "cdl_report",
    "ucal",
    "swap_report",
    "CDLReport",
    "SwapReport",
    "ClasswiseResult",
    "CertificateWarning",
    "SampleSizeWarning",
]


@accepts_multiclass()
@fill_docstring
def ece(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> float:
    """Expected calibration error ``(1/T) sum_i n_i |q_i - qhat_i|``. O(m) after binning.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The ECE of the bucket table; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> ece([0, 1, 1, 1], [0.5, 0.5, 1.0, 1.0])
    0.0
    """
    return float(ece_kernel(*checked_table("ece", y_true, y_prob, bins, sample_weight, n_jobs, strategy)))


@accepts_multiclass()
@fill_docstring
def k2(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> float:
    """Squared calibration error ``(1/T) sum_i n_i (q_i - qhat_i)^2``. O(m) after binning.

    The reliability term of the Brier score.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        K2 of the bucket table; a :class:`ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> k2([0, 0], [0.5, 0.5])
    0.25
    """
    return float(k2_kernel(*checked_table("k2", y_true, y_prob, bins, sample_weight, n_jobs, strategy)))


@accepts_multiclass("curve")
@fill_docstring
def decision_loss_curve(
    y_true, y_prob=None, *, kinks=None, sample_weight=None, bins=None, strategy="uniform", n_jobs=None
):
    """``CFDL_mu = f(mu) / max(mu, 1 - mu)`` of the V-shaped tasks at the given kinks.

    The curve is linear-fractional between the breakpoints of f and its maximum (VCDL) sits
    on one of them. O((m + k) log(m + k)) for k kinks.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    kinks : array-like of float in [0, 1], optional
        Where to evaluate. None: at every breakpoint of f (the q_i, qhat_i, 0, 1/2, 1) and
        on a grid of 1001 points.
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
        Class-wise, every class is evaluated at the union of the classes' kinks.
    {{pos_label}}

    Returns
    -------
    kinks : ndarray
        The kinks mu, increasing.
    values : ndarray
        ``CFDL_mu`` at each kink; a :class:`ClasswiseResult` (per-class curves and their
        mean) with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> mu, v = decision_loss_curve([0, 1], [0.5, 0.5], kinks=[0.25, 0.5])
    >>> v.tolist()
    [0.0, 0.0]
    """
    stats = checked_stats("decision_loss_curve", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    if kinks is None:
        q, n, s = stats.table()
        mus = np.unique(np.concatenate([q, s / n, np.linspace(0.0, 1.0, 1001)]) + 0.0)
    else:
        mus = check_kinks(kinks, "kinks")
    return mus, v_values(stats, mus)


@dataclass(frozen=True)
class CDLReport:
    """The exact CDL with its certificate, the worst decision task.

    Returned by :func:`cdl_report`; frozen.

    Attributes
    ----------
    value : float
        CDL = 2 fbar(1/2).
    vcdl : float
        VCDL, attained at kink ``vcdl_kink`` by the one-sided value ``vcdl_side``.
    vcdl_kink : float
        Where VCDL is attained.
    vcdl_side : {"left", "right"}
        "left" when VCDL is f(mu) / max(mu, 1 - mu) there, "right" when it is the right limit.
    kinks : ndarray
        The worst task's kinks mu1 <= 1/2 <= mu2 (one kink, 1/2, when it is a V task).
    weights : ndarray
        The kinks' weights c_j (curvature of the task's scoring rule).
    sides : tuple of str
        Per kink, "left" when the value there is f(mu), "right" when it is f(mu+).
    payoff : ndarray of shape (n_actions, 2)
        The task's payoff matrix, rows = actions, columns = y = 0, 1, in [0, 1];
        ``cfdl(..., payoff=payoff) == value`` up to rounding when ``exact``.
    exact : bool
        False when float64 payoffs in [0, 1] cannot place a kink where it is: a kink closer
        to 0 or 1 than the payoffs' resolution (about 1e-16) while predictions or
        frequencies lie between it and the end. The value is exact all the same; a
        :class:`CertificateWarning` says so.

    Examples
    --------
    >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> r
    CDLReport(value=0.25, vcdl=0.166667 at 0.25, worst task: 3 actions, kinks [0.25, 0.75])
    >>> cfdl([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75], payoff=r.payoff) == r.value
    True
    """

    value: float
    vcdl: float
    vcdl_kink: float
    vcdl_side: str
    kinks: np.ndarray
    weights: np.ndarray
    sides: tuple
    payoff: np.ndarray
    exact: bool = True

    def action_at(self, p: float) -> int:
        """The worst task's best response at belief p, ties to the lowest row.

        Parameters
        ----------
        p : float
            The belief, P(y = 1), in [0, 1].

        Returns
        -------
        int
            The row of ``payoff``.

        Examples
        --------
        >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
        >>> r.action_at(0.0) != r.action_at(1.0)
        True
        """
        return int(best_response(self.payoff, float(p), 1.0))

    def ordered_task(self):
        """The worst task as a person would state it: (payoff, bounds).

        ``payoff`` rows are the actions that are the best response on an interval of beliefs
        of positive length, ordered from low to high beliefs; ``bounds`` (one fewer) are the
        beliefs where one hands over to the next. Actions that are the best response only
        at p = 0 or p = 1 (a kink there, reached only through a tie) and duplicate actions
        (a kink of weight 0) are left out. Exact ties at the kinks are broken by lowering
        entries by ulps rather than by the order of the rows, so
        cfdl(..., payoff=payoff) == value whenever no action was left out; an action left
        out takes with it the share of the value that predictions of exactly 0 or 1 bring.

        Returns
        -------
        payoff : ndarray of shape (n_actions, 2)
            The actions from low to high beliefs.
        bounds : ndarray of shape (n_actions - 1,)
            The beliefs where one action hands over to the next.

        Examples
        --------
        >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
        >>> payoff, bounds = r.ordered_task()
        >>> bounds.tolist()
        [0.25, 0.75]
        """
        u, _, rows, bounds = self._ordered()
        return u[rows].copy(), bounds

    def stated_task(self):
        """The worst task of :meth:`ordered_task` with its exact entries: (payoff, bounds, at_bounds).

        ``payoff`` has the entries of the task before ties were broken by lowering entries by
        ulps (1, not 0.9999999999999999), computed exactly from the kinks as printed (their
        shortest decimals) and rounded once (fastcdl._decisions.certificate.stated_actions: kinks 0 and
        0.6 give 1/3 as 0.3333333333333333); ``at_bounds[i]`` is the row taken by a decision maker
        whose belief is exactly ``bounds[i]``: i or i + 1, the tie that ordered_task's lowered
        entries break. Acting by these rows, the task gains what cfdl gains with ordered_task's
        payoff.

        Returns
        -------
        payoff : ndarray of shape (n_actions, 2)
            The actions from low to high beliefs, with their exact entries.
        bounds : ndarray of shape (n_actions - 1,)
            The beliefs where one action hands over to the next.
        at_bounds : list of int
            The row taken at each bound.

        Examples
        --------
        >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
        >>> payoff, bounds, at = r.stated_task()
        >>> payoff.tolist(), at
        ([[1.0, 0.0], [0.75, 0.75], [0.0, 1.0]], [1, 1])
        """
        u, exact, rows, bounds = self._ordered()
        at = [int(best_response(u[rows], float(b), 1.0)) for b in bounds]
        return exact[rows].copy(), bounds, at

    def _ordered(self):
        """(payoff with ties broken by ulps, the same before lowering, rows kept, bounds)."""
        mus = [float(k) for k in self.kinks]
        if len(mus) == 1:
            u = ordered_v_task(self.sides[0])
            exact = V_TASK.copy()
        else:
            c1, c2 = (float(c) for c in self.weights)
            u, _ = three_action_task(mus[0], mus[1], c1, c2, self.sides, order=(0, 1, 2))
            exact = np.array(stated_actions(mus[0], mus[1])[0])
        edges = sorted({0.0, 1.0, *mus})
        rows, bounds = [], []
        for lo, hi in zip(edges[:-1], edges[1:]):
            if hi <= lo:
                continue
            a = int(best_response(u, 0.5 * (lo + hi), 1.0))
            if rows and (rows[-1] == a or np.allclose(u[rows[-1]], u[a], rtol=0.0, atol=1e-12)):
                continue
            if rows:
                bounds.append(lo)
            rows.append(a)
        return u, exact, rows, np.array(bounds)

    def __repr__(self) -> str:
        ks = ", ".join(f"{k:.6g}" for k in self.kinks)
        return (
            f"CDLReport(value={self.value:.6g}, vcdl={self.vcdl:.6g} at {self.vcdl_kink:.6g}, "
            f"worst task: {self.payoff.shape[0]} actions, kinks [{ks}])"
        )


@accepts_multiclass()
@fill_docstring
def cdl(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> float:
    """Calibration decision loss: the most any decision maker with payoffs in [0, 1] gains
    by recalibrating, computed exactly as 2 fbar(1/2) (docs/exact-cdl.md). O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The CDL, in [0, 1]; a :class:`ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    See Also
    --------
    cdl_report : the same value with the worst task that attains it.
    cdl_monotone : the sample estimator for continuous scores.

    Examples
    --------
    >>> cdl([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.25
    """
    q, n, s = checked_table("cdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    # the fused kernel of fastcdl.kernels.cdl_of_table: envelope.cdl_curve's value bit for bit, without the
    # curve's arrays (cdl_report, which builds the curve, takes 2.5x cdl's time at 10^6 buckets in
    # results/benchmarks/bucket-speed.md)
    return float(cdl_of_table(q, n, s, False)[0])


@accepts_multiclass()
@fill_docstring
def vcdl(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> float:
    """V-shaped calibration decision loss: sup over kinks mu of CFDL_mu (docs/metrics.md). O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The VCDL, at most :func:`cdl`; a :class:`ClasswiseResult` with
        ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> vcdl([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.16666666666666666
    """
    q, n, s = checked_table("vcdl", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    return float(cdl_of_table(q, n, s, True)[3])  # envelope.cdl_curve's VCDL bit for bit, as in cdl


def vcdl_kink_of(stats) -> float:
    """Where the worst V-shaped task of a table has its kink: ``cdl_report(stats).vcdl_kink``
    bit for bit, from the fused kernel of :func:`vcdl` (it builds no curve and compiles none
    of cdl_report's kernels). O(m log m).

    Parameters
    ----------
    stats : BucketStats
        The table.

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import fastcdl as fc
    >>> vcdl_kink_of(fc.bucket_stats([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]))
    0.25
    """
    q, n, s = stats.table()
    return float(cdl_of_table(q, n, s, True)[5])


@accepts_multiclass()
@fill_docstring
def ucal(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> float:
    """U-calibration error: sup over tasks of the external regret to the best fixed action
    (docs/exact-cdl.md), exactly. O(m log m).

    It can be 0 for a badly calibrated forecaster, so it is not a calibration measure on its
    own.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        The UCal; a :class:`ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}

    Examples
    --------
    >>> ucal([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    0.0
    """
    q, n, s = checked_table("ucal", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    return float(_env.ucal_from_table(q, n, s))


@accepts_multiclass("report")
@fill_docstring
def cdl_report(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", n_jobs=None) -> CDLReport:
    """CDL with its certificate: the worst task (at most 3 actions), its kinks and weights.

    O(m log m).

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    {{n_jobs}}
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    CDLReport
        The value, VCDL and the worst task; with ``multiclass="classwise"`` a
        :class:`ClasswiseResult` of reports, whose mean is the mean of their values.

    Raises
    ------
    {{raises}}

    Warns
    -----
    {{warns}}
    CertificateWarning
        When float64 payoffs cannot attain the value (``exact`` is False).

    Examples
    --------
    >>> r = cdl_report([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> r.value, r.kinks.tolist()
    (0.25, [0.25, 0.75])
    """
    q, n, s = checked_table("cdl_report", y_true, y_prob, bins, sample_weight, n_jobs, strategy)
    value, j1, j2, b, f_left, f_right, vmax, jv = _env.cdl_curve(q, n, s)

    def side(j):
        return "left" if f_left[j] >= f_right[j] else "right"

    kinks, weights, sides, payoff, settled = worst_task(b, j1, j2, side)
    attained = float(cfdl_kernel(q, n, s, payoff))
    exact = abs(attained - value) <= 1e-12 * max(1.0, abs(value))
    if not exact and settled:  # (an unsettled search has said so already)
        warnings.warn(
            CertificateWarning(
                f"cdl_report: the worst task's payoffs in float64 attain {attained:.6g}, not the CDL "
                f"{float(value):.6g}: a kink at {float(kinks[0]):.17g} or {float(kinks[-1]):.17g} is closer to 0 "
                "or 1, or to a neighbouring prediction, than payoffs in [0, 1] can resolve (about 1e-16; "
                "report.exact is False; the value is exact)"
            ),
            stacklevel=2,
        )
    return CDLReport(
        value=float(value),
        vcdl=float(vmax),
        vcdl_kink=float(b[jv]),
        vcdl_side=side(jv),
        kinks=kinks,
        weights=weights,
        sides=sides,
        payoff=payoff,
        exact=exact,
    )
