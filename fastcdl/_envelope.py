"""The decision-loss curve f and its envelope: numpy sorts, then one compiled linear pass.

The kernels of fastcdl/_kernels/envelope.py take the sorted breakpoints and the argsorts
of the ramps' ends; this module computes them with numpy (O(m log m)) and returns the
values metrics.py reports (docs/exact-cdl.md).

>>> import numpy as np
>>> cdl_curve(np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2]), 4)[0]
0.25
"""

from __future__ import annotations

import numpy as np

from fastcdl._kernels import envelope as _k
from fastcdl._kernels.sort import argsort_stable

_FIXED = np.array([0.0, 0.5, 1.0])


def _ro(*arrays):
    """Read-only views: every call site passes the same array types, so each kernel compiles once."""
    out = []
    for a in arrays:
        v = a.view()
        v.setflags(write=False)
        out.append(v)
    return out


# From this many values on the stable argsorts are fastcdl's (insertion, then radix sort:
# fastcdl._kernels.sort.argsort_stable, equal to numpy's stable argsort); numpy's took 2.5x
# a np.sort of twice as many floats at 10^6 frequencies (one-off timings on the machine of
# results/benchmarks/bucket-speed.md; cdl_report's ratio to that sort is in the file).
_OWN_ARGSORT_FROM = 1 << 12


def _argsort(x):
    return argsort_stable(x) if x.shape[0] >= _OWN_ARGSORT_FROM else np.argsort(x, kind="stable")


def _breakpoints(x, qhat, extra=None):
    """(b, ox, oq): sorted distinct breakpoints (-0.0 read as 0.0) and stable argsorts of x and qhat."""
    parts = [x, qhat, _FIXED] if extra is None else [x, qhat, _FIXED, extra]
    b = np.unique(np.concatenate(parts) + 0.0)
    return b, _argsort(x), _argsort(qhat)


def cdl_curve(q, n, s, T):
    """(cdl, j1, j2, b, f_left, f_right, vcdl, jv) of a table sorted by q. O(m log m)."""
    qhat = s / n
    b, ox, oq = _breakpoints(q, qhat)
    args = _ro(q, qhat, n, s, np.ones(q.shape[0]), b, ox, oq)
    value, j1, j2, f_left, f_right, vmax, jv = _k.cdl_kernel(*args, T)
    return value, j1, j2, b, f_left, f_right, vmax, jv


def ucal_value(q, n, s, T) -> float:
    """UCal = 2 gbar(1/2) of a table (the buckets' ramps and, negated, those from pbar). O(m log m)."""
    m = q.shape[0]
    qhat = s / n
    pbar = np.cumsum(s)[-1] / T  # a sequential sum: the same rounding as a loop over buckets
    x = np.concatenate([np.asarray(q, dtype=np.float64), np.full(m, pbar)])
    qh = np.concatenate([qhat, qhat])
    # counts keep their dtype: coef * n is the same float whether n is int64 or float64
    nn = np.concatenate([n, n])
    ss = np.concatenate([s, s])
    coef = np.concatenate([np.ones(m), -np.ones(m)])
    b, ox, oq = _breakpoints(x, qh)
    return _k.ucal_kernel(*_ro(x, qh, nn, ss, coef, b, ox, oq), T)


def v_curve(q, n, s, T, mus):
    """f(mu) at each kink of ``mus`` (the tie rule of docs/metrics.md). O((m + k) log(m + k))."""
    qhat = s / n
    b, ox, oq = _breakpoints(q, qhat, mus)
    f_left, _ = _k.sweep(*_ro(q, qhat, n, s, np.ones(q.shape[0]), b, ox, oq), T)
    return f_left[np.searchsorted(b, mus + 0.0)]
