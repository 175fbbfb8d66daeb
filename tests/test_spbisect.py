"""spbisect against a slow reference written from its definition (the module docstring and
docs/ece-lower-bound-adversary.md) in exact arithmetic: the same outcomes round by round
against cdl, kt and spr, the same mean path, the schedule at horizons 1, 2 and ones that are
not powers, the steering on scripted tables, its parameters, and what it forces."""

from fractions import Fraction

import numpy as np
import pytest

import baseline_reference as B
from fastcdl.online import make_adversary, make_forecaster, simulate
from fastcdl.online.engine import Round
from fastcdl.online.forecasters import Forecast
from fastcdl.online.simulate import trace


class Reference:
    """The definition: levels k = 0..D-1, level k holds p_k (p_0 = 1/2, p_k = p_{k-1} + d_k
    2^-(k+1)) for rounds E_{k-1} + 1 .. E_k, E_k = floor(span (4^(k+1) - 1) / (4^D - 1)); the
    coins d_k = -1 iff u < 1/2, drawn first; y = 1 iff u < p. steer = 1: at round E_k (k <
    D - 1) the half of level k's cell whose midpoint has the smaller flippable bias, from the
    table of rounds 1..E_k - 1; a tie within 1e-9 (1 + sum |bias|) keeps the coin."""

    REL_TIE = Fraction(1e-9)

    def __init__(self, span, steer=0, depth=None):
        self.span, self.steer = span, steer
        most = 0
        while 4 ** (most + 1) <= 3 * span + 1:
            most += 1
        self.depth = most if depth is None else depth
        self.ends = [span * (4 ** (k + 1) - 1) // (4**self.depth - 1) for k in range(self.depth)]

    def draw(self, rng):
        self.coins = [0] + [-1 if rng.uniform() < 0.5 else 1 for _ in range(1, self.depth)]
        self.path = [Fraction(1, 2)]
        for k in range(1, self.depth):
            self.path.append(self.path[-1] + self.coins[k] * Fraction(1, 2 ** (k + 1)))

    def level(self, t):
        return next((k for k, e in enumerate(self.ends) if e >= t), self.depth - 1)

    def prob(self, t):
        return self.path[self.level(t)]

    def flippable(self, table, c):
        return sum(max(b, 0) for v, b in table.items() if v < c) + sum(max(-b, 0) for v, b in table.items() if v > c)

    def respond(self, t, table, rng):
        """table: stated value (exact) -> bias v n_v - s_v of the rounds before t."""
        k = self.level(t)
        if self.steer and k < self.depth - 1 and t == self.ends[k]:
            half = Fraction(1, 2 ** (k + 2))
            lo, hi = self.flippable(table, self.path[k] - half), self.flippable(table, self.path[k] + half)
            tol = self.REL_TIE * (1 + sum(abs(b) for b in table.values()))
            d = -1 if lo < hi - tol else 1 if hi < lo - tol else self.coins[k + 1]
            self.path[k + 1] = self.path[k] + d * half
        return 1 if Fraction(rng.uniform()) < self.path[k] else 0


def replay(ref, preds, ys, seed):
    """The reference's outcome of every round, given the run's stated predictions before it."""
    rng = B.streams(seed)[1]
    ref.draw(rng)
    table, out = {}, []
    for t, (p, y) in enumerate(zip(preds, ys), start=1):
        out.append(ref.respond(t, table, rng))
        v = Fraction(float(p))
        table[v] = table.get(v, 0) + v - y
    return out


def kernel_prob(adversary, t):
    return adversary.spec.prob(Round(t, -1, 1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0, 0), adversary._par)


CASES = [(3000, {}), (3000, {"steer": 1}), (4096, {"steer": 1}), (1000, {"depth": 2, "steer": 1}), (5, {})]


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("forecaster", ["cdl", "kt"])
@pytest.mark.parametrize("T,aparams", CASES)
def test_run_equals_reference(T, aparams, forecaster, seed):
    res, preds, ys = trace(forecaster, "spbisect", horizon=T, seed=seed, adversary_params=aparams)
    ref = Reference(T, **aparams)
    assert replay(ref, preds, ys, seed) == list(ys)
    assert int(res.stats.total) == T


@pytest.mark.parametrize("steer", [0, 1])
def test_spr_gets_the_mean_the_outcome_is_drawn_with(steer):
    """spr forecasts with true_mean each round; the outcomes stay the reference's."""
    T = 2000
    res, preds, ys = trace("spr", "spbisect", horizon=T, seed=2, adversary_params={"steer": steer})
    assert replay(Reference(T, steer), preds, ys, 2) == list(ys)


@pytest.mark.parametrize("steer", [0, 1])
def test_true_mean_follows_the_path_round_by_round(steer):
    """The per-round API: a.mean() before each forecast is the reference's p of that round,
    under steer = 1 also in the first round of a level the table just chose."""
    T, seed = 1500, 9
    f = make_forecaster("kt", horizon=T, seed=seed)
    a = make_adversary("spbisect", horizon=T, seed=seed, steer=steer)
    ref = Reference(T, steer)
    rng = B.streams(seed)[1]
    ref.draw(rng)
    table = {}
    for t in range(1, T + 1):
        assert a.mean() == float(ref.prob(t))
        y = a.respond(f.forecast())
        assert y == ref.respond(t, table, rng)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        v = Fraction(p)
        table[v] = table.get(v, 0) + v - y


@pytest.mark.parametrize(
    "span,depth,ends",
    [
        (1, 1, [1]),
        (2, 1, [2]),
        (4, 1, [4]),  # 4^2 - 1 = 15 > 12: one level
        (5, 2, [1, 5]),
        (1000, 5, [2, 14, 61, 249, 1000]),
        (2**20, 10, None),
    ],
)
def test_schedule(span, depth, ends):
    a = make_adversary("spbisect", horizon=span, seed=1)
    ref = Reference(span)
    assert a.params == {"steer": 0, "depth": depth, "span": span} and ref.depth == depth
    got = [int(e) for e in a._par[3 : 3 + depth]]
    assert got == ref.ends and (ends is None or got == ends) and got[-1] == span
    lengths = np.diff([0, *got])
    assert all(lengths[k] >= 4**k for k in range(depth))  # the default depth: level k lasts 4^k rounds or more


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("span,aparams", [(3000, {}), (2**20, {}), (999, {"depth": 3})])
def test_mean_path_is_nested(span, aparams, seed):
    """prob equals the reference from round 1 to after span; every later p lies inside the
    half of level k's cell that level k + 1 took, on the side of the step."""
    a = make_adversary("spbisect", horizon=span, seed=seed, **aparams)
    ref = Reference(span, **aparams)
    ref.draw(B.streams(seed)[1])
    rounds = sorted({1, 2, *ref.ends, *(e + 1 for e in ref.ends), span + 7})
    assert [kernel_prob(a, t) for t in rounds] == [float(ref.prob(t)) for t in rounds]
    path = ref.path
    for k in range(ref.depth - 1):
        d = ref.coins[k + 1]
        for j in range(k + 1, ref.depth):
            assert 0 < d * (path[j] - path[k]) < Fraction(1, 2 ** (k + 1))


def _scripted(outcomes, stated=0.6, steer=1):
    """Level 0 of span 1000 is rounds 1..2; round 1 states `stated` with the given outcome,
    round 2 decides level 1's half. Returns p of round 3."""
    grid = np.array([0.0, 0.5, 0.6, 1.0])
    b = int(np.flatnonzero(grid == stated)[0])
    fc = Forecast((stated,), (1.0,), (stated,), (b,), grid)
    a = make_adversary("spbisect", horizon=1000, seed=0, steer=steer)
    for y in outcomes:
        a.respond(fc)
        a.observe(stated, y)  # the table gets the scripted outcome, whatever respond drew
    return a.mean(), a


def test_steering_keeps_the_sign_of_the_bias():
    """0.6 stated with y = 0: bias +0.6 (said too often); the lower half (p = 1/4) keeps it,
    the upper (3/4) would let it be cancelled. With y = 1: bias -0.4, the upper half."""
    assert _scripted([0, 0])[0] == 0.25
    assert _scripted([1, 1])[0] == 0.75
    # a value at 1/2, level 0's own p, lies between the two child midpoints: a positive bias
    # there could be cancelled in the upper half (p = 3/4 > 1/2), a negative one in the lower
    assert _scripted([0, 0], stated=0.5)[0] == 0.25
    assert _scripted([1, 1], stated=0.5)[0] == 0.75


def test_a_tie_keeps_the_coin():
    """An unbiased table (0 stated: bias 0) ties; steer = 1 then takes the oblivious coin."""
    steered, a = _scripted([0, 0], stated=0.0)
    oblivious, _ = _scripted([0, 0], stated=0.0, steer=0)
    ref = Reference(1000)
    ref.draw(B.streams(0)[1])
    assert steered == oblivious == float(ref.path[1])


def test_outcomes_follow_each_level():
    """Outcome frequencies within the long levels are their p_k (to 5 standard errors)."""
    T = 2**16
    for seed in range(3):
        res, preds, ys = trace("kt", "spbisect", horizon=T, seed=seed)
        ref = Reference(T)
        ref.draw(B.streams(seed)[1])
        lo = 0
        for k, e in enumerate(ref.ends):
            n, p = e - lo, float(ref.path[k])
            if n >= 1000:
                assert abs(ys[lo:e].mean() - p) < 5 * np.sqrt(p * (1 - p) / n), (seed, k)
            lo = e


def noise_floor(ys, ends, path):
    """ECE of a forecaster stating each round's p exactly, on these outcomes: the outcomes'
    noise at the distinct p_k, |L_k p_k - ones of level k|, over T."""
    total, lo = 0.0, 0
    for e, p in zip(ends, path):
        total += abs((e - lo) * p - ys[lo:e].sum())
        lo = e
    return total / len(ys)


@pytest.mark.parametrize("forecaster", ["cdl", "kt", "foster"])
@pytest.mark.parametrize("steer", [0, 1])
def test_no_forecaster_beats_the_noise_it_forces(forecaster, steer):
    """Over 8 seeds at T = 4096, the mean ECE is at least the outcomes' noise alone would
    force on a forecaster that knew every p_t (the fair coin's sqrt(T) floor, at the levels'
    means), on the same outcomes; and that floor is of the fair coin's order."""
    T, got, floor = 4096, [], []
    for seed in range(8):
        res, preds, ys = trace(forecaster, "spbisect", horizon=T, seed=seed, adversary_params={"steer": steer})
        ref = Reference(T, steer)
        replay(ref, preds, ys, seed)
        got.append(res.ece)
        floor.append(noise_floor(ys.astype(np.int64), ref.ends, [float(p) for p in ref.path]))
    assert np.mean(got) > np.mean(floor)
    assert 0.2 / np.sqrt(T) < np.mean(floor) < 2.0 / np.sqrt(T)


def test_two_to_the_twenty_rounds():
    res = simulate("kt", "spbisect", horizon=2**20, seed=0)
    assert int(res.stats.total) == 2**20 and 0 < res.ece < 1


@pytest.mark.parametrize(
    "params,name",
    [
        ({"steer": 2}, "steer"),
        ({"steer": 0.5}, "steer"),
        ({"steer": True}, "steer"),
        ({"depth": 0}, "depth"),
        ({"depth": 6}, "depth"),  # floor(log4(3001)) = 5 at span 1000
        ({"depth": 2.5}, "depth"),
        ({"span": 0}, "span"),
        ({"span": 1.5}, "span"),
        ({"levels": 3}, "levels"),
    ],
)
def test_bad_parameters_are_named(params, name):
    with pytest.raises(ValueError, match=name):
        make_adversary("spbisect", horizon=1000, **params)


def test_a_span_or_a_horizon_is_needed():
    with pytest.raises(ValueError, match="span"):
        make_adversary("spbisect")
    assert make_adversary("spbisect", span=64).params == {"steer": 0, "depth": 3, "span": 64}


def test_simulate_is_reproducible_and_oblivious_outcomes_ignore_the_forecaster():
    a = trace("cdl", "spbisect", horizon=3000, seed=4)
    b = trace("cdl", "spbisect", horizon=3000, seed=4)
    c = trace("foster", "spbisect", horizon=3000, seed=4)
    assert a[0].ece == b[0].ece and np.array_equal(a[2], b[2]) and np.array_equal(a[2], c[2])
