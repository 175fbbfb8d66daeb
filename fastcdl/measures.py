"""The measures of calibration fastcdl computes, declared once.

Each :class:`Measure` says what the rest of the package needs to know of it: its key (the
JSON key, the trial store's column, the name ``fc.bootstrap`` and ``fc.calibration_test``
accept), how it prints, one line of what it measures, the function of a bucket table that
computes it, whether lower is better, whether it is a sample estimator (an estimate of a
predictor's population value from i.i.d. rounds, docs/estimators.md) or an exact measure of
the table, when it applies, and, for the measures a rate-experiment trial records, the
store's columns and the version that keys stored trials.

The command line's report and JSON (through :func:`fastcdl.summary`), the bootstrap's
names, the warm-up, the trial metrics and the store's columns, the plots' labels, the
tests (tests/reference.py holds one independent reference per key; tests/test_registry.py
checks both lists agree) and the asv suite read this list. Adding a measure is one entry
here, the function it names, and its reference in tests/reference.py.

>>> [m.key for m in MEASURES.values() if not m.sample][:5]
['cdl', 'vcdl', 'ece', 'k2', 'ucal']
>>> MEASURES["cdl_monotone"].label, MEASURES["cdl_monotone"].sample
('CDL_M', True)
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Callable

from fastcdl._tables.last_table import LastTable


def _always(st) -> bool:
    return True


def _exact_buckets(st) -> bool:
    """The table keeps each round's prediction (bins=None): the Brier score and its parts."""
    return st.edges is None


def _unweighted(st) -> bool:
    return not st.weighted and st.total >= 2


def _binned_pairs(st) -> bool:
    """Unweighted, and every bin of a binned table holds 2 rounds or none (k2_debiased)."""
    return _unweighted(st) and (st.edges is None or not ((st.counts > 0) & (st.counts < 2)).any())


def _exact_unweighted(st) -> bool:
    return st.edges is None and not st.weighted and st.total >= 2


@dataclass(frozen=True)
class Measure:
    """One measure of calibration: an entry of :data:`MEASURES`.

    Calling it on a :class:`BucketStats` gives its value as a float. Frozen.

    Attributes
    ----------
    key : str
        JSON key, store column, the name ``fc.bootstrap`` accepts.
    label : str
        How it prints ("CDL", "CDL_M").
    text : str
        What it measures, in one line.
    func : callable
        BucketStats -> float.
    sample : bool, default False
        A sample estimator (docs/estimators.md) rather than an exact measure of the table.
    lower_is_better : bool, default True
        False for the measures where more is better (resolution).
    applies : callable
        BucketStats -> bool: where it is defined (the Brier score needs exact buckets).
    headline : bool, default True
        The text report prints it (the JSON carries every measure that applies).
    trial_columns : tuple of str, default ()
        The trial store's columns (the first is the value), () if trials do not record it.
    trial_compute : callable, optional
        BucketStats -> {column: value} for the trial columns (default: {key: func(st)}).
    version : int, default 1
        Keys the stored trials: bump it when the measure's values change.
    studied : bool, default False
        The coverage study (results/estimators-coverage) measured its default interval
        (:func:`fastcdl.interval`), which then applies ``bias_rate`` and warns below the sizes
        it was seen to cover at.
    bias_rate : (float, float), float or None, default None
        For a studied estimator, the rates r assumed for its bias, bias ~ T^-r: a range (lo,
        hi), one rate, or None (unbiased); ``fastcdl.uncertainty.BIAS_RATES`` lists them.
    cli_interval : bool, default False
        ``fastcdl metrics --ci`` prints its debiased estimate and interval.
    validated_from : int, default 5000
        For a studied estimator, the rounds from which its default interval covered at 0.90 or
        more on every model of the study; :func:`fastcdl.interval` warns below.
    interval_fails : str, default ""
        For a studied estimator whose default interval did not cover in the study at any size:
        what it missed, which :func:`fastcdl.interval` says in a CoverageWarning on every call.
    interval_unstudied : str, default ""
        For a sample estimator the coverage study could not include: why, which
        :func:`fastcdl.interval` says in a CoverageWarning on every call (its interval is then
        ``validated=False``: a range nobody has seen cover).
    of : str, default "stats"
        The table it is computed from: "stats", a bucket table (data, or a run's stated
        predictions); "pseudo", a run's expected-count table (``RunResult.pseudo_stats``:
        per stated value j the weight sum_t P_t(j) and sum_t P_t(j) y_t, docs/pseudo.md).
        The reports of data tables (``TABLE_MEASURES``) hold only the "stats" ones.
    extras : tuple of (str, callable), default ()
        Report fields that follow its value in the JSON, each (name, BucketStats -> value):
        VCDL's kink, cutoff CE's p-value. A measure that does not apply gets None for them.
    extras_text : callable, optional
        {name: value} of its extras -> the words the text report appends to its line.
    debiased_by : str, optional
        The measure whose debiased estimate and interval the report prints on this measure's
        row (ATB's is atb_unbiased's).
    line_style, marker : default "-" and "x"
        How rate plots draw it (matplotlib's linestyle and marker).
    fitted : bool, default False
        Rate experiments fit the forms the theory predicts to it (a measure of the size of a
        bias: CDL, VCDL, ECE, UCal; not K2, which is squared).
    in_trial_key : bool, default True
        Its version is part of every stored trial's key (fastcdl.online.versions). The
        measures added after the stores were filled (klcal, smce, the pseudo ones) are not:
        each is a function of the trial's stored tables (``bucket_table``, and
        ``pseudo_table`` for the pseudo ones), so adding it re-keys no stored trial; its
        column is computed for trials run since and NULL in rows stored before (klcal and
        smce can be filled from the stored bucket tables, the pseudo ones only for trials
        that stored their expected-count table). Such a measure keeps version 1: changing
        its values is a new key, not a bump.

    Examples
    --------
    >>> import fastcdl as fc
    >>> m = fc.MEASURES["ece"]
    >>> m.label, m.lower_is_better, m(fc.bucket_stats([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]))
    ('ECE', True, 0.25)
    """

    key: str
    label: str
    text: str
    func: Callable
    sample: bool = False
    lower_is_better: bool = True
    applies: Callable = _always
    headline: bool = True
    trial_columns: tuple = ()
    trial_compute: Callable | None = None
    version: int = 1
    studied: bool = False
    bias_rate: tuple | float | None = None
    cli_interval: bool = False
    validated_from: int = 5000
    interval_fails: str = ""
    interval_unstudied: str = ""
    of: str = "stats"
    in_trial_key: bool = True
    extras: tuple = ()
    extras_text: Callable | None = None
    debiased_by: str | None = None
    line_style: object = "-"
    marker: str = "x"
    fitted: bool = False

    def __call__(self, st) -> float:
        return float(self.func(st))

    def extras_of(self, st) -> dict:
        """{name: value} of its report extras on a table (None each where it does not apply)."""
        if not self.applies(st):
            return dict.fromkeys(name for name, _ in self.extras)
        return {name: f(st) for name, f in self.extras}

    @property
    def trial(self) -> bool:
        """Whether rate-experiment trials record it."""
        return bool(self.trial_columns)


def _metrics():
    from fastcdl import exact

    return exact


def _sample():
    from fastcdl import sample

    return sample


def _lazy(module, name):
    """The function ``name`` of fastcdl.exact or fastcdl.sample, looked up when called (the
    registry is importable before them: they import the kernels)."""

    def call(st):
        return getattr(module(), name)(st)

    call.__name__ = name
    call.__qualname__ = name
    return call


def _proper():
    import importlib

    return importlib.import_module("fastcdl.log_loss")  # the module (the package's name is the function)


def _kl():
    from fastcdl import kl_calibration

    return kl_calibration


def _score_module(name):
    """fastcdl.<name> (the measures added for model scores), imported when first called."""
    import importlib

    return importlib.import_module(f"fastcdl.{name}")


def _value_of(module, name, shared=False):
    """BucketStats -> the ``value`` of fastcdl.<module>.<name>(st) (a result object or a float).
    ``shared``: the result object is kept for the extras of :func:`_field_of` (computed once)."""

    def call(st):
        out = _result_of(module, name, st) if shared else getattr(_score_module(module), name)(st)
        return float(getattr(out, "value", out))

    call.__name__ = name
    call.__qualname__ = name
    return call


def _field_of(module, name, field):
    """BucketStats -> the ``field`` of fastcdl.<module>.<name>(st), the result computed once per
    table for the value and every field (the report's extras)."""

    def call(st):
        return float(getattr(_result_of(module, name, st), field))

    call.__name__ = f"{name}_{field}"
    return call


_last_result = LastTable()  # the result objects of the measures with extras, by table


def _result_of(module, name, st):
    out = _last_result.get(st, (module, name))
    if out is None:
        out = getattr(_score_module(module), name)(st)
        _last_result.put(st, (module, name), out)
    return out


# LDTC's linear program grows with the buckets: the report computes it for small tables only, on a
# grid of spacing 1/200 (within 1/400 of the true value; tens of milliseconds at 12 buckets).
# fc.ldtc itself takes any table, on a finer grid, rebinned beyond its size limit.
LDTC_REPORT_BUCKETS = 12
LDTC_REPORT_GRID = 200


def _small_exact(st) -> bool:
    return st.n_buckets <= LDTC_REPORT_BUCKETS


# intCE's exact programme is O(m^2): the report computes it up to this many buckets (0.1 s)
INTCE_REPORT_BUCKETS = 5000


def _intce_applies(st) -> bool:
    return st.n_buckets <= INTCE_REPORT_BUCKETS


def _ldtc_report(st):
    return _score_module("distance_to_calibration").ldtc(st, grid=LDTC_REPORT_GRID).value


def _brier_part(part):
    def call(st):
        return getattr(_sample().brier_decomposition(st), part)

    call.__name__ = f"brier_{part}"
    return call


def _cdl_trial(st):
    rep = report_of(st)
    return {"cdl": rep.value, "kink1": float(rep.kinks[0]), "kink2": float(rep.kinks[-1])}


def format_number(v) -> str:
    """A value with 4 significant digits (scientific below 1e-4): 0.02452, 1.234e-07, 0.

    >>> format_number(0.0245213), format_number(1.2344e-07), format_number(0.0)
    ('0.02452', '1.234e-07', '0')
    """
    v = float(v)
    return "0" if v == 0 else f"{v:.4g}"


# p-values below this are printed as a bound: the range law's tail (8 Phi(-r) and its series)
# is below the smallest normal double there, and at r > 38.5 it underflows to 0
P_FLOOR = 1e-300


def format_p_value(p) -> str:
    """A p-value in words: "p = 0.0123", or "p < 1e-300" where it underflowed (never "p = 0").

    >>> format_p_value(0.01234), format_p_value(0.0)
    ('p = 0.01234', 'p < 1e-300')
    """
    return f"p < {P_FLOOR:g}" if p < P_FLOOR else f"p = {format_number(p)}"


_last_report = (lambda: None, None)  # (weak reference to a table, its cdl_report)


def report_of(st):
    """fastcdl.exact.cdl_report of the table, computed once per table: the report's worst task
    and VCDL's kink (an extra of the registry) share it. A BucketStats is immutable, so the same
    object has the same report (as fastcdl.sample shares the monotone kernel). O(m log m), or
    O(1) again."""
    global _last_report
    ref, rep = _last_report
    if ref() is st:
        return rep
    rep = _metrics().cdl_report(st)
    _last_report = (weakref.ref(st), rep)
    return rep


def _vcdl_kink(st):
    # the fused kernel's kink: cdl_report's vcdl_kink bit for bit (tests/test_summary.py),
    # without compiling or building the curve (continuous scores do not show the worst task)
    return float(_metrics().vcdl_kink_of(st))


def _cutoff_p_value(st):
    return float(_sample().cutoff_ce_test(st).p_value)


_M, _S = _metrics, _sample

# The bias rates of the suprema of empirical processes (CDL_M, VCDL_M, cutoff CE, smCE): their
# bias is at most of the order of the process, T^-1/2, which it is at a calibrated model; fitting
# the PAV recalibration to noise can make it fall faster (the coverage study measured slopes of
# log bias against log T from 10^3 to 10^6 rounds of -0.55 to -0.68 for CDL_M and VCDL_M, -0.44 to
# -0.56 for cutoff CE and smCE). fastcdl.interval takes the union of its intervals over rates 1/2
# to 2/3: with 2/3 alone calibrated models were covered 0.83 to 0.89 of the time at 10^4 rounds,
# with the union at least 0.92 on every model. ATB is biased by Brier / T; atb_unbiased is unbiased.
_SUP_RATES = (0.5, 2.0 / 3.0)
_SUP = dict(sample=True, studied=True, bias_rate=_SUP_RATES, cli_interval=True)
# The cross-fitted CDL_M and VCDL_M: the same rates (their bias is the sup over tasks of a
# process of order T^-1/2); the study found them no better than CDL_M and VCDL_M after
# debiasing, so the CLI does not spend an interval on them. CDL_Mcf's interval covered the
# non-monotone model 89 times in 100 at 5,000 rounds and every model 90 times in 100 or more at
# 50,000, so it is validated from 50,000 rounds. VCDL_Mcf's covered the non-monotone model 88
# times in 100 at 50,000 rounds and the under-confident one 15 of 20 at 10^5 in the study: no
# size validates it (interval_fails), and VCDL_M's own interval is the one to use
# (results/estimators-coverage).
_STUDIED = dict(studied=True, bias_rate=_SUP_RATES, validated_from=50000)
# The measures of model scores in the coverage study's fourth round (validation-scores.csv, 40
# samples per model at 5,000 rounds, 20 at 50,000, fastcdl.interval's defaults). CORP's MCB was
# covered on every model at 0.90 or more at both sizes with the rates of the suprema. smECE and ICI
# were not, on the calibrated model (16 of 40 at 5,000 rounds; 1 and 0 of 20 at 50,000:
# validation-scores-first-rates.csv): their bias near a calibrated model falls more slowly than
# T^-1/2, so their intervals take the union over rates 1/4 to 2/3. With these (150 samples per
# model at 5,000 rounds, 60 at 50,000), every model was covered at 0.91 or more at 50,000 rounds,
# but at 5,000 smECE 0.85 and 0.89 on the heavy-tailed and overconfident models and ICI 0.83 to
# 0.84 on three: both are validated from 50,000 rounds (the README there says why they miss).
_SLOW_RATES = (0.25, 2.0 / 3.0)
_VCROSSFIT_FAILS = (
    "on the coverage study's non-monotone model it covered VCDL_M 88 times in 100 at 50,000 rounds, and the "
    "under-confident one 15 times in 20 at 10^5 (results/estimators-coverage): read it as a rough range for "
    "VCDL_M; fastcdl.interval('vcdl_monotone', ...) gives an interval that covered on every model of the study"
)

#: Every measure (:class:`Measure`) by its key, in the order reports list them: the exact
#: measures of the table first, then the sample estimators.
MEASURES: dict[str, Measure] = {
    m.key: m
    for m in (
        Measure(
            "cdl",
            "CDL",
            "calibration decision loss (any task, payoffs in [0,1])",
            _lazy(_M, "cdl"),
            trial_columns=("cdl", "kink1", "kink2"),
            trial_compute=_cdl_trial,
            marker="o",
            fitted=True,
        ),
        Measure(
            "vcdl",
            "VCDL",
            "worst V-shaped task",
            _lazy(_M, "vcdl"),
            trial_columns=("vcdl",),
            extras=(("vcdl_kink", _vcdl_kink),),
            extras_text=lambda x: f", kink {format_number(x['vcdl_kink'])}",
            line_style="-.",
            marker="^",
            fitted=True,
        ),
        Measure(
            "ece",
            "ECE",
            "expected calibration error",
            _lazy(_M, "ece"),
            trial_columns=("ece",),
            line_style="--",
            marker="s",
            fitted=True,
        ),
        Measure(
            "k2", "K2", "squared calibration error", _lazy(_M, "k2"), trial_columns=("k2",), line_style=":", marker="v"
        ),
        Measure(
            "ucal",
            "UCal",
            "U-calibration error",
            _lazy(_M, "ucal"),
            trial_columns=("ucal",),
            line_style=(0, (1, 1)),
            marker="D",
            fitted=True,
        ),
        Measure("mce", "MCE", "largest bias of a bucket", _lazy(_S, "mce"), headline=False),
        Measure("rmsce", "RMSCE", "root of the squared calibration error", _lazy(_S, "rmsce"), headline=False),
        # The two proper losses, the truthful companions of the calibration measures in a
        # leaderboard: functions of a trial's bucket table, outside its key (filled for trials
        # stored before them from that table, fastcdl.experiments.fill).
        Measure(
            "brier",
            "Brier",
            "Brier score (mean squared error of the predictions)",
            _lazy(_S, "brier"),
            applies=_exact_buckets,
            headline=False,
            trial_columns=("brier",),
            in_trial_key=False,
        ),
        Measure(
            "log_loss",
            "LogLoss",
            "log loss (mean -log of the probability given to the outcome)",
            _lazy(_proper, "log_loss_table"),
            applies=_exact_buckets,
            headline=False,
            trial_columns=("log_loss",),
            in_trial_key=False,
        ),
        Measure(
            "brier_reliability", "REL", "Brier's reliability part (= K2)", _brier_part("reliability"), headline=False
        ),
        Measure(
            "brier_resolution",
            "RES",
            "Brier's resolution part (more is better)",
            _brier_part("resolution"),
            lower_is_better=False,
            headline=False,
        ),
        Measure(
            "brier_uncertainty",
            "UNC",
            "Brier's uncertainty part, ybar (1 - ybar)",
            _brier_part("uncertainty"),
            headline=False,
        ),
        Measure("cdl_monotone", "CDL_M", "CDL relative to monotone recalibrations", _lazy(_S, "cdl_monotone"), **_SUP),
        Measure(
            "vcdl_monotone",
            "VCDL_M",
            "worst V-shaped task, monotone recalibrations",
            _lazy(_S, "vcdl_monotone"),
            **_SUP,
        ),
        Measure(
            "cutoff_ce",
            "cutCE",
            "largest bias over an interval of predictions",
            _lazy(_S, "cutoff_ce"),
            extras=(("cutoff_ce_p_value", _cutoff_p_value),),
            extras_text=lambda x: f"; {format_p_value(x['cutoff_ce_p_value'])} for perfect calibration",
            **_SUP,
        ),
        Measure(
            "smce",
            "smCE",
            "smooth calibration error",
            _lazy(_S, "smce"),
            trial_columns=("smce",),
            in_trial_key=False,
            **_SUP,
        ),
        Measure(
            "atb",
            "ATB",
            "averaged two-bin error (truthful: for comparing models)",
            _lazy(_S, "atb"),
            sample=True,
            studied=True,
            bias_rate=1.0,
            debiased_by="atb_unbiased",
        ),
        Measure(
            "atb_unbiased",
            "ATB_u",
            "ATB, unbiased for i.i.d. rounds",
            _lazy(_S, "atb_unbiased"),
            sample=True,
            applies=_exact_unweighted,
            headline=False,
            studied=True,
            bias_rate=None,
            cli_interval=True,
        ),
        Measure(
            "cdl_monotone_crossfit",
            "CDL_Mcf",
            "CDL_M, recalibration fitted on one half, judged on the other",
            _lazy(_S, "cdl_monotone_crossfit"),
            sample=True,
            applies=_unweighted,
            headline=False,
            **_STUDIED,
        ),
        Measure(
            "vcdl_monotone_crossfit",
            "VCDL_Mcf",
            "VCDL_M, recalibration fitted on one half, judged on the other",
            _lazy(_S, "vcdl_monotone_crossfit"),
            sample=True,
            applies=_unweighted,
            headline=False,
            interval_fails=_VCROSSFIT_FAILS,
            **_STUDIED,
        ),
        Measure(
            "k2_debiased",
            "K2_d",
            "squared calibration error over equal-mass bins, debiased (Kumar et al.)",
            _lazy(_S, "k2_debiased"),
            sample=True,
            applies=_binned_pairs,
            headline=False,
            studied=True,
            bias_rate=None,
            cli_interval=True,
        ),
        Measure(
            "ece_sweep",
            "ECE_sw",
            "ECE over the most equal-mass bins that keep frequencies monotone",
            _lazy(_S, "ece_sweep"),
            sample=True,
            applies=_exact_buckets,
            headline=False,
            studied=True,
            bias_rate=_SUP_RATES,
            interval_fails="the sweep's bins are too few where the calibration curve is not monotone, and its bias "
            "at a calibrated model is larger than the subsamples see (at 5,000 rounds it covered a calibrated "
            "model about half the time and a non-monotone one about 60%; results/estimators-coverage): the "
            "interval is a rough range for ECE_sweep at this size, not for the ECE of the scores",
        ),
        Measure(
            "klcal",
            "KLCal",
            "KL-calibration: mean KL divergence of the outcomes from the stated value",
            _lazy(_kl, "kl_calibration"),
            applies=_exact_buckets,
            headline=False,
            trial_columns=("klcal",),
            in_trial_key=False,
            line_style="--",
            marker="s",
        ),
        # the measures every calibration library reports for model scores (docs/model-scores.md)
        Measure(
            "smece",
            "smECE",
            "smooth ECE: residuals kernel-smoothed at a fixed-point bandwidth (relplot's)",
            _value_of("smooth_ece", "smece"),
            sample=True,
            headline=False,
            studied=True,
            bias_rate=_SLOW_RATES,
            validated_from=50000,
        ),
        Measure(
            "intce",
            "intCE",
            "interval calibration error: least binned error plus width over interval partitions (<= 5,000 buckets)",
            _value_of("distance_to_calibration", "intce"),
            sample=True,
            applies=_intce_applies,
            headline=False,
            interval_unstudied="intCE's exact programme is O(m^2) per subsample, beyond the coverage study's budget "
            "at 50,000 rounds: its interval was not seen to cover; smCE's (fastcdl.interval('smce', ...)) does, and "
            "intCE lies between smCE and ECE",
        ),
        Measure(
            "ici",
            "ICI",
            "mean distance of the predictions to their isotonic recalibration",
            _value_of("ici", "ici", shared=True),
            sample=True,
            applies=_exact_buckets,
            headline=False,
            studied=True,
            bias_rate=_SLOW_RATES,
            validated_from=50000,
            extras=tuple((f"ici_{f}", _field_of("ici", "ici", f)) for f in ("e50", "e90", "emax")),
            extras_text=lambda x: (
                f", E50 {format_number(x['ici_e50'])}, E90 {format_number(x['ici_e90'])}, "
                f"Emax {format_number(x['ici_emax'])}"
            ),
        ),
        Measure(
            "corp",
            "MCB",
            "CORP miscalibration: Brier score minus that of the isotonic recalibration",
            _value_of("corp", "corp", shared=True),
            sample=True,
            applies=_exact_buckets,
            headline=False,
            studied=True,
            bias_rate=_SUP_RATES,
            extras=tuple((f"corp_{f}", _field_of("corp", "corp", f)) for f in ("dsc", "unc", "score")),
            extras_text=lambda x: (
                f"; DSC {format_number(x['corp_dsc'])}, UNC {format_number(x['corp_unc'])}, "
                f"Brier {format_number(x['corp_score'])} = MCB - DSC + UNC"
            ),
        ),
        Measure(
            "ldtc",
            "LDTC",
            "lower distance to calibration (linear program on a 1/200 grid; tables of at most 12 buckets)",
            _ldtc_report,
            applies=_small_exact,
            headline=False,
            interval_unstudied="LDTC's linear program takes seconds per subsample, beyond the coverage study's "
            "budget: its interval was not seen to cover; smCE's (fastcdl.interval('smce', ...)) does, and "
            "smCE / 2 <= LDTC <= 2 smCE",
        ),
        # the pseudo measures: the table measures of a run's expected-count table (docs/pseudo.md)
        Measure(
            "pseudo_ece",
            "pECE",
            "pseudo ECE (over the forecaster's distributions)",
            _lazy(_M, "ece"),
            headline=False,
            trial_columns=("pseudo_ece",),
            of="pseudo",
            in_trial_key=False,
        ),
        Measure(
            "pseudo_k2",
            "pK2",
            "pseudo squared calibration error",
            _lazy(_M, "k2"),
            headline=False,
            trial_columns=("pseudo_k2",),
            of="pseudo",
            in_trial_key=False,
        ),
        Measure(
            "pseudo_klcal",
            "pKLCal",
            "pseudo KL-calibration",
            _lazy(_kl, "kl_calibration"),
            headline=False,
            trial_columns=("pseudo_klcal",),
            marker="o",
            of="pseudo",
            in_trial_key=False,
        ),
        Measure(
            "pseudo_cdl",
            "pCDL",
            "pseudo calibration decision loss",
            _lazy(_M, "cdl"),
            headline=False,
            trial_columns=("pseudo_cdl",),
            of="pseudo",
            in_trial_key=False,
        ),
    )
}

#: The measures of a bucket table (``of == "stats"``): what reports of data, the bootstrap and
#: the command line's summary compute.
TABLE_MEASURES: dict[str, Measure] = {k: m for k, m in MEASURES.items() if m.of == "stats"}


def register(m: Measure) -> Measure:
    """Add a measure to the registry (``MEASURES``, and ``TABLE_MEASURES`` for a measure of a
    bucket table): the report, ``fastcdl metrics``, the bootstrap's and the interval's names and
    the asv suite read it from there. For rate-experiment trials (``trial_columns``) register
    it before fastcdl.trial_measures is imported (before fastcdl.experiments or fastcdl.online),
    whose list is made from the registry once. A key that is taken is refused (ValueError).

    Parameters
    ----------
    m : Measure

    Returns
    -------
    Measure
        ``m``.

    Examples
    --------
    >>> import fastcdl as fc
    >>> register(Measure("ece", "ECE", "again", fc.ece))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ValidationError: key 'ece' is already a measure of the registry
    """
    from fastcdl._validate import ValidationError

    if not isinstance(m, Measure):
        raise ValidationError("m", f"must be a fastcdl.Measure, got {type(m).__name__}")
    if m.key in MEASURES:
        raise ValidationError("key", f"{m.key!r} is already a measure of the registry")
    MEASURES[m.key] = m
    if m.of == "stats":
        TABLE_MEASURES[m.key] = m
    return m


def measure(key: str) -> Measure:
    """The measure named ``key`` (ValueError naming the known keys otherwise)."""
    from fastcdl._validate import check_name

    check_name(key, MEASURES, "metric")
    return MEASURES[key]


def exact_measures() -> list[Measure]:
    """The exact measures of a bucket table, in report order."""
    return [m for m in TABLE_MEASURES.values() if not m.sample]


def sample_estimators() -> list[Measure]:
    """The sample estimators, in report order."""
    return [m for m in TABLE_MEASURES.values() if m.sample]


def trial_measures() -> list[Measure]:
    """The measures rate-experiment trials record, in report order."""
    return [m for m in MEASURES.values() if m.trial]
