"""The calibeating game (docs/calibeating.md): the engine's external-forecast channel, the
``informed`` environment, the ``calibeat`` forecaster and the record of b, against a slow
plain-Python reference written from the module docstrings (tests/baseline_reference.py's
generators and Foster's rule), round by round."""

import math

import numpy as np
import pytest
from numba import njit

from baseline_reference import MASK64, Foster, draw, streams
from fastcdl._validate import ValidationError
from fastcdl.online import make_adversary, make_forecaster, plugin_adversary, plugin_forecaster, simulate, trace
from fastcdl.online.engine import uniform

GOLDEN, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def counter_uniform_ref(key, t):
    z = (key + t * GOLDEN) & MASK64
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    z ^= z >> 31
    return (z >> 11) * 2.0**-53


class InformedRef:
    """The informed environment from its docstring: mu_t = low + (high - low) u(key, t), the
    model's b_t in the middle of its bin, y_t = 1 iff uniform < mu_t (the adversary's stream)."""

    def __init__(self, arng, a=2.0, c=0.5, levels=10, low=0.0, high=1.0):
        self.a, self.c, self.levels, self.low, self.high = a, c, levels, low, high
        self.key = math.floor(arng.uniform() * 2.0**52)  # prepare: the first draw of the stream
        self.rng = arng

    def mu(self, t):
        return self.low + (self.high - self.low) * counter_uniform_ref(self.key, t)

    def b(self, t):
        mu = self.mu(t)
        if mu <= 0.0:
            s = 0.0
        elif mu >= 1.0:
            s = 1.0
        else:
            s = 1.0 / (1.0 + math.exp(-(self.a * math.log(mu / (1.0 - mu)) + self.c)))
        return (min(math.floor(self.levels * s), self.levels - 1) + 0.5) / self.levels

    def respond(self, t):
        return 1 if self.rng.uniform() < self.mu(t) else 0


def play_calibeat_ref(T, seed, m=None, bins=10, **env):
    """calibeat from its docstring: Foster's rule on the counts of the bin of b_t; returns the
    stated predictions, outcomes and external forecasts of every round."""
    frng, arng = streams(seed)
    env_ref = InformedRef(arng, **env)
    rule = Foster(T, m=m)
    k_m = rule.m + 1
    n = [[0] * k_m for _ in range(bins)]
    s = [[0] * k_m for _ in range(bins)]
    preds, ys, bs = [], [], []
    for t in range(1, T + 1):
        b = env_ref.b(t)
        k = min(math.floor(b * bins), bins - 1)
        entries = rule.distribution(t, None, None, n[k], s[k])
        y = env_ref.respond(t)
        _, _, j = entries[draw(entries, frng)]
        n[k][j] += 1
        s[k][j] += y
        preds.append(float(rule.stated[j]))
        ys.append(y)
        bs.append(b)
    return np.array(preds), np.array(ys), np.array(bs)


def external_score_ref(b, y):
    """Brier(b) and its refinement over b's own values, from the rounds."""
    brier = float(np.mean((b - y) ** 2))
    ref = 0.0
    for v in np.unique(b):
        at = y[b == v]
        ref += at.size * at.mean() * (1 - at.mean())
    return brier, ref / b.size


@pytest.mark.parametrize(
    ("seed", "T", "env"), [(0, 300, {}), (3, 500, {"a": 0.5, "c": -1.0, "levels": 4}), (5, 64, {})]
)
def test_calibeat_against_informed_matches_the_reference_round_by_round(seed, T, env):
    want_p, want_y, want_b = play_calibeat_ref(T, seed, **env)
    res, p, y = trace("calibeat", "informed", horizon=T, seed=seed, adversary_params=env)
    np.testing.assert_array_equal(p, want_p)
    np.testing.assert_array_equal(y, want_y)
    brier, ref = external_score_ref(want_b, want_y)
    assert res.external.rounds == T
    assert res.external.brier == pytest.approx(brier, abs=1e-12)
    assert res.external.refinement == pytest.approx(ref, abs=1e-12)
    assert res.external.calibration == pytest.approx(brier - ref, abs=1e-12)


def test_the_per_round_api_plays_the_same_game():
    T, seed = 200, 2
    res, p, y = trace("calibeat", "informed", horizon=T, seed=seed)
    f = make_forecaster("calibeat", horizon=T, seed=seed)
    a = make_adversary("informed", horizon=T, seed=seed)
    _, _, want_b = play_calibeat_ref(T, seed)
    got_p, got_y = [], []
    for t in range(T):
        b = a.external()
        assert b == want_b[t]
        d = f.forecast(external=b)
        yt = a.respond(d)
        pt = f.draw()
        f.observe(yt)
        a.observe(pt, yt)
        got_p.append(pt)
        got_y.append(yt)
    np.testing.assert_array_equal(got_p, p)
    np.testing.assert_array_equal(got_y, y)
    from fastcdl.online.external import score

    assert score(f.external_record) == res.external


def test_informed_states_its_chance_and_model_as_documented():
    a = make_adversary("informed", horizon=50, seed=4, a=3.0, c=0.25, levels=8, low=0.1, high=0.9)
    ref = InformedRef(streams(4)[1], a=3.0, c=0.25, levels=8, low=0.1, high=0.9)
    for t in range(1, 51):
        assert a.mean() == ref.mu(t)
        assert a.external() == ref.b(t)
        assert 0.1 <= a.mean() <= 0.9 and a.external() in {(j + 0.5) / 8 for j in range(8)}
        y = a.respond(make_forecaster("kt", horizon=50).forecast())
        assert y == ref.respond(t)
        a.observe(0.5, y)


def test_model_edges_at_chances_0_and_1():
    """mu_t = 0 and 1 (low = high): the model's s is 0 and 1, b the middle of the first and last bins."""
    assert make_adversary("informed", horizon=4, low=0.0, high=0.0).external() == 0.05
    assert make_adversary("informed", horizon=4, low=1.0, high=1.0).external() == 0.95
    assert make_adversary("informed", horizon=4, low=0.5, high=0.5, a=1.0, c=0.0, levels=2).external() == 0.75


def test_calibeat_beats_the_model_it_sees_and_stays_calibrated():
    """Calibeating (Foster and Hart): the Brier score approaches b's refinement, below b's own
    Brier score by most of b's calibration part; and the forecasts are calibrated."""
    res = simulate("calibeat", "informed", horizon=2**17, seed=1)
    ext = res.external
    assert ext.calibration > 0.005  # the model is miscalibrated: there is something to gain
    assert res.brier < ext.brier - 0.8 * ext.calibration
    assert res.brier - ext.refinement < 0.2 * ext.calibration
    blind = simulate("foster", "informed", horizon=2**17, seed=1)  # calibrated but blind to b
    assert res.brier < blind.brier - 0.02
    assert res.ece < 0.02


def test_pairing_and_side_inputs_are_checked():
    with pytest.raises(ValidationError, match="'bernoulli' states none"):
        simulate("calibeat", "bernoulli", horizon=10)
    f = make_forecaster("calibeat", horizon=10)
    with pytest.raises(ValidationError, match="external"):
        f.forecast()
    with pytest.raises(ValidationError, match="external"):
        f.forecast(external=1.5)
    with pytest.raises(ValidationError, match="external"):
        make_forecaster("kt", horizon=10).forecast(external=0.5)
    with pytest.raises(ValidationError, match="states no external forecast"):
        make_adversary("bernoulli", horizon=10).external()
    with pytest.raises(ValidationError, match="bins"):
        make_forecaster("calibeat", horizon=10, bins=0)
    with pytest.raises(ValidationError, match="levels"):
        make_adversary("informed", horizon=10, levels=1001)
    assert simulate("kt", "bernoulli", horizon=10).external is None


# -- plug-ins on either side ------------------------------------------------------------------
@njit(cache=True)
def _bad_external(hist, par):
    return 1.5 if hist.t >= 9 else 0.5


@njit(cache=True)
def _coin(view, table, par, rng):
    return 1 if uniform(rng) < 0.5 else 0


BAD = plugin_adversary(_coin, name="badb", k_points=True, external=_bad_external)


@njit(cache=True)
def _echo_forecast(st, table, hist, out, b):
    """State the grid point nearest to b (grid j/10)."""
    j = int(b * 10.0 + 0.5)
    out.points[0] = table.q[j]
    out.points[1] = table.q[j]
    out.probs[0] = 1.0
    out.probs[1] = 0.0
    out.buckets[0] = j
    out.buckets[1] = j


@njit(cache=True)
def _nothing(st, table, hist, out, slot, y):
    pass


def _echo_init(horizon, params):
    return np.zeros(1), np.arange(11) / 10


ECHO = plugin_forecaster(name="echo", init=_echo_init, forecast=_echo_forecast, observe=_nothing, needs_external=True)


def test_a_plugin_forecaster_sees_b_in_the_generic_loop_and_a_bad_b_stops_the_run():
    res, p, y = trace(ECHO, "informed", horizon=100, seed=3)
    ref = InformedRef(streams(3)[1])
    np.testing.assert_array_equal(p, [math.floor(ref.b(t) * 10 + 0.5) / 10 for t in range(1, 101)])
    assert res.external.rounds == 100
    with pytest.raises(ValidationError, match=r"external returned 1.5 for round 10"):
        simulate(ECHO, BAD, horizon=20, seed=0)
    with pytest.raises(ValidationError, match=r"external returned 1.5 for round 10"):
        simulate("calibeat", BAD, horizon=20, seed=0)
    with pytest.raises(ValueError, match="needs_mean"):
        plugin_forecaster(
            name="both",
            init=_echo_init,
            forecast=_echo_forecast,
            observe=_nothing,
            needs_external=True,
            needs_mean=True,
        )
