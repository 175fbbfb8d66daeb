"""The report of :mod:`fastcdl.summary` in words: the lines ``fastcdl metrics`` prints.

:func:`summary_lines` words a :class:`fastcdl.Summary` (binary or top-label),
:func:`classwise_lines` a :class:`fastcdl.ClasswiseSummary`. Numbers print with 4
significant digits; p-values that underflowed print as a bound. Which measures a line names
comes from the registry (``fastcdl.measures``: the entries marked ``headline``).

>>> import fastcdl as fc
>>> print(fc.summary([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]).to_text().splitlines()[1])
  CDL          0.25   calibration decision loss (any task, payoffs in [0,1])
"""

from __future__ import annotations

__all__ = ["classwise_lines", "headline_keys", "number", "p_value", "summary_lines"]

from fastcdl.measures import P_FLOOR as P_FLOOR
from fastcdl.measures import format_number as number
from fastcdl.measures import format_p_value as p_value


def _rows(sample: bool) -> list:
    """(label, key, text) of the measures the text report prints (the registry's headline
    ones; the exact measures, or the sample estimators)."""
    from fastcdl.measures import TABLE_MEASURES

    return [(m.label, m.key, m.text) for m in TABLE_MEASURES.values() if m.headline and m.sample == sample]


def _text(summ, key, text) -> str:
    """A measure's words on its line, with what its entry's extras_text adds (VCDL's kink,
    cutoff CE's p-value)."""
    from fastcdl.measures import MEASURES

    m = MEASURES[key]
    return text + m.extras_text(summ.extras[key]) if m.extras_text is not None else text


def _shown_interval(ci, key):
    """The interval printed on a measure's row: its own, or that of the measure its entry
    names as ``debiased_by`` (ATB's row shows atb_unbiased's)."""
    from fastcdl.measures import MEASURES

    return ci.get(MEASURES[key].debiased_by or key)


def headline_keys(sample: bool) -> list:
    """The keys of the measures the text report prints: the exact ones, or the sample estimators.

    >>> headline_keys(False)[:3]
    ['cdl', 'vcdl', 'ece']
    """
    return [key for _, key, _ in _rows(sample)]


def _rounds(T, weighted, source) -> str:
    """T in words: an integer count, or a total weight (an integer when the weights are)."""
    if not weighted:
        return f"T = {int(round(T))} rounds"
    if source.integer_weights:
        return f"T = {int(round(T))} rounds (total weight of {source.rows} rows)"
    return f"total weight T = {T:.6g} over {source.rows} rows"


def _binning_words(source, edges) -> str:
    """How the rounds were grouped, for the first line: buckets, or bins (fewer than asked)."""
    if edges is None:
        return ""
    made = edges.shape[0] - 1
    if source.strategy == "quantile":
        asked = "" if source.bins == "auto" or made == source.bins else f", {source.bins} asked (tied predictions)"
        return f" ({made} equal-mass bins{asked})"
    return f" ({made} equal-width bins)" if source.bins is not None else ""


def _skipped(source) -> str:
    if source.skipped is None:
        return ""
    return f"; {source.skipped} row{'s' * (source.skipped != 1)} with a missing value skipped"


def _region(i, bounds, at_bounds) -> str:
    """The beliefs p where action i of an ordered task is taken: "p < 0.35", "0.35 <= p < 0.7",
    "p >= 0.7", each bound on the side of the action taken there."""
    lo = None if i == 0 else (number(bounds[i - 1]), at_bounds[i - 1] == i)
    hi = None if i == len(bounds) else (number(bounds[i]), at_bounds[i] == i)
    if lo and hi:
        return f"{lo[0]} {'<=' if lo[1] else '<'} p {'<=' if hi[1] else '<'} {hi[0]}"
    if hi:
        return f"p {'<=' if hi[1] else '<'} {hi[0]}"
    return f"p {'>=' if lo[1] else '>'} {lo[0]}"


def _task_lines(summ) -> list:
    """The worst task (fastcdl.summary.WorstTask) in words: its regions (with the action taken
    at each bound), exact payoffs and gain."""
    t = summ.worst_task
    names = list(t.actions)
    if len(names) == 1:
        regions = f"'{names[0]}' at every belief"
    else:
        at = [names.index(a) for a in t.at_bounds]
        regions = ", ".join(f"'{names[i]}' when {_region(i, t.bounds, at)}" for i in range(len(names)))
    pay = ", ".join(f"{n} ({number(row[0])}, {number(row[1])})" for n, row in zip(names, t.payoff))
    lines = [f"worst decision task: {regions}", f"  payoffs (if y=0, if y=1): {pay}"]
    cdl = summ["cdl"]
    if t.gain >= cdl - 1e-12 * max(1.0, cdl):
        lines.append(f"  acting on the recalibrated frequencies gains it {number(t.gain)} per round (= CDL)")
    else:
        ends = " and ".join(str(int(k)) for k in t.kinks if k in (0.0, 1.0))
        lines.append(
            f"  acting on the recalibrated frequencies gains it {number(t.gain)} per round; the CDL, "
            f"{number(cdl)}, adds what predictions of exactly {ends or '0 or 1'} cost a "
            "decision maker who takes them at their word"
        )
    return lines


def _sample_lines(summ) -> list:
    """The sample estimators: plug-in value, and with intervals the debiased estimate and its
    interval; then the binned ECE with its bins named, and the note on the intervals."""
    ci = summ.intervals
    lines = []
    if ci:
        level = next(iter(ci.values())).level
        lines.append(
            "sample estimators (they converge on continuous scores; docs/estimators.md), debiased with "
            f"{100 * level:g}% intervals (fastcdl.interval):"
        )
        lines.append(f"  {'':<6} {'plug-in':>10} {'debiased':>10}   {'interval':<22}")
    else:
        lines.append("sample estimators (they converge on continuous scores; docs/estimators.md):")
    for name, key, text in _rows(sample=True):
        text = _text(summ, key, text)
        value = number(summ[key])
        if ci:
            r = _shown_interval(ci, key)
            span = f"[{number(r.lo)}, {number(r.hi)}]" if r else ""
            deb = number(r.estimate) if r else ""
            lines.append(f"  {name:<6} {value:>10} {deb:>10}   {span:<22} {text}")
        else:
            lines.append(f"  {name:<6} {value:>10}   {text}")
    if summ.ece_quantile is not None:
        lines.append(
            f"  {'ECE_q':<6} {number(summ.ece_quantile):>10}   ECE over {summ.ece_quantile_bins} equal-mass bins "
            "(round(T^(1/3)), edges at scores): the ECE of the binned model"
        )
    shown = {label: _shown_interval(ci, key) for label, key, _ in _rows(sample=True)}
    below = [label for label, iv in shown.items() if iv is not None and iv.estimate < 0]
    if below:
        lines.append(
            f"debiased values below 0 ({', '.join(below)}): the plug-in value is smaller than its estimated bias, "
            "so these rounds cannot tell the measure from 0 (what a calibrated model gives); the interval, "
            "which a measure that cannot be negative starts at 0, says how large it may be"
        )
    cut = ci.get("cutoff_ce")
    if cut is not None and cut.lo > 0 and summ.cutoff_ce_p_value >= 1 - cut.level:
        lines.append(
            f"cutCE: its interval excludes 0 while its test of perfect calibration gives "
            f"{p_value(summ.cutoff_ce_p_value)}: the test's p-value is the statistic's law under perfect "
            "calibration; the interval is a range for the population cutoff CE from subsamples of a quarter of "
            "the rounds, read as normal about the estimate, which near 0 is not a test: for whether the model is "
            "calibrated, read the test"
        )
    if summ.interval_note:
        lines.append(summ.interval_note)
    return lines


# the measures the model-scores section prints beside the tests (docs/model-scores.md)
_SCORE_ROWS = ("smece", "ici", "corp", "intce", "ldtc")


def _model_score_lines(summ) -> list:
    """smECE, ICI, CORP, intCE and LDTC where they apply, then the tests of perfect calibration and
    Cox's recalibration fit (fastcdl.diagnostics), each on a line; a test that does not apply says
    why in a few words."""
    from fastcdl.diagnostics import DIAGNOSTICS
    from fastcdl.measures import MEASURES

    lines = ["more measures, tests of perfect calibration and the recalibration fit (docs/model-scores.md):"]
    for key in _SCORE_ROWS:
        if summ.values.get(key) is None:
            continue
        m = MEASURES[key]
        lines.append(f"  {m.label:<6} {number(summ[key]):>10}   {_text(summ, key, m.text)}")
    for key, d in DIAGNOSTICS.items():
        r = summ.diagnostics.get(key)
        if r is None:
            why = summ.diagnostics_notes.get(key, "")
            lines.append(f"  {d.label:<13} not computed: {why.split(':')[0]}")
            continue
        from types import SimpleNamespace

        lines.append(f"  {d.label:<13} {d.words(SimpleNamespace(**r))}")
    return lines


def summary_lines(summ, name: str, estimators: bool = False) -> list:
    """The lines of a binary or top-label :class:`fastcdl.Summary`.

    Parameters
    ----------
    summ : Summary
    name : str
        What the first line calls the input (a file's name).
    estimators : bool, default False
        Also the sample estimators where the exact numbers are meaningful.

    Returns
    -------
    list of str
    """
    what = ""
    if summ.multiclass:
        what = (
            f", k = {len(summ.classes)} classes ({', '.join(summ.classes)}); top-label: the confidence of the "
            "predicted class against being right,"
        )
    src = summ.source
    lines = [
        f"{name}: {_rounds(summ.T, summ.weighted, src)}{what} in {summ.n_buckets} buckets"
        f"{_binning_words(src, summ.edges)}{_skipped(src)}"
    ]
    sparse = summ.sparse
    if sparse:
        lines.append(f"note: {summ.advice}")
        lines += _sample_lines(summ)
        lines.append("exact-bucket numbers (every score its own bucket: they measure noise here, see the note):")
    for label, key, text in _rows(sample=False):
        text = _text(summ, key, text)
        lines.append(f"  {label:<6} {number(summ[key]):>10}   {text}")
    if summ.multiclass:
        shown = number(summ.cdl_multiclass) if summ.cdl_multiclass is not None else "—"
        lines.append(
            f"  {'CDL_k':<6} {shown:>10}   CDL over all {len(summ.classes)} outcomes, exact ({summ.cdl_multiclass_how})"
        )
    if not sparse and (estimators or summ.intervals or summ.interval_note):
        lines += _sample_lines(summ)
    if sparse:
        lines.append("worst decision task: not shown, the exact CDL measures noise here (see the note)")
        return lines + _model_score_lines(summ)
    return lines + _task_lines(summ) + _model_score_lines(summ)


def classwise_lines(report, name: str, estimators: bool = False) -> list:
    """The lines of a :class:`fastcdl.ClasswiseSummary`: one row per class, their
    mean, the exact k-class CDL, then each class's intervals.

    Parameters
    ----------
    report : ClasswiseSummary
    name : str
        What the first line calls the input.
    estimators : bool, default False
        Also the sample estimators' columns where the exact numbers are meaningful.

    Returns
    -------
    list of str
    """
    from fastcdl.measures import MEASURES

    per, classes, k = report.per_class, report.classes, len(report.classes)
    src = report.source
    lines = [
        f"{name}: {_rounds(report.T, report.weighted, src)}, k = {k} classes; class-wise: each class's column "
        f"against y = that class{_binning_words(src, per[0].edges)}{_skipped(src)}"
    ]
    sparse = report.sparse
    if sparse:
        lines.append(f"note: {report.advice}")
    width = max(5, *(len(c) for c in classes))
    rows = _rows(sample=False) + (_rows(sample=True) if sparse or estimators else [])
    mean = report.mean
    lines.append(f"  {'class':<{width}} " + " ".join(f"{label:>10}" for label, _, _ in rows) + "   buckets")
    for c, s in zip(classes, per):
        lines.append(f"  {c:<{width}} " + " ".join(f"{number(s[key]):>10}" for _, key, _ in rows) + f"   {s.n_buckets}")
    lines.append(
        f"  {'mean':<{width}} " + " ".join(f"{number(mean[key]):>10}" for _, key, _ in rows) + f"   (weights 1/{k})"
    )
    shown = number(report.cdl_multiclass) if report.cdl_multiclass is not None else "—"
    lines.append(f"  CDL over all {k} outcomes, exact: {shown} ({report.cdl_multiclass_how})")
    if any(s.intervals for s in per):
        level = next(iv.level for s in per for iv in s.intervals.values())
        lines.append(
            f"class-wise sample estimators, debiased with {100 * level:g}% intervals (fastcdl.interval), per class:"
        )
        lines.append(f"  {'class':<{width}} {'':<8} {'plug-in':>10} {'debiased':>10}   interval")
        for c, s in zip(classes, per):
            for key, iv in s.intervals.items():
                lines.append(
                    f"  {c:<{width}} {MEASURES[key].label:<8} {number(s[key]):>10} {number(iv.estimate):>10}   "
                    f"[{number(iv.lo)}, {number(iv.hi)}]"
                )
    return lines + report.interval_notes
