"""Which columns of a file to read: the outcome, the probability column(s) and the weight.

resolve_columns turns the options of fastcdl.io.read_file (and the CLI's --y-col, --p-col,
--p-cols, --p-prefix, --weight-col, --multiclass) into a Columns, naming what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastcdl._files.formats import InputError


@dataclass(frozen=True)
class Columns:
    """The columns a file is read with (:func:`resolve_columns`); frozen.

    Attributes
    ----------
    y : str
        The outcome column.
    p : tuple of str
        One probability column (binary) or one per class (labels 0..k-1 in that order).
    weight : str or None
        The weight column.
    multiclass : str or None
        None (binary), "top-label" or "classwise".

    Examples
    --------
    >>> resolve_columns(["y", "p_0", "p_1"], "f.csv").names
    ['y', 'p_0', 'p_1']
    """

    y: str
    p: tuple
    weight: str | None
    multiclass: str | None  # None (binary), "top-label" or "classwise"

    @property
    def names(self) -> list:
        """Every column read, outcome first."""
        return [self.y, *self.p] + ([self.weight] if self.weight else [])


_AUTO_PREFIXES = ("p_", "p", "prob_", "proba_")


def _numbered(names, prefix):
    """Columns prefix0, prefix1, ... (sorted by number); InputError if the numbers have gaps."""
    found = {}
    for n in names:
        rest = n[len(prefix) :]
        if n.startswith(prefix) and rest.isdigit():
            found[int(rest)] = n
    if not found:
        return []
    idx = sorted(found)
    if idx != list(range(len(idx))):
        missing = next(i for i in range(len(idx) + 1) if i not in found)
        raise InputError(
            f"the columns {prefix}0, {prefix}1, ... must be numbered from 0 without gaps: "
            f"{prefix}{missing} is missing (the file has {[found[i] for i in idx]})"
        )
    return [found[i] for i in idx]


def resolve_columns(
    names, source, *, y_col="y", p_col=None, p_cols=None, p_prefix=None, weight_col=None, multiclass=None
) -> Columns:
    """Which columns of a file to read.

    Parameters
    ----------
    names : list of str
        The file's columns.
    source : str
        Names the file in messages.
    y_col : str, default "y"
        The outcome column.
    p_col : str, optional
        Binary: the probability column (default "p").
    p_cols : list of str or str, optional
        k classes: a list, or a comma-separated string.
    p_prefix : str, optional
        k classes: columns prefix0, prefix1, ... When p_col is not given and the file has no
        column "p", numbered columns p0.. / p_0.. are found by themselves.
    weight_col : str, optional
        The weight column.
    multiclass : {"top-label", "classwise"}, optional
        k classes: the reduction (default "top-label").

    Returns
    -------
    Columns

    Raises
    ------
    InputError
        For missing columns, conflicting options, or numbered columns with gaps.

    Examples
    --------
    >>> resolve_columns(["y", "p_0", "p_1", "p_2"], "f.csv")
    Columns(y='y', p=('p_0', 'p_1', 'p_2'), weight=None, multiclass='top-label')
    """
    names = list(names)
    if isinstance(p_cols, str):
        p_cols = [c.strip() for c in p_cols.split(",") if c.strip()]
    given = [n for n, v in (("p_col", p_col), ("p_cols", p_cols), ("p_prefix", p_prefix)) if v]
    if len(given) > 1:
        raise InputError(f"give one of --p-col, --p-cols and --p-prefix, not {' and '.join(given)}")
    if multiclass is not None and multiclass not in ("top-label", "classwise"):
        raise InputError(f"--multiclass must be top-label or classwise, got {multiclass!r}")
    # what is missing is told at once: the probability columns with the outcome and weight columns
    absent_p = None
    if p_cols:
        classes = list(p_cols)
    elif p_prefix:
        classes = _numbered(names, p_prefix) or None
        if classes is None:
            absent_p = f"{p_prefix}0, {p_prefix}1, ..."
    elif p_col is None and "p" not in names:
        classes = next((c for c in (_numbered(names, pre) for pre in _AUTO_PREFIXES) if len(c) >= 2), None)
        absent_p = "p" if classes is None else None
    else:
        classes = None
    if absent_p is not None:
        missing = [c for c in (y_col, absent_p, weight_col) if c and (c == absent_p or c not in names)]
        raise InputError(_missing_columns(source, missing, names, y_col, weight_col))
    if classes is None:
        if multiclass is not None:
            raise InputError(
                "--multiclass applies to files with one probability column per class (--p-cols or --p-prefix)"
            )
        cols = Columns(y_col, (p_col or "p",), weight_col, None)
    else:
        if len(classes) < 2:
            raise InputError(f"one probability column per class needs at least two columns, got {classes}")
        cols = Columns(y_col, tuple(classes), weight_col, multiclass or "top-label")
    wanted = cols.names
    if len(set(wanted)) < len(wanted):
        raise InputError(f"the outcome, probability and weight columns must differ, got {wanted}")
    missing = [c for c in wanted if c not in names]
    if missing:
        raise InputError(_missing_columns(source, missing, names, y_col, weight_col))
    return cols


def _missing_columns(source, missing, names, y_col, weight_col) -> str:
    """One line: every missing column, the columns the file has, and the options that name them."""
    options = []
    for c in missing:
        opt = {y_col: "--y-col", weight_col: "--weight-col"}.get(
            c, "--p-col (or one column per class: --p-cols, --p-prefix)"
        )
        if opt not in options:
            options.append(opt)
    return f"{source}: missing column(s) {missing}; the file has {shown_names(names)} (name them with {', '.join(options)})"


def shown_names(names, most=20) -> str:
    """A file's column names for a message: all of them, or the first ``most`` and how many more."""
    if len(names) <= most:
        return str(list(names))
    return f"[{', '.join(repr(n) for n in names[:most])}, ... ({len(names)} columns)]"
