"""Plain-Python references of the adversaries that know the forecaster's grid, see its raw
points, sweep with alternating biases, or look ahead on the CDL, written from their
definitions (fastcdl/online/adversaries/{rawpoint,gridedge,sweep,lookahead}.py docstrings)
in exact rational arithmetic.

respond(t, prev_y, entries, table_q, n, s, rng): entries is the published distribution as a
list of (probability (float), raw point (float), bucket); table_q the stated values
(floats, as the forecaster publishes them); n and s the public counts. Returns y.
"""

from fractions import Fraction

HALF = Fraction(1, 2)


def _bernoulli(x, rng):
    """y = 1 iff the adversary's next uniform is below x (x exact; x <= 0 gives 0, x >= 1 gives 1)."""
    return 1 if Fraction(rng.uniform()) < x else 0


class RawPoint:
    def __init__(self, shift=0.0, mix=0.0):
        self.shift, self.mix = Fraction(shift), Fraction(mix)

    def target(self, entries, table_q):
        raw = sum(Fraction(p) * Fraction(x) for p, x, b in entries)
        stated = sum(Fraction(p) * Fraction(table_q[b]) for p, x, b in entries)
        return (1 - self.mix) * raw + self.mix * stated + self.shift

    def respond(self, t, prev_y, entries, table_q, n, s, rng):
        return _bernoulli(self.target(entries, table_q), rng)


class GridEdge:
    def __init__(self, position=0.5):
        self.position = Fraction(position)

    def target(self, entries, table_q):
        total = Fraction(0)
        for p, x, b in entries:
            upper = Fraction(table_q[b])
            lower = Fraction(table_q[b - 1]) if b > 0 else Fraction(0)
            total += Fraction(p) * (lower + self.position * (upper - lower))
        return total

    def respond(self, t, prev_y, entries, table_q, n, s, rng):
        return _bernoulli(self.target(entries, table_q), rng)


class Sweep:
    def __init__(self, T, low=0.1, high=0.9, amp=0.05, period=None):
        self.low, self.high, self.amp = Fraction(low), Fraction(high), Fraction(amp)
        self.period = Fraction(T, 8) if period is None else Fraction(period)

    def target(self, t, entries):
        u = Fraction(t) / self.period
        u -= u.numerator // u.denominator
        wave = self.low + (self.high - self.low) * (1 - abs(2 * u - 1))
        likelier = max(entries, key=lambda e: e[0])  # max keeps the first (slot 0) on a tie
        sign = 1 if likelier[2] % 2 == 0 else -1
        return wave + self.amp * sign

    def respond(self, t, prev_y, entries, table_q, n, s, rng):
        return _bernoulli(self.target(t, entries), rng)


class Lookahead:
    """The y maximising the expected CDL_K after the round: CDL_K = 2 x the upper concave
    envelope at 1/2 of the points (j/K, f(j/K)), f the V-shaped decision-loss curve of the
    stated table (recomputed from the whole table here, every time), in exact rationals; a tie
    (within the documented relative tolerance TIE_REL) tosses a fair coin."""

    def __init__(self, kinks=32):
        self.K = int(kinks)

    def f_scaled(self, table_q, n, s):
        """K T f(j/K) for j = 0..K, exact integers, from the definition of v_i(mu)."""
        K = self.K
        out = []
        for j in range(K + 1):
            mu = Fraction(j, K)
            total = Fraction(0)
            for q, ni, si in zip(table_q, n, s):
                if ni == 0:
                    continue
                q = Fraction(q)
                qhat = Fraction(si, ni)
                if (q < mu < qhat) or (qhat < mu <= q):
                    total += ni * abs(qhat - mu)
            out.append(K * total)
        return out

    def cdl_k(self, F):
        """2 fbar(1/2) of the points (j/K, F_j): the best chord over a <= K/2 <= c."""
        K, h = self.K, self.K // 2
        best = Fraction(0)
        for a in range(h + 1):
            for c in range(h, K + 1):
                v = F[h] if a == c else (F[a] * (c - h) + F[c] * (h - a)) / Fraction(c - a)
                best = max(best, v)
        return 2 * best

    def value(self, y, entries, table_q, n, s):
        total = Fraction(0)
        for p, x, b in entries:
            n2, s2 = list(n), list(s)
            n2[b] += 1
            s2[b] += y
            total += Fraction(p) * self.cdl_k(self.f_scaled(table_q, n2, s2))
        return total

    # the documented tie rule: expectations within 16 units of roundoff (relative to the larger)
    # are a tie, decided by a fair coin
    TIE_REL = Fraction(16, 2**53)

    def respond(self, t, prev_y, entries, table_q, n, s, rng):
        up = self.value(1, entries, table_q, n, s)
        down = self.value(0, entries, table_q, n, s)
        if abs(up - down) > self.TIE_REL * max(abs(up), abs(down)):
            return 1 if up > down else 0
        return 1 if rng.uniform() < 0.5 else 0


def make(name, T, **params):
    if name == "rawpoint":
        return RawPoint(**params)
    if name == "gridedge":
        return GridEdge(**params)
    if name == "sweep":
        return Sweep(T, **params)
    if name == "lookahead":
        return Lookahead(**params)
    raise ValueError(name)
