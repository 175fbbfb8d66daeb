"""Discretised minimax solver for 2 x K games (docs/algorithm1.md).

The forecaster picks one of K points, the adversary y in {0, 1}; A[j, y] is the
forecaster's loss. If the adversary plays y = 1 with probability lam, point j loses the
line A[j, 0] + lam (A[j, 1] - A[j, 0]); the value is max over lam in [0, 1] of the lower
envelope of the K lines. The envelope is built by the convex-hull trick after sorting the
lines by slope, O(K log K); at its maximum two lines cross (slopes of opposite sign), and
mixing them so that the adversary is indifferent is an optimal strategy with at most two
points.
"""

import numpy as np
from fastcdl._compiled._jit import kernel


@kernel
def _redundant(a, b, i1, i2, i3):
    """Line i2 never attains the minimum once i1 and i3 (slopes b1 > b2 > b3) are present."""
    return (a[i3] - a[i1]) * (b[i1] - b[i2]) <= (a[i2] - a[i1]) * (b[i1] - b[i3])


@kernel
def _pure(j, a, b, out_idx, out_prob):
    """Play point j alone; its guaranteed loss is the larger end of its line on [0, 1]."""
    out_idx[0] = j
    out_idx[1] = -1
    out_prob[0] = 1.0
    out_prob[1] = 0.0
    return max(a[j], a[j] + b[j])


@kernel
def minimax_2xk(A, out_idx, out_prob):
    """Solve the game with loss matrix A (K, 2). O(K log K).

    Parameters
    ----------
    A : ndarray of float64, shape (K, 2)
        A[j, y], the forecaster's loss at row j and outcome y.
    out_idx : ndarray of int64, shape (2,)
        Written: up to two rows (out_idx[1] = -1 for a pure strategy).
    out_prob : ndarray of float64, shape (2,)
        Written: their probabilities.

    Returns
    -------
    value : float
        The forecaster's guaranteed loss max_y E[A[j, y]].
    lam : float
        The adversary's optimal P(y = 1).

    Examples
    --------
    >>> idx, prob = np.full(2, -1), np.zeros(2)
    >>> minimax_2xk(np.array([[0.0, 1.0], [1.0, 0.0]]), idx, prob)
    (0.5, 0.5)
    >>> idx.tolist(), prob.tolist()
    ([0, 1], [0.5, 0.5])
    """
    K = A.shape[0]
    return minimax_2xk_into(
        A,
        out_idx,
        out_prob,
        np.empty(K),
        np.empty(K),
        np.empty(K, dtype=np.int64),
        np.empty(K, dtype=np.int64),
        np.empty(K, dtype=np.int64),
    )


@kernel
def _order_by_slope(b, K, order, tmp):
    """order[:K] = the indices of b[:K] sorted by b, largest first, ties in index order (a
    stable bottom-up merge sort, tmp as the second buffer; the permutation of a stable sort
    is unique, so it equals np.argsort(-b[:K], kind="mergesort")). O(K log K), no allocation."""
    for j in range(K):
        order[j] = j
    src = order
    dst = tmp
    in_tmp = False  # where the sorted runs are
    width = 1
    while width < K:
        for lo in range(0, K, 2 * width):
            mid = min(lo + width, K)
            hi = min(lo + 2 * width, K)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if b[src[j]] > b[src[i]]:  # the right run's first is strictly larger: it goes first
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for j in range(K):
            order[j] = tmp[j]


@kernel
def minimax_2xk_into(A, out_idx, out_prob, a, b, order, tmp, hull):
    """:func:`minimax_2xk` with its work arrays given (a, b float64, order, tmp, hull int64,
    each of length K): it allocates nothing, so loops compiled without numba's reference
    counting (the cdl forecaster's, step="minimax") can call it. The same results."""
    K = A.shape[0]
    for j in range(K):
        a[j] = A[j, 0]
        b[j] = A[j, 1] - A[j, 0]
    _order_by_slope(b, K, order, tmp)
    H = 0
    for t in range(K):
        j = order[t]
        if H > 0 and b[hull[H - 1]] == b[j]:
            if a[j] >= a[hull[H - 1]]:
                continue
            H -= 1
        while H >= 2 and _redundant(a, b, hull[H - 2], hull[H - 1], j):
            H -= 1
        hull[H] = j
        H += 1
    # x_i: where hull line i takes over from line i - 1 (increasing in i)
    first_down = H
    for i in range(H):
        if b[hull[i]] <= 0.0:
            first_down = i
            break
    kink = np.inf
    if 0 < first_down < H:
        L = hull[first_down - 1]
        R = hull[first_down]
        kink = (a[R] - a[L]) / (b[L] - b[R])
    elif first_down == 0:
        kink = -np.inf
    if kink <= 0.0:
        # envelope decreasing on [0, 1]: the line active just right of 0, played pure
        i = 0
        while i + 1 < H and (a[hull[i + 1]] - a[hull[i]]) / (b[hull[i]] - b[hull[i + 1]]) <= 0.0:
            i += 1
        return _pure(hull[i], a, b, out_idx, out_prob), 0.0
    if kink >= 1.0:
        # envelope increasing on [0, 1]: the line active just left of 1, played pure
        i = 0
        while i + 1 < H and (a[hull[i + 1]] - a[hull[i]]) / (b[hull[i]] - b[hull[i + 1]]) < 1.0:
            i += 1
        return _pure(hull[i], a, b, out_idx, out_prob), 1.0
    L = hull[first_down - 1]
    R = hull[first_down]
    if b[R] == 0.0:
        return _pure(R, a, b, out_idx, out_prob), kink
    alpha = -b[R] / (b[L] - b[R])
    out_idx[0] = L
    out_idx[1] = R
    out_prob[0] = alpha
    out_prob[1] = 1.0 - alpha
    loss0 = alpha * A[L, 0] + (1.0 - alpha) * A[R, 0]
    loss1 = alpha * A[L, 1] + (1.0 - alpha) * A[R, 1]
    return max(loss0, loss1), kink
