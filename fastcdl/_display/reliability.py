"""The reliability diagram of a bucket table: ReliabilityDisplay (public in fastcdl.plot).

Each bucket's empirical frequency against its prediction, with bootstrap bands, the metrics
in the legend and, for continuous scores, CDL_M with its interval.
"""

from __future__ import annotations

import numpy as np

from fastcdl._display.figures import new_axes
from fastcdl.exact import bucket_stats, cdl, ece
from fastcdl.bucket_table import BucketStats


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
    Otherwise the corner holds the ECE and CDL of the table itself. ``band`` adds a band of each
    shown point's frequency at ``level`` (default 90%): ``"wilson"`` (Wilson's score interval) or
    ``"clopper-pearson"`` (the exact binomial interval) of the point's counts
    (:func:`fastcdl.binomial.binomial_interval`; a bin of all 0 or all 1 gets a band of positive
    width, which a bootstrap cannot give), or ``"bootstrap"``: the percentile interval over
    ``n_boot`` resamples of the rounds (O(points) each; ``n_boot`` > 0 alone asks for it).

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
        Resamples of the bootstrap band (0: no bootstrap band; 200 if ``band="bootstrap"``).
    seed : int, default 0
        Seeds the band's resampling.
    band : {None, "wilson", "clopper-pearson", "bootstrap"}, default None
        The band of each shown frequency (None: none, or the bootstrap's if ``n_boot`` > 0).
    level : float, default 0.9
        The band's level.

    Attributes
    ----------
    scatter_ : matplotlib.collections.PathCollection
        The shown points; its sizes are the marker areas in points^2.
    hist_ : matplotlib.container.BarContainer
        The histogram's bars.
    band_ : matplotlib artist or None
        The band, drawn over the discs.
    band_lo_, band_hi_ : ndarray or None
        Its ends at each shown point.
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

    def __init__(
        self,
        values,
        frequencies,
        counts,
        *,
        ece,
        cdl,
        name=None,
        stats=None,
        cdl_monotone=None,
        n_boot=0,
        seed=0,
        band=None,
        level=0.9,
    ):
        from fastcdl._validate import ValidationError, check_count, check_name, check_real

        check_count(n_boot, "n_boot", 0)
        if band is not None:
            check_name(band, BANDS, "band")
        check_real(level, "level", 0.0, 1.0, low_open=True)
        if not level < 1.0:
            raise ValidationError("level", "must lie in (0, 1)", value=level)
        if band is None and n_boot > 0:
            band = "bootstrap"
        if band == "bootstrap" and n_boot == 0:
            n_boot = 200
        self.band = band
        self.level = float(level)
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
    def from_stats(
        cls, stats: BucketStats, *, ax=None, name=None, n_boot=0, seed=0, band=None, level=0.9
    ) -> "ReliabilityDisplay":
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
        band : {None, "wilson", "clopper-pearson", "bootstrap"}, default None
            The band of each shown frequency; every band needs unweighted rounds (counts).
        level : float, default 0.9
            The band's level.

        Returns
        -------
        ReliabilityDisplay
            Drawn.

        Raises
        ------
        ValidationError
            (a ValueError) for a negative n_boot, an unknown band, a level outside (0, 1), or a
            band asked of a weighted table.

        Examples
        --------
        >>> import fastcdl as fc
        >>> ReliabilityDisplay.from_stats(fc.bucket_stats([0, 1, 1, 0], [0.2, 0.7, 0.7, 0.2])).ece
        0.25
        >>> disp = ReliabilityDisplay.from_stats(fc.bucket_stats([0, 0, 1, 1], [0.2, 0.2, 0.7, 0.7]), band="wilson")
        >>> [round(float(v), 3) for v in disp.band_hi_]  # the all-0 bucket's band is not empty
        [0.575, 1.0]
        """
        import warnings

        from fastcdl._validate import check_count
        from fastcdl.exact import SampleSizeWarning, one_round_share
        from fastcdl.sample import cdl_monotone

        check_count(n_boot, "n_boot", 0)
        if n_boot and stats.weighted:
            from fastcdl._validate import ValidationError

            raise ValidationError(
                "n_boot",
                "needs unweighted rounds",
                message="the bootstrap band (n_boot > 0) resamples rounds: it needs unweighted rounds",
            )
        if band is not None and stats.weighted:
            from fastcdl._validate import ValidationError

            raise ValidationError(
                "band",
                "needs unweighted rounds",
                message=f"the {band} band is an interval of a bucket's counts: it needs unweighted rounds",
            )
        with warnings.catch_warnings():  # the figure says it: CDL_M stands beside the exact CDL
            warnings.simplefilter("ignore", SampleSizeWarning)
            e, c = ece(stats), cdl(stats)
        sparse = one_round_share(stats) >= 0.5
        disp = cls(
            stats.values,
            stats.frequencies,
            stats.counts,
            ece=e,
            cdl=c,
            name=name,
            stats=stats,
            cdl_monotone=cdl_monotone(stats) if sparse else None,
            n_boot=n_boot,
            seed=seed,
            band=band,
            level=level,
        )
        if sparse:
            disp.cdl_monotone_interval = _monotone_interval(stats, seed)
        return disp.plot(ax=ax)

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_prob,
        *,
        sample_weight=None,
        bins=None,
        strategy="uniform",
        ax=None,
        name=None,
        n_boot=0,
        seed=0,
        band=None,
        level=0.9,
    ):
        """Reliability diagram of rounds (y_t, p_t), bucketed as :func:`fastcdl.bucket_stats` does.

        Parameters
        ----------
        y_true, y_prob : array-like of shape (T,)
            Outcomes 0/1 and probabilities.
        bins, strategy, sample_weight
            As in :func:`fastcdl.bucket_stats`.
        ax, name, n_boot, seed, band, level
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
        return cls.from_stats(st, ax=ax, name=name, n_boot=n_boot, seed=seed, band=band, level=level)

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
        """(lo, hi) of each shown point's frequency: its binomial interval (Wilson, Clopper-Pearson)
        or the quantiles (1 - level) / 2 and (1 + level) / 2 over n_boot resamples of the rounds (the
        cells (bin, y) drawn from a multinomial, as in fastcdl.bootstrap)."""
        if self.band != "bootstrap":
            from fastcdl.binomial import binomial_interval

            return binomial_interval(shown.positives, shown.counts, level=self.level, method=self.band)
        rng = np.random.default_rng(self.seed)
        n = shown.counts.astype(np.float64)
        s = shown.positives.astype(np.float64)
        T = n.sum()
        cells = np.concatenate([n - s, s]) / T
        draws = rng.multinomial(int(T), cells, size=self.n_boot).astype(np.float64)
        m = n.shape[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            freq = draws[:, m:] / (draws[:, :m] + draws[:, m:])
        tail = (1.0 - self.level) / 2.0
        return np.nanquantile(freq, tail, axis=0), np.nanquantile(freq, 1.0 - tail, axis=0)

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

        fig, ax = new_axes(ax, (5.6, 6.6))
        name = name or self.name
        ax.plot([0, 1], [0, 1], color="0.45", linestyle="--", linewidth=1, zorder=1)
        shown = self._shown()
        self.shown = shown
        binned = shown.n_buckets < self.values.shape[0]
        q, qhat, counts = shown.values, shown.frequencies, shown.counts.astype(np.float64)
        # the predictions' histogram along the bottom (share of rounds per 1/50 of [0, 1])
        hist_ax = ax.inset_axes([0.0, 0.0, 1.0, 0.14], zorder=0)
        weights, _ = np.histogram(self.values, bins=self.hist_bins, range=(0.0, 1.0), weights=self.counts)
        self.hist_ = hist_ax.bar(
            np.arange(self.hist_bins) / self.hist_bins,
            weights / weights.sum(),
            width=1.0 / self.hist_bins,
            align="edge",
            color="0.7",
            edgecolor="none",
        )
        hist_ax.set_xlim(0, 1)
        hist_ax.set_ylim(0, max(float(weights.max() / weights.sum()), 1e-12) * 1.05)
        hist_ax.axis("off")
        hist_ax.patch.set_alpha(0.0)
        self.band_ = self.band_lo_ = self.band_hi_ = None
        if self.band is not None:
            lo, hi = self._band(shown)
            self.band_lo_, self.band_hi_ = lo, hi
            # over the discs (a band under them would show only between them), and see-through
            self.band_ = ax.fill_between(
                q, lo, hi, facecolor=to_rgba("C0", 0.2), edgecolor=to_rgba("C0", 0.6), linewidth=0.6, zorder=4
            )
        sizes = counts * (self.max_area / counts.max())
        self.scatter_ = ax.scatter(
            q,
            qhat,
            s=sizes,
            facecolor="C0",
            alpha=0.55,
            edgecolor="C0",
            linewidth=0.8,
            zorder=3,
            clip_on=False,  # whole discs at q = 0 or 1
        )
        if binned:
            ax.plot(q, qhat, color="C0", linewidth=0.8, zorder=3)
        total = self.counts.sum()
        t_text = f"{int(total)}" if float(total).is_integer() else f"{total:.4g}"
        what = (
            f"{shown.n_buckets} equal-mass bins (area ∝ rounds)"
            if binned
            else f"bucket (area ∝ rounds; largest n = {counts.max():.6g})"
        )
        handles = [
            Line2D([], [], color="0.45", linestyle="--", label="perfect calibration"),
            Line2D(
                [],
                [],
                linestyle="none",
                marker="o",
                markersize=9,
                markerfacecolor=to_rgba("C0", 0.55),
                markeredgecolor="C0",
                label=what,
            ),
            Patch(facecolor="0.7", label="share of predictions (histogram)"),
        ]
        if self.band_ is not None:
            handles.append(
                Patch(
                    facecolor=to_rgba("C0", 0.2),
                    edgecolor=to_rgba("C0", 0.6),
                    linewidth=0.6,
                    label=_band_label(self.band, self.level, self.n_boot),
                )
            )
        # legend and values go under the axes: buckets can sit anywhere in the unit square
        legend = ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(-0.02, -0.11),
            fontsize="small",
            frameon=False,
            borderaxespad=0,
        )
        numbers = f"ECE = {self.ece:.4f}\nCDL = {self.cdl:.4f}"
        if self.cdl_monotone is not None:
            # continuous scores: lead with the numbers that mean something on a sample
            lead = f"CDL_M = {self.cdl_monotone:.4f}"
            ci = self.cdl_monotone_interval
            if ci is not None:
                rough = "" if ci.validated else ", rough at this T"
                lead += (
                    f", debiased {ci.estimate:.4f}\n  {100 * ci.level:g}% interval [{ci.lo:.4f}, {ci.hi:.4f}]{rough}"
                )
            if self.shown.edges is not None:
                lead += f"\nECE ({self.shown.n_buckets} equal-mass bins) = {ece(self.shown):.4f}"
            numbers = f"{lead}\nexact buckets (noise: one-round buckets):\n  ECE = {self.ece:.4f}, CDL = {self.cdl:.4f}"
        # the values' top right corner: the axes' right edge, at the legend's top (beside it)
        self.numbers_ = ax.annotate(
            f"{numbers}\nT = {t_text} rounds\n{self.values.shape[0]} buckets",
            xy=(1.0, 1.0),
            xycoords=("axes fraction", legend),
            xytext=(0, 0),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize="small",
            annotation_clip=False,
        )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("stated probability q (bucket prediction)")
        ax.set_ylabel("observed frequency of y = 1")
        ax.set_title(
            f"Reliability diagram\n{name}" if name else "Reliability diagram", fontsize="medium", wrap=True
        )  # a long name wraps within the figure
        ax.grid(True, color="0.92", zorder=0)
        _clear_of(self.numbers_, legend)
        self.ax_ = ax
        self.figure_ = fig
        return self


#: The bands :class:`ReliabilityDisplay` draws.
BANDS = ("wilson", "clopper-pearson", "bootstrap")


def _band_label(band, level, n_boot) -> str:
    what = {"wilson": "Wilson band", "clopper-pearson": "Clopper-Pearson band"}.get(
        band, f"bootstrap band ({n_boot} resamples)"
    )
    return f"{100 * level:g}% {what}"


def _clear_of(text, legend) -> None:
    """Move ``text`` (an annotation placed beside ``legend``, at its top) under the legend when the
    two would overlap once laid out (long labels, many resamples, a narrow figure)."""
    fig = legend.figure
    fig.draw_without_rendering()  # lays the figure out: the extents below are those it draws with
    # 6 points apart at least, so that another dpi's rounding of the text cannot make them touch
    if legend.get_window_extent().padded(6 * fig.dpi / 72).overlaps(text.get_window_extent()):
        text.xy = (1.0, 0.0)  # at the legend's bottom ...
        text.set_position((0, -2))  # ... 2 points below it
