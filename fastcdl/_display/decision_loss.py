"""The decision-loss curve of a bucket table: DecisionLossDisplay (public in fastcdl.plot).

mu -> CFDL_mu = f(mu) / max(mu, 1 - mu) over the kinks, with the CDL and the worst task marked.
"""

from __future__ import annotations

import numpy as np

from fastcdl._display.figures import new_axes
from fastcdl.exact import bucket_stats, cdl_report, decision_loss_curve
from fastcdl.bucket_table import BucketStats


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
    def from_predictions(
        cls, y_true, y_prob, *, sample_weight=None, bins=None, strategy="uniform", ax=None, name=None, monotone=False
    ):
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
        fig, ax = new_axes(ax, (7.6, 5.4))
        name = name or self.name
        rep = self.report
        M = "_M" if self.monotone else ""
        curve = (
            r"$f_M(\mu)/\max(\mu, 1-\mu)$, V task with kink $\mu$"
            if self.monotone
            else r"CFDL$_\mu$ of the V-shaped task with kink $\mu$"
        )
        (self.line_,) = ax.plot(self.kinks, self.values, color="C0", linewidth=1.4, label=curve)
        ax.axhline(
            rep.value,
            color="C3",
            linewidth=1.2,
            linestyle="--",
            label=f"CDL{M} = {rep.value:.4g} (worst task, any number of actions)",
        )
        one = len(rep.kinks) == 1
        for j, (k, w) in enumerate(zip(rep.kinks, rep.weights), start=1):
            idx = "" if one else f"$_{j}$"
            ax.axvline(
                k,
                color="C2",
                linewidth=1.0,
                linestyle=":",
                label=rf"worst task: kink $\mu${idx} = {k:.4g}, weight c{idx} = {w:.3g}",
            )
        ax.plot(
            [rep.vcdl_kink],
            [rep.vcdl],
            marker="*",
            markersize=13,
            color="C1",
            markeredgecolor="k",
            linestyle="none",
            zorder=4,
            label=rf"VCDL{M} = {rep.vcdl:.4g} at $\mu$ = {rep.vcdl_kink:.4g}",
        )
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
        ax.legend(
            loc="upper left", bbox_to_anchor=(-0.01, -0.14), fontsize="small", ncols=2, frameon=False, borderaxespad=0
        )
        ax.grid(True, color="0.92")
        self.ax_ = ax
        self.figure_ = fig
        return self
