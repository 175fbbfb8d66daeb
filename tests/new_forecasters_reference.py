"""Slow references for the sign, uniform and acrs forecasters, in plain Python from their definitions.

Nothing here calls the forecasters' kernels. The outcomes come from the library's adversaries
(make_adversary, fed the reference's own distribution each round), and the forecaster's draws
from a pure-Python xoshiro256** on the seed's child 0 (online_reference.xoshiro256ss), so a
reference run and fastcdl.online.trace(...) with the same seed see the same randomness.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from fastcdl.online import Forecast, make_adversary, make_forecaster
from fastcdl.online.plugins import default_cdl_m
from online_reference import xoshiro256ss


class Uniforms:
    """The forecaster's uniforms: top 53 bits of xoshiro256** outputs times 2^-53, in order."""

    def __init__(self, seed, n):
        state = np.random.SeedSequence(seed).spawn(2)[0].generate_state(4, dtype=np.uint64)
        self._out = xoshiro256ss([int(x) for x in state], n)
        self._k = 0

    def __call__(self):
        u = (self._out[self._k] >> 11) * 2.0**-53
        self._k += 1
        return u


def grid_params(T, m=None, delta=None):
    """Algorithm 1's grid (docs/algorithm1.md): m = max(2, ceil(sqrt(T) / ln T)), delta = min(1/T, 1/m)."""
    m = default_cdl_m(T) if m is None else m
    return m, min(1.0 / T, 1.0 / m) if delta is None else delta


class Step1Reference:
    """Algorithm 1's step 1 on weights c_b = weight(G_b) (docs/algorithm1.md, 0-based buckets).

    Buckets I_0 = [0, 1/m], I_b = (b/m, (b+1)/m], stated value (b+1)/m. If G_0 >= 0 say 0; if
    G_{m-1} <= 0 say 1; else bisect (midpoint floor((lo + hi) / 2), lo = 0, hi = m - 1) for
    G_lo < 0 <= G_hi, hi = lo + 1; if G_hi = 0 say (hi + 1)/m; else (lo + 1)/m with probability
    r = c_hi / (c_hi - c_lo) and (lo + 1)/m + delta otherwise. Then G_b += ptilde - y, exactly:
    the points are the rationals a/m plus delta (the float given), so G_b is exactly 0 where a
    float sum would leave a residue of about 1e-16, and the decisions follow the exact G. The
    weights come from weight(Gf_b, G_b) (Gf the float sum in rounds' order, as published; sign
    takes the exact sign, uniform Gf's magnitude), with the exact signs: c_lo = -|weight|, c_hi =
    |weight|.
    """

    def __init__(self, m, delta, weight):
        self.m, self.delta, self.weight = m, delta, weight
        self.G = [Fraction(0)] * m
        self.Gf = [0.0] * m
        self.exact = {}  # this round's published points -> the rationals they stand for

    def distribution(self):
        """[(point, prob, bucket), ...] of this round."""
        G, m = self.G, self.m
        if G[0] >= 0:
            self.exact = {0.0: Fraction(0)}
            return [(0.0, 1.0, 0)]
        if G[m - 1] <= 0:
            self.exact = {1.0: Fraction(1)}
            return [(1.0, 1.0, m - 1)]
        lo, hi = 0, m - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if G[mid] < 0:
                lo = mid
            else:
                hi = mid
        if G[hi] == 0:
            self.exact = {(hi + 1) / m: Fraction(hi + 1, m)}
            return [((hi + 1) / m, 1.0, hi)]
        c_lo, c_hi = -abs(self.weight(self.Gf[lo], G[lo])), abs(self.weight(self.Gf[hi], G[hi]))
        r = c_hi / (c_hi - c_lo)
        edge = (lo + 1) / m
        self.exact = {edge: Fraction(lo + 1, m), edge + self.delta: Fraction(lo + 1, m) + Fraction(self.delta)}
        return [(edge, r, lo), (edge + self.delta, 1.0 - r, hi)]

    def grid(self):
        return np.arange(1, self.m + 1) / self.m

    def update(self, point, bucket, y):
        self.G[bucket] += self.exact[point] - y
        self.Gf[bucket] += point - y


def sign_weight(g, exact):
    """sign(G): from the exact G."""
    return 1.0 if exact > 0 else (-1.0 if exact < 0 else 0.0)


def uniform_weight(g, exact):
    """G / (1 + |G|): its magnitude from the float sum g."""
    return g / (1.0 + abs(g))


class ACRSReference:
    """Almost-One-Step-Ahead (Arunachaleswaran, Collina, Roth, Shi; arXiv 2402.11410) in exact
    arithmetic: grid j/m; alpha_j = sum over rounds whose shadow prediction was j/m of (j/m - y);
    i = the smallest i with alpha_i <= 0 <= alpha_{i+1} (linear scan); state i/m ("lower") or
    (i+1)/m ("upper"); after y the shadow prediction is whichever of i/m, (i+1)/m is nearer y.
    Checks |alpha_j| <= 1 after every round (the invariant behind the bound)."""

    def __init__(self, m, pick="lower"):
        self.m, self.pick = m, pick
        self.alpha = [Fraction(0)] * (m + 1)
        self.shadow = []
        self._i = None

    def distribution(self):
        a = self.alpha
        self._i = next(i for i in range(self.m) if a[i] <= 0 <= a[i + 1])
        j = self._i + (1 if self.pick == "upper" else 0)
        return [(j / self.m, 1.0, j)]

    def grid(self):
        return np.arange(self.m + 1) / self.m

    def update(self, point, bucket, y):
        i = self._i
        j = i if abs(Fraction(i, self.m) - y) <= abs(Fraction(i + 1, self.m) - y) else i + 1
        self.alpha[j] += Fraction(j, self.m) - y
        self.shadow.append(j)
        assert all(abs(x) <= 1 for x in (self.alpha[i], self.alpha[i + 1]))


def run_reference(ref, adversary, T, seed, aparams=None):
    """The reference forecaster against a library adversary: (stated predictions, outcomes)."""
    adv = make_adversary(adversary, horizon=T, seed=seed, **(aparams or {}))
    draw = Uniforms(seed, T)
    q = ref.grid()
    ps, ys = np.zeros(T), np.zeros(T, dtype=np.int8)
    for t in range(T):
        dist = ref.distribution()
        shown = [d for d in dist if d[1] > 0]
        fc = Forecast(
            points=tuple(d[0] for d in shown),
            probs=tuple(d[1] for d in shown),
            predictions=tuple(float(q[d[2]]) for d in shown),
            buckets=tuple(d[2] for d in shown),
            grid=q,
        )
        y = adv.respond(fc)
        # the second point is drawn when it has positive probability: one uniform u, and it wins if u >= P(first)
        k = 1 if len(dist) == 2 and dist[1][1] > 0 and draw() >= dist[0][1] else 0
        point, _, bucket = dist[k]
        p = float(q[bucket])
        ref.update(point, bucket, y)
        adv.observe(p, y)
        ps[t], ys[t] = p, y
    return ps, ys


def run_api(forecaster, fparams, adversary, aparams, T, seed):
    """make_forecaster / make_adversary driven one round at a time: (forecaster, predictions, outcomes).
    A forecaster that needs the round's true mean or external forecast gets the adversary's."""
    f = make_forecaster(forecaster, horizon=T, seed=seed, **fparams)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ps, ys = [], []
    for _ in range(T):
        if f.spec.side_input == "mean":
            d = f.forecast(mean=a.mean())
        elif f.spec.side_input == "external":
            d = f.forecast(external=a.external())
        else:
            d = f.forecast()
        y = a.respond(d)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ps.append(p)
        ys.append(y)
    return f, np.array(ps), np.array(ys)


def calibrated_certificate(p, y, m, pick="lower"):
    """An upper bound on the distance to calibration of stated predictions p (grid j/m) with
    outcomes y, from an explicit perfectly calibrated sequence q: (sum_t |p_t - q_t|, q).

    q_t is the frequency of y over the rounds whose shadow prediction equals round t's, the
    shadow prediction being p_t + y_t/m (pick "lower") or p_t - (1 - y_t)/m ("upper"): the
    One-Step-Ahead prediction that acrs keeps beside the stated one. The sum is exact
    (fractions); q is checked to be perfectly calibrated, so the sum is >= the distance to
    calibration min over calibrated q' of ||p - q'||_1 (Blasiok et al.; Qiao and Zheng).
    """
    k = np.rint(np.asarray(p) * m).astype(np.int64)
    assert np.all(np.abs(k / m - p) < 1e-12)
    y = np.asarray(y, dtype=np.int64)
    shadow = k + y if pick == "lower" else k - (1 - y)
    n = np.bincount(shadow, minlength=m + 1)
    s = np.bincount(shadow, weights=y, minlength=m + 1).astype(np.int64)
    q = [Fraction(int(s[j]), int(n[j])) for j in shadow]
    # perfectly calibrated: at every value v of q, the mean outcome is v
    rounds, ones = {}, {}
    for qt, yt in zip(q, y):
        rounds[qt] = rounds.get(qt, 0) + 1
        ones[qt] = ones.get(qt, 0) + int(yt)
    assert all(Fraction(ones[v], rounds[v]) == v for v in rounds)
    dist = sum(abs(Fraction(int(kt), m) - qt) for kt, qt in zip(k, q))
    return dist, q


def ece_times_T(p, y):
    """sum over stated values v of |sum_{t: p_t = v} (p_t - y_t)|: the ECE * T bound dCE <= ECE."""
    p, y = np.asarray(p), np.asarray(y, dtype=np.float64)
    return float(sum(abs(np.sum(p[p == v] - y[p == v])) for v in np.unique(p)))
