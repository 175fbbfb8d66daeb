"""acrs, the Almost-One-Step-Ahead forecaster (Arunachaleswaran, Collina, Roth, Shi; arXiv 2402.11410):
an exact slow reference, simulate == per-round API, and its distance-to-calibration bound.

Which quantity the bound check bounds: the distance to calibration of the run's stated
predictions, dCE(p, y) = min over perfectly calibrated q of sum_t |p_t - q_t|. The test builds
one perfectly calibrated q from the trace (q_t = the frequency of y over the rounds whose
One-Step-Ahead shadow prediction equals round t's; checked to be calibrated, in exact
fractions), so sum_t |p_t - q_t| >= dCE(p, y): an upper bound on dCE, which must be
<= T/m + m + 1 (2 sqrt(T) + 1 at m = sqrt(T)), the theorem's bound. The generic bound
dCE <= ECE * T is reported as well, but it is not what the theorem controls: against an
adaptive adversary the stated predictions' ECE * T is of order T (the forecaster is
deterministic), far above the bound, while their distance to calibration stays below it.
"""

import math

import numpy as np
import pytest

from fastcdl.online import make_forecaster, simulate
from fastcdl.online.simulate import trace
from new_forecasters_reference import ACRSReference, calibrated_certificate, ece_times_T, run_api, run_reference

ADVERSARIES = [
    ("greedy", {}),
    ("contrarian", {}),
    ("drift", {"amplitude": 0.4}),
    ("markov", {"p01": 0.05, "p10": 0.2}),
    ("bernoulli", {"p": 0.5}),
]


@pytest.mark.parametrize("pick", ["lower", "upper"])
@pytest.mark.parametrize("adversary,aparams", ADVERSARIES)
def test_matches_reference_round_by_round(adversary, aparams, pick):
    T, seed = 2500, 31
    res, tp, ty = trace(
        "acrs", adversary, horizon=T, seed=seed, forecaster_params={"pick": pick}, adversary_params=aparams
    )
    m = res.params["forecaster"]["m"]
    assert m == math.isqrt(T - 1) + 1  # ceil(sqrt T)
    ref = ACRSReference(m, pick)
    rp, ry = run_reference(ref, adversary, T, seed, aparams)
    assert np.array_equal(ty, ry), f"outcomes differ first at round {np.argmax(ty != ry)}"
    assert np.array_equal(tp, rp), f"predictions differ first at round {np.argmax(tp != rp)}"
    assert len(np.unique(tp)) > 1 and 0 < ty.sum() < T


@pytest.mark.parametrize("fparams,adversary", [({}, "greedy"), ({"m": 12, "pick": "upper"}, "drift"), ({}, "markov")])
def test_simulate_equals_per_round(fparams, adversary):
    T, seed = 3000, 8
    res, tp, ty = trace("acrs", adversary, horizon=T, seed=seed, forecaster_params=fparams)
    f, ps, ys = run_api("acrs", fparams, adversary, {}, T, seed)
    assert np.array_equal(tp, ps) and np.array_equal(ty, ys)
    assert res.stats == f.stats()
    assert simulate("acrs", adversary, horizon=T, seed=seed, forecaster_params=fparams).stats == res.stats
    # the kernel's shadow biases obey |alpha_j| <= 1, and the tree counts the brackets
    st, m = f.state, f.params["m"]
    a = np.arange(m + 1) * st.n - m * st.s
    assert np.all(np.abs(a) <= m)
    flags = (a[:-1] <= 0) & (a[1:] >= 0)
    P = st.tree.shape[0] // 2
    assert np.array_equal(st.tree[P : P + m], flags) and st.tree[1] == flags.sum() > 0


@pytest.mark.parametrize("T", [4096, 30_000])
@pytest.mark.parametrize("adversary,aparams", ADVERSARIES)
@pytest.mark.parametrize("pick", ["lower", "upper"])
def test_distance_to_calibration_bound(T, adversary, aparams, pick):
    res, p, y = trace("acrs", adversary, horizon=T, seed=3, forecaster_params={"pick": pick}, adversary_params=aparams)
    m = res.params["forecaster"]["m"]
    dce_upper, q = calibrated_certificate(p, y, m, pick)
    bound = T / m + m + 1
    assert dce_upper <= bound, (adversary, float(dce_upper), bound)
    if math.isqrt(T) ** 2 == T:
        assert dce_upper <= 2 * math.sqrt(T) + 1
    if adversary == "greedy":  # ECE * T is not what is bounded: it is of order T here
        assert ece_times_T(p, y) > 10 * bound


def test_bound_with_other_grids():
    """T/m + m + 1 for m other than sqrt(T), against the adaptive adversary."""
    T = 5000
    for m in (5, 30, 200):
        res, p, y = trace("acrs", "greedy", horizon=T, seed=1, forecaster_params={"m": m})
        assert calibrated_certificate(p, y, m)[0] <= T / m + m + 1


def test_deterministic():
    """No randomness: against a deterministic adversary the run is the same for every seed."""
    runs = [trace("acrs", "contrarian", horizon=2000, seed=s)[1] for s in (0, 1, 99)]
    assert all(np.array_equal(runs[0], r) for r in runs[1:])
    f = make_forecaster("acrs", horizon=100, seed=4)
    rng = f._rng.copy()
    for y in [1, 0, 0, 1, 1] * 10:
        d = f.forecast()
        assert len(d.points) == 1 and d.probs == (1.0,) and d.points == d.predictions
        f.draw()
        f.observe(y)
    assert np.array_equal(f._rng, rng)  # the generator was never drawn from


def test_parameters():
    assert make_forecaster("acrs", horizon=10**6).params == {"m": 1000, "pick": "lower"}
    assert make_forecaster("acrs", horizon=1000).params["m"] == 32
    assert make_forecaster("acrs", horizon=1).params["m"] == 1
    assert make_forecaster("acrs", horizon=50, m=3, pick="upper").params == {"m": 3, "pick": "upper"}
    assert np.array_equal(make_forecaster("acrs", horizon=100).forecast().grid, np.arange(11) / 10)
    for bad, arg in [
        ({"m": 0}, "m"),
        ({"m": 1.5}, "m"),
        ({"pick": "middle"}, "pick"),
        ({"pick": 1}, "pick"),
        ({"delta": 0.1}, "delta"),
    ]:
        with pytest.raises(ValueError, match=arg):
            make_forecaster("acrs", horizon=100, **bad)
    assert make_forecaster("acrs", horizon=10).spec.version == 1
    res = simulate("acrs", "bernoulli", horizon=1, seed=0)  # m = 1: the grid {0, 1}
    assert res.stats.total == 1
