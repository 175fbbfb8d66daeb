"""The report of a file or of arrays of forecasts, in one call: :func:`summary`.

What ``fastcdl metrics`` prints is this object (the command line reads the file and prints
the report, ``--json`` its :meth:`Summary.to_json`): every measure of ``fastcdl.measures``
that applies to the table, the worst decision task (the certificate of CDL) stated as a
person would, the share of rounds in buckets of one round and, when that share says the exact
numbers measure noise (continuous scores), the advice to read the sample estimators instead,
the binned ECE and the sample estimators' debiased estimates with their intervals. For k
classes: the top-label report (one :class:`Summary`) or the class-wise one
(:class:`ClasswiseSummary`, one Summary per class and their means), each with the exact CDL
over all k outcomes when the predictions take few enough distinct rows. The words of the
report are in :mod:`fastcdl.summary_text`.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from fastcdl.measures import TABLE_MEASURES as MEASURES  # the measures of a bucket table

__all__ = ["ClasswiseSummary", "Source", "Summary", "WorstTask", "summary", "summary_of_table"]

#: The share of rounds in buckets of one round from which the exact numbers are called noise.
SPARSE_SHARE = 0.5

#: k classes: the exact CDL over all outcomes is computed up to this many distinct rows of
#: predictions (``fastcdl metrics --lp-rows``).
LP_ROWS = 200


@dataclass(frozen=True)
class Source:
    """What the report states of where its rounds came from; frozen.

    Attributes
    ----------
    rows : int or None
        The rows (rounds) used: rows read less those skipped (None: a table given as such).
    skipped : int or None
        Rows skipped for a missing value (None when skipping was not asked).
    integer_weights : bool or None
        Whether every weight is a whole number (None without weights): T is then an integer.
    bins : object
        The ``bins`` asked for (None: one bucket per prediction).
    strategy : str
        The binning strategy asked for.

    Examples
    --------
    >>> Source(rows=4).skipped is None
    True
    """

    rows: int | None = None
    skipped: int | None = None
    integer_weights: bool | None = None
    bins: object = None
    strategy: str = "uniform"


@dataclass(frozen=True)
class WorstTask:
    """The worst decision task (the certificate of CDL) as a person would state it.

    Attributes
    ----------
    actions : tuple of str
        The actions' names, from low beliefs to high ("low", "high").
    payoff : tuple of tuple of float
        Payoff rows (if y = 0, if y = 1), exact (1, not 0.9999999999999999): computed in
        rational arithmetic from the kinks as printed and rounded once.
    bounds : tuple of float
        The beliefs where one action hands over to the next.
    at_bounds : tuple of str
        The action taken at exactly each bound.
    gain : float
        What acting on the recalibrated frequencies gains a decision maker per round.
    kinks, weights : tuple of float
        The task's kinks and their weights (:class:`fastcdl.CDLReport`; the weights, as the
        payoffs, exactly from the kinks as printed).

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
    extras : dict
        {key: {name: value}}: the report fields that follow a measure's value (its entry's
        ``extras``: VCDL's kink, cutoff CE's p-value), for every measure that has any.
    one_round_share : float or None
        The share of rounds in buckets of one round (None for binned tables).
    worst_task : WorstTask
        The certificate of CDL, as a person would state it. For continuous scores (``sparse``)
        it is computed on first use: the report does not show it there (the exact CDL measures
        noise), so the first report compiles none of its kernels. The field ``_task`` holds it,
        or the function of no arguments that computes it until then.
    binned : bool
        Whether the table is binned (edges) rather than one bucket per prediction.
    weighted : bool
        Whether the rounds carry sample weights.
    intervals : dict
        {key: fastcdl.Interval}: the debiased estimate and interval (:func:`fastcdl.interval`)
        of the measures whose entry says ``cli_interval`` (the sample estimators), when
        computed (continuous scores, or asked); empty otherwise.
    interval_note : str or None
        Why the intervals were not computed, or that they are rough ranges at this size.
    ece_quantile, ece_quantile_bins : float or None, int or None
        Continuous scores: the ECE over round(T^(1/3)) equal-mass bins, and the bins made.
    multiclass : str or None
        "top-label" for the top-label report of k-class forecasts, else None.
    classes : tuple of str or None
        k classes: the classes' names (the file's columns; "0", "1", ... for arrays).
    cdl_multiclass : float or None
        k classes: the exact CDL over all k outcomes (None when not computed).
    cdl_multiclass_how : str or None
        How it was computed, or why not.
    source : Source
        Where the rounds came from (rows, skipped rows, binning asked).
    edges : ndarray or None
        A binned table's edges.
    diagnostics : dict
        {key: {field: value} or None}: the tests of perfect calibration and Cox's recalibration
        fit (``fastcdl.diagnostics.DIAGNOSTICS``), None where one does not apply.
    diagnostics_notes : dict
        {key: why it does not apply}.

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
    extras: dict
    one_round_share: float | None
    # a WorstTask, or a function of no arguments that computes it (read it as worst_task)
    _task: object = field(repr=False, compare=False)
    binned: bool = False
    weighted: bool = False
    intervals: dict = field(default_factory=dict)
    interval_note: str | None = None
    ece_quantile: float | None = None
    ece_quantile_bins: int | None = None
    multiclass: str | None = None
    classes: tuple | None = None
    cdl_multiclass: float | None = None
    cdl_multiclass_how: str | None = None
    source: Source = field(default_factory=Source)
    edges: object = field(default=None, repr=False, compare=False)
    diagnostics: dict = field(default_factory=dict)
    diagnostics_notes: dict = field(default_factory=dict)

    def __getitem__(self, key) -> float:
        return self.values[key]

    @property
    def worst_task(self) -> WorstTask:
        """The certificate of CDL (the attribute above); computed once, on first use when
        the report was made without it."""
        task = self._task
        if not isinstance(task, WorstTask):
            task = task()
            object.__setattr__(self, "_task", task)  # frozen: the value it stood for
        return task

    @property
    def vcdl_kink(self) -> float:
        """Where the worst V-shaped task has its kink (``extras["vcdl"]["vcdl_kink"]``)."""
        return self.extras["vcdl"]["vcdl_kink"]

    @property
    def cutoff_ce_p_value(self) -> float:
        """The p-value of cutoff CE's test of perfect calibration (``extras["cutoff_ce"]``)."""
        return self.extras["cutoff_ce"]["cutoff_ce_p_value"]

    @property
    def sparse(self) -> bool:
        """Most rounds sit in buckets of one round (continuous scores): the exact measures are noise."""
        return self.one_round_share is not None and self.one_round_share >= SPARSE_SHARE

    @property
    def advice(self) -> str | None:
        """What to read instead of the exact measures when they are noise (None otherwise)."""
        return _advice(self.one_round_share, self.weighted) if self.sparse else None

    def to_dict(self) -> dict:
        """Plain Python (JSON-ready): the measures' values by key, then the rest.

        Returns
        -------
        dict
            What ``fastcdl metrics --json`` prints; a measure that does not apply is None.

        Examples
        --------
        >>> summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]).to_dict()["cdl"]
        0.25
        """
        out = {"n_buckets": self.n_buckets, "T": _plain_T(self.T, self.weighted, self.source)}
        out.update(self._fields())
        out.update(_bins_dict(self.source, self.edges))
        if self.source.skipped is not None:
            out["skipped_rows"] = self.source.skipped
        out["advice"] = self.advice
        if self.multiclass is not None:
            out.update(
                {"multiclass": self.multiclass, "classes": list(self.classes), "cdl_multiclass": self.cdl_multiclass}
            )
        return out

    def _fields(self) -> dict:
        """The table's own fields (a class's entry in the class-wise report)."""
        out = {}
        for key in MEASURES:
            out[key] = self.values.get(key)
            out.update(self.extras.get(key, {}))  # the fields its entry adds (fastcdl.measures)
        out["one_round_share"] = self.one_round_share
        out["worst_task"] = self.worst_task.to_dict()
        out["ece_quantile"] = self.ece_quantile
        out["ece_quantile_bins"] = self.ece_quantile_bins
        out["intervals"] = _intervals_dict(self.intervals)
        out["diagnostics"] = self.diagnostics
        out["diagnostics_notes"] = self.diagnostics_notes
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

    def to_text(self, name=None, *, estimators=False) -> str:
        """The report in words, as ``fastcdl metrics`` prints it (:mod:`fastcdl.summary_text`).

        Parameters
        ----------
        name : str, optional
            What the first line calls the input (the file's name; default "forecasts").
        estimators : bool, default False
            Also the sample estimators where the exact numbers are meaningful (they are
            printed anyway for continuous scores, and with intervals).

        Returns
        -------
        str
            Lines ending with a newline.

        Examples
        --------
        >>> print(summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]).to_text().splitlines()[0])
        forecasts: T = 4 rounds in 2 buckets
        """
        from fastcdl.summary_text import summary_lines

        return "".join(line + "\n" for line in summary_lines(self, name or "forecasts", estimators))

    def __repr__(self) -> str:
        rows = [
            f"Summary(T={_plain_T(self.T, self.weighted, self.source)}, n_buckets={self.n_buckets}"
            + (", binned" if self.binned else "")
            + ")"
        ]
        if self.advice:
            rows.append(f"  note: {self.advice}")
        for key, v in self.values.items():
            m = MEASURES[key]
            iv = self.intervals.get(m.debiased_by or key)  # ATB's row: atb_unbiased's interval
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


def _plain_T(T, weighted=False, source=None):
    """T as the report states it: an integer for unweighted rounds or whole weights."""
    whole = (not weighted) or (source is not None and source.integer_weights)
    if whole or (source is None or source.integer_weights is None) and float(T).is_integer():
        return int(round(float(T)))
    return float(T)


def _advice(share, weighted=False) -> str:
    """What to read instead of the exact measures when they are noise, in one line."""
    of = "the weight of the rounds sits" if weighted else "the rounds sit"
    return (
        f"{100 * share:.0f}% of {of} in buckets of one round (continuous scores), so the exact numbers "
        "measure noise; use the sample estimators (CDL_M, cutoff CE, smCE, ATB) or bin the predictions "
        "(--bins auto --strategy quantile; in Python bins='auto', strategy='quantile')"
    )


def _intervals_dict(ivs):
    if not ivs:
        return None
    return {
        k: {"estimate": iv.estimate, "lo": iv.lo, "hi": iv.hi, "level": iv.level, "validated": iv.validated}
        for k, iv in ivs.items()
    }


def _bins_dict(source, edges) -> dict:
    if edges is None:
        return {}
    return {
        "bins": {
            "strategy": source.strategy,
            "asked": source.bins
            if source.bins is None or isinstance(source.bins, (str, int))
            else np.asarray(source.bins).tolist(),
            "made": int(edges.shape[0] - 1),
            "edges": np.asarray(edges).tolist(),
        }
    }


def _worst_task_of_table(stats) -> WorstTask:
    """:func:`_worst_task` of the table's cdl_report (fastcdl.measures.report_of: computed once
    per table). O(m log m)."""
    from fastcdl.exact import SampleSizeWarning
    from fastcdl.measures import report_of

    with warnings.catch_warnings():  # the summary says it once (Summary.advice)
        warnings.simplefilter("ignore", SampleSizeWarning)
        return _worst_task(report_of(stats), stats)


def _worst_task(report, stats) -> WorstTask:
    from fastcdl.exact import SampleSizeWarning, cfdl

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
        _stated_weights(report),
    )


def _stated_weights(report) -> tuple:
    """The task's weights as its payoffs are stated: exactly from the kinks as printed."""
    if len(report.kinks) == 2:
        from fastcdl._decisions.certificate import stated_actions

        return stated_actions(float(report.kinks[0]), float(report.kinks[1]))[1]
    return tuple(float(w) for w in report.weights)


def _interval_keys(stats) -> list:
    """The measures the report gives intervals of: those whose entry says ``cli_interval``
    and that apply to the table."""
    from fastcdl.measures import MEASURES as ALL

    return [k for k, m in ALL.items() if m.cli_interval and k in MEASURES and m.applies(stats)]


def cache_cold() -> bool:
    """True when numba's cache holds no copy of smCE's programme, the report's largest kernel
    (its cache index is written with its first compilation; stale ones are dropped on import):
    a report then compiles, and keeps its steps in the order fastcdl.prefetch's helper plans for.
    O(1): one look at the file system."""
    from fastcdl._compiled import estimators

    cache = getattr(estimators.smce_side, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return index is not None and not os.path.exists(index)


def _begin_intervals(stats, keys, level, n_sub, seed, early):
    """``finish()`` giving ({key: Interval}, note or None) of the table: the debiased estimates
    with their intervals (fastcdl.intervals: one set of subsample tables for all), or why none.
    With ``early`` the subsamples start at once on fastcdl's helper thread, so that the caller
    computes the measures meanwhile (fastcdl.uncertainty.begin_intervals); else at ``finish``."""
    if stats.weighted:
        note = (
            "intervals: not computed for weighted files (resampling needs each round's weight, "
            "which the table does not keep; fastcdl.interval takes y, p and sample_weight)"
        )
        return lambda cancel=False: ({}, note)
    T = int(round(float(stats.counts.sum())))
    if stats.n_buckets < 2 or T < 10:
        note = f"intervals: not computed, {T} rounds in {stats.n_buckets} buckets is too small to resample"
        return lambda cancel=False: ({}, note)
    if not keys:
        return lambda cancel=False: ({}, None)
    from fastcdl.uncertainty import CoverageWarning, begin_intervals

    keys = list(keys)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CoverageWarning)
        subsamples = begin_intervals(
            keys,
            stats,
            None,
            level=level,
            n_sub=n_sub,
            rate="auto",
            seed=seed,
            sample_weight=None,
            bins=None,
            strategy="uniform",
            now=early,
        )

    def finish(cancel=False):
        if cancel:  # the report failed: stop the subsamples
            subsamples.cancel()
            return None
        with warnings.catch_warnings(record=True) as later:
            warnings.simplefilter("always", CoverageWarning)
            found = subsamples(2)
        note = None
        if any(issubclass(w.category, CoverageWarning) for w in caught + later):
            note = (
                f"intervals: at {T} rounds read them as rough ranges (they covered at 0.90 or more at nominal "
                "0.95 from 5000 rounds on in results/estimators-coverage)"
            )
        return dict(zip(keys, found)), note

    return finish


def binned_ece_of(stats):
    """(ECE over round(T^(1/3)) equal-mass bins, bins made) of an exact table, or (None, None)."""
    if stats.edges is not None or (stats.weighted and getattr(stats, "rounds", None) is None):
        return None, None
    from fastcdl.exact import ece

    binned = stats.rebin("auto", strategy="quantile")
    return ece(binned), int(binned.edges.shape[0] - 1)


def summary_of_table(stats, *, intervals="auto", level=0.95, n_sub=200, seed=0, source=None) -> Summary:
    """:func:`summary` of a BucketStats.

    Parameters
    ----------
    stats : BucketStats
        The table.
    intervals, level, n_sub, seed
        As in :func:`summary`.
    source : Source, optional
        Where the rounds came from, as the report states it.

    Returns
    -------
    Summary

    Examples
    --------
    >>> import fastcdl as fc
    >>> summary_of_table(fc.bucket_stats([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]))["k2"]
    0.0625
    """
    from fastcdl.exact import SampleSizeWarning, one_round_share

    share = one_round_share(stats)
    share = None if share != share else float(share)
    sparse = share is not None and share >= SPARSE_SHARE
    keys = _which_intervals(intervals, sparse, stats)
    # the intervals' subsamples begin on the helper thread while this thread computes the
    # measures; on a cold cache (kernels to compile, one at a time) in the report's own order,
    # the one fastcdl.prefetch's helper process plans for
    early = keys is not None and not cache_cold()
    finish_intervals = _begin_intervals(stats, keys, level, n_sub, seed, early) if keys is not None else None
    try:
        with warnings.catch_warnings():  # the summary says it once (Summary.advice)
            warnings.simplefilter("ignore", SampleSizeWarning)
            values = {key: m(stats) for key, m in MEASURES.items() if m.applies(stats)}
            extras = {key: m.extras_of(stats) for key, m in MEASURES.items() if m.extras}
        # the worst task: now when the report shows it, on first use when it does not (continuous
        # scores), so that their first report compiles none of cdl_report's kernels
        task = functools.partial(_worst_task_of_table, stats)
        if not sparse:
            task = task()
        ece_q, ece_q_bins = binned_ece_of(stats) if sparse else (None, None)
        from fastcdl.diagnostics import diagnose

        diag, why = diagnose(stats)
    except BaseException:
        if finish_intervals is not None:
            finish_intervals(cancel=True)
        raise
    ivs, note = ({}, None) if finish_intervals is None else finish_intervals()
    return Summary(
        values,
        int(stats.n_buckets),
        float(stats.total),
        extras,
        share,
        task,
        stats.edges is not None,
        bool(stats.weighted),
        ivs,
        note,
        ece_q,
        ece_q_bins,
        source=source if source is not None else Source(),
        edges=stats.edges,
        diagnostics=diag,
        diagnostics_notes=why,
    )


def _which_intervals(intervals, sparse, stats):
    """The keys to give intervals of (None: none), from ``intervals=`` of :func:`summary`."""
    from fastcdl._validate import ValidationError

    if isinstance(intervals, str):
        if intervals != "auto":
            raise ValidationError("intervals", "must be 'auto', True, False or a list of measure keys", value=intervals)
        return _interval_keys(stats) if sparse else None
    if intervals is True:
        return _interval_keys(stats)
    if intervals is False or intervals is None:
        return None
    from fastcdl.measures import measure

    keys = list(intervals)
    for key in keys:
        measure(key)
    return keys


@dataclass(frozen=True)
class ClasswiseSummary:
    """The class-wise report of k-class forecasts: one :class:`Summary` per class (P_j
    against y = j) and their means with weights 1/k; frozen. Returned by :func:`summary`
    with ``multiclass="classwise"``.

    Attributes
    ----------
    classes : tuple of str
        The classes' names.
    per_class : tuple of Summary
        Each class's report.
    T : float
        The rounds (total weight when weighted).
    weighted : bool
        Whether the rounds carry weights.
    cdl_multiclass : float or None
        The exact CDL over all k outcomes (None when not computed).
    cdl_multiclass_how : str
        How it was computed, or why not.
    source : Source
        Where the rounds came from.

    Examples
    --------
    >>> P = [[0.75, 0.25], [0.75, 0.25], [0.25, 0.75], [0.25, 0.75]]
    >>> r = summary([0, 1, 1, 1], P, multiclass="classwise")
    >>> r.mean["ece"], len(r.per_class)
    (0.25, 2)
    """

    classes: tuple
    per_class: tuple
    T: float
    weighted: bool
    cdl_multiclass: float | None
    cdl_multiclass_how: str
    source: Source = field(default_factory=Source)

    @property
    def weights(self) -> list:
        """The classes' weights in the means: 1/k each."""
        return [1.0 / len(self.per_class)] * len(self.per_class)

    @property
    def mean(self) -> dict:
        """{key: the mean over the classes} of the measures the text report prints."""
        from fastcdl.summary_text import headline_keys

        out = {}
        for key in headline_keys(False) + headline_keys(True):
            got = [s.values.get(key) for s in self.per_class]
            out[key] = None if any(v is None for v in got) else float(np.mean(got))
        return out

    @property
    def sparse(self) -> bool:
        """Some class has most of its rounds in buckets of one round."""
        return any(s.sparse for s in self.per_class)

    @property
    def advice(self) -> str | None:
        """What to read instead of the exact measures when they are noise (None otherwise)."""
        if not self.sparse:
            return None
        return _advice(max(s.one_round_share or 0.0 for s in self.per_class), self.weighted)

    @property
    def interval_notes(self) -> list:
        """The classes' notes on their intervals, each once."""
        notes = []
        for s in self.per_class:
            if s.interval_note and s.interval_note not in notes:
                notes.append(s.interval_note)
        return notes

    def to_dict(self) -> dict:
        """Plain Python (JSON-ready): what ``fastcdl metrics --multiclass classwise --json`` prints.

        Returns
        -------
        dict

        Examples
        --------
        >>> P = [[0.75, 0.25], [0.75, 0.25], [0.25, 0.75], [0.25, 0.75]]
        >>> summary([0, 1, 1, 1], P, multiclass="classwise").to_dict()["mean"]["cdl"]
        0.25
        """
        out = {
            "multiclass": "classwise",
            "T": _plain_T(self.T, self.weighted, self.source),
            "classes": list(self.classes),
            "weights": self.weights,
            "per_class": [
                {"class": c, "n_buckets": s.n_buckets, **s._fields()} for c, s in zip(self.classes, self.per_class)
            ],
            "mean": self.mean,
            "cdl_multiclass": self.cdl_multiclass,
            **_bins_dict(self.source, self.per_class[0].edges),
            "advice": self.advice,
        }
        if self.source.skipped is not None:
            out["skipped_rows"] = self.source.skipped
        return out

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as JSON (``**kwargs`` to json.dumps).

        Returns
        -------
        str
        """
        return json.dumps(jsonable(self.to_dict()), allow_nan=False, **kwargs)

    def to_text(self, name=None, *, estimators=False) -> str:
        """The report in words, as ``fastcdl metrics`` prints it (see :meth:`Summary.to_text`).

        Returns
        -------
        str
        """
        from fastcdl.summary_text import classwise_lines

        return "".join(line + "\n" for line in classwise_lines(self, name or "forecasts", estimators))

    def __repr__(self) -> str:
        return f"ClasswiseSummary(k={len(self.classes)} classes, T={_plain_T(self.T, self.weighted, self.source)})"


def summary_of_file(fs, *, intervals="auto", level=0.95, n_sub=200, seed=0, lp_rows=LP_ROWS):
    """:func:`summary` of what :func:`fastcdl.io.read_file` read (a FileStats).

    Parameters
    ----------
    fs : FileStats
        The file's tables (or arrays', :func:`fastcdl.io.read_arrays`).
    intervals, level, n_sub, seed, lp_rows
        As in :func:`summary`.

    Returns
    -------
    Summary or ClasswiseSummary
    """
    from fastcdl._validate import ValidationError

    if isinstance(lp_rows, bool) or not isinstance(lp_rows, (int, np.integer)) or lp_rows < 0:
        raise ValidationError("lp_rows", "must be an integer >= 0", value=lp_rows)
    source = Source(
        rows=fs.n_rows - fs.skipped,
        skipped=fs.skipped if fs.skip_missing else None,
        integer_weights=fs.integer_weights,
        bins=fs.bins,
        strategy=fs.strategy,
    )
    kw = dict(intervals=intervals, level=level, n_sub=n_sub, seed=seed, source=source)
    kind = fs.columns.multiclass
    if kind is None:
        return summary_of_table(fs.stats, **kw)
    exact, how = _exact_multiclass(fs, lp_rows)
    if kind == "top-label":
        import dataclasses

        s = summary_of_table(fs.stats, **kw)
        return dataclasses.replace(
            s, multiclass="top-label", classes=tuple(fs.columns.p), cdl_multiclass=exact, cdl_multiclass_how=how
        )
    per = tuple(summary_of_table(st, **kw) for st in fs.per_class)
    T = float(sum(t.total for t in fs.per_class[:1]))
    return ClasswiseSummary(tuple(fs.columns.p), per, T, fs.weighted, exact, how, source)


# The k-class LP's measured cost (results/benchmarks/multiclass.md, k = 10): 0.5 s at 48 distinct
# rows, 7 s at 194, 19 s at 390; doubling the rows multiplies it by 2.7 to 5, about the square
_LP_COST = "k = 10: 19 s at 390 rows, growing about as the square of the rows"


def _lp_time(m: int) -> str:
    """The k-class LP's time at m distinct rows in words, by the growth of _LP_COST."""
    seconds = 19.0 * (m / 390) ** 2
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"about {seconds / size:.0f} {unit}"
    return f"about {max(seconds, 1):.0f} s"


def _exact_multiclass(fs, limit):
    """(value or None, words): the exact CDL over all k outcomes, from the distinct rows."""
    from fastcdl._validate import ROW_SUM_TOL
    from fastcdl.exact import SampleSizeWarning
    from fastcdl.multiclass import cdl_multiclass_within

    if fs.rows is None:
        return None, (
            f"not computed: at least {fs.rows_over} distinct rows of predictions, where the LP would "
            f"take {_lp_time(fs.rows_over)} or more ({_LP_COST}); the exact k-class CDL is for "
            "predictions on a few hundred distinct rows at most: read the top-label or class-wise "
            "numbers instead (--multiclass classwise; --bins to group continuous scores)"
        )
    Q, C = fs.rows
    if Q.shape[0] > limit:
        m = Q.shape[0]
        return None, (
            f"not computed: {m} distinct rows of predictions, more than --lp-rows {limit}; the LP "
            f"would take {_lp_time(m)} ({_LP_COST}): --lp-rows {m} computes it"
        )
    i, j = np.nonzero(C > 0)
    # the rounds come aggregated by row, so cdl_multiclass cannot count them; the advice of
    # the binary tables speaks for the input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SampleSizeWarning)
        # rows read from text were checked as read, against the digits they were printed with
        value = cdl_multiclass_within(j, Q[i], C[i, j], max(limit, 1), row_sum_tol=ROW_SUM_TOL + fs.printed_slack)
    return value, f"the LP over the {Q.shape[0]} distinct rows"


def summary(
    y_true,
    y_prob=None,
    *,
    sample_weight=None,
    bins=None,
    strategy="uniform",
    multiclass=None,
    pos_label=None,
    intervals="auto",
    level=0.95,
    n_sub=200,
    seed=0,
    lp_rows=LP_ROWS,
):
    """The report of forecasts: every measure, the worst decision task, the advice and the
    intervals for continuous scores, in one frozen object with a readable repr,
    ``to_dict()``, ``to_json()`` and ``to_text()``: what ``fastcdl metrics`` prints.

    Cost: one exact table (O(T log T), O(T) binned) and every measure on it (O(m log m)
    each; smCE and CDL_M dominate); intervals cost n_sub evaluations of the sample estimators
    on tables of T/4 rounds; k classes, the LP over the distinct rows (seconds at 200 rows).

    Parameters
    ----------
    y_true : array-like, BucketStats, FileStats or path
        Outcomes in {0, 1} (labels 0..k-1 for k-class y_prob); or a bucket table; or what
        :func:`fastcdl.io.read_file` read; or a file's path (read with read_file's defaults:
        columns y and p, or p_0..p_{k-1}).
    y_prob : array-like of shape (T,) or (T, k), optional
        Predictions (scikit-learn's order); a (T, 2) predict_proba output is binary.
    sample_weight, bins, strategy
        As in :func:`fastcdl.bucket_stats`.
    multiclass : {"top-label", "classwise"}, optional
        k classes: the top-label report or the class-wise one (:class:`ClasswiseSummary`).
    pos_label : optional
        Binary y_true of any two labels: the positive one.
    intervals : "auto", bool or list of str, default "auto"
        The debiased estimates and intervals (:func:`fastcdl.interval`) of the sample
        estimators: "auto" for continuous scores (most rounds in buckets of one round), True
        always, False never, or a list of measure keys.
    level : float, default 0.95
        The intervals' nominal coverage.
    n_sub : int, default 200
        Subsamples of the intervals.
    seed : int, default 0
        Seeds the intervals' resampling.
    lp_rows : int, default 200
        k classes: the exact CDL over all outcomes is computed up to this many distinct rows.

    Returns
    -------
    Summary or ClasswiseSummary

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
    report = _summary(
        y_true, y_prob, sample_weight, bins, strategy, multiclass, pos_label, lp_rows, intervals, level, n_sub, seed
    )
    notes = [report.interval_note] if isinstance(report, Summary) else report.interval_notes
    if any(notes):  # once, not once per measure or class
        from fastcdl.uncertainty import CoverageWarning

        warnings.warn(next(n for n in notes if n), CoverageWarning, stacklevel=2)
    return report


def _summary(
    y_true, y_prob, sample_weight, bins, strategy, multiclass, pos_label, lp_rows, intervals, level, n_sub, seed
):
    from fastcdl.io import FileStats, read_arrays, read_file
    from fastcdl.multiclass import MAX_ROWS
    from fastcdl.bucket_table import BucketStats

    kw = dict(intervals=intervals, level=level, n_sub=n_sub, seed=seed)
    if isinstance(y_true, (str, os.PathLike)):
        _only(y_true, y_prob=y_prob, sample_weight=sample_weight, pos_label=pos_label)
        fs = read_file(y_true, multiclass=multiclass, bins=bins, strategy=strategy, max_rows=max(lp_rows, MAX_ROWS))
        return summary_of_file(fs, lp_rows=lp_rows, **kw)
    if isinstance(y_true, FileStats):
        _only(y_true, y_prob=y_prob, sample_weight=sample_weight, pos_label=pos_label, multiclass=multiclass, bins=bins)
        return summary_of_file(y_true, lp_rows=lp_rows, **kw)
    if isinstance(y_true, BucketStats) and multiclass is None and pos_label is None:
        from fastcdl._tables.tabulate import stats_of

        return summary_of_table(stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy), **kw)
    fs = read_arrays(
        y_true,
        y_prob,
        sample_weight=sample_weight,
        bins=bins,
        strategy=strategy,
        multiclass=multiclass,
        pos_label=pos_label,
        max_rows=max(lp_rows, MAX_ROWS),
    )
    return summary_of_file(fs, lp_rows=lp_rows, **kw)


def _only(what, **given):
    """Refuse the arguments that a file or a FileStats does not take."""
    from fastcdl._validate import ValidationError

    for name, v in given.items():
        if v is not None:
            kind = "a FileStats" if not isinstance(what, (str, os.PathLike)) else "a file's path"
            raise ValidationError(name, f"is not accepted with {kind} (read_file takes the file's options)")
