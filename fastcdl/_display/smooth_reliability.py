"""The smooth reliability diagram: SmoothReliabilityDisplay (public in fastcdl.plot).

The kernel-smoothed frequency of y = 1 against the prediction, at smECE's own bandwidth, with a
bootstrap band and the smoothed density of the predictions (Blasiok and Nakkiran 2024; what
relplot's ``rel_diagram`` draws, from :func:`fastcdl.smece_curve`).
"""

from __future__ import annotations

import numpy as np

from fastcdl._display.figures import new_axes
from fastcdl.smooth_ece import SmoothReliability, smece_curve


class SmoothReliabilityDisplay:
    """Smooth reliability diagram: the curve of :func:`fastcdl.smece_curve` (the frequency of y = 1
    smoothed by the reflected Gaussian kernel at smECE's bandwidth) against the diagonal, its
    bootstrap band, the density of the predictions along the bottom, and smECE in the corner.
    The curve's width grows with the density of the predictions, so where few predictions fall
    it is thin. Cost: that of :func:`fastcdl.smece_curve` plus drawing.

    Build one with :meth:`from_predictions` or :meth:`from_curve`, which draw it.

    Parameters
    ----------
    curve : SmoothReliability
        What to draw.
    name : str, optional
        Goes into the title.

    Attributes
    ----------
    line_ : matplotlib.collections.LineCollection
        The curve, its segments' widths following the density.
    band_ : matplotlib artist or None
        The bootstrap band.
    density_ : matplotlib artist
        The density along the bottom.
    ax_ : matplotlib.axes.Axes
    figure_ : matplotlib.figure.Figure

    Examples
    --------
    >>> disp = SmoothReliabilityDisplay.from_predictions([0, 1, 1, 0, 1] * 20, [0.2, 0.9, 0.4, 0.3, 0.8] * 20)
    >>> round(disp.curve.value, 4), disp.band_ is not None
    (0.1423, True)
    """

    max_width = 6.0  # points: the curve's width where the predictions are densest

    def __init__(self, curve: SmoothReliability, *, name=None):
        self.curve = curve
        self.name = name

    @classmethod
    def from_curve(cls, curve: SmoothReliability, *, ax=None, name=None) -> "SmoothReliabilityDisplay":
        """Draw a :class:`fastcdl.smooth_ece.SmoothReliability`.

        Parameters
        ----------
        curve : SmoothReliability
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        name : str, optional
            Goes into the title.

        Returns
        -------
        SmoothReliabilityDisplay
            Drawn.

        Examples
        --------
        >>> import fastcdl as fc
        >>> c = fc.smece_curve([0, 1, 1, 0], [0.2, 0.7, 0.6, 0.3])
        >>> SmoothReliabilityDisplay.from_curve(c).band_ is None
        True
        """
        return cls(curve, name=name).plot(ax=ax)

    @classmethod
    def from_predictions(
        cls, y_true, y_prob, *, sample_weight=None, sigma=None, n_boot=200, level=0.95, seed=0, ax=None, name=None
    ) -> "SmoothReliabilityDisplay":
        """Smooth reliability diagram of rounds (y_t, p_t), with a bootstrap band (``n_boot`` > 0).

        Parameters
        ----------
        y_true, y_prob : array-like of shape (T,)
            Outcomes 0/1 and probabilities.
        sample_weight : array-like of shape (T,), optional
            Weights (no band with weights).
        sigma, n_boot, level, seed
            As in :func:`fastcdl.smece_curve` (here ``n_boot`` is 200 by default).
        ax, name
            As in :meth:`from_curve`.

        Returns
        -------
        SmoothReliabilityDisplay
            Drawn.

        Raises
        ------
        ValidationError
            (a ValueError) for invalid rounds or options.

        Examples
        --------
        >>> d = SmoothReliabilityDisplay.from_predictions([0, 1, 1, 0], [0.2, 0.7, 0.6, 0.3], n_boot=0)
        >>> d.curve.grid.shape
        (200,)
        """
        c = smece_curve(y_true, y_prob, sample_weight=sample_weight, sigma=sigma, n_boot=n_boot, level=level, seed=seed)
        return cls.from_curve(c, ax=ax, name=name)

    def plot(self, ax=None, *, name=None) -> "SmoothReliabilityDisplay":
        """Draw on ``ax`` (default: a new figure).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
        name : str, optional
            Goes into the title.

        Returns
        -------
        SmoothReliabilityDisplay
            self.

        Examples
        --------
        >>> import fastcdl as fc
        >>> d = SmoothReliabilityDisplay(fc.smece_curve([0, 1], [0.3, 0.6])).plot()
        >>> [float(v) for v in d.ax_.get_xlim()]
        [0.0, 1.0]
        """
        from matplotlib.collections import LineCollection
        from matplotlib.colors import to_rgba

        fig, ax = new_axes(ax, (5.6, 6.0))
        name = name or self.name
        c = self.curve
        ax.plot([0, 1], [0, 1], color="0.45", linestyle="--", linewidth=1, zorder=1, label="perfect calibration")
        self.band_ = None
        if c.lower is not None:
            self.band_ = ax.fill_between(
                c.grid,
                c.lower,
                c.upper,
                color=to_rgba("C3", 0.18),
                linewidth=0,
                zorder=2,
                label=f"{100 * c.level:g}% bootstrap band",
            )
        pts = np.column_stack([c.grid, c.curve])
        segments = np.stack([pts[:-1], pts[1:]], axis=1)
        dens = (c.density[:-1] + c.density[1:]) / 2
        widths = 0.6 + (self.max_width - 0.6) * dens / max(float(dens.max()), 1e-300)
        self.line_ = LineCollection(segments, linewidths=widths, colors="C3", zorder=3, label="smoothed frequency")
        ax.add_collection(self.line_)
        hist_ax = ax.inset_axes([0.0, 0.0, 1.0, 0.12], zorder=0)
        self.density_ = hist_ax.fill_between(c.grid, 0, c.density, color="0.75", linewidth=0)
        hist_ax.set_xlim(0, 1)
        hist_ax.set_ylim(0, float(c.density.max()) * 1.05 or 1.0)
        hist_ax.axis("off")
        hist_ax.patch.set_alpha(0.0)
        ax.text(
            0.03,
            0.95,
            f"smECE = {c.value:.4f}\nbandwidth sigma = {c.sigma:.4g}",
            transform=ax.transAxes,
            va="top",
            fontsize="small",
        )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("prediction p")
        ax.set_ylabel("smoothed frequency of y = 1")
        ax.set_title(f"Smooth reliability diagram\n{name}" if name else "Smooth reliability diagram", fontsize="medium")
        ax.legend(loc="lower right", fontsize="small")
        ax.grid(True, color="0.92", zorder=0)
        self.ax_ = ax
        self.figure_ = fig
        return self
