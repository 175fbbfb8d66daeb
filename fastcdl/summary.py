"""Every measure of one binary forecast file or array pair, in one call: :func:`summary`.

What ``fastcdl metrics`` prints is this object (the command line is a printer over it): every
measure of :mod:`fastcdl.measures` that applies to the table, the worst decision task (the
certificate of CDL) stated as a person would, the share of rounds in buckets of one round and,
when that share says the exact numbers measure noise (continuous scores), the advice to read
the sample estimators instead. Intervals of every measure are there when asked.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field

from fastcdl.measures import TABLE_MEASURES as MEASURES  # the measures of a bucket table

__all__ = ["Summary", "WorstTask", "summary", "summary_of_table"]

#: The share of rounds in buckets of one round from which the exact numbers are called noise.
SPARSE_SHARE = 0.5


@dataclass(frozen=True)
class WorstTask:
    """The worst decision task (the certificate of CDL) as a person would state it.

    Attributes
    ----------
    actions : tuple of str
        The actions' names, from low beliefs to high ("low", "high").
    payoff : tuple of tuple of float
        Payoff rows (if y = 0, if y = 1), exact (1, not 0.9999999999999999).
    bounds : tuple of float
        The beliefs where one action hands over to the next.
    at_bounds : tuple of str
        The action taken at exactly each bound.
    gain : float
        What acting on the recalibrated frequencies gains a decision maker per round.
    kinks, weights : tuple of float
        The task's kinks and their weights (:class:`fastcdl.CDLReport`).

    Examples
    --------
    >>> summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]).worst_task.bounds
    (0.25, 0.75)
    """

    actions: tuple
    payoff: tuple
    bounds: tuple
    at_bounds: tuple
    gain: float
    kinks: tuple
    weights: tuple

    def to_dict(self) -> dict:
        """The fields as a plain dict of lists (JSON-ready)."""
        return {
            "actions": list(self.actions),
            "payoff": [list(r) for r in self.payoff],
            "bounds": list(self.bounds),
            "at_bounds": list(self.at_bounds),
            "gain": self.gain,
            "kinks": list(self.kinks),
            "weights": list(self.weights),
        }


@dataclass(frozen=True)
class Summary:
    """Every measure of a table, returned by :func:`summary`; frozen.

    ``summary[key]`` is ``summary.values[key]``; the repr prints one line per measure.

    Attributes
    ----------
    values : dict
        {key: value} for every measure of :data:`fastcdl.MEASURES` that applies, in its order.
    n_buckets : int
        The table's buckets.
    T : float
        The table's rounds (total weight when weighted).
    vcdl_kink : float
        Where the worst V-shaped task has its kink.
    cutoff_ce_p_value : float
        The p-value of cutoff CE's test of perfect calibration.
    one_round_share : float or None
        The share of rounds in buckets of one round (None for binned tables).
    worst_task : WorstTask
        The certificate of CDL, as a person would state it.
    binned : bool
        Whether the table is binned (edges) rather than one bucket per prediction.
    weighted : bool
        Whether the rounds carry sample weights.
    intervals : dict
        {key: fastcdl.Interval} when asked (empty otherwise): the debiased estimate and its
        interval (:func:`fastcdl.interval`).

    Examples
    --------
    >>> s = summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> s.n_buckets, s.T, s.sparse, s.advice
    (2, 4.0, False, None)
    >>> print(repr(s).splitlines()[1])
      CDL           0.25   calibration decision loss (any task, payoffs in [0,1])
    """

    values: dict
    n_buckets: int
    T: float
    vcdl_kink: float
    cutoff_ce_p_value: float
    one_round_share: float | None
    worst_task: WorstTask
    binned: bool = False
    weighted: bool = False
    intervals: dict = field(default_factory=dict)

    def __getitem__(self, key) -> float:
        return self.values[key]

    @property
    def sparse(self) -> bool:
        """Most rounds sit in buckets of one round (continuous scores): the exact measures are noise."""
        return self.one_round_share is not None and self.one_round_share >= SPARSE_SHARE

    @property
    def advice(self) -> str | None:
        """What to read instead of the exact measures when they are noise (None otherwise)."""
        if not self.sparse:
            return None
        of = "the weight of the rounds sits" if self.weighted else "the rounds sit"
        return (
            f"{100 * self.one_round_share:.0f}% of {of} in buckets of one round (continuous scores), so the "
            "exact measures are noise; read the sample estimators (cdl_monotone, cutoff_ce, smce, atb) or "
            "bin the predictions (bins='auto', strategy='quantile')"
        )

    def to_dict(self) -> dict:
        """Plain Python (JSON-ready): the measures' values by key, then the rest.

        Returns
        -------
        dict
            The keys of ``fastcdl metrics --json``; a measure that does not apply is None.

        Examples
        --------
        >>> summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]).to_dict()["cdl"]
        0.25
        """
        out = {"n_buckets": self.n_buckets, "T": _plain_T(self.T)}
        for key in MEASURES:
            out[key] = self.values.get(key)
            if key == "vcdl":
                out["vcdl_kink"] = self.vcdl_kink
            if key == "cutoff_ce":
                out["cutoff_ce_p_value"] = self.cutoff_ce_p_value
        out["one_round_share"] = self.one_round_share
        out["worst_task"] = self.worst_task.to_dict()
        out["advice"] = self.advice
        if self.intervals:
            out["intervals"] = {
                k: {"estimate": iv.estimate, "lo": iv.lo, "hi": iv.hi, "level": iv.level, "validated": iv.validated}
                for k, iv in self.intervals.items()
            }
        return out

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as JSON.

        Parameters
        ----------
        **kwargs
            Passed to json.dumps (``indent=2``, ...).

        Returns
        -------
        str

        Examples
        --------
        >>> summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]).to_json()[:28]
        '{"n_buckets": 2, "T": 4, "cd'
        """
        return json.dumps(jsonable(self.to_dict()), allow_nan=False, **kwargs)

    def __repr__(self) -> str:
        rows = [f"Summary(T={_plain_T(self.T)}, n_buckets={self.n_buckets}" + (", binned" if self.binned else "") + ")"]
        if self.advice:
            rows.append(f"  note: {self.advice}")
        for key, v in self.values.items():
            m = MEASURES[key]
            iv = self.intervals.get(key)
            ci = f"  debiased {iv.estimate:.4g} [{iv.lo:.4g}, {iv.hi:.4g}]" if iv is not None else ""
            rows.append(f"  {m.label:<7}{'' if v is None else format(v, '.4g'):>11}{ci}   {m.text}")
        return "\n".join(rows)


def jsonable(obj):
    """``obj`` with every non-finite float written as a string ("inf", "-inf", "nan"), so that
    ``json.dumps`` writes standard JSON (KL-calibration is +inf where a stated 0 or 1 meets a
    contrary outcome; docs/pseudo.md). Cost O(size of obj).

    Parameters
    ----------
    obj : dict, list, tuple or scalar

    Returns
    -------
    The same structure (dicts and lists copied).

    Examples
    --------
    >>> jsonable({"klcal": float("inf"), "cdl": 0.25})
    {'klcal': 'inf', 'cdl': 0.25}
    """
    if isinstance(obj, float):
        return obj if obj == obj and abs(obj) != float("inf") else str(obj)
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


def _plain_T(T):
    return int(T) if float(T).is_integer() else float(T)


def _worst_task(report, stats) -> WorstTask:
    from fastcdl.metrics import SampleSizeWarning, cfdl

    u, bounds, at_bounds = report.stated_task()
    names = {1: ["act"], 2: ["low", "high"], 3: ["low", "middle", "high"]}.get(len(u), [f"a{i}" for i in range(len(u))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SampleSizeWarning)
        # the payoffs whose lowered ulps break the ties at the bounds as at_bounds says
        gain = float(cfdl(stats, payoff=report.ordered_task()[0]))
    return WorstTask(
        tuple(names),
        tuple(tuple(float(x) for x in r) for r in u),
        tuple(float(b) for b in bounds),
        tuple(names[a] for a in at_bounds),
        gain,
        tuple(float(k) for k in report.kinks),
        tuple(float(w) for w in report.weights),
    )


def summary_of_table(stats, *, intervals=False, level=0.95, n_sub=200, seed=0) -> Summary:
    """:func:`summary` of a BucketStats.

    Parameters
    ----------
    stats : BucketStats
        The table.
    intervals, level, n_sub, seed
        As in :func:`summary`.

    Returns
    -------
    Summary

    Examples
    --------
    >>> import fastcdl as fc
    >>> summary_of_table(fc.bucket_stats([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]))["k2"]
    0.0625
    """
    from fastcdl import sample
    from fastcdl.metrics import SampleSizeWarning, cdl_report, one_round_share

    with warnings.catch_warnings():  # the summary says it once (Summary.advice)
        warnings.simplefilter("ignore", SampleSizeWarning)
        rep = cdl_report(stats)
        values = {}
        for key, m in MEASURES.items():
            if not m.applies(stats):
                continue
            values[key] = rep.value if key == "cdl" else rep.vcdl if key == "vcdl" else m(stats)
        test = sample.cutoff_ce_test(stats)
    share = one_round_share(stats)
    ivs = {}
    if intervals:
        from fastcdl.uncertainty import CoverageWarning, intervals as intervals_of

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CoverageWarning)
            # one set of subsample tables for every measure (the same numbers as one interval each)
            ivs = intervals_of(list(values), stats, level=level, n_sub=n_sub, seed=seed)
        said = {str(w.message) for w in caught if issubclass(w.category, CoverageWarning)}
        if said:  # once, not once per measure
            warnings.warn(
                f"{len(said)} of the intervals come with a warning; the first: {sorted(said)[0]}",
                CoverageWarning,
                stacklevel=3,
            )
    return Summary(
        values,
        int(stats.n_buckets),
        float(stats.total),
        float(rep.vcdl_kink),
        float(test.p_value),
        None if share != share else float(share),
        _worst_task(rep, stats),
        stats.edges is not None,
        bool(stats.weighted),
        ivs,
    )


def summary(
    y_true,
    y_prob=None,
    *,
    bins=None,
    strategy="uniform",
    sample_weight=None,
    intervals=False,
    level=0.95,
    n_sub=200,
    seed=0,
) -> Summary:
    """Every measure of binary forecasts, the worst decision task and the advice for
    continuous scores, in one frozen object with a readable repr, ``to_dict()`` and
    ``to_json()``.

    Cost: one exact table (O(T log T), O(T) binned) and every measure on it (O(m log m)
    each; smCE and CDL_M dominate); intervals cost n_sub evaluations of every measure on tables of T/4 rounds.

    Parameters
    ----------
    y_true, y_prob : array-like, or a BucketStats as ``y_true``
        Outcomes in {0, 1} and predictions in [0, 1] (scikit-learn's order).
    bins, strategy, sample_weight
        As in :func:`fastcdl.bucket_stats`.
    intervals : bool, default False
        Also the debiased estimate and interval of every measure (:func:`fastcdl.interval`,
        the documented default: subsampling; a CoverageWarning, once, where it is not
        validated).
    level : float, default 0.95
        The intervals' nominal coverage.
    n_sub : int, default 200
        Subsamples of the intervals.
    seed : int, default 0
        Seeds the intervals' resampling.

    Returns
    -------
    Summary
        The measures, the worst task, the share of rounds in buckets of one round, the
        advice for continuous scores, and the intervals when asked.

    Raises
    ------
    ValidationError
        (a ValueError) for bad input: the argument, the position, the value.

    Examples
    --------
    >>> s = summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> s["cdl"], s["ece"], s.worst_task.actions
    (0.25, 0.25, ('low', 'middle', 'high'))
    >>> sorted(s.to_dict())[:3]
    ['T', 'advice', 'atb']
    """
    from fastcdl._tabulate import _stats

    st = _stats(y_true, y_prob, bins, sample_weight, strategy=strategy)
    return summary_of_table(st, intervals=intervals, level=level, n_sub=n_sub, seed=seed)
