"""ops: online Platt scaling (OPS) and its calibeating versions TOPS and HOPS (Gupta and Ramdas,
"Online Platt Scaling with Calibeating", ICML 2023, arXiv:2305.00070; docs/ops.md). It plays the
calibeating game (docs/calibeating.md): before each round the environment states an external
forecast b_t, and OPS recalibrates it with a Platt map learnt online.

**OPS** (``variant="ops"``). The feature of round t is x_t = (u_t, 1), u_t = logit(b_t) of b_t
clipped to [clip, 1 - clip], ``clip`` = 0.01: logit(0) and logit(1) are infinite, so b_t below
clip is read as clip and b_t above 1 - clip as 1 - clip (the scores' range [0.01, 0.99] of the
paper's regret bound; docs/ops.md). The forecast is p_t = sigmoid(w_t . x_t) = sigmoid(a u_t + c),
the Platt map with parameters w = (a, c) (the paper's (a, b): c here, since b is the external
forecast). After y_t, w takes one Online Newton Step (Hazan, Agarwal and Kale 2007) on the log
loss:

    g_t = (p_t - y_t) x_t                                   (the log loss's gradient at w_t)
    A_t = A_{t-1} + g_t g_t^T,   A_0 = rho I
    w_{t+1} = argmin_{|w| <= radius} (w - v)^T A_t (w - v),   v = w_t - A_t^{-1} g_t / gamma

with gamma = 0.1, rho = 100, the domain the disc |w| <= radius = 100 and the start w_1 = (1, 0),
the identity map: OPS's first forecast is b_1 itself (clipped). A^{-1} g is solved by Cramer's
rule. The projection, needed only when |v| > radius, is w(lam) = (A + lam I)^{-1} A v at the lam
> 0 where |w(lam)| = radius (|w(lam)| falls from |v| to 0 as lam grows): lam is bracketed by
doubling and bisected until the bracket's ends are adjacent doubles, and the end inside the disc
is kept.

**TOPS** (``"tops"``, calibeating by tracking). The rounds are split by the bin of OPS's forecast,
k = min(floor(bins p_t), bins - 1), ``bins`` = 10 equal-width bins. TOPS forecasts the frequency
of y over the past rounds of p_t's bin, s_k / n_k (Foster and Hart's tracking), and the bin's
midpoint (2k + 1) / (2 bins) while the bin has no round yet.

**HOPS** (``"hops"``, calibeating by hedging). In each bin of p_t runs its own copy of Foster's
(1999) epsilon-calibrated forecaster F99 with ``m`` = 10 intervals [i/m, (i + 1)/m] (epsilon =
1/m = 0.1), on the bin's counts n_ki and outcomes s_ki of the rounds that stated interval i. It
states interval midpoints (2i + 1) / (2m). Interval i is *calibrated* when its frequency lies in
it, i n_ki <= m s_ki <= (i + 1) n_ki (an interval with no round is). F99 states the interval of
OPS's forecast, min(floor(m p_t), m - 1), if it is calibrated; otherwise the lowest calibrated
interval; otherwise (none is) it mixes the first pair i, i + 1 whose frequencies straddle their
common edge r = (i + 1)/m, rho_i > r > rho_{i+1}: i with probability d / (d + e), i + 1 with
e / (d + e), d = r - rho_{i+1}, e = rho_i - r, so that the mixture of the two frequencies is r.
Each stated midpoint's frequency tends to its interval. This is not the ``foster`` rule
(fastcdl.online.forecasters.foster), which states j/m and mixes whenever the biases straddle.

**Stated values.** OPS and TOPS forecast continuous values x (the raw points of the round) and
state j/levels, j = 0..levels (``levels`` = 1000), by randomized rounding that keeps the mean: j =
floor(levels x) with probability 1 - f and j + 1 with probability f, f = levels x - j (levels x
rounded to a double; a point mass when f = 0). Given x, the expected Brier score grows by exactly
f (1 - f) / levels^2 <= 1 / (4 levels^2) (2.5e-7 for 1000). TOPS's frequency is a fraction,
rounded in integer arithmetic. HOPS's midpoints are the odd j of j/(2m).

Cost per round: O(1) for OPS and TOPS, O(m) for HOPS, plus, in a round whose Newton step leaves
the disc, about 53 + |log2 lam| 2x2 solves; memory O(bins m).

>>> FORECASTER.resolve_params({"variant": "hops"}, 1000)
{'variant': 'hops', 'gamma': 0.1, 'rho': 100.0, 'radius': 100.0, 'clip': 0.01, 'bins': 10, 'm': 10, 'levels': 1000}
>>> w1 = np.array([1.0, 0.0])  # the start: the identity map of the clipped b
>>> round(float(platt(w1, feature(0.3, 0.01))), 12), round(float(platt(w1, feature(0.0, 0.01))), 12)
(0.3, 0.01)
"""

import math
from collections import namedtuple

import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl._validate import ValidationError, check_int, check_name, check_real
from fastcdl.online.engine import bad_mean, mean_stopped, not_outcome, play_round, settle, stopped
from fastcdl.online.external import note_external
from fastcdl.online.plugins import ForecasterSpec

VARIANTS = ("ops", "tops", "hops")
OPS, TOPS, HOPS = 0, 1, 2
MAX_LEVELS = 2**20  # levels * s_k stays far inside int64 for any horizon below 2^40

OpsState = namedtuple(
    "OpsState",
    [
        "variant",  # OPS, TOPS or HOPS
        "levels",  # OPS, TOPS: stated values j/levels
        "m",  # HOPS: F99's intervals per bin
        "gamma",
        "radius",
        "clip",
        "w",  # (a, c): the Platt map sigmoid(a u + c)
        "A",  # 2 x 2: rho I + the sum of g g^T
        "u",  # [u_t]: this round's feature logit(b_t), b_t clipped
        "p",  # [p_t]: this round's OPS forecast
        "k",  # [k]: this round's bin of p_t
        "n",  # (bins, m) for HOPS, (bins, 1) for TOPS: the rounds of each bin (and interval)
        "s",  # the same, y = 1
    ],
)


def init(horizon, params, adversary=None):
    variant = VARIANTS.index(params["variant"])
    bins, m, levels = int(params["bins"]), int(params["m"]), int(params["levels"])
    cols = m if variant == HOPS else 1
    g = 2 * m if variant == HOPS else levels
    n = np.zeros((bins, cols), dtype=np.int64)
    st = OpsState(
        variant,
        levels,
        m,
        float(params["gamma"]),
        float(params["radius"]),
        float(params["clip"]),
        np.array([1.0, 0.0]),
        float(params["rho"]) * np.eye(2),
        np.zeros(1),
        np.zeros(1),
        np.zeros(1, dtype=np.int64),
        n,
        n.copy(),
    )
    return st, np.arange(g + 1) / g


# -- OPS: the Platt map and its Online Newton Step -------------------------------------------
@kernel(inline="always")
def feature(b, clip):
    """u = logit(b) of b clipped to [clip, 1 - clip]. O(1)."""
    b = min(max(b, clip), 1.0 - clip)
    return math.log(b / (1.0 - b))


@kernel(inline="always")
def platt(w, u):
    """sigmoid(a u + c), w = (a, c): 1 / (1 + e^-z) for z >= 0, e^z / (1 + e^z) below (no
    overflow). O(1)."""
    z = w[0] * u + w[1]
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@kernel(inline="always")
def shrunk(A, Av0, Av1, lam):
    """(A + lam I)^{-1} (A v), given A v = (Av0, Av1), by Cramer's rule. O(1)."""
    a = A[0, 0] + lam
    d = A[1, 1] + lam
    b = A[0, 1]
    det = a * d - b * b
    return (d * Av0 - b * Av1) / det, (a * Av1 - b * Av0) / det


@kernel
def project(A, v0, v1, radius):
    """The point of the disc |w| <= radius nearest to v = (v0, v1) in the norm of A, for v
    outside the disc: w(lam) = (A + lam I)^{-1} A v, whose norm falls from |v| to 0 as lam
    grows, at the lam where it is radius. lam is bracketed by doubling, then bisected until
    the bracket's ends are adjacent doubles; the end inside the disc is returned. About
    53 + |log2 lam| 2x2 solves."""
    Av0 = A[0, 0] * v0 + A[0, 1] * v1
    Av1 = A[0, 1] * v0 + A[1, 1] * v1
    r2 = radius * radius
    lo = 0.0
    hi = 1.0
    w0, w1 = shrunk(A, Av0, Av1, hi)
    while w0 * w0 + w1 * w1 > r2:
        lo = hi
        hi *= 2.0
        w0, w1 = shrunk(A, Av0, Av1, hi)
    while True:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            return w0, w1
        x0, x1 = shrunk(A, Av0, Av1, mid)
        if x0 * x0 + x1 * x1 > r2:
            lo = mid
        else:
            hi = mid
            w0, w1 = x0, x1


@kernel(inline="always")
def ons_step(w, A, u, p, y, gamma, radius):
    """One Online Newton Step on the log loss of the round (x = (u, 1), y) at w, p = sigmoid(w . x):
    g = (p - y) x; A += g g^T; w <- the projection of w - A^{-1} g / gamma on |w| <= radius.
    O(1), or :func:`project`'s cost when the step leaves the disc."""
    e = p - y
    g0 = e * u
    g1 = e
    A[0, 0] += g0 * g0
    A[0, 1] += g0 * g1
    A[1, 0] = A[0, 1]
    A[1, 1] += g1 * g1
    det = A[0, 0] * A[1, 1] - A[0, 1] * A[0, 1]
    v0 = w[0] - (A[1, 1] * g0 - A[0, 1] * g1) / det / gamma
    v1 = w[1] - (A[0, 0] * g1 - A[0, 1] * g0) / det / gamma
    if v0 * v0 + v1 * v1 > radius * radius:
        v0, v1 = project(A, v0, v1, radius)
    w[0] = v0
    w[1] = v1


# -- stated values ---------------------------------------------------------------------------
@kernel(inline="always")
def round_randomly(x, g, out):
    """State j/g with probability 1 - f and (j + 1)/g with probability f, j = floor(g x),
    f = g x - j, g x rounded to a double (a point mass when f = 0): the mean is x. Raw points
    x. O(1)."""
    xg = x * g
    j = min(int(xg), g)
    f = xg - j
    out.points[0] = x
    out.points[1] = x
    out.buckets[0] = j
    if f > 0.0:
        out.probs[0] = 1.0 - f
        out.probs[1] = f
        out.buckets[1] = j + 1
    else:
        out.probs[0] = 1.0
        out.probs[1] = 0.0
        out.buckets[1] = j


@kernel(inline="always")
def round_fraction(num, den, g, out):
    """:func:`round_randomly` of x = num/den in [0, 1] in integer arithmetic: j = floor(g num /
    den), probabilities (den - r)/den and r/den, r = g num - j den. O(1)."""
    j = (g * num) // den
    r = g * num - j * den
    x = num / den
    out.points[0] = x
    out.points[1] = x
    out.buckets[0] = j
    if r > 0:
        out.probs[0] = (den - r) / den
        out.probs[1] = r / den
        out.buckets[1] = j + 1
    else:
        out.probs[0] = 1.0
        out.probs[1] = 0.0
        out.buckets[1] = j


@kernel(inline="always")
def bin_of(x, bins):
    """min(floor(bins x), bins - 1) for x in [0, 1]."""
    return min(int(x * bins), bins - 1)


# -- HOPS: Foster's (1999) F99 in the bin ----------------------------------------------------
@kernel(inline="always")
def calibrated(n, s, k, i, m):
    """Interval i of bin k holds its frequency: i n <= m s <= (i + 1) n (true with no round)."""
    return i * n[k, i] <= m * s[k, i] and m * s[k, i] <= (i + 1) * n[k, i]


@kernel(inline="always")
def midpoint(i, q, out, slot):
    """Interval i's midpoint (2i + 1)/(2m), bucket 2i + 1 of the grid j/(2m), into ``slot``."""
    out.points[slot] = q[2 * i + 1]
    out.buckets[slot] = 2 * i + 1


@kernel(inline="always")
def f99(q, n, s, k, m, pivot, out):
    """F99 in bin k (module docstring): the pivot interval if calibrated, else the lowest
    calibrated one, else the first straddling pair mixed. O(m)."""
    i = pivot
    if not calibrated(n, s, k, i, m):
        i = 0
        while i < m and not calibrated(n, s, k, i, m):
            i += 1
    if i < m:
        midpoint(i, q, out, 0)
        midpoint(i, q, out, 1)
        out.probs[0] = 1.0
        out.probs[1] = 0.0
        return
    # no interval is calibrated: interval 0's frequency is above it, interval m - 1's below it
    j = 1
    while j * n[k, j] <= m * s[k, j]:
        j += 1
    i = j - 1
    d = (j * n[k, j] - m * s[k, j]) / n[k, j]  # m (L_j - rho_j) > 0
    e = (m * s[k, i] - j * n[k, i]) / n[k, i]  # m (rho_i - R_i) > 0
    midpoint(i, q, out, 0)
    midpoint(j, q, out, 1)
    out.probs[0] = d / (d + e)
    out.probs[1] = 1.0 - out.probs[0]


# -- the forecaster --------------------------------------------------------------------------
@kernel(inline="always")  # into the simulate loop: no per-round state passing
def forecast(st, table, hist, out, b):
    u = feature(b, st.clip)
    p = platt(st.w, u)
    st.u[0] = u
    st.p[0] = p
    if st.variant == OPS:
        round_randomly(p, st.levels, out)
        return
    bins = st.n.shape[0]
    k = bin_of(p, bins)
    st.k[0] = k
    if st.variant == TOPS:
        if st.n[k, 0] == 0:
            round_fraction(2 * k + 1, 2 * bins, st.levels, out)
        else:
            round_fraction(st.s[k, 0], st.n[k, 0], st.levels, out)
    else:
        f99(table.q, st.n, st.s, k, st.m, bin_of(p, st.m), out)


@kernel(inline="always")  # into the simulate loop: no per-round state passing
def observe(st, table, hist, out, slot, y):
    if st.variant != OPS:
        i = 0 if st.variant == TOPS else out.buckets[slot] // 2
        st.n[st.k[0], i] += 1
        st.s[st.k[0], i] += y
    ons_step(st.w, st.A, st.u[0], st.p[0], y, st.gamma, st.radius)


@kernel(_nrt=False)
def simulate(T, st, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y, external, rec):
    for t in range(T):
        b = external(hist, apar)
        if bad_mean(b):
            return mean_stopped(hist)
        forecast(st, table, hist, out, b)
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        observe(st, table, hist, out, slot, y)
        note_external(rec, b, y)
        hist = settle(table, out, slot, y, hist)
    return hist


def resolve(params, T):
    """variant ("ops" | "tops" | "hops"); gamma > 0, rho > 0 and radius >= 1 (the disc holds the
    start (1, 0)) of the Newton step; clip in (0, 1/2); bins, m >= 1; levels in 1..2^20."""
    out = {"variant": check_name(params.get("variant", "ops"), VARIANTS, "variant")}
    out["gamma"] = check_real(params.get("gamma", 0.1), "gamma", 0.0, low_open=True)
    out["rho"] = check_real(params.get("rho", 100.0), "rho", 0.0, low_open=True)
    out["radius"] = check_real(params.get("radius", 100.0), "radius", 1.0)
    clip = check_real(params.get("clip", 0.01), "clip", 0.0, low_open=True)
    if clip >= 0.5:
        raise ValidationError("clip", "must be < 0.5 (b is clipped to [clip, 1 - clip])", value=clip)
    out["clip"] = clip
    out["bins"] = check_int(params.get("bins", 10), "bins", low=1)
    out["m"] = check_int(params.get("m", 10), "m", low=1)
    levels = check_int(params.get("levels", 1000), "levels", low=1)
    if levels > MAX_LEVELS:
        raise ValidationError("levels", f"must be at most {MAX_LEVELS}", value=levels)
    out["levels"] = levels
    return out


def _grid_m(resolved):
    """The stated values are j/levels (OPS, TOPS) or j/(2m) (HOPS's interval midpoints)."""
    return 2 * resolved["m"] if resolved["variant"] == "hops" else resolved["levels"]


FORECASTER = ForecasterSpec(
    "ops",
    init,
    forecast,
    observe,
    params={
        "variant": "ops",
        "gamma": 0.1,
        "rho": 100.0,
        "radius": 100.0,
        "clip": 0.01,
        "bins": 10,
        "m": 10,
        "levels": 1000,
    },
    version=1,
    resolve=resolve,
    loop=simulate,
    grid=_grid_m,
    doc=__doc__,
    needs_external=True,
)
