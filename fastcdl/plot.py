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

import json
import math
import os
import re
import secrets
import tomllib
from collections import defaultdict
from pathlib import Path

import numpy as np

from fastcdl.io import FORMATS, InputError, writing_to
from fastcdl.metrics import bucket_stats, cdl, cdl_report, decision_loss_curve, ece, sample_size_check_off, one_round_share
from fastcdl.stats import BucketStats

__all__ = [
    "DecisionLossDisplay",
    "ReliabilityDisplay",
    "plot_file",
    "plot_rates",
    "plot_run",
    "save_figure",
]

PREDICTION_SUFFIXES = tuple(FORMATS)  # the reader's list (fastcdl.io), compressed text included
def _metric_names() -> dict:
    """{metric: label} of the trial metrics registry (fastcdl.trial_metrics), in its order."""
    from fastcdl.trial_metrics import METRICS

    return {k: m.label for k, m in METRICS.items()}
_LINESTYLES = {"cdl": "-", "ece": "--", "vcdl": "-.", "k2": ":", "ucal": (0, (1, 1)), "pseudo_klcal": "-", "klcal": "--"}
_MARKERS = {"cdl": "o", "ece": "s", "vcdl": "^", "k2": "v", "ucal": "D", "pseudo_klcal": "o", "klcal": "s"}
# largest replay horizon: a trial of 2^20 rounds re-simulates in about a second
_REPLAY_T_MAX = 2**20
_DPI = 150


def _new_axes(ax, figsize):
    """The axes to draw on: ``ax`` itself, or the single axes of a new headless figure."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def save_figure(fig, path, *, dpi=_DPI) -> Path:
    """Write ``fig`` as a PNG at ``path`` atomically: to a temporary file in the same
    folder, then ``os.replace``, so the path holds either the old file or the whole new one.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (a display's ``figure_``).
    path : str or Path
        Where to write; its folder must exist.
    dpi : int, default 150
        Resolution.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import os, tempfile
    >>> disp = ReliabilityDisplay.from_predictions([0, 1, 1, 0], [0.2, 0.7, 0.7, 0.2])
    >>> out = save_figure(disp.figure_, os.path.join(tempfile.mkdtemp(), "rel.png"))
    >>> out.name, out.stat().st_size > 0
    ('rel.png', True)
    """
    path = Path(path)
    fd, tmp = _temporary(path.parent, path.name)
    try:
        with writing_to(path), os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=dpi)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def _temporary(folder: Path, name: str):
    """(open file descriptor, path) of a new empty file ``.NAME.XXXXXXXX.tmp`` in ``folder``.

    Created with mode 0o666 less the umask, as ``open`` creates files (``tempfile.mkstemp``
    makes them 0o600), so the PNG renamed from it has the permissions its CSV and JSON
    neighbours get."""
    while True:
        tmp = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as e:  # a read-only folder (a committed run folder, a read-only mount)
            raise InputError(f"{folder}: cannot write figures into this folder ({e.strerror}); write them into "
                             "another folder (--out)") from None


def _save_all(named_figures, out_dir: Path) -> list[Path]:
    """Write every (file name, figure) into out_dir, all or none: each figure goes to a
    temporary file first and the files are renamed into place only when all rendered."""
    out_dir.mkdir(parents=True, exist_ok=True)
    staged = []
    try:
        for name, fig in named_figures:
            fd, tmp = _temporary(out_dir, name)
            staged.append((tmp, out_dir / name))
            with writing_to(out_dir / name), os.fdopen(fd, "wb") as fh:
                fig.savefig(fh, format="png", dpi=_DPI)
    except BaseException:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    return [path for _, path in staged]


def _monotone_interval(stats, seed):
    """fastcdl.interval of CDL_M on the table (its CoverageWarning below 5,000 rounds is
    shown in the figure as "rough"), or None where it cannot resample (weighted, tiny)."""
    import warnings

    from fastcdl.sample import cdl_monotone
    from fastcdl.uncertainty import CoverageWarning, interval

    if stats.weighted or stats.n_buckets < 2 or float(stats.counts.sum()) < 10:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)
        return interval(cdl_monotone, stats, seed=seed)


class ReliabilityDisplay:
    """Reliability diagram of a bucket table: each bucket i is a disc at (q_i, qhat_i)
    whose area is proportional to n_i, against the diagonal of perfect calibration, with
    the ECE and the exact CDL of the same table, and a histogram of the predictions along
    the bottom. Cost O(m log m) plus drawing.

    A table of more than ``max_points`` buckets (a model's continuous scores: every score is
    its own bucket, and its frequency is 0 or 1) is shown through equal-mass bins of its
    rounds (:meth:`fastcdl.BucketStats.rebin`, round(T^(1/3)) bins, at most ``max_points``),
    so thousands of buckets stay readable. When most rounds sit in buckets of one round the
    corner leads with what means something on a sample: CDL_M (fastcdl.cdl_monotone) with its
    debiased estimate and 95% interval (fastcdl.interval, unweighted tables) and the ECE of the
    equal-mass bins drawn; the ECE and CDL of the exact buckets come after, marked as noise.
    Otherwise the corner holds the ECE and CDL of the table itself. ``n_boot`` > 0 adds a bootstrap band: the 90% percentile interval
    of each shown point's frequency over n_boot resamples of the rounds (O(points) each).

    Build one with :meth:`from_predictions` or :meth:`from_stats`, which draw it.

    Parameters
    ----------
    values, frequencies, counts : array-like of float
        q_i, qhat_i and n_i of each bucket.
    ece, cdl : float
        The numbers shown in the corner.
    name : str, optional
        Goes into the title.
    stats : BucketStats, optional
        The table itself (for equal-mass bins and the bootstrap band).
    cdl_monotone : float, optional
        CDL_M, shown beside the exact CDL.
    n_boot : int, default 0
        Resamples of the bootstrap band (0: no band).
    seed : int, default 0
        Seeds the band's resampling.

    Attributes
    ----------
    scatter_ : matplotlib.collections.PathCollection
        The shown points; its sizes are the marker areas in points^2.
    hist_ : matplotlib.container.BarContainer
        The histogram's bars.
    band_ : matplotlib artist or None
        The bootstrap band, drawn over the discs.
    numbers_ : matplotlib.text.Text
        The values under the axes: beside the legend, or under it where they would overlap.
    shown : BucketStats
        The table drawn.
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure
        Set by :meth:`plot`.

    Examples
    --------
    >>> disp = ReliabilityDisplay.from_predictions([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> disp.ece, disp.cdl, disp.scatter_.get_sizes().tolist()
    (0.25, 0.25, [500.0, 500.0])
    """

    max_area = 500.0  # points^2 of the largest bucket's disc
    max_points = 100  # more buckets than this are drawn as equal-mass bins
    hist_bins = 50

    def __init__(self, values, frequencies, counts, *, ece, cdl, name=None, stats=None, cdl_monotone=None,
                 n_boot=0, seed=0):
        self.values = np.asarray(values, dtype=np.float64)
        self.frequencies = np.asarray(frequencies, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)
        self.ece = float(ece)
        self.cdl = float(cdl)
        self.cdl_monotone = None if cdl_monotone is None else float(cdl_monotone)
        self.name = name
        self.stats = stats
        self.n_boot = n_boot
        self.seed = seed
        self.cdl_monotone_interval = None

    @classmethod
    def from_stats(cls, stats: BucketStats, *, ax=None, name=None, n_boot=0, seed=0) -> "ReliabilityDisplay":
        """Reliability diagram of a BucketStats (ECE and CDL computed on the same table).

        Parameters
        ----------
        stats : BucketStats
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        name : str, optional
            Goes into the title.
        n_boot : int, default 0
            Resamples of the bootstrap band (0: no band); needs unweighted rounds.
        seed : int, default 0
            Seeds the band.

        Returns
        -------
        ReliabilityDisplay
            Drawn.

        Raises
        ------
        ValidationError
            (a ValueError) for a negative n_boot, or a band asked of a weighted table.

        Examples
        --------
        >>> import fastcdl as fc
        >>> ReliabilityDisplay.from_stats(fc.bucket_stats([0, 1, 1, 0], [0.2, 0.7, 0.7, 0.2])).ece
        0.25
        """
        import warnings

        from fastcdl._validate import check_count
        from fastcdl.metrics import SampleSizeWarning, one_round_share
        from fastcdl.sample import cdl_monotone

        check_count(n_boot, "n_boot", 0)
        if n_boot and stats.weighted:
            from fastcdl._validate import ValidationError

            raise ValidationError("n_boot", "needs unweighted rounds",
                                  message="the bootstrap band (n_boot > 0) resamples rounds: it needs unweighted rounds")
        with warnings.catch_warnings():  # the figure says it: CDL_M stands beside the exact CDL
            warnings.simplefilter("ignore", SampleSizeWarning)
            e, c = ece(stats), cdl(stats)
        sparse = one_round_share(stats) >= 0.5
        disp = cls(stats.values, stats.frequencies, stats.counts, ece=e, cdl=c, name=name, stats=stats,
                   cdl_monotone=cdl_monotone(stats) if sparse else None, n_boot=n_boot, seed=seed)
        if sparse:
            disp.cdl_monotone_interval = _monotone_interval(stats, seed)
        return disp.plot(ax=ax)

    @classmethod
    def from_predictions(cls, y_true, y_prob, *, bins=None, strategy="uniform", sample_weight=None, ax=None,
                         name=None, n_boot=0, seed=0):
        """Reliability diagram of rounds (y_t, p_t), bucketed as :func:`fastcdl.bucket_stats` does.

        Parameters
        ----------
        y_true, y_prob : array-like of shape (T,)
            Outcomes 0/1 and probabilities.
        bins, strategy, sample_weight
            As in :func:`fastcdl.bucket_stats`.
        ax, name, n_boot, seed
            As in :meth:`from_stats`.

        Returns
        -------
        ReliabilityDisplay
            Drawn.

        Raises
        ------
        ValidationError
            (a ValueError) for invalid rounds or options.

        Examples
        --------
        >>> ReliabilityDisplay.from_predictions([0, 1, 1, 0], [0.2, 0.7, 0.7, 0.2], bins=2).ece
        0.25
        """
        st = bucket_stats(y_true, y_prob, bins=bins, strategy=strategy, sample_weight=sample_weight)
        return cls.from_stats(st, ax=ax, name=name, n_boot=n_boot, seed=seed)

    def _shown(self) -> BucketStats:
        """The table drawn: the table itself, or its rounds in equal-mass bins when it has too many buckets."""
        st = self.stats
        if st is None:
            st = BucketStats.from_table(self.values, self.counts, self.frequencies * self.counts)
        if st.n_buckets <= self.max_points or st.edges is not None:
            return st
        from fastcdl._validate import auto_bins

        # the rounds (of positive weight) when the table knows them, else its buckets (a lower bound)
        n_rounds = int(st.rounds_per_bucket.sum()) if st.rounds_known else st.n_buckets
        return st.rebin(min(auto_bins(n_rounds), self.max_points), strategy="quantile")

    def _band(self, shown: BucketStats):
        """(lo, hi) of each shown point's frequency: 5% and 95% quantiles over n_boot resamples of
        the rounds (the cells (bin, y) drawn from a multinomial, as in fastcdl.bootstrap)."""
        rng = np.random.default_rng(self.seed)
        n = shown.counts.astype(np.float64)
        s = shown.positives.astype(np.float64)
        T = n.sum()
        cells = np.concatenate([n - s, s]) / T
        draws = rng.multinomial(int(T), cells, size=self.n_boot).astype(np.float64)
        m = n.shape[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            freq = draws[:, m:] / (draws[:, :m] + draws[:, m:])
        return np.nanquantile(freq, 0.05, axis=0), np.nanquantile(freq, 0.95, axis=0)

    def plot(self, ax=None, *, name=None) -> "ReliabilityDisplay":
        """Draw on ``ax`` (default: a new figure).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw.
        name : str, optional
            Goes into the title.

        Returns
        -------
        ReliabilityDisplay
            self.

        Examples
        --------
        >>> disp = ReliabilityDisplay([0.25, 0.75], [0.0, 1.0], [2, 2], ece=0.25, cdl=0.25).plot()
        >>> disp.scatter_.get_sizes().tolist()
        [500.0, 500.0]
        """
        from matplotlib.colors import to_rgba
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        fig, ax = _new_axes(ax, (5.6, 6.6))
        name = name or self.name
        ax.plot([0, 1], [0, 1], color="0.45", linestyle="--", linewidth=1, zorder=1)
        shown = self._shown()
        self.shown = shown
        binned = shown.n_buckets < self.values.shape[0]
        q, qhat, counts = shown.values, shown.frequencies, shown.counts.astype(np.float64)
        # the predictions' histogram along the bottom (share of rounds per 1/50 of [0, 1])
        hist_ax = ax.inset_axes([0.0, 0.0, 1.0, 0.14], zorder=0)
        weights, _ = np.histogram(self.values, bins=self.hist_bins, range=(0.0, 1.0), weights=self.counts)
        self.hist_ = hist_ax.bar(np.arange(self.hist_bins) / self.hist_bins, weights / weights.sum(),
                                 width=1.0 / self.hist_bins, align="edge", color="0.7", edgecolor="none")
        hist_ax.set_xlim(0, 1)
        hist_ax.set_ylim(0, max(float(weights.max() / weights.sum()), 1e-12) * 1.05)
        hist_ax.axis("off")
        hist_ax.patch.set_alpha(0.0)
        self.band_ = None
        if self.n_boot > 0:
            lo, hi = self._band(shown)
            # over the discs (a band under them would show only between them), and see-through
            self.band_ = ax.fill_between(q, lo, hi, facecolor=to_rgba("C0", 0.2), edgecolor=to_rgba("C0", 0.6),
                                         linewidth=0.6, zorder=4)
        sizes = counts * (self.max_area / counts.max())
        self.scatter_ = ax.scatter(
            q, qhat, s=sizes, facecolor="C0", alpha=0.55,
            edgecolor="C0", linewidth=0.8, zorder=3, clip_on=False,  # whole discs at q = 0 or 1
        )
        if binned:
            ax.plot(q, qhat, color="C0", linewidth=0.8, zorder=3)
        total = self.counts.sum()
        t_text = f"{int(total)}" if float(total).is_integer() else f"{total:.4g}"
        what = (f"{shown.n_buckets} equal-mass bins (area ∝ rounds)" if binned
                else f"bucket (area ∝ rounds; largest n = {counts.max():.6g})")
        handles = [
            Line2D([], [], color="0.45", linestyle="--", label="perfect calibration"),
            Line2D([], [], linestyle="none", marker="o", markersize=9, markerfacecolor=to_rgba("C0", 0.55),
                   markeredgecolor="C0", label=what),
            Patch(facecolor="0.7", label="share of predictions (histogram)"),
        ]
        if self.band_ is not None:
            handles.append(Patch(facecolor=to_rgba("C0", 0.2), edgecolor=to_rgba("C0", 0.6), linewidth=0.6,
                                 label=f"90% bootstrap band ({self.n_boot} resamples)"))
        # legend and values go under the axes: buckets can sit anywhere in the unit square
        legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(-0.02, -0.11), fontsize="small",
                           frameon=False, borderaxespad=0)
        numbers = f"ECE = {self.ece:.4f}\nCDL = {self.cdl:.4f}"
        if self.cdl_monotone is not None:
            # continuous scores: lead with the numbers that mean something on a sample
            lead = f"CDL_M = {self.cdl_monotone:.4f}"
            ci = self.cdl_monotone_interval
            if ci is not None:
                rough = "" if ci.validated else ", rough at this T"
                lead += (f", debiased {ci.estimate:.4f}\n  {100 * ci.level:g}% interval "
                         f"[{ci.lo:.4f}, {ci.hi:.4f}]{rough}")
            if self.shown.edges is not None:
                lead += f"\nECE ({self.shown.n_buckets} equal-mass bins) = {ece(self.shown):.4f}"
            numbers = (f"{lead}\nexact buckets (noise: one-round buckets):\n"
                       f"  ECE = {self.ece:.4f}, CDL = {self.cdl:.4f}")
        # the values' top right corner: the axes' right edge, at the legend's top (beside it)
        self.numbers_ = ax.annotate(
            f"{numbers}\nT = {t_text} rounds\n{self.values.shape[0]} buckets",
            xy=(1.0, 1.0), xycoords=("axes fraction", legend), xytext=(0, 0), textcoords="offset points",
            ha="right", va="top", fontsize="small", annotation_clip=False,
        )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("stated probability q (bucket prediction)")
        ax.set_ylabel("observed frequency of y = 1")
        ax.set_title(f"Reliability diagram\n{name}" if name else "Reliability diagram", fontsize="medium",
                     wrap=True)  # a long name wraps within the figure
        ax.grid(True, color="0.92", zorder=0)
        _clear_of(self.numbers_, legend)
        self.ax_ = ax
        self.figure_ = fig
        return self


def _clear_of(text, legend) -> None:
    """Move ``text`` (an annotation placed beside ``legend``, at its top) under the legend when the
    two would overlap once laid out (long labels, many resamples, a narrow figure)."""
    fig = legend.figure
    fig.draw_without_rendering()  # lays the figure out: the extents below are those it draws with
    # 6 points apart at least, so that another dpi's rounding of the text cannot make them touch
    if legend.get_window_extent().padded(6 * fig.dpi / 72).overlaps(text.get_window_extent()):
        text.xy = (1.0, 0.0)  # at the legend's bottom ...
        text.set_position((0, -2))  # ... 2 points below it


class DecisionLossDisplay:
    """The decision-loss curve mu -> CFDL_mu = f(mu) / max(mu, 1 - mu) of the V-shaped tasks
    (docs/metrics.md), with the worst task of the exact CDL (its kinks and weights), the VCDL
    point (the curve's maximum) and the CDL level (2 fbar(1/2), which no task exceeds).
    Cost O(m log m) plus a 1001-point grid.

    Build one with :meth:`from_predictions` or :meth:`from_stats`, which draw it.

    Parameters
    ----------
    kinks, values : array-like of float
        The curve.
    report : CDLReport or MonotoneCDLReport
        The worst task, VCDL and CDL.
    name : str, optional
        Goes into the title.
    monotone : bool, default False
        Whether the curve is the monotone one (labels say CDL_M, VCDL_M).

    Attributes
    ----------
    line_ : matplotlib.lines.Line2D
        The curve.
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure
        Set by :meth:`plot`.

    Examples
    --------
    >>> disp = DecisionLossDisplay.from_predictions([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
    >>> disp.report.value, disp.report.vcdl
    (0.25, 0.16666666666666666)
    """

    def __init__(self, kinks, values, report, *, name=None, monotone=False):
        self.kinks = np.asarray(kinks, dtype=np.float64)
        self.values = np.asarray(values, dtype=np.float64)
        self.report = report
        self.name = name
        self.monotone = monotone

    @classmethod
    def from_stats(cls, stats: BucketStats, *, ax=None, name=None, monotone=False) -> "DecisionLossDisplay":
        """Decision-loss curve of a BucketStats and the worst task of its exact CDL; with
        monotone=True the curve f_M(mu) / max(mu, 1 - mu) of the best non-decreasing
        recalibration (fastcdl.decision_loss_curve_monotone) with CDL_M, VCDL_M and the worst
        task of fastcdl.cdl_monotone_report: the curve that means something on continuous
        scores (docs/estimators.md).

        Parameters
        ----------
        stats : BucketStats
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        name : str, optional
            Goes into the title.
        monotone : bool, default False
            The monotone curve instead of the exact one.

        Returns
        -------
        DecisionLossDisplay
            Drawn.

        Examples
        --------
        >>> import fastcdl as fc
        >>> st = fc.bucket_stats([0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75])
        >>> DecisionLossDisplay.from_stats(st, monotone=True).report.value
        0.25
        """
        if monotone:
            from fastcdl.sample import cdl_monotone_report, decision_loss_curve_monotone

            mu, v = decision_loss_curve_monotone(stats)
            return cls(mu, v, cdl_monotone_report(stats), name=name, monotone=True).plot(ax=ax)
        mu, v = decision_loss_curve(stats)
        return cls(mu, v, cdl_report(stats), name=name).plot(ax=ax)

    @classmethod
    def from_predictions(cls, y_true, y_prob, *, bins=None, strategy="uniform", sample_weight=None, ax=None,
                         name=None, monotone=False):
        """Decision-loss curve of rounds (y_t, p_t), bucketed as :func:`fastcdl.bucket_stats` does.

        Parameters
        ----------
        y_true, y_prob : array-like of shape (T,)
            Outcomes 0/1 and probabilities.
        bins, strategy, sample_weight
            As in :func:`fastcdl.bucket_stats`.
        ax, name, monotone
            As in :meth:`from_stats`.

        Returns
        -------
        DecisionLossDisplay
            Drawn.

        Raises
        ------
        ValidationError
            (a ValueError) for invalid rounds or options.

        Examples
        --------
        See :class:`DecisionLossDisplay`.
        """
        st = bucket_stats(y_true, y_prob, bins=bins, strategy=strategy, sample_weight=sample_weight)
        return cls.from_stats(st, ax=ax, name=name, monotone=monotone)

    def plot(self, ax=None, *, name=None) -> "DecisionLossDisplay":
        """Draw on ``ax`` (default: a new figure).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw.
        name : str, optional
            Goes into the title.

        Returns
        -------
        DecisionLossDisplay
            self.

        Examples
        --------
        >>> import fastcdl as fc
        >>> rep = fc.cdl_report([0, 0, 1, 1], [0.25, 0.75, 0.25, 0.75])
        >>> DecisionLossDisplay([0.0, 0.5, 1.0], [0.0, 0.0, 0.0], rep).plot().line_.get_ydata().tolist()
        [0.0, 0.0, 0.0]
        """
        fig, ax = _new_axes(ax, (7.6, 5.4))
        name = name or self.name
        rep = self.report
        M = "_M" if self.monotone else ""
        curve = (r"$f_M(\mu)/\max(\mu, 1-\mu)$, V task with kink $\mu$"
                 if self.monotone else r"CFDL$_\mu$ of the V-shaped task with kink $\mu$")
        (self.line_,) = ax.plot(self.kinks, self.values, color="C0", linewidth=1.4, label=curve)
        ax.axhline(rep.value, color="C3", linewidth=1.2, linestyle="--",
                   label=f"CDL{M} = {rep.value:.4g} (worst task, any number of actions)")
        one = len(rep.kinks) == 1
        for j, (k, w) in enumerate(zip(rep.kinks, rep.weights), start=1):
            idx = "" if one else f"$_{j}$"
            ax.axvline(k, color="C2", linewidth=1.0, linestyle=":",
                       label=rf"worst task: kink $\mu${idx} = {k:.4g}, weight c{idx} = {w:.3g}")
        ax.plot([rep.vcdl_kink], [rep.vcdl], marker="*", markersize=13, color="C1", markeredgecolor="k",
                linestyle="none", zorder=4, label=rf"VCDL{M} = {rep.vcdl:.4g} at $\mu$ = {rep.vcdl_kink:.4g}")
        top = max(rep.value, float(self.values.max(initial=0.0)))
        # a little room on both sides: worst-task kinks at 0 or 1 would hide under the spines
        ax.set_xlim(-0.02, 1.02)
        # a calibrated table has CDL = 0 and nothing to scale to
        ax.set_ylim(0, 1.1 * top if top > 0 else 1.0)
        ax.set_xlabel(r"kink $\mu$ (decision threshold)")
        ax.set_ylabel("gain of the best monotone recalibration" if self.monotone else "CFDL of the V-shaped task")
        title = "Monotone decision-loss curve" if self.monotone else "Decision-loss curve"
        ax.set_title(f"{title}\n{name}" if name else title, fontsize="medium", wrap=True)
        # under the axes: the curve's peaks and the kinks can be anywhere in [0, 1]
        ax.legend(loc="upper left", bbox_to_anchor=(-0.01, -0.14), fontsize="small", ncols=2, frameon=False,
                  borderaxespad=0)
        ax.grid(True, color="0.92")
        self.ax_ = ax
        self.figure_ = fig
        return self


# -- run folders ---------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "x"


def _wrap(label: str, width: int = 56) -> str:
    """A legend label or short title in lines of at most ``width`` characters: a long
    forecaster or adversary label must not push the axes aside."""
    import textwrap

    return "\n".join(textwrap.wrap(label, width)) or label


def _horizon_text(T: int) -> str:
    k = int(T).bit_length() - 1
    return f"$2^{{{k}}}$" if T == 1 << k else str(T)


def _decimal_log_ticks(axis) -> None:
    """Label a log axis in decimals (0.02, 0.05, 0.1) rather than 2 x 10^-2: easier to read off
    a metric's value. Minor ticks at 2 and 5 get labels only where the axis spans at most three
    decades, so labels never crowd."""
    from matplotlib.ticker import FuncFormatter

    def text(v):
        if v >= 1e-3:
            return f"{v:g}"
        mant, expo = f"{v:.0e}".split("e")
        power = f"10^{{{int(expo)}}}"
        return f"${power}$" if mant == "1" else f"${mant} \\times {power}$"

    lo, hi = axis.get_view_interval()
    few = math.log10(hi / lo) <= 3
    axis.set_major_formatter(FuncFormatter(lambda v, _: text(v) if v > 0 else ""))

    def minor(v, _):
        mant = v / 10 ** math.floor(math.log10(v) + 1e-9)
        return text(v) if few and round(mant) in (2, 5) and abs(mant - round(mant)) < 1e-6 else ""

    axis.set_minor_formatter(FuncFormatter(minor))


def _read_run(run_dir: Path):
    """(rows of the latest code version, master seed) of a run folder; InputError when it is not one."""
    from fastcdl.experiments.store import TrialStore

    db = run_dir / "trials.sqlite"
    if not db.is_file():
        raise InputError(f"{run_dir}: not a run folder (no trials.sqlite in it)")
    with TrialStore(db, readonly=True) as store:  # a read-only folder, or one a run is writing
        rows = store.rows()
    if not rows:
        raise InputError(f"{db}: holds no finished trials")
    # A run resumed after an algorithm's version was bumped holds its trials once per
    # version; per forecaster x adversary, use the version finished last (rows stored before
    # versions were declared, and never verified, count under their code version).
    def version(r):
        return r["algorithm_version"] or f"code {r['code_version']}"

    finished = defaultdict(str)
    for r in rows:
        k = (r["forecaster_label"], r["adversary_label"], version(r))
        finished[k] = max(finished[k], r["finished_at"] or "")
    latest = {}
    for (f, a, v), when in finished.items():
        if (f, a) not in latest or when > finished[(f, a, latest[(f, a)])]:
            latest[(f, a)] = v
    rows = [r for r in rows if version(r) == latest[(r["forecaster_label"], r["adversary_label"])]]
    seed = 0
    preset = run_dir / "preset.toml"
    if preset.is_file():
        # the runner analyses with the preset's master seed: the same seed gives the same
        # bootstrap intervals as the run's summary.csv
        seed = int(tomllib.loads(preset.read_text()).get("master_seed", 0))
    return rows, seed


def _params_text(params_json: str) -> str:
    params = json.loads(params_json)
    return ", ".join(f"{k} = {v}" for k, v in sorted(params.items()))


def _rate_figures(rows, seed, shown=("cdl", "ece")):
    """[(file name, Figure)]: one log-log rate plot per adversary and the CDL/ECE ratio plot."""
    from matplotlib.figure import Figure

    from fastcdl.experiments.analysis import analyze

    metrics = tuple(m for m in _metric_names() if any(r.get(m) is not None for r in rows))
    rates, slopes, ratios = analyze(rows, metrics, seed=seed)
    shown = [m for m in shown if m in metrics]
    forecasters = sorted({r["forecaster_label"] for r in rows})
    adversaries = sorted({r["adversary_label"] for r in rows})
    colour = {f: f"C{i % 10}" for i, f in enumerate(forecasters)}
    adv_params = {r["adversary_label"]: _params_text(r["adversary_params"]) for r in rows}
    n_seeds = max(r["seed_index"] for r in rows) + 1
    series = defaultdict(list)
    for r in rates:
        series[(r["forecaster"], r["adversary"], r["metric"])].append(r)
    slope_of = {(s["forecaster"], s["adversary"], s["metric"]): s for s in slopes}

    out = []
    for a in adversaries:
        fig = Figure(figsize=(10.5, 5.6), layout="constrained")
        ax = fig.add_subplot()
        first_means = []
        t_lo, t_hi = math.inf, 0
        for f in forecasters:
            for m in shown:
                pts = series.get((f, a, m))
                if not pts:
                    continue
                T = np.array([p["T"] for p in pts], dtype=float)
                mean = np.array([p["mean"] for p in pts])
                lo = np.array([p["lo"] for p in pts])
                hi = np.array([p["hi"] for p in pts])
                s = slope_of.get((f, a, m))
                fit = "" if s is None else f": slope {s['slope']:.2f} [{s['slope_lo']:.2f}, {s['slope_hi']:.2f}]"
                ax.plot(T, mean, color=colour[f], linestyle=_LINESTYLES.get(m, "-"), marker=_MARKERS.get(m, "x"),
                        markersize=4,
                        linewidth=1.4, label=_wrap(f"{f}, {_metric_names()[m]}{fit}"))
                ax.fill_between(T, lo, hi, color=colour[f], alpha=0.15, linewidth=0)
                if mean[0] > 0:
                    first_means.append(mean[0])
                t_lo, t_hi = min(t_lo, T[0]), max(t_hi, T[-1])
        if t_hi == 0:
            continue
        # reference slopes through the geometric mean of the (positive) series at the smallest T
        T_ref = np.array([t_lo, t_hi])
        refs = ((-0.5, r"$\propto T^{-1/2}$", (0, (6, 3))), (-1 / 3, r"$\propto T^{-1/3}$", (0, (2, 2))))
        for expo, text, ls in refs if first_means else ():
            y = np.exp(np.mean(np.log(first_means))) * (T_ref / t_lo) ** expo
            ax.plot(T_ref, y, color="0.55", linestyle=ls, linewidth=1.1, label=f"reference {text}")
            ax.annotate(text, (T_ref[-1], y[-1]), xytext=(4, 0), textcoords="offset points",
                        color="0.4", fontsize="small", va="center")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlim(t_lo / 1.3, t_hi * 1.6)
        _decimal_log_ticks(ax.yaxis)
        ax.set_xlabel("horizon T (rounds)")
        ax.set_ylabel("metric value (mean over seeds)")
        params = adv_params.get(a, "")
        ax.set_title(
            f"Calibration error vs horizon against the adversary '{a}'" + (f" ({params})" if params else "")
            + f"\nmean over {n_seeds} seeds, band: bootstrap-t 95% interval; slope: least squares on the upper half of T [jackknife-t 95%]",
            fontsize="medium", wrap=True,  # long labels wrap within the figure, never clipped
        )
        ax.grid(True, which="major", color="0.9")
        ax.grid(True, which="minor", axis="y", color="0.96")
        # outside the axes: rate lines cross the whole plot, any corner would hide data
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False,
                  title="forecaster, metric: fitted slope [95% interval]", title_fontsize="small",
                  alignment="left")
        out.append((f"rates_{_slug(a)}.png", fig))

    if ratios:
        fig = Figure(figsize=(3.6 * len(adversaries) + 2.4, 4.2), layout="constrained")
        axes = fig.subplots(1, len(adversaries), sharey=True, squeeze=False)[0]
        by = defaultdict(list)
        for r in ratios:
            by[(r["forecaster"], r["adversary"])].append(r)
        for ax, a in zip(axes, adversaries):
            for f in forecasters:
                pts = by.get((f, a))
                if pts:
                    ax.plot([p["T"] for p in pts], [p["cdl_over_ece"] for p in pts], color=colour[f],
                            marker="o", markersize=4, linewidth=1.4, label=_wrap(f))
            ax.axhline(2.0, color="0.55", linestyle="--", linewidth=1.0, label="bound CDL ≤ 2 ECE")
            ax.set_xscale("log", base=2)
            ax.set_title(_wrap(f"adversary '{a}'", 36), fontsize="medium")
            ax.set_xlabel("horizon T (rounds)")
            ax.grid(True, color="0.9")
        axes[0].set_ylabel("CDL / ECE (ratio of means over seeds)")
        axes[0].set_ylim(bottom=0)
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in axes[1:]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="outside right upper", fontsize="small", title="forecaster",
                   title_fontsize="small", frameon=False)
        fig.suptitle("CDL / ECE vs horizon", fontsize="medium")
        out.append(("cdl_over_ece.png", fig))
    return out


def _table_figures(rows):
    """[(file name, Figure)]: reliability diagram and decision-loss curve of one trial of each
    "cdl" forecaster (Algorithm 1) and each plug-in forecaster (a user's own, named
    "module:ATTRIBUTE") per adversary (seed index 0, the largest T <= 2^20 whose bucket table
    is stored), drawn from the table stored with the trial (nothing is simulated again);
    raises ValueError if the table's CDL differs from the CDL stored beside it. The other
    built-in forecasters are baselines, shown in the rate plots."""
    from fastcdl.experiments.store import unpack_table

    pick = {}
    for r in rows:
        if ((r["forecaster"] == "cdl" or ":" in r["forecaster"]) and r["seed_index"] == 0 and r["T"] <= _REPLAY_T_MAX
                and r.get("bucket_table") is not None):
            k = (r["forecaster_label"], r["adversary_label"])
            if k not in pick or r["T"] > pick[k]["T"]:
                pick[k] = r
    out = []
    for (f, a), row in sorted(pick.items()):
        st = unpack_table(row["bucket_table"])
        with sample_size_check_off():  # an online sequence's own CDL, whatever its bucket sizes
            out.extend(_table_pair(st, row, f, a))
    return out


def _table_pair(st, row, f, a):
    """The two figures of one stored trial's table (see _table_figures)."""
    got = cdl(st)
    if got != row["cdl"]:
        raise ValueError(
            f"trial {f} vs {a}, T = {row['T']}, seed {row['seed']}: the stored table's CDL {float(got)!r} "
            f"differs from the stored CDL {float(row['cdl'])!r}: the run folder is damaged"
        )
    name = f"forecaster '{f}' vs adversary '{a}', T = {_horizon_text(row['T'])}, seed index 0"
    stem = f"{_slug(f)}_{_slug(a)}_T{row['T']}"
    return [(f"reliability_{stem}.png", ReliabilityDisplay.from_stats(st, name=name).figure_),
            (f"decision_loss_{stem}.png", DecisionLossDisplay.from_stats(st, name=name).figure_)]


def _out_dir(out_dir, default: Path) -> Path:
    out = Path(out_dir) if out_dir is not None else default
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    return out


def plot_rates(run_dir, out_dir=None) -> list[Path]:
    """Rate plots of a run folder (docs/experiments.md): for each adversary, the mean CDL and ECE over
    seeds (or the first two metrics of a preset that analyses other ones) against T on log-log axes with bootstrap-t 95% bands, each series' fitted slope in
    the legend and reference lines T^-1/2 and T^-1/3 (``rates_<adversary>.png``); and the
    CDL/ECE ratio against T (``cdl_over_ece.png``). Analysis as in the run's summary.csv.

    Parameters
    ----------
    run_dir : str or Path
        A run folder of ``fastcdl rates`` (trials.sqlite, summary.json).
    out_dir : str or Path, optional
        Where the files go (default: run_dir), all or none.

    Returns
    -------
    list of Path

    Raises
    ------
    ValueError
        For a folder that is not a run folder, or a store that cannot be read.

    Examples
    --------
    >>> plot_rates("results/quick")  # doctest: +SKIP
    [PosixPath('results/quick/rates_bernoulli.png'), ..., PosixPath('results/quick/cdl_over_ece.png')]
    """
    run_dir = Path(run_dir)
    rows, seed = _read_run(run_dir)
    out = _out_dir(out_dir, run_dir)
    return _save_all(_rate_figures(rows, seed, _shown(run_dir)), out)


def _shown(run_dir) -> tuple:
    """The two metrics a rate plot shows: CDL and ECE, unless the run's preset analyses other
    metrics and not both of those (then its first two, such as pseudo_klcal and klcal)."""
    import tomllib

    path = Path(run_dir) / "preset.toml"
    metrics = tomllib.loads(path.read_text()).get("metrics", []) if path.exists() else []
    if not metrics or {"cdl", "ece"} <= set(metrics):
        return ("cdl", "ece")
    return tuple(metrics[:2])


def plot_run(run_dir, out_dir=None) -> list[Path]:
    """Every figure of a run folder: :func:`plot_rates`, and for each "cdl" or plug-in forecaster
    and adversary a reliability diagram and a decision-loss curve of the trial with seed index
    0 and the largest T <= 2^20, re-simulated exactly from its stored row (a ValueError if
    its CDL differs from the stored value). All files or none are written.

    Parameters
    ----------
    run_dir : str or Path
        A run folder of ``fastcdl rates``.
    out_dir : str or Path, optional
        Where the files go (default: run_dir).

    Returns
    -------
    list of Path

    Raises
    ------
    ValueError
        For a folder that is not a run folder, or a re-simulated trial whose CDL differs
        from its stored value.

    Examples
    --------
    >>> plot_run("results/quick", "figures")  # doctest: +SKIP
    [PosixPath('figures/rates_bernoulli.png'), ...]
    """
    run_dir = Path(run_dir)
    rows, seed = _read_run(run_dir)
    out = _out_dir(out_dir, run_dir)
    figures = _rate_figures(rows, seed, _shown(run_dir)) + _table_figures(rows)
    return _save_all(figures, out)


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
    out = _out_dir(out_dir, Path.cwd() if stdin else path.parent)
    shown = "standard input" if stdin else path.name
    stem = "stdin" if stdin else _stem(path)
    suffix = f", {bins} bins" if bins is not None else ""
    if fs.per_class is not None:
        parts = [(f"{stem}_{c}", f"{shown}, {c} against the rest{suffix}", st)
                 for c, st in zip(fs.columns.p, fs.per_class)]
    elif fs.columns.multiclass is not None:
        parts = [(stem, f"{shown}, top-label{suffix}", fs.stats)]
    else:
        parts = [(stem, shown + suffix, fs.stats)]
    figures = []
    for base, name, st in parts:
        figures.append((f"{base}_reliability.png", ReliabilityDisplay.from_stats(st, name=name).figure_))
        if one_round_share(st) >= 0.5:  # continuous scores: the exact curve is noise, the monotone one is not
            figures.append((f"{base}_decision_loss_monotone.png",
                            DecisionLossDisplay.from_stats(st, name=name, monotone=True).figure_))
        else:
            figures.append((f"{base}_decision_loss.png", DecisionLossDisplay.from_stats(st, name=name).figure_))
    return _save_all(figures, out)


def _stem(path: Path) -> str:
    """The file's name without its format and compression suffixes (data.csv.gz -> data)."""
    name = path.name
    for suffix in reversed(path.suffixes[-2:]):
        if name.lower().endswith(suffix.lower()) and (suffix.lower() in FORMATS or suffix.lower() in
                                                       (".gz", ".bz2", ".zst", ".zstd")):
            name = name[: -len(suffix)]
    return name or path.name
