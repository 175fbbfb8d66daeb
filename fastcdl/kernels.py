"""fastcdl.kernels: numba-callable functions, for use inside your own compiled code.

Every function here is a numba dispatcher: call it from Python with numpy arrays (the fast
path: no validation, no conversion, no table building) or from your own ``@njit`` function,
where it compiles into your machine code. Contracts, costs, an example and the stability
promise are in docs/kernels.md; this module is not imported by ``import fastcdl``.

**Bucket tables as arrays.** ``q`` float64, strictly increasing, in [0, 1]; ``n`` and ``s``
integer or float arrays of the same length (rounds, or sums of weights, and those with
y = 1), 0 <= s_i <= n_i. Buckets with n_i = 0 are skipped (a fixed grid with empty buckets
is a valid table). A table without rounds gives NaN. Each metric equals the value the
Python API (``fastcdl.cdl(fastcdl.BucketStats.from_table(q, n, s))``, ...) gives on the same
table, bit for bit.

>>> import numpy as np
>>> from fastcdl import kernels as K
>>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
>>> K.cdl(q, n, s), K.ece(q, n, s)
(0.25, 0.25)
"""

import math
from collections import namedtuple

import numpy as np

from fastcdl._kernels import envelope as _env
from fastcdl._kernels import msmwc as _msmwc
from fastcdl._kernels import sample as _sample
from fastcdl._kernels import step1 as _step1
from fastcdl._kernels import stream as _stream
from fastcdl._kernels._jit import kernel
from fastcdl._kernels.errors import ece_kernel, k2_kernel
from fastcdl._kernels.exact import rational_grid
from fastcdl._kernels.minimax import minimax_2xk
from fastcdl._kernels.rng import seed_states, uniform
from fastcdl._kernels.sort import argsort_stable, gather, merge_distinct, pairwise_sum
from fastcdl._kernels.tablecdl import table_cdl
from fastcdl.online.engine import Draw, History, Round, Table, draw_slot, settle, view_of
from fastcdl.online.forecasters import cdl as forecaster_cdl
from fastcdl.online.forecasters import foster as forecaster_foster
from fastcdl.online.forecasters import frequency as forecaster_frequency
from fastcdl.online.forecasters import kt as forecaster_kt
from fastcdl.online.forecasters import truthful as forecaster_truthful

# The version of the contracts below (names, argument order, types, results, state fields).
# It changes when any of them changes in a way that can break a caller; additions keep it.
KERNELS_VERSION = 1

__all__ = [
    "KERNELS_VERSION", "njit",
    # metrics of a bucket table
    "cdl", "vcdl", "cdl_kinks", "ece", "k2", "ucal", "v_curve", "decision_loss_curve",
    "cdl_monotone", "vcdl_monotone", "cutoff_ce", "atb", "smce",
    # incremental tables
    "BucketTable", "table_new", "table_new_weighted", "table_add", "table_merge", "table_view",
    "BinnedTable", "uniform_edges", "binned_new", "binned_new_weighted", "binned_add", "binned_merge",
    "binned_view",
    # online building blocks
    "MsMwC", "msmwc_init", "msmwc_lam", "msmwc_logc", "msmwc_c", "msmwc_update", "msmwc_weights",
    "step1", "step1_bracket", "step1_mix", "minimax_2xk", "ExactBias", "exact_bias_new", "exact_bias_add",
    "Draw", "History", "Round", "Table", "game_new", "draw_new", "draw_slot", "view_of", "settle",
    "uniform", "seed_states", "forecaster_setup",
    "forecaster_cdl", "forecaster_kt", "forecaster_foster", "forecaster_frequency", "forecaster_truthful",
]

_FIXED = np.array([0.0, 0.5, 1.0])  # candidates of every envelope: 0, 1/2, 1


# -- your own functions ----------------------------------------------------------------------


def njit(*args, **options):
    """numba.njit for your own functions that call these kernels, with the cache on
    (``cache=True``) and fastcdl's protection against stale entries: numba re-validates a
    cached function against its own file only, so after fastcdl's kernels change your
    cached functions would keep their old machine code (inlined or linked into yours).
    This decorator stamps your cache folder with a hash of fastcdl's kernel sources and
    empties the folder when the hash differs (fastcdl/_kernels/_jit.py). Use it as
    ``@njit``, ``@njit(parallel=True)`` or ``@njit(cache=False)``; ``FASTCDL_CACHE=0``
    turns the cache off. A function typed at a prompt or exec'd has no file to cache
    beside: use numba.njit there."""
    return kernel(*args, **options)


# -- metrics of a bucket table ------------------------------------------------------------


@kernel
def _float_table(q, n, s):
    """float64 copies (q, n, s) of the buckets with n_i != 0: the arrays BucketStats.table()
    hands the Python API's kernels, so the same kernels see the same numbers. O(m)."""
    m = q.shape[0]
    k = 0
    for i in range(m):
        if n[i] != 0:
            k += 1
    qf = np.empty(k)
    nf = np.empty(k)
    sf = np.empty(k)
    j = 0
    for i in range(m):
        if n[i] != 0:
            qf[j] = q[i]
            nf[j] = n[i]
            sf[j] = s[i]
            j += 1
    return qf, nf, sf


@kernel
def _frequencies(n, s):
    qhat = np.empty(n.shape[0])
    for i in range(n.shape[0]):
        qhat[i] = s[i] / n[i]
    return qhat


@kernel
def _identity(m):
    idx = np.empty(m, dtype=np.int64)
    for i in range(m):
        idx[i] = i
    return idx


@kernel
def _curve(q, n, s, extra):
    """The sweep's inputs as fastcdl/_envelope.py builds them, from a float64 table sorted
    by q: (qhat, coef, b, ox, oq, T). ``extra``: more breakpoints (sorted), or empty."""
    m = q.shape[0]
    qhat = _frequencies(n, s)
    oq = argsort_stable(qhat)
    b = merge_distinct(merge_distinct(q, gather(qhat, oq)), _FIXED)
    if extra.shape[0] > 0:
        b = merge_distinct(b, extra)
    return qhat, np.ones(m), b, _identity(m), oq, pairwise_sum(n)


@kernel
def cdl(q, n, s):
    """Calibration decision loss 2 fbar(1/2) of the table (docs/exact-cdl.md); equal to
    fastcdl.cdl on the same table. O(m log m): one sort of the frequencies, then one pass."""
    return table_cdl(q, n, s, False)[0]


@kernel
def vcdl(q, n, s):
    """V-shaped CDL, sup over kinks of f(mu) / max(mu, 1 - mu); equal to fastcdl.vcdl. O(m log m)."""
    return table_cdl(q, n, s, True)[3]


@kernel
def cdl_kinks(q, n, s):
    """(cdl, mu1, mu2): CDL and the kinks of the worst task (fastcdl.cdl_report(...).kinks;
    mu1 = mu2 = 1/2 when it is the V task at 1/2, with weight 2; otherwise the weights are
    c1 = (2 mu2 - 1) / (mu2 - mu1) and c2 = (1 - 2 mu1) / (mu2 - mu1)). O(m log m)."""
    value, mu1, mu2, _, _ = table_cdl(q, n, s, False)
    return value, mu1, mu2


@kernel
def ece(q, n, s):
    """Expected calibration error (1/T) sum_i n_i |q_i - qhat_i|; equal to fastcdl.ece. O(m)."""
    qf, nf, sf = _float_table(q, n, s)
    return ece_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


@kernel
def k2(q, n, s):
    """(1/T) sum_i n_i (q_i - qhat_i)^2; equal to fastcdl.k2. O(m)."""
    qf, nf, sf = _float_table(q, n, s)
    return k2_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


@kernel
def ucal(q, n, s):
    """U-calibration error, exactly (docs/exact-cdl.md); equal to fastcdl.ucal. O(m log m)."""
    qf, nf, sf = _float_table(q, n, s)
    m = qf.shape[0]
    if m == 0:
        return np.nan
    T = pairwise_sum(nf)
    ones = 0.0
    for i in range(m):  # a sequential sum, as np.cumsum(s)[-1] in fastcdl/_envelope.py
        ones += sf[i]
    pbar = ones / T
    qhat = _frequencies(nf, sf)
    x = np.empty(2 * m)
    qh = np.empty(2 * m)
    nn = np.empty(2 * m)
    ss = np.empty(2 * m)
    coef = np.empty(2 * m)
    for i in range(m):
        x[i] = qf[i]
        x[m + i] = pbar
        qh[i] = qhat[i]
        qh[m + i] = qhat[i]
        nn[i] = nf[i]
        nn[m + i] = nf[i]
        ss[i] = sf[i]
        ss[m + i] = sf[i]
        coef[i] = 1.0
        coef[m + i] = -1.0
    ox = argsort_stable(x)
    oq = argsort_stable(qh)
    b = merge_distinct(merge_distinct(gather(x, ox), gather(qh, oq)), _FIXED)
    return _env.ucal_kernel(x, qh, nn, ss, coef, b, ox, oq, T)


@kernel
def _v_left(q, n, s, mus):
    qf, nf, sf = _float_table(q, n, s)
    if qf.shape[0] == 0:
        return np.full(mus.shape[0], np.nan)
    om = argsort_stable(mus)
    qhat, coef, b, ox, oq, T = _curve(qf, nf, sf, gather(mus, om))
    f_left, _ = _env.sweep(qf, qhat, nf, sf, coef, b, ox, oq, T)
    out = np.empty(mus.shape[0])
    for k in range(mus.shape[0]):  # searchsorted(b, mu + 0.0): mu is one of the b
        mu = mus[k] + 0.0
        lo = 0
        hi = b.shape[0]
        while lo < hi:
            mid = (lo + hi) >> 1
            if b[mid] < mu:
                lo = mid + 1
            else:
                hi = mid
        out[k] = f_left[lo]
    return out


@kernel
def v_curve(q, n, s, mus):
    """f(mu) at each kink of ``mus`` (float64 in [0, 1], any order): the V-kink curve of
    docs/metrics.md with its tie rule. New array. O((m + k) log(m + k))."""
    return _v_left(q, n, s, mus)


@kernel
def decision_loss_curve(q, n, s, mus):
    """CFDL of the V task at each kink, f(mu) / max(mu, 1 - mu); equal to
    fastcdl.decision_loss_curve(table, kinks=mus)[1] (and to fastcdl.cfdl(table, kink=mu)).
    New array. O((m + k) log(m + k))."""
    f = _v_left(q, n, s, mus)
    for k in range(mus.shape[0]):
        f[k] = f[k] / max(mus[k], 1.0 - mus[k])
    return f


@kernel
def cdl_monotone(q, n, s):
    """CDL relative to non-decreasing recalibrations; equal to fastcdl.sample.cdl_monotone. O(m)."""
    qf, nf, sf = _float_table(q, n, s)
    if qf.shape[0] == 0:
        return np.nan
    return _sample.monotone_cdl_kernel(qf, nf, sf, pairwise_sum(nf))[0]


@kernel
def vcdl_monotone(q, n, s):
    """VCDL relative to non-decreasing recalibrations; equal to fastcdl.sample.vcdl_monotone. O(m)."""
    qf, nf, sf = _float_table(q, n, s)
    if qf.shape[0] == 0:
        return np.nan
    return _sample.monotone_cdl_kernel(qf, nf, sf, pairwise_sum(nf))[6]


@kernel
def cutoff_ce(q, n, s):
    """Cutoff calibration error, the largest |bias| over intervals; equal to
    fastcdl.sample.cutoff_ce. O(m)."""
    qf, nf, sf = _float_table(q, n, s)
    return _sample.cutoff_kernel(qf, nf, sf)[0] if qf.shape[0] > 0 else np.nan


@kernel
def atb(q, n, s):
    """Averaged two-bin calibration error; equal to fastcdl.sample.atb. O(m)."""
    qf, nf, sf = _float_table(q, n, s)
    return _sample.atb_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


@kernel
def smce(q, n, s):
    """Smooth calibration error, exactly; equal to fastcdl.sample.smce. O(m log m)."""
    qf, nf, sf = _float_table(q, n, s)
    return _sample.smce_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


# -- incremental bucket tables -------------------------------------------------------------

BucketTable = _stream.BucketTable
BinnedTable = _stream.BinnedTable


@kernel
def table_new(capacity):
    """An empty exact table (one bucket per distinct prediction) with int64 counts and room
    for ``capacity`` buckets; it grows when full. O(capacity)."""
    return _stream.stream_new(capacity)


@kernel
def table_new_weighted(capacity):
    """As :func:`table_new` with float64 counts (sums of weights)."""
    return _stream.stream_new_weighted(capacity)


@kernel(inline="always")
def table_add(tab, p, y, w=1):
    """Add w rounds (or weight w) at prediction p with outcome y in {0, 1}; returns the
    table to use from now on (``tab``, or a copy twice as large when ``tab`` was full: the
    old one is then stale and raises when used). O(log m) for a known prediction, O(m)
    for a new one."""
    return _stream.stream_add(tab, p, y, w)


@kernel
def table_merge(a, b):
    """A new table with the rounds of both (as ``BucketStats.__add__``). O(m_a + m_b)."""
    return _stream.stream_merge(a, b)


@kernel
def table_view(tab):
    """(q, n, s): views of the table's buckets in use, sorted by q, valid until the next add.
    Pass them to any metric above. O(1)."""
    return _stream.stream_view(tab)


@kernel
def uniform_edges(m):
    """The edges i/m, i = 0..m, of bucket_stats(bins=m). O(m)."""
    return _stream.uniform_edges(m)


@kernel
def binned_new(edges, uniform):
    """An empty binned table over ``edges`` (increasing from 0 to 1; ``uniform`` when they
    are uniform_edges(m): O(1) per round instead of O(log m)), int64 counts. O(m)."""
    return _stream.binned_new(edges, uniform)


@kernel
def binned_new_weighted(edges, uniform):
    """As :func:`binned_new` with float64 counts (sums of weights)."""
    return _stream.binned_new_weighted(edges, uniform)


@kernel(inline="always")
def binned_add(tab, p, y, w=1):
    """Add w rounds (or weight w) at prediction p in [0, 1] with outcome y. Bins and edge
    rule as bucket_stats(bins=...) (the same bin_of). O(1) (O(log m) for other edges)."""
    _stream.binned_add(tab, p, y, w)


@kernel
def binned_merge(a, b):
    """A new binned table with the rounds of both (same edges). O(m)."""
    return _stream.binned_merge(a, b)


@kernel
def binned_view(tab):
    """(q, n, s) of the non-empty bins, q the mean prediction of each bin; new arrays. O(m)."""
    return _stream.binned_view(tab)


# -- online building blocks ----------------------------------------------------------------

# The MsMwC oracle of Algorithm 1 (docs/algorithm1.md), sparse form: G, Q per bucket;
# eta, logpi per learning-rate copy; off, S, terms the scaled normalisers; b, w scratch;
# lam[0] the last Lam; rounds[0] updates so far; capped[0] Lam solves that hit their cap;
# lanes, tpad the per-copy rows and bucket terms padded to the vector width (eta, logpi, off,
# S, b, w and terms are views of their first K_eta copies).
MsMwC = namedtuple("MsMwC", ["G", "Q", "eta", "logpi", "off", "S", "terms", "b", "w", "lam", "rounds",
                             "capped", "lanes", "tpad"])


@kernel
def _n_copies(T):
    j = 0
    while 4**j < T:
        j += 1
    return j + 1


@kernel
def msmwc_init(m, horizon):
    """The oracle for m buckets and a horizon T: G = Q = 0, K_eta = ceil(0.5 log2 T) + 1
    learning-rate copies, the normalisers summed. O(m log T)."""
    K = _n_copies(horizon)
    lanes, tpad = _msmwc.new_lanes(m, K)
    st = MsMwC(np.zeros(m), np.zeros(m), lanes[_msmwc.ETA, :K], lanes[_msmwc.LOGPI, :K], lanes[_msmwc.OFF, :K],
               lanes[_msmwc.SUM, :K], tpad[:, :K], lanes[_msmwc.B, :K], lanes[_msmwc.W, :K], np.zeros(1),
               np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), lanes, tpad)
    _msmwc.refresh_normaliser(st.G, st.Q, st.eta, st.off, st.S, st.terms)
    return st


@kernel
def msmwc_lam(st):
    """Solve the normaliser Lam for the current state (Newton, warm-started from the last
    Lam), store it in st.lam[0] and return it. O(log T * Newton steps)."""
    lam, converged, _ = _msmwc.lam_lanes(st.lanes, st.lam[0])
    st.lam[0] = lam
    if not converged:
        st.capped[0] += 1
    return lam


@kernel
def msmwc_logc(st, i):
    """ln|c_i| of bucket i at the stored Lam (call msmwc_lam first); -inf when G_i = 0. The
    sign of c_i is the sign of G_i. O(log T)."""
    return _msmwc.lanes_logc(i, st.G, st.Q, st.lam[0], st.lanes, st.tpad)


@kernel
def msmwc_c(st, i):
    """c_i at the stored Lam, signed. O(log T)."""
    g = st.G[i]
    if g == 0.0:
        return 0.0
    v = math.exp(msmwc_logc(st, i))
    return v if g > 0.0 else -v


@kernel
def msmwc_update(st, i, g):
    """Bucket i gains g (|g| <= 1): G_i += g, Q_i += g^2, normalisers updated; every m
    updates they are summed afresh against rounding drift, as Algorithm 1 does. O(log T)."""
    _msmwc.update_lanes(i, g, st.G, st.Q, st.lanes, st.tpad)
    st.rounds[0] += 1
    if st.rounds[0] % st.G.shape[0] == 0:
        _msmwc.resum_normaliser(st.off, st.S, st.terms)


@kernel
def msmwc_weights(st, c):
    """Every c_i formed densely into ``c`` (float64[m]), with its own Lam (stored). The
    O(m log T) reference for msmwc_c. Returns Lam."""
    lam, converged, _ = _msmwc.dense_weights(st.G, st.Q, st.eta, st.logpi, st.b, st.w, st.lam[0], c)
    st.lam[0] = lam
    if not converged:
        st.capped[0] += 1
    return lam


@kernel
def draw_new():
    """An empty Draw (points, probs float64[2]; buckets int64[2])."""
    return Draw(np.zeros(2), np.zeros(2), np.zeros(2, dtype=np.int64))


@kernel
def game_new(q):
    """(table, out, hist) of a fresh online game over the stated values q (float64,
    increasing; copied): the public Table, an empty Draw and History(0, 0, -1)."""
    qq = np.empty(q.shape[0])
    for i in range(q.shape[0]):
        qq[i] = q[i]
    num = np.zeros(q.shape[0], dtype=np.int64)
    den = rational_grid(qq, num)
    table = Table(qq, np.zeros(q.shape[0], dtype=np.int64), np.zeros(q.shape[0], dtype=np.int64), num, den)
    return table, draw_new(), History(0, 0, -1)


@kernel
def step1(c, delta, out):
    """Step 1 of Algorithm 1 on explicit weights c (float64[m]): writes the distribution into
    ``out`` (a Draw) and returns lo, the bucket below the sign change (-1 or m - 1 at the
    ends). Buckets are 0-based, I_b = (b/m, (b+1)/m]. O(log m)."""
    return _step1.step1_from_c(c, delta, out.points, out.probs, out.buckets)


@kernel
def step1_bracket(v, out):
    """Step 1's cases that need no weights, from the signs of v (c, or G, which has c's
    signs; Algorithm 1 passes the exact signs, exact_bias_new(m).sign): (lo, True) after writing a point mass into ``out``, or (lo, False) with
    v_lo < 0 < v_{lo+1}: then call step1_mix with the two buckets' weights. O(log m)."""
    return _step1.step1_point_mass(v, out.points, out.probs, out.buckets)


ExactBias = _step1.ExactBias


@kernel
def exact_bias_new(m):
    """The exact signs of step 1's biases G_b for m buckets (an ExactBias: sign float64[m] of
    -1, 0, +1, and the integers I, D with m G_b = I_b + (m D_b) delta). Step 1 decides on
    ``sign``: pass it to step1_bracket. O(m)."""
    return _step1.exact_bias(m)


@kernel
def exact_bias_add(eb, out, slot, y, m, delta):
    """Add the round (the drawn ``slot`` of step 1's distribution ``out``, outcome y) to the
    exact biases: G_b += ptilde - y without rounding (the raw points are a/m + e delta), and
    sign_b updated. O(1)."""
    _step1.add_drawn(eb, out, slot, y, m, delta)


@kernel
def step1_mix(lo, m, delta, r, out):
    """Step 1's two-point distribution: (lo+1)/m with probability r, (lo+1)/m + delta with
    1 - r, in buckets lo and lo + 1; r = c_{lo+1} / (c_{lo+1} - c_lo). O(1)."""
    _step1.boundary_points(lo, m, delta, r, out.points, out.probs, out.buckets)


def forecaster_setup(name, horizon, seed=0, adversary=None, **params):
    """(state, table, out, hist, rng) of a built-in forecaster ("cdl", "kt", "foster",
    "frequency", "truthful"; or a plug-in) for a run of ``horizon`` rounds, as simulate and
    make_forecaster build them (same parameters, validated; the same generator for the same
    seed). Drive it in your loop with ``forecaster_<name>.forecast`` / ``.observe``,
    :func:`draw_slot` and :func:`settle`. Python only."""
    from fastcdl.online import make_forecaster

    f = make_forecaster(name, horizon=horizon, seed=seed, adversary=adversary, **params)
    return f.state, f.table, f.out, f.hist, seed_states(f.seed)[0]
