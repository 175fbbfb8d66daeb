"""SmoothECE, the kernel-smoothed calibration error of Blasiok and Nakkiran: :func:`smece`.

Blasiok and Nakkiran ("Smooth ECE: Principled Reliability Diagrams via Kernel Smoothing", ICLR
2024) smooth the residuals r = p - y with a Gaussian kernel of bandwidth sigma, reflected at 0 and
1, and integrate the absolute smoothed residual against the smoothed density of the predictions:

    smECE_sigma = integral |R_sigma(t)| dt / integral D_sigma(t) dt,
    R_sigma(t) = sum_t K_sigma(t, p_t) (p_t - y_t),   D_sigma(t) = sum_t K_sigma(t, p_t).

The bandwidth is chosen as the fixed point sigma* = smECE_sigma*, found by bisection, which makes
the measure a consistent calibration measure (bounded above and below by powers of the distance to
calibration, in the sense of Blasiok, Gopalan, Hu and Nakkiran 2023). fastcdl
computes it as their package relplot (1.0.3) does, step for step, so the numbers agree to
rounding (tests compare the two to 1e-6): the predictions are rounded onto a grid of M points
with linear weights (M = max(2000, round(20 / sigma)) // 2 + 1), the grid is mirrored once at
each end (its end points themselves not mirrored) and convolved with the kernel sampled on the
same grid (offsets within 1/2), the result interpolated linearly at max(200, round(10 / sigma))
points of [0, 1], a density floor of 1e-4 added, and the bandwidth found by 10 halvings from 1
(the last sigma at or above its own smECE). The rounding onto the grid is linear in the rounds,
so it needs no sort: from the rounds themselves, O(T) per grid (one compiled pass for the
counts, residuals and outcomes together, from 2^17 rounds; numpy's bincount below), or from a
bucket table, O(m); each grid, and its Fourier transform, is reused by every bandwidth of the search
that shares it. Each convolution is circular, over one period of 2(M - 1) points of the grid
mirrored at both ends: O(M log M) by FFT where relplot sums directly in O(M^2), the same terms
(the two agree within 1e-15 of the largest value).

smECE is not fastcdl's smCE (:func:`fastcdl.smce`, the smooth calibration error of Blasiok,
Gopalan, Hu and Nakkiran, a supremum over Lipschitz tests, within a factor 2 of the lower
distance to calibration): the two are different quantities. docs/smooth-ece.md compares them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._tables.binary_views import accepts_multiclass
from fastcdl._tables.tabulate import stats_of
from fastcdl._compiled.grid_rounding import round_to_grid
from fastcdl._validate import ValidationError, check_binning, check_count, check_real, check_rounds, prepare_rounds
from fastcdl.bucket_table import BucketStats

__all__ = ["SmoothReliability", "smece", "smece_curve"]

# relplot's constants (metrics.smooth_ece, kernels.BaseKernelMixin.smooth, config)
_MESH_MIN = 200  # evaluation points of the integral: max(200, round(10 / sigma))
_PLOT_MESH = 200  # points of the drawn curve
_DENSITY_FLOOR = 1e-4
_SEARCH_STEPS = 10
_SEARCH_EPS = 1e-3


def _grid_size(sigma: float) -> int:
    return max(2000, round(20 / sigma)) // 2 + 1


_ROW = {"n": 0, "r": 1, "s": 2}
# From this many points the grids are rounded by the compiled one-pass kernel; below it by
# numpy's bincount, which needs no compile (a process's first compiled call costs about 0.3 s
# even from the cache, 0.7 s without it; results/benchmarks/smooth-ece.md). At 2^17 points
# numpy's passes take about 5 ms a grid, the kernel about 1 ms.
COMPILED_FROM = 1 << 17


def _grid_cells(q, M):
    """(lower grid point, weight share of the upper one) of each prediction on the grid of M points."""
    x = q * (M - 1)
    bins = x.astype(np.int64)
    np.minimum(bins, M - 2, out=bins)  # q = 1 sits at the upper end of the last cell
    np.subtract(x, bins, out=x)
    return bins, x


def _bincount_rounding(cells, w, M):
    """Each weight w_i split between the two grid points around q_i, linearly (w None: one per
    round), by numpy: the lower share w - frac * w is summed as the cell's total less its upper
    share, two bincounts and one product."""
    bins, frac = cells
    upper = np.bincount(bins, frac if w is None else frac * w, minlength=M)
    values = np.bincount(bins, w, minlength=M) - upper
    values[1:] += upper[:-1]  # the upper share, one point up
    return values


def _f64(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def _kernel(sigma, M):
    u = np.linspace(0.0, 1.0, M)
    return np.exp(-(u - 0.5) * (u - 0.5) / (2.0 * sigma * sigma)) / (math.sqrt(2.0 * math.pi) * sigma)


def _period_transform(values):
    """The grid reflected at both of its end points into one period of 2(M - 1) values (v_0,
    ..., v_{M-1}, v_{M-2}, ..., v_1), transformed (rfft)."""
    return np.fft.rfft(np.concatenate([values, values[-2:0:-1]]))


def _kernel_transform(sigma, M):
    """The kernel sampled as relplot samples it (M points of [0, 1] centred at 1/2: offsets in
    [-1/2, 1/2]), set on the period of 2(M - 1) points at its offsets from the output point,
    transformed (rfft)."""
    kernel = _kernel(sigma, M)
    h = M // 2
    g = np.zeros(2 * (M - 1))
    g[: M - h] = kernel[h:]
    g[g.shape[0] - h :] = kernel[:h]
    return np.fft.rfft(g)


def _reflected_convolution(period, K, M):
    """relplot's ReflectedGaussianKernel.convolve (the grid with one mirror image on each side,
    3M - 2 values, its end points not mirrored, convolved with the sampled kernel, the M middle
    values kept) as a circular convolution over one period of the grid mirrored at both ends.

    The two agree term for term: the kernel spans M - 1 grid steps, so from any output point
    in [0, 1] it reaches no further than one image on either side, where the periodic extension
    and relplot's extension hold the same values; and M <= 2(M - 1), so the kernel does not
    wrap onto itself. An FFT of 2(M - 1) points, O(M log M), where relplot sums directly in
    O(M^2); the grid's transform is shared by every bandwidth of the same grid size."""
    return np.fft.irfft(period * K, 2 * (M - 1))[:M]


def _interpolate(t, y):
    """Linear interpolation of i / (len(y) - 1) -> y[i] at t, as relplot's kernels.interpolate."""
    k = y.shape[0]
    size = 1.0 / (k - 1)
    inds = (t * (k - 1)).astype(np.int64).clip(0, k - 2)
    frac = (t - inds * size) / size
    return y[inds] * (1.0 - frac) + y[inds + 1] * frac


class _Smoother:
    """The predictions q_i with their weights n_i (None: one per round), outcome sums s_i and
    residual sums r_i (sum of p - y over the rounds at q_i), and their grid roundings, cached
    by grid size."""

    def __init__(self, q, n, s, r):
        self.q = q
        self.n = n
        self.s = s
        self.r = r
        self.total = float(q.shape[0] if n is None else n.sum())
        self._rounded = {}
        self._grids = {}

    @classmethod
    def of_table(cls, q, n, s):
        q, n, s = (np.asarray(a, dtype=np.float64) for a in (q, n, s))
        return cls(q, n, s, q * n - s)

    def grid(self, what, M):
        """The weights ``what`` (n, r or s) rounded onto the grid of M points, once per M: from
        :data:`COMPILED_FROM` points all three together in one compiled pass
        (:func:`round_to_grid`), below it each by numpy's bincount."""
        if self.q.shape[0] >= COMPILED_FROM:
            if M not in self._rounded:
                f64 = [_f64(a) for a in (self.q, self.r, self.s)]
                n = np.empty(0) if self.n is None else _f64(self.n)
                self._rounded[M] = round_to_grid(f64[0], n, f64[1], f64[2], M)
            return self._rounded[M][_ROW[what]]
        key = (what, M)
        if key not in self._grids:
            if M not in self._rounded:
                self._rounded[M] = _grid_cells(self.q, M)
            self._grids[key] = _bincount_rounding(self._rounded[M], getattr(self, what), M)
        return self._grids[key]

    def period(self, what, M):
        key = ("period", what, M)
        if key not in self._grids:
            self._grids[key] = _period_transform(self.grid(what, M))
        return self._grids[key]

    def apply(self, whats, sigma, t):
        """For each of ``whats`` (n, r or s): the sum over rounds of the reflected kernel at the
        points t, weighted by it."""
        M = _grid_size(sigma)
        K = _kernel_transform(sigma, M)
        return [_interpolate(t, _reflected_convolution(self.period(w, M), K, M)) for w in whats]

    def smece_at(self, sigma):
        t = np.linspace(0.0, 1.0, max(round(10 / sigma), _MESH_MIN))
        R, D = self.apply(("r", "n"), sigma, t)
        D = D + _DENSITY_FLOOR
        return float(np.sum(np.abs(R / D) * D) / np.sum(D))

    def bandwidth(self):
        """relplot's search: 1 if 1 < smECE_1, else 10 halvings of [0, 1] keeping the upper end
        at a sigma that is not below its own smECE (or below 1e-3)."""

        def below(alpha):
            return alpha < _SEARCH_EPS or alpha < self.smece_at(alpha)

        if below(1.0):
            return 1.0
        hi, lo = 1.0, 0.0
        for _ in range(_SEARCH_STEPS):
            mid = (hi + lo) / 2
            if below(mid):
                lo = mid
            else:
                hi = mid
        return hi


def _checked_sigma(sigma):
    if sigma is None:
        return None
    sigma = check_real(sigma, "sigma", 0.0, None, low_open=True)
    return sigma


def _smoother(y_true, y_prob, sample_weight, bins, strategy):
    """(weighted, _Smoother): from the rounds themselves when they are given without bins (the
    rounding onto the grid needs no sort; every round is its own point), else from the table."""
    if bins is None and y_prob is not None and not isinstance(y_true, BucketStats):
        check_binning(None, strategy)
        y, p, w = prepare_rounds(y_true, y_prob, sample_weight)
        check_rounds(y, p, w)
        if w.shape[0]:
            s = y * w
            return True, _Smoother(p, w, s, p * w - s)
        return False, _Smoother(p, None, y, p - y)
    st = stats_of(y_true, y_prob, bins, sample_weight, strategy=strategy)
    return st.weighted, _Smoother.of_table(*st.table())


@accepts_multiclass()
@fill_docstring
def smece(y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", sigma=None) -> float:
    """SmoothECE (Blasiok and Nakkiran 2024), as relplot computes it.

    The absolute residual p - y smoothed by a Gaussian kernel reflected at 0 and 1, integrated
    against the smoothed density of the predictions; the bandwidth is the fixed point
    sigma = smECE_sigma (bisection), or ``sigma`` if given (module docstring: the grid, the
    reflection, the search). Equal to ``relplot.smECE(p, y)`` (``relplot.smECE_sigma(p, y, sigma)``)
    to rounding. O(T) (or O(m) from a table) per grid size, and O(M log M) per bandwidth tried,
    11 of them for the search (one grid size unless the bandwidth ends below 0.01). Sample
    weights weigh the rounds (integer weights equal repeated rounds). On a binned table the bin means stand for the predictions.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    sigma : float, optional
        A fixed bandwidth (> 0) instead of the fixed point.
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    float
        smECE; a :class:`fastcdl.ClasswiseResult` with ``multiclass="classwise"``.

    Raises
    ------
    {{raises}}
        Also for a sigma that is not a positive finite number.

    Examples
    --------
    >>> round(smece([0, 1, 1, 0, 1], [0.2, 0.9, 0.4, 0.3, 0.8]), 4)
    0.1423
    >>> round(smece([0, 1, 1, 0, 1], [0.2, 0.9, 0.4, 0.3, 0.8], sigma=0.05), 4)
    0.2274
    """
    sigma = _checked_sigma(sigma)
    _, sm = _smoother(y_true, y_prob, sample_weight, bins, strategy)
    return sm.smece_at(sm.bandwidth() if sigma is None else sigma)


@dataclass(frozen=True)
class SmoothReliability:
    """The smooth reliability diagram of :func:`smece_curve`: what it draws.

    Attributes
    ----------
    value : float
        smECE at ``sigma``.
    sigma : float
        The bandwidth (the fixed point, or the one given).
    grid : ndarray
        200 points of [0, 1].
    curve : ndarray
        The kernel-smoothed frequency of y = 1 at each grid point (the reliability curve).
    density : ndarray
        The kernel density of the predictions at each grid point (integrates to about 1).
    lower, upper : ndarray or None
        A bootstrap band of the curve (``n_boot`` > 0): the quantiles (1 - level) / 2 and
        (1 + level) / 2 of the curves of resampled rounds at each grid point.
    level : float or None
        The band's level.

    Examples
    --------
    >>> c = smece_curve([0, 1, 1, 0, 1], [0.2, 0.9, 0.4, 0.3, 0.8])
    >>> c.grid.shape, round(c.value, 4)
    ((200,), 0.1423)
    """

    value: float
    sigma: float
    grid: np.ndarray
    curve: np.ndarray
    density: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    level: float | None = None


def _curve(sm, sigma, t):
    S, D = sm.apply(("s", "n"), sigma, t)
    return S / (D + _DENSITY_FLOOR), D / sm.total


@accepts_multiclass(kind="report")
@fill_docstring
def smece_curve(
    y_true, y_prob=None, *, sample_weight=None, bins=None, strategy="uniform", sigma=None, n_boot=0, level=0.95, seed=0
) -> SmoothReliability:
    """The smooth reliability diagram: smECE, its bandwidth, and the kernel-smoothed frequency of
    y = 1 and density of the predictions on 200 points of [0, 1] (what relplot's
    ``prepare_rel_diagram`` draws, with the same kernel and bandwidth), with a bootstrap band.

    The band resamples the rounds ``n_boot`` times (the cells (bucket, y) from a multinomial, as
    :func:`fastcdl.bootstrap`) and takes the pointwise quantiles of the resampled curves at the
    same bandwidth. Cost: as :func:`smece`, plus O(m + M log M) per resample.

    Parameters
    ----------
    {{y_true}}
    {{y_prob}}
    {{sample_weight}}
    {{bins}}
    {{strategy}}
    sigma : float, optional
        A fixed bandwidth (> 0) instead of the fixed point.
    n_boot : int, default 0
        Resamples of the band (0: no band); needs unweighted rounds.
    level : float, default 0.95
        The band's level, in (0, 1).
    seed : int, default 0
        Seeds the resampling.
    {{multiclass}}
    {{pos_label}}

    Returns
    -------
    SmoothReliability
        A :class:`fastcdl.ClasswiseResult` of one per class with ``multiclass="classwise"``
        (its ``mean``: of their values).

    Raises
    ------
    {{raises}}
        Also for a bad sigma, n_boot or level, or a band asked of weighted rounds.

    Examples
    --------
    >>> c = smece_curve([0, 1, 1, 0, 1] * 20, [0.2, 0.9, 0.4, 0.3, 0.8] * 20, n_boot=50)
    >>> c.lower.shape, bool((c.lower <= c.upper).all())
    ((200,), True)
    """
    sigma = _checked_sigma(sigma)
    check_count(n_boot, "n_boot", 0)
    check_real(level, "level", 0.0, 1.0, low_open=True)
    if not level < 1.0:
        raise ValidationError("level", "must lie in (0, 1)", value=level)
    weighted, sm = _smoother(y_true, y_prob, sample_weight, bins, strategy)
    if n_boot and weighted:
        raise ValidationError(
            "n_boot",
            "needs unweighted rounds",
            message="the bootstrap band (n_boot > 0) resamples rounds: it needs unweighted rounds",
        )
    if sigma is None:
        sigma = sm.bandwidth()
    t = np.linspace(0.0, 1.0, _PLOT_MESH)
    curve, density = _curve(sm, sigma, t)
    lower = upper = None
    if n_boot:
        rng = np.random.default_rng(seed)
        s = np.asarray(sm.s, dtype=np.float64)
        n = np.ones_like(s) if sm.n is None else sm.n
        cells = np.concatenate([n - s, s]) / sm.total
        m = n.shape[0]
        curves = np.empty((n_boot, t.shape[0]))
        for b in range(n_boot):
            draw = rng.multinomial(int(round(sm.total)), cells).astype(np.float64)
            boot = _Smoother.of_table(sm.q, draw[:m] + draw[m:], draw[m:])
            curves[b] = _curve(boot, sigma, t)[0]
        tail = (1.0 - level) / 2.0
        lower, upper = np.quantile(curves, tail, axis=0), np.quantile(curves, 1.0 - tail, axis=0)
    return SmoothReliability(sm.smece_at(sigma), sigma, t, curve, density, lower, upper, level if n_boot else None)
