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
>>> K.cdl_of_table(q, n, s), K.ece_of_table(q, n, s)
(0.25, 0.25)
"""

import math
from collections import namedtuple

import numpy as np

from fastcdl._docstrings import fill as fill_docstring
from fastcdl._compiled import envelope as _env
from fastcdl._compiled import msmwc as _msmwc
from fastcdl._compiled import estimators as _sample
from fastcdl._compiled import step1 as _step1
from fastcdl._compiled import stream as _stream
from fastcdl._compiled._jit import kernel
from fastcdl._compiled.errors import ece_kernel, k2_kernel
from fastcdl._compiled.exact import rational_grid
from fastcdl._compiled.minimax import minimax_2xk
from fastcdl._compiled.rng import seed_states, uniform
from fastcdl._compiled.sort import pairwise_sum
from fastcdl._compiled.tablecdl import table_cdl
from fastcdl.online.engine import Draw, History, Round, Table, draw_slot, settle, view_of
from fastcdl.online.forecasters import cdl as forecaster_cdl
from fastcdl.online.forecasters import foster as forecaster_foster
from fastcdl.online.forecasters import frequency as forecaster_frequency
from fastcdl.online.forecasters import kt as forecaster_kt
from fastcdl.online.forecasters import truthful as forecaster_truthful

#: The version of the contracts below (names, argument order, types, results, state fields).
#: It changes when any of them changes in a way that can break a caller; additions keep it
#: (the renamed metrics keep their old names, deprecated, for one release: _RENAMED).
KERNELS_VERSION = 1

__all__ = [
    "KERNELS_VERSION",
    "njit",
    # metrics of a bucket table
    "cdl_of_table",
    "vcdl_of_table",
    "cdl_kinks",
    "ece_of_table",
    "k2_of_table",
    "ucal_of_table",
    "v_curve",
    "decision_loss_curve_of_table",
    "cdl_monotone_of_table",
    "vcdl_monotone_of_table",
    "cutoff_ce_of_table",
    "atb_of_table",
    "smce_of_table",
    # incremental tables
    "BucketTable",
    "table_new",
    "table_new_weighted",
    "table_add",
    "table_merge",
    "table_view",
    "BinnedTable",
    "uniform_edges",
    "binned_new",
    "binned_new_weighted",
    "binned_add",
    "binned_merge",
    "binned_view",
    # online building blocks
    "MsMwC",
    "msmwc_init",
    "msmwc_lam",
    "msmwc_logc",
    "msmwc_c",
    "msmwc_update",
    "msmwc_weights",
    "step1",
    "step1_bracket",
    "step1_mix",
    "minimax_2xk",
    "ExactBias",
    "exact_bias_new",
    "exact_bias_add",
    "Draw",
    "History",
    "Round",
    "Table",
    "game_new",
    "draw_new",
    "draw_slot",
    "view_of",
    "settle",
    "uniform",
    "seed_states",
    "forecaster_setup",
    "forecaster_cdl",
    "forecaster_kt",
    "forecaster_foster",
    "forecaster_frequency",
    "forecaster_truthful",
]


# -- your own functions ----------------------------------------------------------------------


def njit(*args, **options):
    """numba.njit for your own functions that call these kernels, with the cache on
    (``cache=True``) and fastcdl's protection against stale entries: numba re-validates a
    cached function against its own file only, so after fastcdl's kernels change your
    cached functions would keep their old machine code (inlined or linked into yours).
    This decorator stamps your cache folder with a hash of fastcdl's kernel sources and
    empties the folder when the hash differs (fastcdl/_compiled/_jit.py). Use it as
    ``@njit``, ``@njit(parallel=True)`` or ``@njit(cache=False)``; ``FASTCDL_CACHE=0``
    turns the cache off. A function typed at a prompt or exec'd has no file to cache
    beside: use numba.njit there.

    Parameters
    ----------
    *args
        The function to compile (``@njit``), or nothing (``@njit(...)``).
    **options
        numba.njit's options (``parallel=True``, ``cache=False``, ...).

    Returns
    -------
    numba dispatcher, or a decorator that makes one

    Examples
    --------
    In a module of your own (a file, so that the cache has a place)::

        from fastcdl import kernels as K

        @K.njit
        def cdl_of_rounds(p, y, capacity):
            tab = K.table_new(capacity)
            for t in range(p.shape[0]):
                tab = K.table_add(tab, p[t], y[t])
            q, n, s = K.table_view(tab)
            return K.cdl_of_table(q, n, s)
    """
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
@fill_docstring
def cdl_of_table(q, n, s):
    """Calibration decision loss 2 fbar(1/2) of the table (docs/exact-cdl.md); equal to
    fastcdl.cdl on the same table. O(m log m): one sort of the frequencies, then one pass.

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> cdl_of_table(q, n, s)
    0.25
    """
    return table_cdl(q, n, s, False)[0]


@kernel
@fill_docstring
def vcdl_of_table(q, n, s):
    """V-shaped CDL, sup over kinks of f(mu) / max(mu, 1 - mu); equal to fastcdl.vcdl. O(m log m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> vcdl_of_table(q, n, s)
    0.16666666666666666
    """
    return table_cdl(q, n, s, True)[3]


@kernel
@fill_docstring
def cdl_kinks(q, n, s):
    """(cdl, mu1, mu2): CDL and the kinks of the worst task (fastcdl.cdl_report(...).kinks;
    mu1 = mu2 = 1/2 when it is the V task at 1/2, with weight 2; otherwise the weights are
    c1 = (2 mu2 - 1) / (mu2 - mu1) and c2 = (1 - 2 mu1) / (mu2 - mu1)). O(m log m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    cdl, mu1, mu2 : float

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> cdl_kinks(q, n, s)
    (0.25, 0.25, 0.75)
    """
    value, mu1, mu2, _, _, _ = table_cdl(q, n, s, False)
    return value, mu1, mu2


@kernel
@fill_docstring
def ece_of_table(q, n, s):
    """Expected calibration error ``(1/T) sum_i n_i |q_i - qhat_i|``; equal to fastcdl.ece. O(m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> ece_of_table(q, n, s)
    0.25
    """
    qf, nf, sf = _float_table(q, n, s)
    return ece_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


@kernel
@fill_docstring
def k2_of_table(q, n, s):
    """Squared calibration error ``(1/T) sum_i n_i (q_i - qhat_i)^2``; equal to fastcdl.k2. O(m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> k2_of_table(q, n, s)
    0.0625
    """
    qf, nf, sf = _float_table(q, n, s)
    return k2_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


@kernel
@fill_docstring
def ucal_of_table(q, n, s):
    """U-calibration error, exactly (docs/exact-cdl.md); equal to fastcdl.ucal. O(m log m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> ucal_of_table(q, n, s)
    0.0
    """
    qf, nf, sf = _float_table(q, n, s)
    m = qf.shape[0]
    if m == 0:
        return np.nan
    return _env.ucal_of_table(qf, nf, sf)


@kernel
def _v_left(q, n, s, mus):
    qf, nf, sf = _float_table(q, n, s)
    if qf.shape[0] == 0:
        return np.full(mus.shape[0], np.nan)
    return _env.v_left(qf, nf, sf, mus)


@kernel
@fill_docstring
def v_curve(q, n, s, mus):
    """f(mu) at each kink of ``mus``: the V-kink curve of docs/metrics.md with its tie rule.

    O((m + k) log(m + k)) for k kinks.

    Parameters
    ----------
    {{table}}
    mus : ndarray of float64
        The kinks, in [0, 1], any order.

    Returns
    -------
    ndarray of float64
        f at each kink (a new array; NaN for a table without rounds).

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> v_curve(q, n, s, np.array([0.25, 0.5])).tolist()
    [0.125, 0.0]
    """
    return _v_left(q, n, s, mus)


@kernel
@fill_docstring
def decision_loss_curve_of_table(q, n, s, mus):
    """CFDL of the V task at each kink, f(mu) / max(mu, 1 - mu); equal to
    fastcdl.decision_loss_curve(table, kinks=mus)[1] (and to fastcdl.cfdl(table, kink=mu)).
    O((m + k) log(m + k)) for k kinks.

    Parameters
    ----------
    {{table}}
    mus : ndarray of float64
        The kinks, in [0, 1], any order.

    Returns
    -------
    ndarray of float64
        A new array.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> decision_loss_curve_of_table(q, n, s, np.array([0.25, 0.5])).tolist()
    [0.16666666666666666, 0.0]
    """
    f = _v_left(q, n, s, mus)
    for k in range(mus.shape[0]):
        f[k] = f[k] / max(mus[k], 1.0 - mus[k])
    return f


@kernel
@fill_docstring
def cdl_monotone_of_table(q, n, s):
    """CDL relative to non-decreasing recalibrations; equal to fastcdl.sample.cdl_monotone. O(m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> cdl_monotone_of_table(q, n, s)
    0.25
    """
    qf, nf, sf = _float_table(q, n, s)
    if qf.shape[0] == 0:
        return np.nan
    return _sample.monotone_cdl_kernel(qf, nf, sf, pairwise_sum(nf))[0]


@kernel
@fill_docstring
def vcdl_monotone_of_table(q, n, s):
    """VCDL relative to non-decreasing recalibrations; equal to fastcdl.sample.vcdl_monotone. O(m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> vcdl_monotone_of_table(q, n, s)
    0.16666666666666666
    """
    qf, nf, sf = _float_table(q, n, s)
    if qf.shape[0] == 0:
        return np.nan
    return _sample.monotone_cdl_kernel(qf, nf, sf, pairwise_sum(nf))[6]


@kernel
@fill_docstring
def cutoff_ce_of_table(q, n, s):
    """Cutoff calibration error, the largest ``|bias|`` over intervals; equal to
    fastcdl.sample.cutoff_ce. O(m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> cutoff_ce_of_table(q, n, s)
    0.125
    """
    qf, nf, sf = _float_table(q, n, s)
    return _sample.cutoff_kernel(qf, nf, sf)[0] if qf.shape[0] > 0 else np.nan


@kernel
@fill_docstring
def atb_of_table(q, n, s):
    """Averaged two-bin calibration error; equal to fastcdl.sample.atb. O(m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> atb_of_table(q, n, s)
    0.015625
    """
    qf, nf, sf = _float_table(q, n, s)
    return _sample.atb_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


@kernel
@fill_docstring
def smce_of_table(q, n, s):
    """Smooth calibration error, exactly; equal to fastcdl.sample.smce. O(m log m).

    Parameters
    ----------
    {{table}}

    Returns
    -------
    float
        NaN for a table without rounds.

    Examples
    --------
    >>> import numpy as np
    >>> q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])
    >>> smce_of_table(q, n, s)
    0.0625
    """
    qf, nf, sf = _float_table(q, n, s)
    return _sample.smce_kernel(qf, nf, sf) if qf.shape[0] > 0 else np.nan


# -- incremental bucket tables -------------------------------------------------------------

BucketTable = _stream.BucketTable
BinnedTable = _stream.BinnedTable


@kernel
def table_new(capacity):
    """An empty exact table (one bucket per distinct prediction) with int64 counts and room
    for ``capacity`` buckets; it grows when full. O(capacity).

    Parameters
    ----------
    capacity : int
        Buckets to allocate, at least 1.

    Returns
    -------
    BucketTable

    Examples
    --------
    >>> tab = table_new(4)
    >>> tab = table_add(tab, 0.3, 1); tab = table_add(tab, 0.3, 0); tab = table_add(tab, 0.7, 1)
    >>> [a.tolist() for a in table_view(tab)]
    [[0.3, 0.7], [2, 1], [1, 1]]
    """
    return _stream.stream_new(capacity)


@kernel
def table_new_weighted(capacity):
    """As :func:`table_new` with float64 counts (sums of weights).

    Parameters
    ----------
    capacity : int
        Buckets to allocate, at least 1.

    Returns
    -------
    BucketTable

    Examples
    --------
    >>> tab = table_add(table_new_weighted(4), 0.3, 1, 0.5)
    >>> [a.tolist() for a in table_view(tab)]
    [[0.3], [0.5], [0.5]]
    """
    return _stream.stream_new_weighted(capacity)


@kernel(inline="always")
def table_add(tab, p, y, w=1):
    """Add w rounds (or weight w) at prediction p with outcome y in {0, 1}; returns the
    table to use from now on (``tab``, or a copy twice as large when ``tab`` was full: the
    old one is then stale and raises when used). O(log m) for a known prediction, O(m)
    for a new one.

    Parameters
    ----------
    tab : BucketTable
        The table.
    p : float
        The prediction, in [0, 1].
    y : int
        The outcome, 0 or 1.
    w : int or float, default 1
        Rounds, or a weight (for a weighted table).

    Returns
    -------
    BucketTable
        The table to use from now on.

    Examples
    --------
    See :func:`table_new`.
    """
    return _stream.stream_add(tab, p, y, w)


@kernel
def table_merge(a, b):
    """A new table with the rounds of both (as ``BucketStats.__add__``). O(m_a + m_b).

    Parameters
    ----------
    a, b : BucketTable
        Tables with the same count type.

    Returns
    -------
    BucketTable

    Examples
    --------
    >>> tab = table_add(table_new(2), 0.3, 1)
    >>> table_view(table_merge(tab, tab))[1].tolist()
    [2]
    """
    return _stream.stream_merge(a, b)


@kernel
def table_view(tab):
    """(q, n, s): views of the table's buckets in use, sorted by q, valid until the next add.
    Pass them to any metric above. O(1).

    Parameters
    ----------
    tab : BucketTable

    Returns
    -------
    q, n, s : ndarray
        Views into the table.

    Examples
    --------
    >>> q, n, s = table_view(table_add(table_new(2), 0.3, 1))
    >>> ece_of_table(q, n, s)
    0.7
    """
    return _stream.stream_view(tab)


@kernel
def uniform_edges(m):
    """The edges i/m, i = 0..m, of bucket_stats(bins=m). O(m).

    Parameters
    ----------
    m : int
        The number of bins.

    Returns
    -------
    ndarray of float64, shape (m + 1,)

    Examples
    --------
    >>> uniform_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    return _stream.uniform_edges(m)


@kernel
def binned_new(edges, uniform):
    """An empty binned table over ``edges``, int64 counts. O(m).

    Parameters
    ----------
    edges : ndarray of float64
        Increasing from 0 to 1.
    uniform : bool
        True when they are uniform_edges(m): O(1) per round instead of O(log m).

    Returns
    -------
    BinnedTable

    Examples
    --------
    >>> tab = binned_new(uniform_edges(4), True)
    >>> binned_add(tab, 0.3, 1); binned_add(tab, 0.2, 0)
    >>> [a.tolist() for a in binned_view(tab)]
    [[0.2, 0.3], [1, 1], [0, 1]]
    """
    return _stream.binned_new(edges, uniform)


@kernel
def binned_new_weighted(edges, uniform):
    """As :func:`binned_new` with float64 counts (sums of weights).

    Parameters
    ----------
    edges : ndarray of float64
        Increasing from 0 to 1.
    uniform : bool
        True when they are uniform_edges(m).

    Returns
    -------
    BinnedTable

    Examples
    --------
    >>> tab = binned_new_weighted(uniform_edges(4), True)
    >>> binned_add(tab, 0.3, 1, 2.0)
    >>> [a.tolist() for a in binned_view(tab)]
    [[0.3], [2.0], [2.0]]
    """
    return _stream.binned_new_weighted(edges, uniform)


@kernel(inline="always")
def binned_add(tab, p, y, w=1):
    """Add w rounds (or weight w) at prediction p in [0, 1] with outcome y. Bins and edge
    rule as bucket_stats(bins=...) (the same bin_of). O(1) (O(log m) for other edges).

    Parameters
    ----------
    tab : BinnedTable
        Updated in place.
    p : float
        The prediction, in [0, 1].
    y : int
        The outcome, 0 or 1.
    w : int or float, default 1
        Rounds, or a weight (for a weighted table).

    Returns
    -------
    None

    Examples
    --------
    See :func:`binned_new`.
    """
    _stream.binned_add(tab, p, y, w)


@kernel
def binned_merge(a, b):
    """A new binned table with the rounds of both (same edges). O(m).

    Parameters
    ----------
    a, b : BinnedTable

    Returns
    -------
    BinnedTable

    Examples
    --------
    >>> tab = binned_new(uniform_edges(4), True)
    >>> binned_add(tab, 0.3, 1)
    >>> binned_view(binned_merge(tab, tab))[1].tolist()
    [2]
    """
    return _stream.binned_merge(a, b)


@kernel
def binned_view(tab):
    """(q, n, s) of the non-empty bins, q the mean prediction of each bin; new arrays. O(m).

    Parameters
    ----------
    tab : BinnedTable

    Returns
    -------
    q, n, s : ndarray

    Examples
    --------
    See :func:`binned_new`.
    """
    return _stream.binned_view(tab)


# -- online building blocks ----------------------------------------------------------------

# The MsMwC oracle of Algorithm 1 (docs/algorithm1.md), sparse form: G, Q per bucket;
# eta, logpi per learning-rate copy; off, S, terms the scaled normalisers; b, w scratch;
# lam[0] the last Lam; rounds[0] updates so far; capped[0] Lam solves that hit their cap;
# lanes, tpad the per-copy rows and bucket terms padded to the vector width (eta, logpi, off,
# S, b, w and terms are views of their first K_eta copies).
MsMwC = namedtuple(
    "MsMwC", ["G", "Q", "eta", "logpi", "off", "S", "terms", "b", "w", "lam", "rounds", "capped", "lanes", "tpad"]
)
MsMwC.__doc__ = """The state of the MsMwC oracle of Algorithm 1 (:func:`msmwc_init`), sparse form.

Attributes
----------
G, Q : ndarray of float64, shape (m,)
    Each bucket's summed gains and squared gains.
eta, logpi : ndarray of float64
    Per learning-rate copy.
off, S, terms : ndarray of float64
    The scaled normalisers.
b, w : ndarray of float64
    Scratch.
lam : ndarray of float64, shape (1,)
    The last Lam.
rounds : ndarray of int64, shape (1,)
    Updates so far.
capped : ndarray of int64, shape (1,)
    Lam solves that hit their iteration cap.
lanes, tpad : ndarray of float64
    The per-copy rows and bucket terms padded to the vector width (eta, logpi, off, S, b,
    w and terms are views of their first K_eta copies).

Examples
--------
>>> msmwc_init(4, 1024).G.shape
(4,)
"""


@kernel
def _n_copies(T):
    j = 0
    while 4**j < T:
        j += 1
    return j + 1


@kernel
def msmwc_init(m, horizon):
    """The oracle for m buckets and a horizon T: G = Q = 0, K_eta = ceil(0.5 log2 T) + 1
    learning-rate copies, the normalisers summed. O(m log T).

    Parameters
    ----------
    m : int
        Buckets.
    horizon : int
        T.

    Returns
    -------
    MsMwC

    Examples
    --------
    >>> st = msmwc_init(4, 1024)
    >>> st.eta.shape[0], st.G.tolist()
    (6, [0.0, 0.0, 0.0, 0.0])
    """
    K = _n_copies(horizon)
    lanes, tpad = _msmwc.new_lanes(m, K)
    st = MsMwC(
        np.zeros(m),
        np.zeros(m),
        lanes[_msmwc.ETA, :K],
        lanes[_msmwc.LOGPI, :K],
        lanes[_msmwc.OFF, :K],
        lanes[_msmwc.SUM, :K],
        tpad[:, :K],
        lanes[_msmwc.B, :K],
        lanes[_msmwc.W, :K],
        np.zeros(1),
        np.zeros(1, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
        lanes,
        tpad,
    )
    _msmwc.refresh_normaliser(st.G, st.Q, st.eta, st.off, st.S, st.terms)
    return st


@kernel
def msmwc_lam(st):
    """Solve the normaliser Lam for the current state (Newton, warm-started from the last
    Lam), store it in st.lam[0] and return it. O(log T * Newton steps).

    Parameters
    ----------
    st : MsMwC
        Updated in place (``lam``, and ``capped`` when the solve stops at its cap).

    Returns
    -------
    float
        Lam.

    Examples
    --------
    >>> st = msmwc_init(4, 1024)
    >>> msmwc_update(st, 1, 0.5)
    >>> round(msmwc_lam(st), 6)
    -0.050896
    """
    lam, converged, _ = _msmwc.lam_lanes(st.lanes, st.lam[0])
    st.lam[0] = lam
    if not converged:
        st.capped[0] += 1
    return lam


@kernel
def msmwc_logc(st, i):
    """ln|c_i| of bucket i at the stored Lam (call msmwc_lam first); -inf when G_i = 0. The
    sign of c_i is the sign of G_i. O(log T).

    Parameters
    ----------
    st : MsMwC
    i : int
        The bucket, 0-based.

    Returns
    -------
    float

    Examples
    --------
    >>> st = msmwc_init(4, 1024)
    >>> msmwc_update(st, 1, 0.5); lam = msmwc_lam(st)
    >>> round(msmwc_logc(st, 1), 6), msmwc_logc(st, 0)
    (-5.822405, -inf)
    """
    return _msmwc.lanes_logc(i, st.G, st.Q, st.lam[0], st.lanes, st.tpad)


@kernel
def msmwc_c(st, i):
    """c_i at the stored Lam, signed. O(log T).

    Parameters
    ----------
    st : MsMwC
    i : int
        The bucket, 0-based.

    Returns
    -------
    float
        0 when G_i = 0.

    Examples
    --------
    >>> st = msmwc_init(4, 1024)
    >>> msmwc_update(st, 1, 0.5); lam = msmwc_lam(st)
    >>> round(msmwc_c(st, 1), 9), msmwc_c(st, 0)
    (0.002960478, 0.0)
    """
    g = st.G[i]
    if g == 0.0:
        return 0.0
    v = math.exp(msmwc_logc(st, i))
    return v if g > 0.0 else -v


@kernel
def msmwc_update(st, i, g):
    """Bucket i gains g (``|g| <= 1``): G_i += g, Q_i += g^2, normalisers updated; every m
    updates they are summed afresh against rounding drift, as Algorithm 1 does. O(log T).

    Parameters
    ----------
    st : MsMwC
        Updated in place.
    i : int
        The bucket, 0-based.
    g : float
        The gain, ``|g| <= 1``.

    Returns
    -------
    None

    Examples
    --------
    >>> st = msmwc_init(4, 1024)
    >>> msmwc_update(st, 1, 0.5)
    >>> st.G.tolist(), st.Q.tolist()
    ([0.0, 0.5, 0.0, 0.0], [0.0, 0.25, 0.0, 0.0])
    """
    _msmwc.update_lanes(i, g, st.G, st.Q, st.lanes, st.tpad)
    st.rounds[0] += 1
    if st.rounds[0] % st.G.shape[0] == 0:
        _msmwc.resum_normaliser(st.off, st.S, st.terms)


@kernel
def msmwc_weights(st, c):
    """Every c_i formed densely into ``c``, with its own Lam (stored). The O(m log T)
    reference for msmwc_c.

    Parameters
    ----------
    st : MsMwC
        Its ``lam`` is updated.
    c : ndarray of float64, shape (m,)
        Written.

    Returns
    -------
    float
        Lam.

    Examples
    --------
    >>> st = msmwc_init(4, 1024)
    >>> msmwc_update(st, 1, 0.5)
    >>> c = np.empty(4); lam = msmwc_weights(st, c)
    >>> np.round(c, 9).tolist()
    [0.0, 0.002960478, 0.0, 0.0]
    """
    lam, converged, _ = _msmwc.dense_weights(st.G, st.Q, st.eta, st.logpi, st.b, st.w, st.lam[0], c)
    st.lam[0] = lam
    if not converged:
        st.capped[0] += 1
    return lam


@kernel
def draw_new():
    """An empty Draw (points, probs float64[2]; buckets int64[2]).

    Returns
    -------
    Draw

    Examples
    --------
    >>> draw_new().probs.tolist()
    [0.0, 0.0]
    """
    # pw and pwy given (empty: no expected-count table): inside njit a namedtuple's defaults do
    # not apply, and the engine's rounds read both fields
    return Draw(np.zeros(2), np.zeros(2), np.zeros(2, dtype=np.int64), np.zeros(0), np.zeros(0))


@kernel
def game_new(q):
    """(table, out, hist) of a fresh online game over the stated values q.

    Parameters
    ----------
    q : ndarray of float64
        The stated values, increasing (copied).

    Returns
    -------
    table : Table
        The public record, empty.
    out : Draw
        Empty.
    hist : History
        History(0, 0, -1).

    Examples
    --------
    >>> table, out, hist = game_new(np.linspace(0, 1, 5))
    >>> table.den, hist
    (4, History(t=0, ones=0, prev_y=-1))
    """
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
    ends). Buckets are 0-based, I_b = (b/m, (b+1)/m]. O(log m).

    Parameters
    ----------
    c : ndarray of float64, shape (m,)
        The weights.
    delta : float
        The distance of the second raw point past the bucket boundary.
    out : Draw
        Written.

    Returns
    -------
    int
        lo.

    Examples
    --------
    >>> out = draw_new()
    >>> step1(np.array([-1.0, -0.5, 0.5, 1.0]), 0.01, out)
    1
    >>> out.points.tolist(), out.probs.tolist(), out.buckets.tolist()
    ([0.5, 0.51], [0.5, 0.5], [1, 2])
    """
    return _step1.step1_from_c(c, delta, out.points, out.probs, out.buckets)


@kernel
def step1_bracket(v, out):
    """Step 1's cases that need no weights, from the signs of v (c, or G, which has c's
    signs; Algorithm 1 passes the exact signs, exact_bias_new(m).sign): (lo, True) after writing a point mass into ``out``, or (lo, False) with
    v_lo < 0 < v_{lo+1}: then call step1_mix with the two buckets' weights. O(log m).

    Parameters
    ----------
    v : ndarray of float64, shape (m,)
        Values with the weights' signs.
    out : Draw
        Written when the case needs no weights.

    Returns
    -------
    lo : int
    done : bool

    Examples
    --------
    >>> out = draw_new()
    >>> step1_bracket(np.array([1.0, 1.0, 1.0, 1.0]), out), out.probs.tolist()
    ((-1, True), [1.0, 0.0])
    """
    return _step1.step1_point_mass(v, out.points, out.probs, out.buckets)


ExactBias = _step1.ExactBias


@kernel
def exact_bias_new(m):
    """The exact signs of step 1's biases G_b for m buckets (an ExactBias: sign float64[m] of
    -1, 0, +1, and the integers I, D with m G_b = I_b + (m D_b) delta). Step 1 decides on
    ``sign``: pass it to step1_bracket. O(m).

    Parameters
    ----------
    m : int
        Buckets.

    Returns
    -------
    ExactBias

    Examples
    --------
    >>> eb = exact_bias_new(4)
    >>> out = draw_new(); step1_mix(1, 4, 0.01, 1.0, out)
    >>> exact_bias_add(eb, out, 0, 1, 4, 0.01)
    >>> eb.sign.tolist()
    [0.0, -1.0, 0.0, 0.0]
    """
    return _step1.exact_bias(m)


@kernel
def exact_bias_add(eb, out, slot, y, m, delta):
    """Add the round (the drawn ``slot`` of step 1's distribution ``out``, outcome y) to the
    exact biases: G_b += ptilde - y without rounding (the raw points are a/m + e delta), and
    sign_b updated. O(1).

    Parameters
    ----------
    eb : ExactBias
        Updated in place.
    out : Draw
        Step 1's distribution of the round.
    slot : int
        The drawn slot, 0 or 1.
    y : int
        The outcome, 0 or 1.
    m : int
        Buckets.
    delta : float
        Step 1's delta.

    Returns
    -------
    None

    Examples
    --------
    See :func:`exact_bias_new`.
    """
    _step1.add_drawn(eb, out, slot, y, m, delta)


@kernel
def step1_mix(lo, m, delta, r, out):
    """Step 1's two-point distribution: (lo+1)/m with probability r, (lo+1)/m + delta with
    1 - r, in buckets lo and lo + 1; r = c_{lo+1} / (c_{lo+1} - c_lo). O(1).

    Parameters
    ----------
    lo : int
        The bucket below the sign change (from step1_bracket).
    m : int
        Buckets.
    delta : float
        Distance of the second point past the boundary.
    r : float
        The first point's probability.
    out : Draw
        Written.

    Returns
    -------
    None

    Examples
    --------
    >>> out = draw_new(); step1_mix(1, 4, 0.01, 0.25, out)
    >>> out.points.tolist(), out.probs.tolist()
    ([0.5, 0.51], [0.25, 0.75])
    """
    _step1.boundary_points(lo, m, delta, r, out.points, out.probs, out.buckets)


def forecaster_setup(name, horizon, seed=0, adversary=None, **params):
    """(state, table, out, hist, rng) of a built-in forecaster ("cdl", "kt", "foster",
    "frequency", "truthful"; or a plug-in) for a run of ``horizon`` rounds, as simulate and
    make_forecaster build them (same parameters, validated; the same generator for the same
    seed). Drive it in your loop with ``forecaster_<name>.forecast`` / ``.observe``,
    :func:`draw_slot` and :func:`settle`. Python only.

    Parameters
    ----------
    name : str or ForecasterSpec
        As :func:`fastcdl.online.make_forecaster` takes it.
    horizon : int
        T.
    seed : int, default 0
        Seeds the generator.
    adversary : str or tuple, optional
        For the forecasters that need it ("truthful").
    **params
        The forecaster's parameters.

    Returns
    -------
    state
        The forecaster's state.
    table : Table
    out : Draw
    hist : History
    rng : ndarray of uint64, shape (4,)
        The forecaster's generator.

    Raises
    ------
    ValidationError
        As :func:`fastcdl.online.make_forecaster`.

    Examples
    --------
    >>> state, table, out, hist, rng = forecaster_setup("frequency", 100, m=4)
    >>> table.q.tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    from fastcdl.online import make_forecaster

    f = make_forecaster(name, horizon=horizon, seed=seed, adversary=adversary, **params)
    return f.state, f.table, f.out, f.hist, seed_states(f.seed)[0]


# The metrics of a table were named as the front end's functions of (y_true, y_prob), with
# another signature; they are now <name>_of_table. The old names work for one release and warn
# once (DeprecationWarning), from Python and from inside a user's njit code alike (numba reads
# the module's attribute when it compiles the caller).
_RENAMED = {
    "cdl": "cdl_of_table",
    "vcdl": "vcdl_of_table",
    "ece": "ece_of_table",
    "k2": "k2_of_table",
    "ucal": "ucal_of_table",
    "decision_loss_curve": "decision_loss_curve_of_table",
    "cdl_monotone": "cdl_monotone_of_table",
    "vcdl_monotone": "vcdl_monotone_of_table",
    "cutoff_ce": "cutoff_ce_of_table",
    "atb": "atb_of_table",
    "smce": "smce_of_table",
}


def __getattr__(name):
    if name in _RENAMED:
        from fastcdl._deprecation import warn_deprecated

        warn_deprecated(f"fastcdl.kernels.{name}", f"fastcdl.kernels.{_RENAMED[name]}")
        return globals()[_RENAMED[name]]
    raise AttributeError(f"module 'fastcdl.kernels' has no attribute {name!r}")
