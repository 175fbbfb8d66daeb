"""The worst task of a CDL: payoffs in [0, 1] of the one- or two-kink task that attains it (docs/exact-cdl.md).

From the envelope's hull vertices around 1/2, a V task or a three-action task, with its rows
ordered and its entries lowered by ulps so that the exact best responses at the kinks are the
ones attaining the value. Shared by fastcdl.exact.cdl_report (and CDLReport.task) and
fastcdl.sample.cdl_monotone_report.
"""

from __future__ import annotations

import itertools
import struct
import warnings
from fractions import Fraction

import numpy as np

from fastcdl._compiled.decisions import best_response


class CertificateWarning(UserWarning):
    """:func:`cdl_report` could not give its worst task in float64 payoffs that attain the CDL.

    A kink closer to 0 or 1 than payoffs in [0, 1] can resolve (about 1e-16); a kink at a
    prediction with another prediction that close beside it (two predictions an ulp or a few
    apart: the task's indifference point, set by float64 payoffs, cannot fall between them); or
    a tie at a kink that lowering entries by ulps could not break. The reported value is exact
    all the same; the report's ``exact`` is False.
    """


def worst_task(b, j1, j2, side):
    """The worst task from the envelope's hull vertices j1, j2 around 1/2 in the breakpoints b
    (j1 == j2: the V task at 1/2) and ``side(j)`` ("left" | "right") of each kink's value:
    (kinks, weights, sides, payoff, settled), as in docs/exact-cdl.md. Shared by cdl_report
    and the monotone report."""
    if j1 == j2:
        sides = (side(j1),)
        return np.array([0.5]), np.array([2.0]), sides, _v_task(sides[0]), True
    mu1, mu2 = float(b[j1]), float(b[j2])
    c1 = (2.0 * mu2 - 1.0) / (mu2 - mu1)
    c2 = (1.0 - 2.0 * mu1) / (mu2 - mu1)
    sides = (side(j1), side(j2))
    payoff, settled = three_action_task(mu1, mu2, c1, c2, sides)
    return np.array([mu1, mu2]), np.array([c1, c2]), sides, payoff, settled


def _v_task(side: str) -> np.ndarray:
    """The V task with kink 1/2 and weight 2; ties at 1/2 fall on the side attaining the value."""
    left, right = [1.0, 0.0], [0.0, 1.0]
    return np.array([right, left] if side == "left" else [left, right])


V_TASK = np.array([[1.0, 0.0], [0.0, 1.0]])


def ordered_v_task(side: str) -> np.ndarray:
    """The V task with kink 1/2, rows [low, high]; at p = 1/2 'high' when side is "left"
    (its tie broken by lowering the other action's payoff by an ulp), else 'low'."""
    u = V_TASK.copy()
    if side == "left":
        u[0, 0] = np.nextafter(1.0, 0.0)
    return u


def _three_actions(mu1, mu2, c1, c2):
    """The actions [a0, a1, a2] of c1 V_mu1 + c2 V_mu2 from low to high beliefs, before ties
    are broken (three_action_task)."""
    # B - c1 mu1 = c2 mu2 and c1 (1 - mu1) = A - c2 (1 - mu2); the product forms are
    # nonnegative by construction, and min() only removes an ulp of rounding above 1.
    return [1.0, 0.0], [min(1.0, c2 * mu2), min(1.0, c1 * (1.0 - mu1))], [0.0, 1.0]


def stated_actions(mu1: float, mu2: float):
    """(actions [a0, a1, a2], weights (c1, c2)) of the three-action task with kinks mu1 < mu2, as
    the report states them: computed in exact rational arithmetic from the kinks' shortest
    decimal forms (``repr``: 0.6, not the binary float just below it) and rounded once, so that
    kinks 0 and 0.6 give the weight 1/3 as 0.3333333333333333, not 0.33333333333333326 as
    float arithmetic gives. The float task of :func:`three_action_task` differs from these
    entries by an ulp or two at most.

    >>> stated_actions(0.0, 0.6)[1]
    (0.3333333333333333, 1.6666666666666667)
    """
    m1, m2 = Fraction(repr(float(mu1))), Fraction(repr(float(mu2)))
    c1 = (2 * m2 - 1) / (m2 - m1)
    c2 = (1 - 2 * m1) / (m2 - m1)
    middle = [float(min(Fraction(1), c2 * m2)), float(min(Fraction(1), c1 * (1 - m1)))]
    return [[1.0, 0.0], middle, [0.0, 1.0]], (float(c1), float(c2))


def _ulps_below(x: float, k: int) -> float:
    """The float k steps below x >= 0 toward 0 (k applications of np.nextafter(x, 0.0)), 0.0
    once there, in O(1): the bit patterns of nonnegative floats are ordered as the floats.

    >>> _ulps_below(1.0, 1) == float(np.nextafter(1.0, 0.0)), _ulps_below(5e-324, 3), _ulps_below(0.5, 2**80)
    (True, 0.0, 0.0)
    """
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    return struct.unpack("<d", struct.pack("<q", max(0, bits - k)))[0]


def three_action_task(mu1, mu2, c1, c2, sides, order=None) -> np.ndarray:
    """Payoff matrix of c1 V_mu1 + c2 V_mu2 (docs/exact-cdl.md), rows ordered so ties attain the value.

    Actions from left to right: a0 = [B, 0], a1 = [B - c1 mu1, c1 (1 - mu1)], a2 = [0, A]
    with A = B = 1 at the optimum. At a kink the value is f(mu) ("left": the decision maker
    at p = mu must take the action of the piece to the right) or f(mu+) (the piece to the
    left). Rows are ordered to break exact ties that way; where rounding of the entries
    moved a kink off mu, the entry that moves only that kink is lowered by ulps until the
    exact best response at mu is the intended one. Returns (payoff, settled): settled is
    False when the search gave up (it warns). ``order`` (a permutation of 0, 1, 2) fixes the
    rows instead: (0, 1, 2) lists the actions from low to high beliefs, and the lowering of
    entries then also breaks the exact ties that the row order does not.
    """
    a0, a1, a2 = _three_actions(mu1, mu2, c1, c2)
    want1 = 1 if sides[0] == "left" else 0  # action wanted at p = mu1
    want2 = 2 if sides[1] == "left" else 1  # action wanted at p = mu2
    # (x, y) in `first` means row x must precede row y: ties go to the earlier row.
    first = [(1, 0) if want1 == 1 else (0, 1), (2, 1) if want2 == 2 else (1, 2)]
    if order is None:
        order = next(o for o in itertools.permutations(range(3)) if all(o.index(x) < o.index(y) for x, y in first))
    u = np.array([[a0, a1, a2][a] for a in order])
    row = {a: order.index(a) for a in range(3)}
    # which entry to lower (row, column) to move the best response at a kink toward `want`
    lower = {
        (1, 1): (row[0], 0),  # kink 1 moves left: a1 wins at mu1
        (1, 0): (row[1], 0),  # kink 1 moves right: a0 wins at mu1
        (2, 2): (row[1], 1),  # kink 2 moves left: a2 wins at mu2
        (2, 1): (row[2], 1),  # kink 2 moves right: a1 wins at mu2
    }
    step = 1
    for _ in range(_TIE_ROUNDS):
        got1 = order[best_response(u, mu1, 1.0)]
        got2 = order[best_response(u, mu2, 1.0)]
        if got1 == want1 and got2 == want2:
            return u, True
        for k, got, want in ((1, got1, want1), (2, got2, want2)):
            if got != want:
                r, c = lower[(k, want)]
                u[r, c] = _ulps_below(float(u[r, c]), step)
        step *= 2
    got1 = order[best_response(u, mu1, 1.0)]
    got2 = order[best_response(u, mu2, 1.0)]
    settled = got1 == want1 and got2 == want2
    if not settled:
        warnings.warn(
            CertificateWarning(
                f"cdl_report: after {_TIE_ROUNDS} rounds of lowering payoff entries the worst task's "
                f"best responses at its kinks mu1 = {mu1!r}, mu2 = {mu2!r} are actions {got1}, {got2} "
                f"instead of {want1}, {want2}; cfdl(..., payoff=report.payoff) may differ from the value"
            ),
            stacklevel=3,
        )
    return u, settled


# Rounds of the tie-breaking search in three_action_task (each doubles the number of ulps an
# entry is lowered by; rounding moves a kink by an ulp or two, so one or two rounds do).
_TIE_ROUNDS = 200
