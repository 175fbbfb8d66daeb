"""Shared by the adversaries that keep a running summary of the public table (lookahead,
cdlahead) against K-point forecasters: which bucket gained the previous round.

Against a two-point forecaster they remember the round's two slots (bucket, n, s) and find
the one whose count moved. A K-point round has up to K slots, more than their fixed scratch
memory holds, so instead they remember one number, the weighted count W = sum_b (b + 1) n_b
of the table: a round adds 1 to one n_b, so the next round's W minus the remembered one is
b + 1, and that bucket's counts before the round were (n_b - 1, s_b - prev_y). Exact while
m T < 2^53 (W is an integer held in a float64 slot). O(m) a round.
"""

from fastcdl._compiled._jit import kernel


@kernel(inline="always")
def weighted_rounds(table):
    """W = sum_b (b + 1) n_b of the public table, an integer. O(m)."""
    w = 0
    for b in range(table.n.shape[0]):
        w += (b + 1) * table.n[b]
    return w


@kernel(inline="always")
def gained_bucket(table, remembered):
    """(b, W): the bucket that gained a round since W was ``remembered`` (-1 when none did:
    the same round asked twice), and the table's W now."""
    w = weighted_rounds(table)
    b = w - int(remembered) - 1
    if b < 0 or b >= table.n.shape[0]:
        return -1, w
    return b, w
