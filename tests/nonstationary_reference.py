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
        k = max(1, int(round(span ** a)))
        while k ** q > span ** p:
            k -= 1
        while (k + 1) ** q <= span ** p:
            k += 1
        return max(1, k)
    return max(1, math.floor(span ** a))


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

    def prob(self, t):
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

    def prob(self, t):
        return self.center + self.A * math.sin(self.x(t))

    def path(self):
        return [self.prob(t) for t in range(1, self.span + 1)]

    def respond(self, t, prev_y, entries, stated, n, s, rng):
        return 1 if rng.uniform() < self.prob(t) else 0


def l1_budget(path):
    """min over constants mu of sum_t |mu_t - mu|: attained at a median of the path."""
    v = sorted(path)
    med = v[len(v) // 2]
    return math.fsum(abs(x - med) for x in v)


def segment_count(path):
    """The number of maximal runs of equal consecutive means."""
    return 1 + sum(1 for a, b in zip(path, path[1:]) if a != b)
