"""Slow, plain-Python references for the baseline forecasters and the adversaries.

Written from the definitions (docs/algorithm1.md and the module docstrings of
fastcdl/online/forecasters and fastcdl/online/adversaries), not from the kernels: loops over
rounds, lists for the public table, Python ints and :class:`fractions.Fraction` wherever a
comparison or a sign decides the run. Only numpy's SeedSequence is used (to derive the
generators' starting states).

Conventions that the definitions fix and the run depends on:

- generators: xoshiro256**, the forecaster's from child 0 and the adversary's from child 1
  of ``numpy.random.SeedSequence(seed).spawn(2)`` (4 words of ``generate_state``);
  uniform = (top 53 bits of the next output) * 2^-53;
- a stochastic adversary with P(y = 1) = p says y = 1 iff uniform < p (one uniform per
  round); greedy's fair coin is the same rule with p = 1/2 and is drawn only on a tie;
- the forecaster publishes one or two entries (raw point, probability, bucket); the drawn
  slot is 1 iff the second entry has probability > 0 and uniform >= the first one's
  probability (no uniform for a point mass);
- the stated value of a bucket is an exact rational (j/m for foster, truthful, frequency;
  (b+1)/m for kt); the adversaries compute with it exactly and with the published (float)
  probabilities as exact rationals;
- truthful's "adversary's P(y = 1)" is the exact probability of uniform < p, and the nearest
  grid point is found in exact arithmetic.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

MASK64 = (1 << 64) - 1
HALF = Fraction(1, 2)


# -- generators -----------------------------------------------------------------------------
class Xoshiro256ss:
    """xoshiro256** (Blackman and Vigna) on Python ints."""

    def __init__(self, words):
        self.s = [int(w) & MASK64 for w in words]
        if not any(self.s):  # the all-zero state cannot be left; the engine maps it to (1, 0, 0, 0)
            self.s[0] = 1
        self.draws = 0

    @staticmethod
    def _rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK64

    def next(self):
        s = self.s
        result = (self._rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self._rotl(s[3], 45)
        return result

    def uniform(self):
        """A float in [0, 1): the top 53 bits of the next output times 2^-53 (exact)."""
        self.draws += 1
        return float(self.next() >> 11) * 2.0**-53


def streams(seed):
    """(forecaster's generator, adversary's generator): children 0 and 1 of SeedSequence(seed)."""
    children = np.random.SeedSequence(seed).spawn(2)
    return tuple(Xoshiro256ss(c.generate_state(4, dtype=np.uint64)) for c in children)


def bernoulli_probability(p):
    """The exact P(uniform < p) of the rule 'y = 1 iff uniform < p' (uniform on k 2^-53)."""
    scaled = Fraction(p) * 2**53
    k = min(max(math.ceil(scaled), 0), 2**53)
    return Fraction(k, 2**53)


def nearest(x, m):
    """The j in 0..m nearest to x m (x exact), ties upward."""
    return min(max(math.floor(Fraction(x) * m + HALF), 0), m)


# -- adversaries ----------------------------------------------------------------------------
# respond(t, prev_y, entries, stated, n, s, rng): t is the round (1-based), prev_y the previous
# outcome (-1 before the first round), entries the published distribution as a list of
# (probability (float), bucket), stated the exact stated values per bucket, n and s the public
# counts per bucket. Returns y.


class Stochastic:
    """An adversary with a known P(y_t = 1) (a float, as the adversary computes it)."""

    def respond(self, t, prev_y, entries, stated, n, s, rng):
        return 1 if rng.uniform() < self.prob(t, prev_y) else 0


class Bernoulli(Stochastic):
    def __init__(self, p=0.5):
        self.p = float(p)

    def prob(self, t, prev_y):
        return self.p


class Drift(Stochastic):
    """P(y_t = 1) = 1/2 + amplitude sin(2 pi t / period), t = 1, 2, ...; period T/8 by default."""

    def __init__(self, T, amplitude=0.4, period=None):
        self.amplitude = float(amplitude)
        self.period = T / 8 if period is None else float(period)

    def prob(self, t, prev_y):
        return 0.5 + self.amplitude * math.sin(2 * math.pi * t / self.period)


class Markov(Stochastic):
    """Switch 0 -> 1 with probability p01, 1 -> 0 with p10; first outcome from the stationary law."""

    def __init__(self, p01=0.1, p10=0.1):
        self.p01 = float(p01)
        self.p10 = float(p10)

    def prob(self, t, prev_y):
        if prev_y == -1:
            total = self.p01 + self.p10
            return 0.5 if total == 0 else self.p01 / total
        if prev_y == 0:
            return self.p01  # P(switch to 1)
        return 1.0 - self.p10  # P(stay at 1)


class Contrarian:
    """y = 1 iff the expected stated prediction is below 1/2 (exact)."""

    def respond(self, t, prev_y, entries, stated, n, s, rng):
        mean = sum(Fraction(prob) * stated[b] for prob, b in entries)
        return 1 if mean < HALF else 0


class Greedy:
    """The y with the larger expected increase of sum_v |v n_v - s_v|; a fair coin on a tie.

    The round adds one count (and y) at the drawn stated value only, so the increase of the
    sum is the increase of that one term; the expectation is over the published distribution.
    """

    @staticmethod
    def increase(v, n, s, y):
        """|bias| after a round at stated value v with outcome y, minus |bias| before (exact)."""
        return abs(v * (n + 1) - (s + y)) - abs(v * n - s)

    def expected_increase(self, y, entries, stated, n, s):
        return sum(Fraction(prob) * self.increase(stated[b], n[b], s[b], y) for prob, b in entries)

    def respond(self, t, prev_y, entries, stated, n, s, rng):
        up = self.expected_increase(1, entries, stated, n, s)
        down = self.expected_increase(0, entries, stated, n, s)
        if up != down:
            return 1 if up > down else 0
        return 1 if rng.uniform() < 0.5 else 0


class SignPreserve:
    """y ~ Bernoulli(c): c the midpoint of the gap between stated values (0 and 1 closing the
    ends) that leaves the least bias on the wrong side of c (exact; see signpreserve's docstring).

    bias_v = v n_v - s_v; gap j = (stated[j-1], stated[j]) with stated[-1] := 0, stated[m] := 1;
    its flippable bias is the positive bias of the values below its midpoint plus the negative
    bias of those above. Tied: within 1e-9 (1 + sum |bias|) of the least; of those, the lowest
    whose midpoint's distance to the mean stated prediction is within 1e-12 of the least.
    """

    REL_TIE = Fraction(1e-9)
    DIST_TIE = Fraction(1e-12)

    def target(self, entries, stated, n, s):
        m = len(stated)
        bias = [stated[i] * n[i] - s[i] for i in range(m)]
        mean = sum(Fraction(prob) * stated[b] for prob, b in entries)
        edges = [Fraction(0)] + list(stated) + [Fraction(1)]
        gaps = []  # (flippable bias, midpoint) of each non-empty gap, lowest first
        for j in range(m + 1):
            lo, hi = edges[j], edges[j + 1]
            if hi <= lo:
                continue
            mid = (lo + hi) / 2
            wrong = sum(max(b, 0) for v, b in zip(stated, bias) if v < mid)
            wrong += sum(max(-b, 0) for v, b in zip(stated, bias) if v > mid)
            gaps.append((wrong, mid))
        tol = self.REL_TIE * (1 + sum(abs(b) for b in bias))
        least = min(w for w, _ in gaps)
        tied = [mid for w, mid in gaps if w <= least + tol]
        near = min(abs(mid - mean) for mid in tied)
        return next(mid for mid in tied if abs(mid - mean) <= near + self.DIST_TIE)

    def respond(self, t, prev_y, entries, stated, n, s, rng):
        return 1 if rng.uniform() < self.target(entries, stated, n, s) else 0


def make_adversary(name, T, **params):
    if name == "bernoulli":
        return Bernoulli(**params)
    if name == "drift":
        return Drift(T, **params)
    if name == "markov":
        return Markov(**params)
    if name == "contrarian":
        return Contrarian(**params)
    if name == "greedy":
        return Greedy(**params)
    if name == "signpreserve":
        return SignPreserve(**params)
    raise KeyError(name)


# -- forecasters ----------------------------------------------------------------------------
# distribution(t, prev_y, ones, n, s) -> list of (raw point (float), probability (float),
# bucket); observe(point, bucket, y, n, s) runs before the round enters the table n, s.


def ceil_cbrt(T):
    m = 1
    while m**3 < T:
        m += 1
    return m


def ceil_sqrt(T):
    m = 0
    while m * m < T:
        m += 1
    return m


def bisect(values):
    """Adjacent lo, lo + 1 with values[lo] < 0 <= values[lo + 1], by bisection from the ends.

    Needs values[0] < 0 < values[-1]; mid = floor((lo + hi) / 2) (which pair is found
    depends on it when the signs are not monotone).
    """
    lo, hi = 0, len(values) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if values[mid] < 0:
            lo = mid
        else:
            hi = mid
    return lo, hi


class Grid:
    """Stated values j/m, j = 0..m; the raw point is the stated value."""

    def __init__(self, m):
        self.m = m
        self.stated = [Fraction(j, m) for j in range(m + 1)]

    def point(self, j, prob=1.0):
        return (float(self.stated[j]), prob, j)

    def observe(self, point, b, y, n, s):
        pass


class Foster(Grid):
    """Foster (1999): B_j = (j/m) n_j - s_j; 0 if B_0 >= 0, 1 if B_m <= 0, else mix lo, hi."""

    def __init__(self, T, m=None):
        super().__init__(ceil_cbrt(T) if m is None else m)

    def distribution(self, t, prev_y, ones, n, s):
        m = self.m
        B = [self.stated[j] * n[j] - s[j] for j in range(m + 1)]
        if B[0] >= 0:
            return [self.point(0)]
        if B[m] <= 0:
            return [self.point(m)]
        lo, hi = bisect(B)
        if B[hi] == 0:
            return [self.point(hi)]
        r = float(B[hi] / (B[hi] - B[lo]))  # P(lo): B_hi / (B_hi - B_lo), rounded once
        return [self.point(lo, r), self.point(hi, 1.0 - r)]


class Truthful(Grid):
    """The grid point nearest to the adversary's P(y_t = 1) (exactly, ties upward)."""

    def __init__(self, T, adversary, m=None):
        super().__init__(max(2, ceil_sqrt(T)) if m is None else m)
        self.adversary = adversary

    def distribution(self, t, prev_y, ones, n, s):
        P = bernoulli_probability(self.adversary.prob(t, prev_y))
        return [self.point(nearest(P, self.m))]


class Frequency(Grid):
    """The grid point nearest to the running mean of y (1/2 before any round), ties upward."""

    def __init__(self, T, m=None):
        super().__init__(max(2, ceil_sqrt(T)) if m is None else m)

    def distribution(self, t, prev_y, ones, n, s):
        mean = HALF if t == 1 else Fraction(ones, t - 1)
        return [self.point(nearest(mean, self.m))]


def kt_default_m(T, m_scale=1.0):
    """Algorithm 1's m = max(2, ceil(m_scale sqrt(T) / ln T)), 2 for T < 3."""
    return 2 if T < 3 else max(2, math.ceil(m_scale * math.sqrt(T) / math.log(T)))


class KT:
    """Algorithm 1's step 1 with a Krichevsky-Trofimov bettor per bucket.

    Buckets b = 0..m-1, I_0 = [0, 1/m], I_b = (b/m, (b+1)/m], stated (b+1)/m; raw points
    0, 1, (b+1)/m and (b+1)/m + delta: the rationals a/m plus delta (the float given, exactly).
    G_b (the sum of raw point minus outcome) is their exact sum, so it is exactly 0 where a
    float sum would leave a residue of about 1e-16 (e.g. -1 + 7 fl(1/7)), and step 1's
    decisions (signs, G = 0) follow it. The wealth W_b is kept in 60-digit decimal; c_b =
    G_b / (n_b + 1) W_b, and P(lo) = c_hi / (c_hi - c_lo) is rounded once to a float.
    """

    def __init__(self, T, m=None, m_scale=1.0, delta=None):
        self.m = kt_default_m(T, m_scale) if m is None else m
        self.delta = min(1 / T, 1 / self.m) if delta is None else float(delta)
        self.stated = [Fraction(b + 1, self.m) for b in range(self.m)]
        self.G = [Fraction(0)] * self.m
        self.exact = {}  # this round's published points -> the rationals they stand for
        with localcontext() as ctx:
            ctx.prec = 60
            self.W = [Decimal(1) / Decimal(self.m)] * self.m

    @staticmethod
    def _dec(x):
        x = Fraction(x)
        return Decimal(x.numerator) / Decimal(x.denominator)

    def c(self, b, n):
        with localcontext() as ctx:
            ctx.prec = 60
            return self._dec(self.G[b] / (n[b] + 1)) * self.W[b]

    def distribution(self, t, prev_y, ones, n, s):
        m, G = self.m, self.G
        if G[0] >= 0:
            self.exact = {0.0: Fraction(0)}
            return [(0.0, 1.0, 0)]
        if G[m - 1] <= 0:
            self.exact = {1.0: Fraction(1)}
            return [(1.0, 1.0, m - 1)]
        lo, hi = bisect(G)
        if G[hi] == 0:
            self.exact = {(hi + 1) / m: Fraction(hi + 1, m)}
            return [((hi + 1) / m, 1.0, hi)]  # the right end of I_hi
        with localcontext() as ctx:
            ctx.prec = 60
            c_lo, c_hi = self.c(lo, n), self.c(hi, n)
            r = float(c_hi / (c_hi - c_lo))
        edge = (lo + 1) / m  # the right end of I_lo; edge + delta lies just inside I_hi
        self.exact = {edge: Fraction(lo + 1, m), edge + self.delta: Fraction(lo + 1, m) + Fraction(self.delta)}
        return [(edge, r, lo), (edge + self.delta, 1.0 - r, hi)]

    def observe(self, point, b, y, n, s):
        g = self.exact[point] - y
        with localcontext() as ctx:
            ctx.prec = 60
            beta = self._dec(self.G[b] / (n[b] + 1))
            self.W[b] = self.W[b] * (1 + beta * self._dec(g))
        self.G[b] += g


def make_forecaster(name, T, adversary=None, **params):
    if name == "foster":
        return Foster(T, **params)
    if name == "kt":
        return KT(T, **params)
    if name == "truthful":
        return Truthful(T, adversary, **params)
    if name == "frequency":
        return Frequency(T, **params)
    raise KeyError(name)


# -- the game -------------------------------------------------------------------------------
def draw(entries, rng):
    """The slot: 1 iff a second entry has probability > 0 and uniform >= the first's probability."""
    if len(entries) == 2 and entries[1][1] > 0 and rng.uniform() >= entries[0][1]:
        return 1
    return 0


def play(forecaster, adversary, T, seed, *, record=None):
    """T rounds; returns (stated predictions as floats, outcomes) lists.

    record, if a list, receives each round's (entries, slot, y).
    """
    frng, arng = streams(seed)
    k = len(forecaster.stated)
    n, s = [0] * k, [0] * k
    prev_y, ones = -1, 0
    preds, ys = [], []
    for t in range(1, T + 1):
        entries = forecaster.distribution(t, prev_y, ones, n, s)
        y = adversary.respond(t, prev_y, [(p, b) for _, p, b in entries], forecaster.stated, n, s, arng)
        slot = draw(entries, frng)
        point, _, b = entries[slot]
        forecaster.observe(point, b, y, n, s)
        n[b] += 1
        s[b] += y
        ones += y
        prev_y = y
        preds.append(float(forecaster.stated[b]))
        ys.append(y)
        if record is not None:
            record.append((entries, slot, y))
    return preds, ys


def run(forecaster, adversary, T, seed, forecaster_params=None, adversary_params=None, record=None):
    """The reference run of a named pair (names and parameters as fastcdl.online.trace)."""
    a = make_adversary(adversary, T, **(adversary_params or {}))
    f = make_forecaster(forecaster, T, adversary=a if forecaster == "truthful" else None, **(forecaster_params or {}))
    return play(f, a, T, seed, record=record)
