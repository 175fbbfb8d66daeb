"""The tests of perfect calibration and the recalibration fit a report prints, declared once.

A :class:`Diagnostic` is what :func:`fastcdl.summary` and ``fastcdl metrics`` need of a test or a
fit that is not a single measure: the function of a bucket table that computes it, the fields its
JSON entry holds and the words of its line. The measures themselves (smECE, ICI, CORP's MCB, ...)
are in :mod:`fastcdl.measures`; this list holds the classical tests (Hosmer-Lemeshow,
Spiegelhalter, Kolmogorov-Smirnov) and Cox's calibration slope. A diagnostic that does not apply
to a table (a binned table, predictions of 0 or 1 for the slope, too few distinct predictions for
the groups) is None in the report, with the reason beside it.

>>> list(DIAGNOSTICS)
['hosmer_lemeshow', 'spiegelhalter', 'ks', 'calibration_slope']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fastcdl.measures import format_number, format_p_value

__all__ = ["Diagnostic", "DIAGNOSTICS", "diagnose"]


@dataclass(frozen=True)
class Diagnostic:
    """One test or fit of the report.

    Attributes
    ----------
    key : str
        Its JSON key.
    label : str
        How its line starts.
    func : callable
        BucketStats -> its result (raises ValueError where it does not apply).
    fields : tuple of str
        The result's attributes its JSON entry holds.
    words : callable
        result -> the rest of its line.

    Examples
    --------
    >>> d = DIAGNOSTICS["spiegelhalter"]
    >>> d.label, d.fields
    ('Spiegelhalter', ('statistic', 'p_value'))
    """

    key: str
    label: str
    func: Callable
    fields: tuple
    words: Callable


def _tests():
    from fastcdl import classical_tests

    return classical_tests


def _call(name):
    def call(st):
        return getattr(_tests(), name)(st)

    call.__name__ = name
    return call


#: The report's tests and fits by key, in the order it prints them.
DIAGNOSTICS: dict[str, Diagnostic] = {
    d.key: d
    for d in (
        Diagnostic(
            "hosmer_lemeshow",
            "HL",
            _call("hosmer_lemeshow_test"),
            ("statistic", "p_value", "dof", "groups"),
            lambda r: (
                f"C = {format_number(r.statistic)} over {r.groups} groups of risk ({r.dof} df); "
                f"{format_p_value(r.p_value)}"
            ),
        ),
        Diagnostic(
            "spiegelhalter",
            "Spiegelhalter",
            _call("spiegelhalter_test"),
            ("statistic", "p_value"),
            lambda r: f"Z = {format_number(r.statistic)}; {format_p_value(r.p_value)}",
        ),
        Diagnostic(
            "ks",
            "KS",
            _call("ks_test"),
            ("statistic", "p_value", "max_deviation", "at"),
            lambda r: (
                f"{format_number(r.statistic)} (largest cumulative difference over its scale, at "
                f"the prediction {format_number(r.at)}); {format_p_value(r.p_value)}"
            ),
        ),
        Diagnostic(
            "calibration_slope",
            "slope",
            _call("calibration_slope"),
            ("slope", "slope_se", "intercept", "intercept_se", "citl", "citl_se"),
            lambda r: (
                f"{format_number(r.slope)} ± {format_number(r.slope_se)}, intercept "
                f"{format_number(r.intercept)} ± {format_number(r.intercept_se)}; calibration in the large "
                f"{format_number(r.citl)} ± {format_number(r.citl_se)} (1, 0 and 0 when calibrated)"
            ),
        ),
    )
}


def diagnose(st) -> tuple[dict, dict]:
    """({key: {field: value} or None}, {key: why it is None}) of every diagnostic on a table.
    Cost: each test O(m) after the table; the slope's fit O(m) a Newton step.

    >>> import fastcdl as fc
    >>> out, why = diagnose(fc.bucket_stats([0, 1, 1, 0, 1], [0.2, 0.3, 0.5, 0.7, 0.9]))
    >>> sorted(k for k, v in out.items() if v is None), why["hosmer_lemeshow"][:20]
    (['hosmer_lemeshow'], 'groups=10 needs at l')
    """
    out, why = {}, {}
    for key, d in DIAGNOSTICS.items():
        try:
            r = d.func(st)
        except ValueError as e:
            out[key] = None
            why[key] = str(e)
            continue
        out[key] = {f: getattr(r, f) for f in d.fields}
    return out, why
