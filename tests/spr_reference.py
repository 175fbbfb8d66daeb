"""A slow reference of the spr forecaster (sign preservation with reuse, Dai & Fishelson 2026),
written from the pseudo-code of docs/spr.md (shared notes: online-literature.md) as plain
Python objects: the labeler A/B builds its whole tree eagerly as written (A's constructor
makes its B, B's its two kids, phase 2 its shifted A), the board of every game is a list of
signs, and the removal step scans every cell of every game in order. Nothing here is taken
from fastcdl/online/forecasters/spr.py; tests compare the two round by round.
"""

# ruff: noqa: E741 -- l is the notes' name: a range's left end, a game's parity

from __future__ import annotations

import math

EPS = 0.0342855641
RHO = 0.0164237243
KAPPA = 0.4148723339
DELTA = 9.4880928733


class A:
    """A(l, r, b): the labeler of cells l..r with bias b."""

    def __init__(self, l, r, b):
        self.l, self.r, self.b = l, r, b
        self.count = 0
        if l < r:
            self.cur = B(l, r, b, 0)

    def label(self, s):
        if self.l == self.r:
            sigma = 1 if self.b >= 0 else -1
        else:
            sigma = self.cur.label(s)
            if sigma is None:
                self.cur = B(self.l, self.r, self.b, self.count)
                sigma = self.cur.label(s)
        self.count += 1
        return sigma


class B:
    """B(l, r, b, tau): phase 1 hands requests to the halves' labelers; phase 2 to a shifted one."""

    shifted_made = 0  # shifted labelers made so far (all instances), for the coverage test

    def __init__(self, l, r, b, tau):
        self.l, self.r, self.b, self.tau = l, r, b, tau
        self.mid = (l + r) // 2
        self.kids = [A(l, self.mid, b), A(self.mid + 1, r, b)]
        self.c = [0, 0]
        self.phase = 1

    def label(self, s):
        if self.phase == 1:
            h = 0 if s <= self.mid else 1
            self.c[h] += 1
            sigma = self.kids[h].label(s)
            th, tl = max(self.c), min(self.c)
            if DELTA * tl >= self.tau and RHO * th <= tl:
                self.L = math.floor(KAPPA * th)
                self.tc = 0
                self.phase = 2
                if self.L > 0:
                    B.shifted_made += 1
                    self.shifted = A(self.l, self.r, self.b + 1 if h == 0 else self.b - 1)
            return sigma
        if self.tc == self.L:
            return None
        self.tc += 1
        return self.shifted.label(s)


class Game:
    """G(i, j, l): 2^i cells, cell c (1-based) the interval [m, m + 1) 2^-(i+1), m = 2(c - 1) + l;
    a sign per cell (0 empty), a bias record per sign, and the labeler A(1, 2^i, 0)."""

    def __init__(self, i, j, l):
        self.i, self.j, self.l = i, j, l
        self.n = 2**i
        self.w = 2.0 ** -(i + 1)
        self.sign = [0] * (self.n + 1)
        self.rec = [{1: 0.0, -1: 0.0} for _ in range(self.n + 1)]
        self.labeler = A(1, self.n, 0)
        self.erased = []  # (cell, sign, record) of every erasure, for the invariant test

    def left(self, c):
        return (2 * (c - 1) + self.l) * self.w

    def right(self, c):
        return (2 * (c - 1) + self.l + 1) * self.w

    def point(self, s):
        for c in range(1, self.n + 1):
            if (c < s and self.sign[c] == -1) or (c > s and self.sign[c] == 1):
                self.erased.append((c, self.sign[c], self.rec[c][self.sign[c]]))
                self.sign[c] = 0
        self.sign[s] = self.labeler.label(s)


def levels(T):
    """(tau, i0, h): tau the least integer with 2^tau >= T, i0 = floor(tau / (3 + 2 eps)), h = tau - 2 i0."""
    tau = 0
    while 2**tau < T:
        tau += 1
    i0 = math.floor(tau / (3 + 2 * EPS))
    return tau, i0, tau - 2 * i0


class SPRReference:
    """The forecaster: predict(e) states the round's prediction given the true mean e."""

    def __init__(self, T, tau=None):
        """Levels of T = 2^tau; tau the least integer with 2^tau >= T unless given."""
        tau, i0, h = levels(T if tau is None else 2**tau)
        self.i0, self.h = i0, h
        self.pairs = [(i, j) for i in range(i0, i0 + h) for j in (range(i0 + 1, i0 + h + 1) if i == i0 else [i0 + h])]
        self.games = {(i, j, l): Game(i, j, l) for (i, j) in self.pairs for l in (0, 1)}
        self.R = 2 ** (i0 + h + 1)
        self.step = None  # which step stated the last prediction: "removal", "placement" or "fallback"

    def predict(self, e):
        # (1) removal
        for i, j in self.pairs:
            for l in (0, 1):
                g = self.games[(i, j, l)]
                for c in range(1, g.n + 1):
                    sigma = g.sign[c]
                    if sigma == 0:
                        continue
                    r = g.rec[c][sigma]
                    if sigma == 1 and r > 1 and e <= g.left(c):
                        p = g.left(c)
                    elif sigma == -1 and r < -1 and e >= g.right(c):
                        p = g.right(c)
                    else:
                        continue
                    g.rec[c][sigma] += e - p
                    self.step = "removal"
                    return p
        # (2) placement
        for i, j in self.pairs:
            m = min(math.floor(2 ** (i + 1) * e), 2 ** (i + 1) - 1)
            l = m % 2
            c = (m - l) // 2 + 1
            g = self.games[(i, j, l)]
            active = g.rec[c][g.sign[c]] if g.sign[c] != 0 else 0.0
            if abs(active) < 2.0 ** (j - i):
                if g.sign[c] == 0:
                    g.point(c)
                sigma = g.sign[c]
                p = g.left(c) if sigma == 1 else g.right(c)
                g.rec[c][sigma] += e - p
                self.step = "placement"
                return p
        # (3) the nearest multiple of 1/R, ties down
        k = math.ceil(e * self.R - 0.5)
        self.step = "fallback"
        return k / self.R
