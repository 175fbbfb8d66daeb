"""Figures: reliability diagram, decision-loss curve and rate plots of a run folder.

Display objects follow scikit-learn's ``CalibrationDisplay``: build one with
``from_predictions(y_true, y_prob, ...)`` or ``from_stats(stats)``; it draws on the given
axes (or on a new figure) and keeps ``figure_`` and ``ax_``. Figures are built with
``matplotlib.figure.Figure`` and never through pyplot's global state, so they render
headless (Agg) and leave no open windows; matplotlib is imported only when a figure is
drawn. Every PNG is written atomically (:func:`save_figure`): a reader never sees a
half-written file.

>>> from fastcdl.plot import ReliabilityDisplay, save_figure
>>> disp = ReliabilityDisplay.from_predictions([0, 1, 1, 0], [0.2, 0.7, 0.7, 0.2])
>>> save_figure(disp.figure_, "reliability.png")  # doctest: +SKIP
PosixPath('reliability.png')
"""

from __future__ import annotations

from pathlib import Path

from fastcdl._display.decision_loss import DecisionLossDisplay
from fastcdl._display.figures import save_all, save_figure
from fastcdl._display.reliability import ReliabilityDisplay
from fastcdl._display.smooth_reliability import SmoothReliabilityDisplay
from fastcdl.experiments.run_figures import figure_folder, plot_rates, plot_run
from fastcdl.io import FORMATS
from fastcdl.exact import one_round_share

__all__ = [
    "DecisionLossDisplay",
    "ReliabilityDisplay",
    "SmoothReliabilityDisplay",
    "plot_file",
    "plot_rates",
    "plot_run",
    "save_figure",
]

PREDICTION_SUFFIXES = tuple(FORMATS)  # the reader's list (fastcdl.io), compressed text included


def plot_file(path, out_dir=None, *, y_col="y", p_col=None, weight_col=None, bins=None, **options) -> list[Path]:
    """Reliability diagram and decision-loss curve of a file of predictions (any format of
    fastcdl.io, read with :func:`fastcdl.io.read_file`), written as ``<stem>_reliability.png``
    and ``<stem>_decision_loss.png`` (``<stem>_decision_loss_monotone.png``, the monotone
    curve, when most rounds sit in buckets of one round: continuous scores). A k-class file
    is drawn as its top-label table, or with multiclass="classwise" as one pair of figures
    per class, ``<stem>_<column>_reliability.png``.

    Parameters
    ----------
    path : str or Path
        The file, or "-" for standard input.
    out_dir : str or Path, optional
        Where the files go (default: next to the file; the current folder for standard
        input).
    y_col : str, default "y"
        The column of outcomes.
    p_col : str, optional
        The column of probabilities (default: as read_file finds it).
    weight_col : str, optional
        The column of sample weights.
    bins : None, int, "auto" or array-like, optional
        As in :func:`fastcdl.bucket_stats`.
    **options
        read_file's (p_cols, p_prefix, multiclass, fmt, delimiter, skip_missing).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    fastcdl.io.InputError
        (a ValueError) for an unsupported format, a missing column or a bad value, naming
        the file, the column and the row.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "f.csv"), "w") as fh:
    ...     _ = fh.write("y,p\\n0,0.25\\n0,0.25\\n1,0.75\\n1,0.75\\n")
    >>> [p.name for p in plot_file(os.path.join(folder, "f.csv"))]
    ['f_reliability.png', 'f_decision_loss.png']
    """
    from fastcdl.io import detect_format, read_file

    stdin = str(path) == "-"
    path = Path(path)
    detect_format(path if not stdin else "-", options.get("fmt"))  # an unsupported format fails before reading
    fs = read_file("-" if stdin else path, y_col=y_col, p_col=p_col, weight_col=weight_col, bins=bins, **options)
    out = figure_folder(out_dir, Path.cwd() if stdin else path.parent)
    shown = "standard input" if stdin else path.name
    stem = "stdin" if stdin else _stem(path)
    suffix = f", {bins} bins" if bins is not None else ""
    if fs.per_class is not None:
        parts = [
            (f"{stem}_{c}", f"{shown}, {c} against the rest{suffix}", st) for c, st in zip(fs.columns.p, fs.per_class)
        ]
    elif fs.columns.multiclass is not None:
        parts = [(stem, f"{shown}, top-label{suffix}", fs.stats)]
    else:
        parts = [(stem, shown + suffix, fs.stats)]
    figures = []
    for base, name, st in parts:
        figures.append((f"{base}_reliability.png", ReliabilityDisplay.from_stats(st, name=name).figure_))
        if one_round_share(st) >= 0.5:  # continuous scores: the exact curve is noise, the monotone one is not
            figures.append(
                (
                    f"{base}_decision_loss_monotone.png",
                    DecisionLossDisplay.from_stats(st, name=name, monotone=True).figure_,
                )
            )
        else:
            figures.append((f"{base}_decision_loss.png", DecisionLossDisplay.from_stats(st, name=name).figure_))
    return save_all(figures, out)


def _stem(path: Path) -> str:
    """The file's name without its format and compression suffixes (data.csv.gz -> data)."""
    name = path.name
    for suffix in reversed(path.suffixes[-2:]):
        if name.lower().endswith(suffix.lower()) and (
            suffix.lower() in FORMATS or suffix.lower() in (".gz", ".bz2", ".zst", ".zstd")
        ):
            name = name[: -len(suffix)]
    return name or path.name
