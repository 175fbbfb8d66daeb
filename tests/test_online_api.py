"""The online interface (docs/algorithm1.md): simulate == per-round API, randomness, protocol and validation."""

import numpy as np
import pytest

import fastcdl
from fastcdl._compiled.rng import next_u64, seed_states, uniform
from fastcdl.online import (
    Forecast,
    RunResult,
    make_adversary,
    make_forecaster,
    simulate,
)
from fastcdl.online.simulate import trace
from online_reference import xoshiro256ss

PAIRS = [
    ("cdl", {}, "greedy", {}),
    ("cdl", {"oracle": "dense"}, "drift", {}),
    ("cdl", {"m": 7, "delta": 0.01}, "contrarian", {}),
    ("kt", {}, "markov", {"p01": 0.3, "p10": 0.05}),
    ("kt", {}, "greedy", {}),
    ("foster", {}, "contrarian", {}),
    ("foster", {"m": 9}, "greedy", {}),
    ("truthful", {}, "drift", {"amplitude": 0.3}),
    ("truthful", {"m": 10}, "markov", {}),
    ("frequency", {}, "bernoulli", {"p": 0.3}),
    ("frequency", {}, "greedy", {}),
]


def _per_round(forecaster, fparams, adversary, aparams, T, seed):
    fparams = dict(fparams)
    extra = {"adversary": (adversary, aparams)} if forecaster == "truthful" else {}
    f = make_forecaster(forecaster, horizon=T, seed=seed, **fparams, **extra)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ps, ys = [], []
    for _ in range(T):
        d = f.forecast()
        y = a.respond(d)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ps.append(p)
        ys.append(y)
    return f, np.array(ps), np.array(ys)


@pytest.mark.parametrize("forecaster,fparams,adversary,aparams", PAIRS)
def test_simulate_equals_per_round(forecaster, fparams, adversary, aparams):
    T, seed = 3000, 12345
    res, tp, ty = trace(
        forecaster, adversary, horizon=T, seed=seed, forecaster_params=fparams, adversary_params=aparams
    )
    f, ps, ys = _per_round(forecaster, fparams, adversary, aparams, T, seed)
    assert np.array_equal(tp, ps) and np.array_equal(ty, ys)
    assert res.stats == f.stats()
    assert (
        simulate(forecaster, adversary, horizon=T, seed=seed, forecaster_params=fparams, adversary_params=aparams).stats
        == res.stats
    )
    assert len(np.unique(ps)) > 1 and 0 < ys.sum() < T  # a non-trivial run


def test_seed_fixes_run_and_differs_between_seeds():
    a = simulate("cdl", "bernoulli", horizon=5000, seed=1)
    b = simulate("cdl", "bernoulli", horizon=5000, seed=1)
    c = simulate("cdl", "bernoulli", horizon=5000, seed=2)
    assert a.stats == b.stats and not (a.stats == c.stats)


def test_interleaved_objects_do_not_share_randomness():
    """Two forecasters driven alternately give the same runs as each driven alone."""
    alone = _per_round("kt", {}, "bernoulli", {}, 500, 3)[1]
    f1 = make_forecaster("kt", horizon=500, seed=3)
    f2 = make_forecaster("kt", horizon=500, seed=3)
    a1 = make_adversary("bernoulli", seed=3)
    a2 = make_adversary("bernoulli", seed=3)
    out = []
    for _ in range(500):
        for f, a, keep in ((f1, a1, True), (f2, a2, False)):
            d = f.forecast()
            y = a.respond(d)
            p = f.draw()
            f.observe(y)
            a.observe(p, y)
            if keep:
                out.append(p)
    assert np.array_equal(out, alone)


def test_xoshiro_matches_reference():
    state = np.array([1, 2, 3, 4], dtype=np.uint64)
    ref = xoshiro256ss([1, 2, 3, 4], 50)
    got = [int(next_u64(state)) for _ in range(50)]
    assert got == ref
    fs, as_ = seed_states(0)
    assert not np.array_equal(fs, as_)
    u = np.array([uniform(fs) for _ in range(10_000)])
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.02


def test_forecast_protocol():
    f = make_forecaster("cdl", horizon=100, seed=0)
    d = f.forecast()
    assert isinstance(d, Forecast) and d == f.forecast()  # once per round
    assert d.points == (0.0,) and d.probs == (1.0,) and d.predictions == (f.params["m"] ** -1,)
    with pytest.raises(ValueError, match="before draw"):
        f.observe(1)
    p = f.draw()
    assert p == f.draw() == d.predictions[0]
    for bad in (2, -1, 0.5, "1", None, np.nan):
        with pytest.raises(ValueError, match="y must be 0 or 1"):
            f.observe(bad)
    f.observe(True)
    assert f.rounds == 1
    f.draw()  # draw() alone starts the next round
    f.observe(np.float64(0.0))
    st = f.stats()
    assert st.counts.sum() == 2 and st.positives.sum() == 1
    assert make_forecaster("kt", horizon=10).stats().n_buckets == 0


def test_forecast_distribution_is_valid():
    f = make_forecaster("cdl", horizon=2000, seed=4)
    a = make_adversary("drift", horizon=2000, seed=4)
    m = f.params["m"]
    for _ in range(2000):
        d = f.forecast()
        assert 1 <= len(d.points) <= 2 and sum(d.probs) == pytest.approx(1.0)
        for x, q, b in zip(d.points, d.predictions, d.buckets):
            assert q == (b + 1) / m and (b == 0 or b / m < x) and x <= q + 1e-15
        y = a.respond(d)
        p = f.draw()
        assert p in d.predictions
        f.observe(y)
        a.observe(p, y)


def test_run_result():
    res = simulate(
        "cdl", "drift", horizon=4000, seed=0, forecaster_params={"m": 16}, adversary_params={"amplitude": 0.3}
    )
    assert isinstance(res, RunResult)
    assert res.horizon == 4000 and res.stats.total == 4000 and res.stats.n_buckets <= 16
    assert res.params["forecaster"]["m"] == 16 and res.params["adversary"] == {"amplitude": 0.3, "period": 500.0}
    assert res.seconds > 0 and res.rounds_per_second == pytest.approx(4000 / res.seconds)
    assert res.cdl == fastcdl.cdl(res.stats) and res.ece == fastcdl.ece(res.stats)
    assert res.k2 <= res.cdl <= 2 * res.ece and res.vcdl <= res.cdl and res.ucal <= res.cdl
    with pytest.raises(AttributeError):
        res.seed = 3


def test_defaults():
    T = 10**6
    f = make_forecaster("cdl", horizon=T)
    assert f.params["m"] == int(np.ceil(np.sqrt(T) / np.log(T))) and f.params["delta"] == 1 / T
    assert f.state.eta.shape[0] == 11  # K_eta = ceil(0.5 log2 T) + 1
    assert make_forecaster("cdl", horizon=T, m_scale=4).params["m"] == int(np.ceil(4 * np.sqrt(T) / np.log(T)))
    assert make_forecaster("foster", horizon=T).params["m"] == 100
    assert make_forecaster("frequency", horizon=T).params["m"] == 1000
    assert make_adversary("drift", horizon=800).params == {"amplitude": 0.4, "period": 100.0}
    assert make_adversary("markov").params == {"p01": 0.1, "p10": 0.1}
    assert make_adversary("bernoulli").params == {"p": 0.5}


def test_stochastic_adversaries_follow_their_law():
    """Outcome frequencies match P(y = 1) (the truthful forecaster's input) to sampling error."""
    for name, params, target in [
        ("bernoulli", {"p": 0.3}, 0.3),
        ("markov", {"p01": 0.2, "p10": 0.05}, 0.8),
        ("drift", {"amplitude": 0.4}, 0.5),
    ]:
        res = simulate("frequency", name, horizon=40_000, seed=1, adversary_params=params)
        rate = res.stats.positives.sum() / 40_000
        assert abs(rate - target) < 0.03, (name, rate)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: make_forecaster("nope", horizon=10), "forecaster"),
        (lambda: make_forecaster("cdl", horizon=0), "horizon"),
        (lambda: make_forecaster("cdl", horizon=10.5), "horizon"),
        (lambda: make_forecaster("cdl", horizon=True), "horizon"),
        (lambda: make_forecaster("cdl", horizon=10, m=0), "m"),
        (lambda: make_forecaster("cdl", horizon=10, m=2.5), "m"),
        (lambda: make_forecaster("cdl", horizon=10, m_scale=0), "m_scale"),
        (lambda: make_forecaster("cdl", horizon=10, m=3, m_scale=2), "m_scale"),
        (lambda: make_forecaster("cdl", horizon=10, oracle="fast"), "oracle"),
        (lambda: make_forecaster("cdl", horizon=10, m=4, delta=0.5), "delta"),
        (lambda: make_forecaster("cdl", horizon=10, delta=0), "delta"),
        (lambda: make_forecaster("cdl", horizon=10, delta=float("nan")), "delta"),
        (lambda: make_forecaster("cdl", horizon=10, foo=1), "foo"),
        (lambda: make_forecaster("foster", horizon=10, delta=0.1), "delta"),
        (lambda: make_forecaster("cdl", horizon=10, seed=-1), "seed"),
        (lambda: make_forecaster("truthful", horizon=10), "adversary"),
        (lambda: make_forecaster("truthful", horizon=10, adversary="greedy"), "adversary"),
        (lambda: make_adversary("nope"), "adversary"),
        (lambda: make_adversary("bernoulli", p=1.5), "p"),
        (lambda: make_adversary("bernoulli", p=-0.1), "p"),
        (lambda: make_adversary("markov", p01=2), "p01"),
        (lambda: make_adversary("markov", p10=-1), "p10"),
        (lambda: make_adversary("drift", horizon=10, amplitude=0.6), "amplitude"),
        (lambda: make_adversary("drift", horizon=10, period=0), "period"),
        (lambda: make_adversary("drift"), "period"),
        (lambda: make_adversary("greedy", p=0.5), "p"),
        (lambda: simulate("truthful", "greedy", horizon=10), "adversary"),
        (lambda: simulate("truthful", "bernoulli", horizon=10, forecaster_params={"adversary": "drift"}), "adversary"),
        (lambda: simulate("cdl", "bernoulli", horizon=-5), "horizon"),
        (lambda: simulate("cdl", "nope", horizon=5), "adversary"),
        (lambda: simulate("cdl", "bernoulli", horizon=5, forecaster_params={"m": -2}), "m"),
    ],
)
def test_parameter_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()
