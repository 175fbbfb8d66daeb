"""ops: online Platt scaling and its calibeating versions TOPS and HOPS (Gupta and Ramdas 2023;
docs/ops.md), against a slow plain-Python reference written from the module docstring: the
Online Newton Step with numpy (a 2x2 matrix, numpy's solve, the projection found in A's
eigenbasis by a root finder), the bins, tracking with exact fractions, and Foster's F99 with
exact frequencies; the generators of tests/baseline_reference.py.

What is compared exactly and what to a tolerance:

- the stated values and outcomes of every round, exactly;
- OPS's continuous forecast p_t, its weights w_t and the probabilities of p_t's rounding to 1e-9:
  the reference solves A v = g by LU with pivoting and projects in A's eigenbasis with Brent's
  method, the kernel uses Cramer's rule and bisection on lam, so the two differ by rounding
  (the Newton steps do not amplify it: the runs below agree to 1e-15);
- TOPS's distributions exactly (a fraction rounded in integers both here and there);
- HOPS's mixing probabilities to 1e-14 relative: exact fractions here, three float divisions there.

The stated values can be equal although the continuous forecasts differ by rounding because a
stated value moves only when p_t crosses a bin edge or a grid point, or the draw's uniform
falls within 1e-15 of a probability: none does in these runs (at round 1, where p_t sits on a
grid point, both compute the same bits, since w_1 = (1, 0) makes the product exact).
"""

import math
from collections import namedtuple
from fractions import Fraction

import numpy as np
import pytest
from numba import njit
from scipy.optimize import brentq

from baseline_reference import MASK64, draw, streams
from fastcdl._validate import ValidationError
from fastcdl.online import make_adversary, make_forecaster, plugin_adversary, simulate, trace
from fastcdl.online.engine import uniform
from fastcdl.online.external import score

GOLDEN, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
DEFAULTS = {"gamma": 0.1, "rho": 100.0, "radius": 100.0, "clip": 0.01, "bins": 10, "m": 10, "levels": 1000}
TOL = 1e-9  # p_t and w_t (module docstring)


# -- the environments ------------------------------------------------------------------------
def counter_uniform_ref(key, t):
    z = (key + t * GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    z ^= z >> 31
    return (z >> 11) * 2.0**-53


class InformedRef:
    """informed from its docstring: mu_t = low + (high - low) u(key, t); b_t the middle of the bin
    of sigmoid(a logit(mu_t) + c); y_t = 1 iff the adversary's uniform < mu_t."""

    def __init__(self, arng, a=2.0, c=0.5, levels=10, low=0.0, high=1.0):
        self.a, self.c, self.levels, self.low, self.high = a, c, levels, low, high
        self.key = math.floor(arng.uniform() * 2.0**52)
        self.rng = arng

    def mu(self, t):
        return self.low + (self.high - self.low) * counter_uniform_ref(self.key, t)

    def b(self, t):
        mu = self.mu(t)
        s = 0.0 if mu <= 0.0 else 1.0 if mu >= 1.0 else 1 / (1 + math.exp(-(self.a * math.log(mu / (1 - mu)) + self.c)))
        return (min(math.floor(self.levels * s), self.levels - 1) + 0.5) / self.levels

    def respond(self, t):
        return 1 if self.rng.uniform() < self.mu(t) else 0


@njit(cache=True)
def _edges_external(hist, par):
    return 0.0 if hist.t % 2 == 0 else 1.0


@njit(cache=True)
def _edges_coin(view, table, par, rng):
    return 1 if uniform(rng) < par[0] else 0


EDGES = plugin_adversary(_edges_coin, name="edges", params={"p": 0.5}, k_points=True, external=_edges_external)


class EdgesRef:
    """EDGES: b_t = 0 in odd rounds and 1 in even ones (exactly), y_t = 1 iff uniform < p."""

    def __init__(self, arng, p=0.5):
        self.p, self.rng = p, arng

    def b(self, t):
        return 0.0 if t % 2 == 1 else 1.0

    def respond(self, t):
        return 1 if self.rng.uniform() < self.p else 0


# -- the reference forecaster ----------------------------------------------------------------
def sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def project_ref(A, v, radius):
    """argmin over |w| <= radius of (w - v)^T A (w - v), v outside the disc. KKT: A (w - v) + lam w
    = 0, so in A's eigenbasis (A = Q diag(d) Q^T, z = Q^T v) w = Q (d z / (d + lam)), and lam > 0
    solves |w| = radius, found by Brent's method."""
    d, Q = np.linalg.eigh(A)
    z = Q.T @ v

    def excess(lam):
        return float(np.sum((d * z / (d + lam)) ** 2)) - radius**2

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    lam = brentq(excess, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps)
    return Q @ (d * z / (d + lam))


class PlattONS:
    """OPS: p = sigmoid(w . x), x = (logit of b clipped to [clip, 1 - clip], 1), w_1 = (1, 0),
    A_0 = rho I; after y: g = (p - y) x, A += g g^T, w <- the A-projection of w - A^{-1} g / gamma
    on |w| <= radius."""

    def __init__(self, gamma, rho, radius, clip):
        self.gamma, self.radius, self.clip = gamma, radius, clip
        self.w = np.array([1.0, 0.0])
        self.A = rho * np.eye(2)
        self.projected = 0

    def features(self, b):
        b = min(max(b, self.clip), 1 - self.clip)
        return np.array([math.log(b / (1 - b)), 1.0])

    def predict(self, x):
        return sigmoid(float(self.w @ x))

    def update(self, x, p, y):
        g = (p - y) * x
        self.A = self.A + np.outer(g, g)
        v = self.w - np.linalg.solve(self.A, g) / self.gamma
        if v @ v > self.radius**2:
            v = project_ref(self.A, v, self.radius)
            self.projected += 1
        self.w = v


def rounded(x, g):
    """Randomized rounding of x to j/g keeping the mean: entries (raw point, probability, bucket),
    g x as a double (the docstring's rule)."""
    xg = x * g
    j = min(math.floor(xg), g)
    f = xg - j
    return [(x, 1.0 - f, j), (x, f, j + 1)] if f > 0 else [(x, 1.0, j)]


def rounded_exactly(x, g):
    """The same rounding of an exact fraction x."""
    j = math.floor(x * g)
    f = x * g - j
    return [(float(x), float(1 - f), j), (float(x), float(f), j + 1)] if f > 0 else [(float(x), 1.0, j)]


def f99_ref(n, s, m, pivot):
    """F99 in one bin: the pivot interval if its frequency lies in it (or it has no round), else
    the lowest such interval, else the first pair i, i + 1 straddling their common edge, mixed
    with probabilities proportional to (edge - rho_{i+1}, rho_i - edge)."""
    rho = [None if n[i] == 0 else Fraction(s[i], n[i]) for i in range(m)]

    def holds(i):
        return rho[i] is None or Fraction(i, m) <= rho[i] <= Fraction(i + 1, m)

    def mid(i):
        return (2 * i + 1) / (2 * m), 2 * i + 1

    for i in [pivot, *range(m)]:
        if holds(i):
            x, j = mid(i)
            return [(x, 1.0, j)]
    i = next(i for i in range(m - 1) if rho[i] > Fraction(i + 1, m) > rho[i + 1])
    d, e = Fraction(i + 1, m) - rho[i + 1], rho[i] - Fraction(i + 1, m)
    (x0, j0), (x1, j1) = mid(i), mid(i + 1)
    return [(x0, float(d / (d + e)), j0), (x1, float(e / (d + e)), j1)]


Round = namedtuple("Round", ["b", "p", "entries", "stated", "y", "w"])


def play_ref(T, seed, variant="ops", env="informed", env_params=None, **params):
    """The game from the docstrings, round by round: (a list of Round, the PlattONS at the end)."""
    par = {**DEFAULTS, **params}
    frng, arng = streams(seed)
    environment = (InformedRef if env == "informed" else EdgesRef)(arng, **(env_params or {}))
    ops = PlattONS(par["gamma"], par["rho"], par["radius"], par["clip"])
    bins, m, levels = par["bins"], par["m"], par["levels"]
    g = 2 * m if variant == "hops" else levels
    n = [[0] * m for _ in range(bins)]
    s = [[0] * m for _ in range(bins)]
    rounds = []
    for t in range(1, T + 1):
        b = environment.b(t)
        x = ops.features(b)
        p = ops.predict(x)
        k = min(math.floor(p * bins), bins - 1)
        if variant == "ops":
            entries = rounded(p, levels)
        elif variant == "tops":
            freq = Fraction(2 * k + 1, 2 * bins) if n[k][0] == 0 else Fraction(s[k][0], n[k][0])
            entries = rounded_exactly(freq, levels)
        else:
            entries = f99_ref(n[k], s[k], m, min(math.floor(p * m), m - 1))
        y = environment.respond(t)
        _, _, j = entries[draw(entries, frng)]
        if variant != "ops":
            i = 0 if variant == "tops" else (j - 1) // 2
            n[k][i] += 1
            s[k][i] += y
        ops.update(x, p, y)
        rounds.append(Round(b, p, entries, j / g, y, ops.w.copy()))
    return rounds, ops


def assert_trace_matches(rounds, res, p, y):
    np.testing.assert_array_equal(p, [r.stated for r in rounds])
    np.testing.assert_array_equal(y, [r.y for r in rounds])
    b = np.array([r.b for r in rounds])
    ys = np.array([r.y for r in rounds])
    assert res.external.rounds == len(rounds)
    assert res.external.brier == pytest.approx(float(np.mean((b - ys) ** 2)), abs=1e-12)


VARIANTS = ("ops", "tops", "hops")


# -- round by round --------------------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(
    ("seed", "T", "env", "params"),
    [
        (0, 400, {}, {}),
        (3, 300, {"a": 0.5, "c": -1.0, "levels": 4}, {"bins": 4, "m": 6, "levels": 50}),
        (5, 300, {"a": 3.0, "c": 0.25, "levels": 1000, "low": 0.05, "high": 0.9}, {"gamma": 0.5, "rho": 4.0}),
    ],
)
def test_the_compiled_runs_match_the_reference_round_by_round(variant, seed, T, env, params):
    rounds, _ = play_ref(T, seed, variant, env_params=env, **params)
    res, p, y = trace(
        "ops", "informed", horizon=T, seed=seed, forecaster_params={"variant": variant, **params}, adversary_params=env
    )
    assert_trace_matches(rounds, res, p, y)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_per_round_api_shows_the_reference_distribution_and_weights(variant):
    T, seed, env = 300, 2, {"a": 2.0, "c": 0.5, "levels": 1000}
    rounds, _ = play_ref(T, seed, variant, env_params=env)
    f = make_forecaster("ops", horizon=T, seed=seed, variant=variant)
    a = make_adversary("informed", horizon=T, seed=seed, **env)
    got_p, got_y = [], []
    for r in rounds:
        b = a.external()
        assert b == r.b
        fc = f.forecast(external=b)
        assert fc.buckets == tuple(j for _, _, j in r.entries)
        points, probs = [x for x, _, _ in r.entries], [q for _, q, _ in r.entries]
        if variant == "ops":  # the rounding of p_t: its raw point and probabilities follow p_t's tolerance
            np.testing.assert_allclose(fc.points, points, rtol=0, atol=TOL)
            np.testing.assert_allclose(fc.probs, probs, rtol=0, atol=TOL)
        elif variant == "tops":  # a fraction rounded exactly
            assert fc.points == tuple(points) and fc.probs == tuple(probs)
        else:  # midpoints; mixing probabilities exact here, three float divisions there
            assert fc.points == tuple(points)
            np.testing.assert_allclose(fc.probs, probs, rtol=1e-14, atol=0)
        assert f.state.p[0] == pytest.approx(r.p, abs=TOL)
        yt = a.respond(fc)
        pt = f.draw()
        f.observe(yt)
        a.observe(pt, yt)
        np.testing.assert_allclose(f.state.w, r.w, rtol=0, atol=TOL)
        got_p.append(pt)
        got_y.append(yt)
    res, p, y = trace(
        "ops", "informed", horizon=T, seed=seed, forecaster_params={"variant": variant}, adversary_params=env
    )
    np.testing.assert_array_equal(got_p, p)
    np.testing.assert_array_equal(got_y, y)
    assert_trace_matches(rounds, res, p, y)
    assert score(f.external_record) == res.external


def test_the_projection_on_the_disc_matches_the_reference():
    """An underconfident model (a = 0.5: the best Platt map has a = 2) and a disc of radius 1.5:
    many Newton steps leave the disc and are projected back onto its edge."""
    T, seed, env, params = 500, 4, {"a": 0.5, "c": 0.5, "levels": 1000}, {"radius": 1.5}
    rounds, ops = play_ref(T, seed, "ops", env_params=env, **params)
    assert ops.projected > T // 10
    f = make_forecaster("ops", horizon=T, seed=seed, **params)
    a = make_adversary("informed", horizon=T, seed=seed, **env)
    on_edge = 0
    for r in rounds:
        fc = f.forecast(external=a.external())
        yt = a.respond(fc)
        pt = f.draw()
        f.observe(yt)
        a.observe(pt, yt)
        np.testing.assert_allclose(f.state.w, r.w, rtol=0, atol=TOL)
        norm = float(np.hypot(*f.state.w))
        assert norm <= 1.5 * (1 + 1e-15)
        on_edge += norm > 1.5 * (1 - 1e-12)
    assert on_edge == ops.projected
    res, p, y = trace("ops", "informed", horizon=T, seed=seed, forecaster_params=params, adversary_params=env)
    assert_trace_matches(rounds, res, p, y)


# -- edges -----------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("T", [1, 2])
def test_horizons_1_and_2(variant, T):
    for seed in range(4):
        rounds, _ = play_ref(T, seed, variant)
        res, p, y = trace("ops", "informed", horizon=T, seed=seed, forecaster_params={"variant": variant})
        assert_trace_matches(rounds, res, p, y)


@pytest.mark.parametrize("variant", VARIANTS)
def test_b_at_0_and_1_is_read_as_clip_and_1_minus_clip(variant):
    """b_t = 0 and 1 exactly (a plug-in environment) and at the edges of informed's chances (low =
    high = 0 or 1, b = 1/2000 or 1999/2000): the forecaster reads them clipped, and nothing
    becomes infinite or NaN."""
    T = 200
    rounds, ops = play_ref(T, 1, variant, env="edges")
    res, p, y = trace("ops", EDGES, horizon=T, seed=1, forecaster_params={"variant": variant})
    assert_trace_matches(rounds, res, p, y)
    assert np.all(np.isfinite(ops.w))
    f = make_forecaster("ops", horizon=T, seed=1, variant=variant)
    first = f.forecast(external=0.0)
    assert f.state.p[0] == pytest.approx(0.01, rel=1e-13)  # OPS's first forecast: b clipped, the identity map
    assert first.points[0] == pytest.approx(0.01 if variant == "ops" else 0.05, rel=1e-13)  # TOPS, HOPS: bin 0
    f = make_forecaster("ops", horizon=T, seed=1, clip=1e-6)
    assert f.forecast(external=1.0).points[0] == pytest.approx(1 - 1e-6, rel=1e-15)
    for edge in (0.0, 1.0):
        env = {"low": edge, "high": edge, "levels": 1000}
        rounds, _ = play_ref(T, 2, variant, env_params=env)
        assert {r.b for r in rounds} == {0.0005 if edge == 0 else 0.9995}
        assert {r.y for r in rounds} == {int(edge)}
        res, p, y = trace(
            "ops", "informed", horizon=T, seed=2, forecaster_params={"variant": variant}, adversary_params=env
        )
        assert_trace_matches(rounds, res, p, y)
        assert rounds[0].p == pytest.approx(0.01 if edge == 0 else 0.99, rel=1e-13)  # clipped, not 1/2000


def test_bad_parameters_are_named():
    bad = {
        "variant": "plain",
        "gamma": 0.0,
        "rho": -1.0,
        "radius": 0.5,
        "clip": 0.5,
        "bins": 0,
        "m": 0,
        "levels": 2**20 + 1,
    }
    for name, value in bad.items():
        with pytest.raises(ValidationError) as e:
            make_forecaster("ops", horizon=10, **{name: value})
        assert e.value.argument == name
    for name, value in (("clip", 0.0), ("gamma", "fast"), ("levels", 0), ("bins", 2.5)):
        with pytest.raises(ValidationError) as e:
            make_forecaster("ops", horizon=10, **{name: value})
        assert e.value.argument == name
    with pytest.raises(ValidationError, match="'bernoulli' states none"):
        simulate("ops", "bernoulli", horizon=10)


def test_the_stated_grid():
    for variant, params, g in (("ops", {}, 1000), ("tops", {"levels": 64}, 64), ("hops", {"m": 7}, 14)):
        f = make_forecaster("ops", horizon=100, variant=variant, **params)
        assert f.spec.grid_m({"variant": variant, **params}, 100) == g
        np.testing.assert_array_equal(f.table.q, np.arange(g + 1) / g)


# -- what the runs show ----------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["tops", "hops"])
def test_calibeating_gains_most_of_the_models_calibration_part(variant):
    """On the overconfident, biased model of informed (a = 2, c = 0.5, 10 levels) TOPS and HOPS
    score close to b's refinement, gaining most of CAL(b); HOPS's forecasts are calibrated to
    within its intervals' half-width 1/(2m)."""
    res = simulate("ops", "informed", horizon=2**16, seed=1, forecaster_params={"variant": variant})
    ext = res.external
    assert ext.calibration > 0.01
    assert res.brier < ext.brier - 0.75 * ext.calibration
    assert res.brier - ext.refinement < (0.15 if variant == "tops" else 0.25) * ext.calibration
    if variant == "hops":
        assert res.ece < 0.5 / 10
        assert res.k2 < 0.1 * ext.calibration


def _binned_calibration(x, y, bins=10):
    """(ECE, squared calibration error) of forecasts x over equal-width bins of x."""
    k = np.minimum((x * bins).astype(int), bins - 1)
    ece = k2 = 0.0
    for j in np.unique(k):
        at = k == j
        gap = x[at].mean() - y[at].mean()
        ece += at.sum() * abs(gap)
        k2 += at.sum() * gap**2
    return ece / x.size, k2 / x.size


def test_ops_recalibrates_a_platt_type_model():
    """b = sigmoid(1.5 logit(mu) + 0.5) (1000 levels, mu in [0.1, 0.9], so no clipping): the
    Platt map sigmoid(logit(b) / 1.5 - 1/3) recovers mu. OPS's calibration error is a small
    part of b's, and its Brier score is close to the truth's."""
    T, env = 2**16, {"a": 1.5, "c": 0.5, "levels": 1000, "low": 0.1, "high": 0.9}
    res, p, y = trace("ops", "informed", horizon=T, seed=3, adversary_params=env)
    ext = res.external
    model = InformedRef(streams(3)[1], **env)
    b = np.array([model.b(t) for t in range(1, T + 1)])
    ece_ops, k2_ops = _binned_calibration(p, y.astype(float))
    ece_b, k2_b = _binned_calibration(b, y.astype(float))
    assert ext.calibration > 0.005 and k2_b > 0.005
    assert k2_ops < 0.02 * k2_b and ece_ops < 0.15 * ece_b
    truth = float(np.mean((np.array([model.mu(t) for t in range(1, T + 1)]) - y) ** 2))
    assert res.brier - truth < 0.05 * (ext.brier - truth)
