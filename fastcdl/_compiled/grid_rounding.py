"""Rounding weighted points onto a uniform grid of [0, 1] with linear weights (smECE's grid,
fastcdl/smooth_ece.py), in one pass over the points.

A point q with weight w on the grid of M points 0, 1/(M - 1), ..., 1 gives w (1 - f) to the
grid point i / (M - 1) below it and w f to the one above, where x = q (M - 1), i = floor(x)
(M - 2 for q = 1) and f = x - i. numpy does this in four passes and four bincounts per grid;
this kernel reads each point once for all three weights (count, residual, outcome).
"""

import numpy as np

from fastcdl._compiled._jit import kernel


@kernel
def round_to_grid(q, n, r, s, M):
    """Rows (count, residual, outcome) of the linear rounding of the points q onto M grid points,
    weights n (an empty n: one per point), r and s. O(len(q) + M).

    >>> import numpy as np
    >>> g = round_to_grid(np.array([0.25, 1.0]), np.empty(0), np.array([0.25, 1.0]), np.zeros(2), 3)
    >>> g[0].tolist(), g[1].tolist()
    ([0.5, 0.5, 1.0], [0.125, 0.125, 1.0])
    """
    out = np.zeros((3, M))
    unit = n.shape[0] == 0
    top = M - 2
    for k in range(q.shape[0]):
        x = q[k] * (M - 1)
        i = min(int(x), top)
        f = x - i
        w = 1.0 if unit else n[k]
        out[0, i] += w - w * f
        out[0, i + 1] += w * f
        out[1, i] += r[k] - r[k] * f
        out[1, i + 1] += r[k] * f
        out[2, i] += s[k] - s[k] * f
        out[2, i + 1] += s[k] * f
    return out
