"""Plain-Python references of the non-stationary environments (segments, budget), written from
their definitions (docs/nonstationary.md), not from the kernels.

Each is an adversary of tests/baseline_reference.py's game (respond(t, prev_y, entries, stated,
n, s, rng)), so baseline_reference.play runs it against the reference forecasters. The
environment is drawn from the adversary's generator at its first use (round 1, before the
round's outcome), which is where the definition puts it: before any outcome is drawn.
"""

from __future__ import annotations

import math


def floor_power(span, a):
    """floor(span^a): the integer k with k <= span^a < k + 1, found from exact integer powers
    when a is a simple fraction, else from the float power."""
    from fractions import Fraction

    f = Fraction(a).limit_denominator(1000)
    if float(f) == a and f > 0:
        # k <= span^(p/q)  <=>  k^q <= span^p
        p, q = f.numerator, f.denominator
        k = max(1, int(round(span**a)))
        while k**q > span**p:
            k -= 1
        while (k + 1) ** q <= span**p:
            k += 1
        return max(1, k)
    return max(1, math.floor(span**a))


class Segments:
    """K segments of rounds 1..span; y_t ~ Bernoulli(mu of t's segment)."""

    def __init__(self, T, k=None, k_exponent=None, random=0, low=0.0, high=1.0, means=None, span=None):
        self.span = T if span is None else int(span)
        if k_exponent is not None:
            self.K = floor_power(self.span, k_exponent)
        elif k is not None:
            self.K = int(k)
        elif means:
            self.K = len(means.split(","))
        else:
            self.K = 4
        self.random = int(random)
        self.low, self.high = float(low), float(high)
        self.given = None if not means else [float(x) for x in means.split(",")]
        self.mu = None  # per segment
        self.starts = None  # first round of each segment

    def draw(self, rng):
        K, span = self.K, self.span
        if self.given is not None:
            self.mu = list(self.given)
        else:
            self.mu = [self.low + (self.high - self.low) * rng.uniform() for _ in range(K)]
        if self.random == 0:
            # round t (1-based) lies in segment floor((t - 1) K / span)
            self.segment_of = lambda t: min((t - 1) * K // span, K - 1)
            return
        cuts = set()
        while len(cuts) < K - 1:
            c = 1 + min(int(rng.uniform() * (span - 1)), span - 2)
            cuts.add(c)  # a repeat is drawn again
        cuts = sorted(cuts)

        def segment_of(t):
            return sum(1 for c in cuts if c < t)  # segment j holds rounds c_j + 1 .. c_{j+1}

        self.segment_of = segment_of

    def prob(self, t, prev_y=None):
        return self.mu[self.segment_of(t)]

    def path(self):
        """The means of rounds 1..span (after the environment is drawn)."""
        return [self.prob(t) for t in range(1, self.span + 1)]

    def respond(self, t, prev_y, entries, stated, n, s, rng):
        if self.mu is None:
            self.draw(rng)
        return 1 if rng.uniform() < self.prob(t) else 0


class Budget:
    """mu_t = center + A sin(2 pi cycles (t - 1/2) / span), A = C / sum_t |sin(...)|."""

    def __init__(self, T, c=None, c_exponent=None, center=0.5, cycles=4, span=None):
        self.span = T if span is None else int(span)
        if c is None and c_exponent is None:
            c_exponent = 0.5
        self.C = float(self.span) ** c_exponent if c_exponent is not None else float(c)
        self.center, self.cycles = float(center), int(cycles)
        S = math.fsum(abs(math.sin(self.x(t))) for t in range(1, self.span + 1))
        self.A = 0.0 if self.C == 0 else self.C / S

    def x(self, t):
        return 2.0 * math.pi * self.cycles * (t - 0.5) / self.span

    def prob(self, t, prev_y=None):
        return self.center + self.A * math.sin(self.x(t))

    def path(self):
        return [self.prob(t) for t in range(1, self.span + 1)]

    def respond(self, t, prev_y, entries, stated, n, s, rng):
        return 1 if rng.uniform() < self.prob(t) else 0


def play_prepared(forecaster, adversary, T, seed):
    """baseline_reference.play with the environment drawn before round 1 (a forecaster that
    reads the adversary's mean, truthful, needs it then); the adversary's generator has made
    the same draws as in play, where the first respond makes them."""
    import baseline_reference as B

    frng, arng = B.streams(seed)
    if isinstance(adversary, Segments):
        adversary.draw(arng)
    k = len(forecaster.stated)
    n, s = [0] * k, [0] * k
    prev_y, ones, preds, ys = -1, 0, [], []
    for t in range(1, T + 1):
        entries = forecaster.distribution(t, prev_y, ones, n, s)
        y = adversary.respond(t, prev_y, [(p, b) for _, p, b in entries], forecaster.stated, n, s, arng)
        point, _, b = entries[B.draw(entries, frng)]
        forecaster.observe(point, b, y, n, s)
        n[b] += 1
        s[b] += y
        ones += y
        prev_y = y
        preds.append(float(forecaster.stated[b]))
        ys.append(y)
    return preds, ys


def l1_budget(path):
    """min over constants mu of sum_t |mu_t - mu|: attained at a median of the path."""
    v = sorted(path)
    med = v[len(v) // 2]
    return math.fsum(abs(x - med) for x in v)


def segment_count(path):
    """The number of maximal runs of equal consecutive means."""
    return 1 + sum(1 for a, b in zip(path, path[1:]) if a != b)


# -- the ftpl forecaster (docs/ftpl.md) -----------------------------------------------------
class FTPL:
    """Follow the perturbed leader on j/m: the leader f (the frequency of y = 1 so far, 1/2
    before any round) plus a uniform of one grid cell's width, rounded to the nearest grid
    point. A forecaster of tests/baseline_reference.py's game."""

    def __init__(self, T, m=None):
        if m is None:
            m = 2 if T < 3 else max(2, math.ceil(math.sqrt(T / math.log(T))))
        self.m = m
        from fractions import Fraction

        self.Fraction = Fraction
        self.stated = [Fraction(j, m) for j in range(m + 1)]

    def law(self, t, ones):
        """{grid index j: exact probability}: P(nearest grid point of f + U is j/m), U uniform
        on [-1/(2m), 1/(2m)), found from the definition (the interval of U that rounds to j)."""
        F = self.Fraction
        f = F(1, 2) if t == 1 else F(ones, t - 1)
        w = F(1, self.m)
        lo_u, hi_u = -w / 2, w / 2
        out = {}
        for j in range(self.m + 1):
            # f + U rounds to j/m when j/m - w/2 <= f + U < j/m + w/2 (the ends: 0 and 1 take the rest)
            a = -math.inf if j == 0 else F(j, self.m) - w / 2 - f
            b = math.inf if j == self.m else F(j, self.m) + w / 2 - f
            lo, hi = max(a, lo_u), min(b, hi_u)
            if hi > lo:
                out[j] = (hi - lo) / w
        assert sum(out.values()) == 1
        return out

    def distribution(self, t, prev_y, ones, n, s):
        law = self.law(t, ones)
        return [(float(self.stated[j]), float(p), j) for j, p in sorted(law.items())]

    def observe(self, point, b, y, n, s):
        pass
