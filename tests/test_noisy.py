"""The noisy post-processing (Hartline, Wu and Yang 2025; docs/noisy.md) against a slow reference
written from its definition: the base forecaster's stated distribution, taken each round from
the base's own per-round kernels, is perturbed by the reference itself (Laplace weights
exp(-|q_j - p| / sigma) on the grid j/m, m = ceil(1/sigma), renormalised over [0, 1], one slot
per pair of a base slot and a grid point), the slot is drawn with the engine's rule from the
forecaster's generator, and the base learns the slot it stated. Round by round against the
per-round API, then against the compiled trace."""

import dataclasses
import math
from collections import namedtuple

import numpy as np
import pytest
from numba import njit

from fastcdl._compiled.rng import seed_states
from fastcdl.kernels import forecaster_setup
from fastcdl.online import make_adversary, make_forecaster, plugin_forecaster, registry, simulate, trace
from fastcdl.online.engine import settle, uniform
from fastcdl.online.forecasters import noisy
from fastcdl.online.versions import algorithm_version


class Base:
    """The base forecaster driven through its per-round kernels: its distribution each round,
    and the slot the reference says was drawn."""

    def __init__(self, name, T, **params):
        self.spec = registry.forecaster(name)
        self.state, self.table, self.out, self.hist, _ = forecaster_setup(name, T, **params)

    def distribution(self):
        """[(slot, probability, stated value)] of the slots of positive probability."""
        self.spec.forecast(self.state, self.table, self.hist, self.out)
        out, q = self.out, self.table.q
        return [(k, float(out.probs[k]), float(q[out.buckets[k]])) for k in range(len(out.probs)) if out.probs[k] > 0]

    def observe(self, k, y):
        self.spec.observe(self.state, self.table, self.hist, self.out, k, y)
        self.hist = settle(self.table, self.out, k, y, self.hist)


def ref_grid(sigma):
    """j/m, j = 0..m, m the smallest integer with m sigma >= 1."""
    m = 1
    while m * sigma < 1.0:
        m += 1
    return [j / m for j in range(m + 1)]


def ref_noisy(dist, sigma):
    """[(base slot, grid point, probability)]: P(i) exp(-|q_j - p_i| / sigma) / sum_k exp(-|q_k - p_i| / sigma)."""
    q = ref_grid(sigma)
    rows = []
    for k, P, p in dist:
        w = [math.exp(-abs(x - p) / sigma) for x in q]
        rows += [(k, j, P * w[j] / sum(w)) for j in range(len(q))]
    return rows


def ref_draw(probs, rng):
    """The engine's draw: a point mass without a uniform, else the first slot whose cumulative
    probability exceeds one uniform of the forecaster's generator."""
    if sum(p > 0 for p in probs) == 1:
        return next(k for k, p in enumerate(probs) if p > 0)
    u, acc = uniform(rng), 0.0
    for k, p in enumerate(probs):
        acc += p
        if u < acc:
            return k
    return len(probs) - 1


@pytest.mark.parametrize("base", ["kt", "klcal"])
@pytest.mark.parametrize("adversary", ["bernoulli", "contrarian"])
def test_noisy_equals_the_reference_round_by_round(base, adversary):
    T, seed, sigma = 300, 3, 0.15
    f = make_forecaster("noisy", horizon=T, seed=seed, base=base, sigma=sigma)
    a = make_adversary(adversary, horizon=T, seed=seed)
    b = Base(base, T)
    rng = seed_states(seed)[0]
    ps, ys, mixed = [], [], 0
    for t in range(T):
        fc = f.forecast()
        ref = ref_noisy(b.distribution(), sigma)
        q = ref_grid(sigma)
        assert fc.predictions == tuple(q[j] for _, j, _ in ref), t
        assert np.abs(np.array(fc.probs) - [p for _, _, p in ref]).max() <= 1e-15, t
        mixed += len({k for k, _, _ in ref}) > 1
        y = a.respond(fc)
        p = f.draw()
        k, j, _ = ref[ref_draw([p for _, _, p in ref], rng)]
        assert p == q[j], t
        f.observe(y)
        a.observe(p, y)
        b.observe(k, y)
        ps.append(p)
        ys.append(y)
    assert mixed > 0  # rounds where the base itself randomizes: the draw picks its slot too
    res, p, y = trace("noisy", adversary, horizon=T, seed=seed, forecaster_params={"base": base, "sigma": sigma})
    assert p.tolist() == ps and y.tolist() == ys
    assert res.stats.counts.tolist() == f.stats().counts.tolist()
    assert simulate("noisy", adversary, horizon=T, seed=seed, forecaster_params={"base": base, "sigma": sigma}).ece == (
        res.ece
    )


@pytest.mark.parametrize("base", ["kt", "klcal"])
@pytest.mark.parametrize("adversary", ["bernoulli", "contrarian"])
def test_sigma_zero_is_the_base_itself(base, adversary):
    """No noise: the base's distribution slot for slot, so the same run bit for bit."""
    T = 500
    want, wp, wy = trace(base, adversary, horizon=T, seed=2)
    got, gp, gy = trace("noisy", adversary, horizon=T, seed=2, forecaster_params={"base": base, "sigma": 0.0})
    assert gp.tobytes() == wp.tobytes() and gy.tobytes() == wy.tobytes()
    assert got.pseudo_stats.counts.tobytes() == want.pseudo_stats.counts.tobytes()
    assert got.params["forecaster"] == {"base": base, "sigma": 0.0, **want.params["forecaster"]}


def test_a_plugin_base_through_noisy_spec():
    """A user's forecaster (its own state type, njit kernels) wrapped by the factory: sigma = 0
    is its run; with noise, its predictions are spread over the grid j/m, its parameters pass,
    and the per-round API gives the compiled run. Its state type never reaches the cached
    kernels (their cache index would then be unreadable where the user's module is not)."""
    import user_plugins

    spec = noisy.noisy_spec(user_plugins.RUNNING)
    assert spec.name == "noisy_running" and set(spec.params) == {"m", "eps", "sigma"}
    _, wp, wy = trace(user_plugins.RUNNING, "bernoulli", horizon=200, seed=4, forecaster_params={"m": 8})
    _, gp, gy = trace(spec, "bernoulli", horizon=200, seed=4, forecaster_params={"m": 8, "sigma": 0.0})
    assert gp.tolist() == wp.tolist() and gy.tolist() == wy.tolist()
    res, p, y = trace(spec, "bernoulli", horizon=200, seed=4, forecaster_params={"m": 8, "sigma": 0.3})
    assert set(p.tolist()) <= {0.0, 0.25, 0.5, 0.75, 1.0} and len(set(p.tolist())) >= 3
    assert res.params["forecaster"] == {"sigma": 0.3, "m": 8}
    f = make_forecaster(spec, horizon=200, seed=4, m=8, sigma=0.3)
    a = make_adversary("bernoulli", horizon=200, seed=4)
    for t in range(200):
        yt = a.respond(f.forecast())
        pt = f.draw()
        f.observe(yt)
        a.observe(pt, yt)
        assert (pt, yt) == (p[t], y[t]), t
    for cached in (noisy.simulate, noisy.forecast, noisy.observe):
        assert not [s for s in cached.signatures if "LastState" in str(s)], cached


HalfState = namedtuple("HalfState", ["ones"])


@njit
def _half_forecast(st, table, hist, out):
    scratch = np.full(2, 0.5)  # allocates: a plug-in's kernels may
    out.points[:] = scratch
    out.probs[0], out.probs[1] = 1.0, 0.0
    out.buckets[:] = 1


@njit
def _half_observe(st, table, hist, out, slot, y):
    st.ones[0] += y


def test_a_plugin_base_whose_kernels_allocate():
    """The plug-in's loop keeps numba's reference counting (the built-ins' loops do without)."""
    half = plugin_forecaster(
        name="half",
        init=lambda horizon, params: (HalfState(np.zeros(1, dtype=np.int64)), np.array([0.0, 0.5, 1.0])),
        forecast=_half_forecast,
        observe=_half_observe,
    )
    res, p, y = trace(noisy.noisy_spec(half), "bernoulli", horizon=100, seed=1, forecaster_params={"sigma": 0.25})
    assert set(p.tolist()) <= {0.0, 0.25, 0.5, 0.75, 1.0} and int(res.stats.total) == 100


def _closed_form(p, sigma):
    q = ref_grid(sigma)
    w = [math.exp(-abs(x - p) / sigma) for x in q]
    return q, [x / sum(w) for x in w]


def test_a_prediction_at_0_or_1_is_reported_inside_the_grid_never_clipped():
    """At 0 the Laplace weights are renormalised over the grid of [0, 1]: a one-sided,
    geometric distribution (weights e^-j for sigma = 1/4) whose mean, 0.137, is inward of the
    base's prediction; nothing leaves [0, 1] and no extra mass piles up at the end (Laplace
    noise clipped to [0, 1] and rounded to the grid would report 0 with probability
    1 - e^(-1/2) / 2 = 0.70, here 1 / sum_j e^-j = 0.636). At 1 it is the mirror image."""
    f = make_forecaster("noisy", horizon=100, base="acrs", sigma=0.25)  # acrs states 0 in round 1
    fc = f.forecast()
    q, want = _closed_form(0.0, 0.25)
    assert fc.predictions == tuple(q) == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert np.abs(np.array(fc.probs) - want).max() <= 1e-15
    assert abs(fc.probs[0] - 1 / sum(math.exp(-j) for j in range(5))) <= 1e-15 and fc.probs[0] < 0.64
    assert 0.1 < fc.mean_prediction < 0.25
    # at 1: frequency states 1 once every outcome so far was 1
    f = make_forecaster("noisy", horizon=100, base="frequency", sigma=0.25)
    a = make_adversary("bernoulli", horizon=100, p=1.0)
    for _ in range(2):
        fc = f.forecast()
        y = a.respond(fc)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
    fc = f.forecast()
    q, want = _closed_form(1.0, 0.25)
    assert np.abs(np.array(fc.probs) - want).max() <= 1e-15
    assert np.abs(np.array(fc.probs) - _closed_form(0.0, 0.25)[1][::-1]).max() <= 1e-15  # the mirror image
    assert 0.75 < fc.mean_prediction < 0.9


def test_horizon_one():
    """T = 1: eps = 1, sigma = 1, the grid {0, 1}; acrs states 0, reported as 0 with probability
    1 / (1 + e^-1)."""
    assert noisy.FORECASTER.resolve_params({}, 1) == {"base": "acrs", "sigma": 1.0, "m": 1, "pick": "lower"}
    fc = make_forecaster("noisy", horizon=1).forecast()
    assert fc.predictions == (0.0, 1.0)
    assert abs(fc.probs[0] - 1 / (1 + math.exp(-1))) <= 1e-15
    for seed in range(4):
        res, p, y = trace("noisy", "bernoulli", horizon=1, seed=seed)
        assert int(res.stats.total) == 1 and p[0] in (0.0, 1.0)
        f = make_forecaster("noisy", horizon=1, seed=seed)
        assert f.draw() == p[0]


@pytest.mark.parametrize(
    "params,argument",
    [
        ({"base": "nope"}, "base"),
        ({"base": 3}, "base"),
        ({"base": "noisy"}, "base"),
        ({"base": "spr"}, "base"),  # needs the round's true mean
        ({"base": "ops"}, "base"),  # needs an external forecast
        ({"base": "truthful"}, "base"),  # needs the adversary
        ({"sigma": -0.1}, "sigma"),
        ({"sigma": float("nan")}, "sigma"),
        ({"sigma": 1e-9}, "sigma"),  # a grid of 10^9 points a round
        ({"eps": -1.0}, "eps"),
        ({"eps": 0.01, "sigma": 0.1}, "eps"),
        ({"m": 8}, "m"),  # the registered noisy takes the base at its defaults (noisy_spec takes its parameters)
    ],
)
def test_bad_parameters_name_themselves(params, argument):
    with pytest.raises(ValueError) as e:
        make_forecaster("noisy", horizon=100, **params)
    assert e.value.argument == argument, str(e.value)


def test_noisy_spec_refuses_what_it_cannot_wrap():
    with pytest.raises(ValueError) as e:
        noisy.noisy_spec(registry.forecaster("spr"))
    assert e.value.argument == "base"
    with pytest.raises(ValueError) as e:
        noisy.noisy_spec(noisy.FORECASTER)
    assert e.value.argument == "base"
    clash = dataclasses.replace(registry.forecaster("kt"), params={"m": None, "sigma": 1.0})
    with pytest.raises(ValueError, match="sigma"):
        noisy.noisy_spec(clash)


def test_two_bases_of_one_state_type_and_other_kernels_are_told_apart_or_refused():
    """The kernels are chosen by the base's state type: a second forecaster with the same type
    and other kernels is refused by name, never run with the first one's kernels."""
    kt = registry.forecaster("kt")
    other = dataclasses.replace(kt, name="kt2", forecast=registry.forecaster("sign").forecast)
    make_forecaster(noisy.noisy_spec(kt), horizon=50)
    with pytest.raises(ValueError) as e:
        make_forecaster(noisy.noisy_spec(other), horizon=50)
    assert e.value.argument == "base" and "kt2" in str(e.value)


def test_noisy_plays_only_adversaries_that_read_k_point_rounds():
    import user_plugins

    with pytest.raises(ValueError, match="adversary 'spite'.*forecaster 'noisy'"):
        simulate("noisy", user_plugins.SPITE, horizon=10)


def test_the_version_carries_the_bases():
    """noisy_spec(base): 1000 x noisy's own version + the base's. The registered noisy, whose
    base is a parameter the trial key does not see: + every bump of the other built-ins, so a
    bump of any base moves it."""
    for name in ("kt", "klcal", "acrs"):
        base = registry.forecaster(name)
        assert noisy.noisy_spec(base).version == 1000 * noisy.VERSION + base.version
        bumped = dataclasses.replace(base, version=base.version + 1)
        assert noisy.noisy_spec(bumped).version == noisy.noisy_spec(base).version + 1
    others = [s.version - 1 for n, s in registry.forecasters().items() if n != "noisy"]
    assert noisy.FORECASTER.version == 1000 * noisy.VERSION + sum(others)
    assert f"forecaster=noisy/{noisy.FORECASTER.version} " in algorithm_version("noisy", "bernoulli")


def test_a_bump_of_a_builtin_moves_the_registered_version(monkeypatch):
    from fastcdl.online.forecasters import kt

    before = noisy.builtin_bumps()
    monkeypatch.setattr(kt, "FORECASTER", dataclasses.replace(kt.FORECASTER, version=kt.FORECASTER.version + 1))
    assert noisy.builtin_bumps() == before + 1


def _measures(forecaster, adversary, T, base=None):
    params = {} if base is None else {"base": base}
    runs = [simulate(forecaster, adversary, horizon=T, seed=s, forecaster_params=params) for s in range(2)]
    return {k: float(np.mean([getattr(r, k) for r in runs])) for k in ("ece", "cdl", "smce")}


@pytest.mark.parametrize("base", ["acrs", "frequency"])
@pytest.mark.parametrize("adversary", ["contrarian", "greedy"])
def test_noise_turns_a_small_smooth_error_into_a_small_ece_and_cdl(base, adversary):
    """The paper's claim, on bases whose predictions are nearly calibrated as a whole but whose
    buckets are not (the adversary answers 1 below 1/2 and 0 from it on): smooth calibration
    error below 0.005 at T = 2^16, ECE about 1/2, CDL 1. With noise of scale sigma = T^(-1/4) both fall to
    the order of sigma, and keep falling with T as sqrt(eps) = T^(-1/4) does, while the
    base's stay where they are."""
    small, large = 2**12, 2**16
    b, n = _measures(base, adversary, large), _measures("noisy", adversary, large, base)
    sigma = large**-0.25
    assert b["smce"] < 0.02 and b["ece"] > 0.45 and b["cdl"] > 0.9
    assert n["ece"] < 2 * sigma and n["cdl"] < 1.5 * sigma
    assert n["ece"] < b["ece"] / 5 and n["cdl"] < b["cdl"] / 10
    n_small = _measures("noisy", adversary, small, base)
    assert n["ece"] < 0.7 * n_small["ece"] and n["cdl"] < 0.7 * n_small["cdl"]
    assert _measures(base, adversary, small)["ece"] > 0.45
