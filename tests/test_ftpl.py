"""The ftpl forecaster against a plain-Python reference written from its definition
(tests/nonstationary_reference.FTPL: the law of the perturbed leader's nearest grid point,
from the interval of the uniform perturbation that rounds to each grid point, in exact
rationals): the same distribution every round and the same run on the same seed."""

from fractions import Fraction

import pytest

import baseline_reference as B
import nonstationary_reference as R
from fastcdl.online import make_forecaster, registry, simulate
from fastcdl.online.simulate import trace

T = 3000
ADVERSARIES = [
    ("bernoulli", {"p": 0.3}),
    ("bernoulli", {"p": 0.5}),
    ("drift", {}),
    ("markov", {}),
    ("contrarian", {}),
    ("greedy", {}),
    ("signpreserve", {}),
]
ENVIRONMENTS = [("segments", {"k": 5, "random": 1}), ("budget", {"c": 200.0})]


def _adversary(name, params, horizon):
    if name == "segments":
        return R.Segments(horizon, **params)
    if name == "budget":
        return R.Budget(horizon, **params)
    return B.make_adversary(name, horizon, **params)


def _label(a, p):
    return a + "".join(f"-{k}{v}" for k, v in p.items())


@pytest.mark.parametrize("seed", [0, 12345])
@pytest.mark.parametrize("m", [None, 7, 2])
@pytest.mark.parametrize(
    "adversary,aparams", ADVERSARIES + ENVIRONMENTS, ids=[_label(a, p) for a, p in ADVERSARIES + ENVIRONMENTS]
)
def test_run_equals_reference(adversary, aparams, m, seed):
    fparams = {} if m is None else {"m": m}
    res, tp, ty = trace("ftpl", adversary, horizon=T, seed=seed, forecaster_params=fparams, adversary_params=aparams)
    f = R.FTPL(T, m)
    assert res.params["forecaster"]["m"] == f.m
    rp, ry = B.play(f, _adversary(adversary, aparams, T), T, seed)
    assert list(ty) == ry
    assert list(tp) == rp
    assert len(set(rp)) > 1


@pytest.mark.parametrize("m", [None, 3, 10])
def test_distribution_every_round_equals_reference(m):
    """Per-round API: the published points, buckets and probabilities are the reference's."""
    fparams = {} if m is None else {"m": m}
    f = make_forecaster("ftpl", horizon=2000, seed=5, **fparams)
    ref = R.FTPL(2000, m)
    import random

    rnd = random.Random(1)
    ones = 0
    for t in range(1, 2001):
        d = f.forecast()
        want = ref.distribution(t, None, ones, None, None)
        assert list(zip(d.points, d.probs, d.buckets)) == want
        assert len(want) <= 2
        y = 1 if rnd.random() < 0.37 else 0
        f.draw()
        f.observe(y)
        ones += y


@pytest.mark.filterwarnings("ignore::fastcdl.online.ParameterWarning")  # m > T = 1, on purpose
@pytest.mark.parametrize("m", [None, 2, 3, 5])
def test_one_round(m):
    """T = 1: no past, the leader is 1/2; the law is the perturbed 1/2's nearest grid point."""
    fparams = {} if m is None else {"m": m}
    res, tp, ty = trace("ftpl", "bernoulli", horizon=1, seed=0, forecaster_params=fparams)
    mm = res.params["forecaster"]["m"]
    law = R.FTPL(1, m).law(1, 0)
    assert mm == (2 if m is None else m)
    if mm % 2 == 0:
        assert law == {mm // 2: 1} and tp[0] == 0.5
    else:
        assert law == {mm // 2: Fraction(1, 2), mm // 2 + 1: Fraction(1, 2)}
        assert tp[0] in (float(Fraction(mm // 2, mm)), float(Fraction(mm // 2 + 1, mm)))
    assert int(res.stats.total) == 1


@pytest.mark.parametrize("p,end", [(0.0, 0.0), (1.0, 1.0)])
def test_constant_outcomes(p, end):
    """All-0 (all-1) outcomes: 1/2 (or its two neighbours) in round 1, then 0 (1) every round."""
    for T_ in (2, 17, 1000):
        res, tp, ty = trace("ftpl", "bernoulli", horizon=T_, seed=3, adversary_params={"p": p})
        assert set(ty) == {int(p)}
        assert all(x == end for x in tp[1:])
        rp, ry = B.play(R.FTPL(T_), B.Bernoulli(p), T_, 3)
        assert list(tp) == rp and list(ty) == ry


def test_registered():
    spec = registry.forecaster("ftpl")
    assert spec.version == 1 and spec.grid_m({}, 2**16) == 77 and spec.grid_m({"m": 9}, 100) == 9
    assert [spec.resolve_params({}, T)["m"] for T in (1, 2, 3, 1024)] == [2, 2, 2, 13]


def test_a_fair_coin_decays():
    """Against a fair coin the stated frequency tracks 1/2: ECE falls between 2^10 and 2^16."""
    small = sum(simulate("ftpl", "bernoulli", horizon=2**10, seed=s).ece for s in range(4))
    large = sum(simulate("ftpl", "bernoulli", horizon=2**16, seed=s).ece for s in range(4))
    assert large < small / 3
