"""The non-stationary environments (segments, budget) against plain-Python references written
from their definitions (tests/nonstationary_reference.py): the same outcomes round by round on
the same seed, the same mean path, and a path with the stated K segments or l1 budget C."""

import math

import numpy as np
import pytest

import baseline_reference as B
import nonstationary_reference as R
from fastcdl._validate import ValidationError
from fastcdl.online import make_adversary, make_forecaster, registry, simulate
from fastcdl.online.engine import Round
from fastcdl.online.simulate import trace

T = 3000
SEGMENTS = [
    {},
    {"k": 7, "random": 1},
    {"k_exponent": 0.25},
    {"k_exponent": 0.5, "random": 1},
    {"means": "0.1,0.9,0.3"},
    {"k": 1},
    {"k": 25, "low": 0.2, "high": 0.4, "random": 1},
    {"k": 4, "span": 1000},
]
BUDGETS = [
    {},
    {"c": 0.0},
    {"c": 300.0, "cycles": 1},
    {"c_exponent": 0.75, "center": 0.3, "cycles": 7},
    {"c_exponent": 0.0},
]


def _reference(name, params, horizon=T):
    return (R.Segments if name == "segments" else R.Budget)(horizon, **params)


def _label(p):
    return "-".join(f"{k}{v}" for k, v in p.items()) or "defaults"


CASES = [("segments", p) for p in SEGMENTS] + [("budget", p) for p in BUDGETS]
IDS = [f"{a}-{_label(p)}" for a, p in CASES]


def _kernel_path(adversary, span):
    """prob of the compiled adversary (its prepared par) for rounds 1..span."""
    spec, par = adversary.spec, adversary._par
    return [spec.prob(Round(t, -1, 1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0, 0), par) for t in range(1, span + 1)]


@pytest.mark.parametrize("seed", [0, 99])
@pytest.mark.parametrize("forecaster", ["frequency", "foster"])
@pytest.mark.parametrize("adversary,aparams", CASES, ids=IDS)
def test_run_equals_reference(adversary, aparams, forecaster, seed):
    """Outcomes (and the forecaster's stated predictions) equal the reference's in every round."""
    res, tp, ty = trace(forecaster, adversary, horizon=T, seed=seed, adversary_params=aparams)
    a = _reference(adversary, aparams)
    rp, ry = B.play(B.make_forecaster(forecaster, T), a, T, seed)
    assert list(ty) == ry
    assert list(tp) == rp
    assert 0 < sum(ry) < T


@pytest.mark.parametrize("seed", [0, 99])
@pytest.mark.parametrize("adversary,aparams", CASES, ids=IDS)
def test_truthful_states_the_reference_mean(adversary, aparams, seed):
    """truthful reads the run's environment from round 1 on: the grid point nearest to mu_t."""
    res, tp, ty = trace("truthful", adversary, horizon=T, seed=seed, adversary_params=aparams)
    a = _reference(adversary, aparams)
    rp, ry = R.play_prepared(B.Truthful(T, a), a, T, seed)
    assert list(ty) == ry and list(tp) == rp


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("adversary,aparams", CASES, ids=IDS)
def test_mean_path_equals_reference(adversary, aparams, seed):
    """prob (the true mean of each round) equals the definition's, from round 1 on."""
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ref = _reference(adversary, aparams)
    if adversary == "segments":
        ref.draw(B.streams(seed)[1])
    span = ref.span
    got, want = _kernel_path(a, span + 5), [ref.prob(t) for t in range(1, span + 6)]
    if adversary == "segments":
        assert got == want
    else:  # A = C / S: S by a compensated sum here, by math.fsum in the reference
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("seed", [0, 3, 11])
@pytest.mark.parametrize("aparams", SEGMENTS, ids=[_label(p) for p in SEGMENTS])
def test_segments_path_has_k_segments(aparams, seed):
    a = make_adversary("segments", horizon=T, seed=seed, **aparams)
    K, span = int(a.params["k"]), int(a.params["span"])
    path = _kernel_path(a, span)
    assert R.segment_count(path) == K  # drawn means differ a.s.; the given ones differ by choice
    if "k_exponent" in aparams:
        assert K == R.floor_power(span, aparams["k_exponent"])
    lo, hi = a.params["low"], a.params["high"]
    if "means" not in aparams:
        assert all(lo <= x <= hi for x in path)
    if not a.params["random"]:  # equal lengths: they differ by at most one round
        lengths = np.diff(np.flatnonzero(np.diff(path, prepend=math.nan, append=math.nan)))
        assert lengths.sum() == span and lengths.max() - lengths.min() <= 1


def test_segments_exponent_at_exact_powers():
    """K = floor(T^a): T = 2^16, a = 1/4 gives exactly 16 (not 15 from a rounded power)."""
    for k in range(10, 21):
        for a in (0.25, 0.5, 1 / 3, 0.75, 1.0, 0.0):
            got = make_adversary("segments", horizon=2**k, k_exponent=a).params["k"]
            assert got == R.floor_power(2**k, a), (k, a)


@pytest.mark.parametrize("aparams", BUDGETS, ids=[_label(p) for p in BUDGETS])
@pytest.mark.parametrize("span", [1024, 3000, 4097])
def test_budget_path_has_budget_c(aparams, span):
    a = make_adversary("budget", horizon=span, **aparams)
    C = a.params["c"]
    if "c_exponent" in aparams:
        assert C == float(span) ** aparams["c_exponent"]
    path = _kernel_path(a, span)
    assert min(path) >= 0.0 and max(path) <= 1.0
    assert R.l1_budget(path) == pytest.approx(C, rel=1e-9, abs=1e-9)
    # the median is the center: no constant does better than center
    center = a.params["center"]
    assert math.fsum(abs(x - center) for x in path) == pytest.approx(C, rel=1e-9, abs=1e-9)


def test_the_environment_is_the_seeds():
    """Same seed, same environment (simulate and the per-round API); another seed, another."""
    p = {"k": 6, "random": 1}
    a0, a0b, a1 = (make_adversary("segments", horizon=500, seed=s, **p) for s in (0, 0, 1))
    assert np.array_equal(a0._par, a0b._par, equal_nan=True) and not np.array_equal(a0._par, a1._par, equal_nan=True)
    f = make_forecaster("kt", horizon=500, seed=0)
    ys = []
    for _ in range(500):
        y = a0.respond(f.forecast())
        p_t = f.draw()
        f.observe(y)
        a0.observe(p_t, y)
        ys.append(y)
    _, _, ty = trace("kt", "segments", horizon=500, seed=0, adversary_params=p)
    assert list(ty) == ys


@pytest.mark.parametrize(
    "name,params,argument",
    [
        ("segments", {"k": 0}, "k"),
        ("segments", {"k": 3001}, "k"),
        ("segments", {"k": 2.5}, "k"),
        ("segments", {"k_exponent": -0.1}, "k_exponent"),
        ("segments", {"k_exponent": 1.5}, "k_exponent"),
        ("segments", {"k": 5, "k_exponent": 0.25}, "k"),
        ("segments", {"random": 2}, "random"),
        ("segments", {"low": 0.6, "high": 0.4}, "high"),
        ("segments", {"means": "0.2,1.3"}, "means"),
        ("segments", {"means": "0.2,x"}, "means"),
        ("segments", {"k": 3, "means": "0.2,0.4"}, "means"),
        ("budget", {"c": -1.0}, "c"),
        ("budget", {"c_exponent": -0.5}, "c_exponent"),
        ("budget", {"c_exponent": 1.01}, "c_exponent"),
        ("budget", {"c_exponent": 1.0}, "c"),  # C = T: more than a path in [0, 1] can spend
        ("budget", {"c": 10.0, "center": 0.0}, "c"),
        ("budget", {"cycles": 0}, "cycles"),
        ("budget", {"center": 1.5}, "center"),
    ],
)
def test_bad_parameters_name_the_parameter(name, params, argument):
    with pytest.raises(ValidationError) as e:
        make_adversary(name, horizon=T, **params)
    assert e.value.argument == argument
    assert argument in str(e.value)


@pytest.mark.parametrize("name", ["segments", "budget"])
def test_span_or_horizon_is_needed(name):
    with pytest.raises(ValidationError, match="span"):
        make_adversary(name)
    assert make_adversary(name, span=64).params["span"] == 64


def test_registered_and_stochastic():
    for name in ("segments", "budget"):
        spec = registry.adversary(name)
        assert spec.stochastic and spec.version == 1 and name in registry.stochastic()


def test_resolved_parameters_resolve_again():
    """A run's resolved parameters (RunResult.params) give the same run when passed back."""
    for name, p in CASES:
        res = simulate("kt", name, horizon=T, seed=2, adversary_params=p)
        again = simulate("kt", name, horizon=T, seed=2, adversary_params=res.params["adversary"])
        assert again.params == res.params and again.stats == res.stats


def test_plugin_prepare_draws_before_round_1():
    """A plug-in's prepare fills its scratch from its generator before round 1: prob states the
    drawn mean from round 1, and simulate and the per-round API meet the same environment."""
    from numba import njit

    from fastcdl.online import plugin_adversary
    from fastcdl.online.engine import uniform

    @njit(cache=False)
    def prob(view, par):
        return par[1]

    @njit(cache=False)
    def respond(view, table, par, rng):
        return 1 if uniform(rng) < par[1] else 0

    def prepare(resolved, par, rng):
        par[1] = resolved["scale"] * uniform(rng)

    spec = plugin_adversary(
        respond, name="drawn", params={"scale": 0.5}, prob=prob, scratch=lambda r: 1, prepare=prepare
    )
    a = make_adversary(spec, horizon=100, seed=4)
    arng = B.streams(4)[1]
    mu = 0.5 * arng.uniform()
    assert a._par[1] == mu
    res, tp, ty = trace("kt", spec, horizon=400, seed=4)
    assert list(ty) == [1 if arng.uniform() < mu else 0 for _ in range(400)]
