"""The ablations of Algorithm 1 (docs/algorithm1.md): sign (c_i = sign G_i) and uniform
(c_i = G_i / (1 + |G_i|)) against slow references, and cdl's step="minimax" against the
two-point rule."""

import os
import subprocess
import sys

import numpy as np
import pytest

from fastcdl._compiled.step1 import step1_from_c
from fastcdl.online import ParameterWarning, make_adversary, make_forecaster, simulate
from fastcdl.online.forecasters.cdl import _candidate
from fastcdl.online.simulate import trace
from new_forecasters_reference import (
    Step1Reference,
    grid_params,
    run_api,
    run_reference,
    sign_weight,
    uniform_weight,
)
from online_reference import minimax_lp, step1_value

WEIGHTS = {"sign": sign_weight, "uniform": uniform_weight}
RUNS = [
    ("greedy", {}, {}),
    ("drift", {"amplitude": 0.3}, {}),
    ("contrarian", {}, {"m": 7, "delta": 0.01}),
    ("markov", {"p01": 0.3, "p10": 0.05}, {}),
    ("bernoulli", {"p": 0.3}, {"m": 40}),
]


@pytest.mark.parametrize("name", ["sign", "uniform"])
@pytest.mark.parametrize("adversary,aparams,fparams", RUNS)
def test_matches_reference_round_by_round(name, adversary, aparams, fparams):
    T, seed = 3000, 2024
    res, tp, ty = trace(name, adversary, horizon=T, seed=seed, forecaster_params=fparams, adversary_params=aparams)
    m, delta = grid_params(T, fparams.get("m"), fparams.get("delta"))
    assert res.params["forecaster"]["m"] == m and res.params["forecaster"]["delta"] == delta
    rp, ry = run_reference(Step1Reference(m, delta, WEIGHTS[name]), adversary, T, seed, aparams)
    assert np.array_equal(ty, ry), f"outcomes differ first at round {np.argmax(ty != ry)}"
    assert np.array_equal(tp, rp), f"predictions differ first at round {np.argmax(tp != rp)}"
    assert len(np.unique(tp)) > 1 and 0 < ty.sum() < T


@pytest.mark.parametrize(
    "name,fparams,adversary,aparams",
    [
        ("sign", {}, "greedy", {}),
        ("sign", {"m": 9, "delta": 0.02}, "drift", {}),
        ("uniform", {}, "greedy", {}),
        ("uniform", {"m_scale": 3}, "markov", {}),
        ("cdl", {"step": "minimax"}, "greedy", {}),
        ("cdl", {"step": "minimax", "oracle": "dense", "m": 6}, "drift", {}),
    ],
)
def test_simulate_equals_per_round(name, fparams, adversary, aparams):
    T, seed = 2000, 77
    res, tp, ty = trace(name, adversary, horizon=T, seed=seed, forecaster_params=fparams, adversary_params=aparams)
    f, ps, ys = run_api(name, fparams, adversary, aparams, T, seed)
    assert np.array_equal(tp, ps) and np.array_equal(ty, ys)
    assert res.stats == f.stats()
    assert (
        simulate(name, adversary, horizon=T, seed=seed, forecaster_params=fparams, adversary_params=aparams).stats
        == res.stats
    )
    assert len(np.unique(ps)) > 1 and 0 < ys.sum() < T


@pytest.mark.parametrize("name", ["sign", "uniform"])
def test_parameters(name):
    T = 10**6
    f = make_forecaster(name, horizon=T)
    g = make_forecaster("cdl", horizon=T)
    assert f.params == {k: g.params[k] for k in ("m", "m_scale", "delta")}
    assert np.array_equal(f.forecast().grid, g.forecast().grid)
    assert make_forecaster(name, horizon=1000, m=8).params == {"m": 8, "delta": 0.001}
    for bad, arg in [
        ({"m": 0}, "m"),
        ({"m": 2.5}, "m"),
        ({"m_scale": -1}, "m_scale"),
        ({"m": 4, "delta": 0.5}, "delta"),
        ({"delta": 0}, "delta"),
        ({"m": 3, "m_scale": 2}, "m_scale"),
        ({"oracle": "dense"}, "oracle"),
    ]:
        with pytest.raises(ValueError, match=arg):
            make_forecaster(name, horizon=100, **bad)
    with pytest.warns(ParameterWarning, match="m = 500"):
        make_forecaster(name, horizon=100, m=500)
    assert make_forecaster(name, horizon=10).spec.version == 2  # 2: step 1 on the exact signs of G


def test_sign_mixes_half_and_half_and_uniform_by_bias():
    fs = make_forecaster("sign", horizon=1000, m=4)
    fu = make_forecaster("uniform", horizon=1000, m=4)
    for f in (fs, fu):  # a hand-made state: the float sums and their signs (step 1 decides on the signs)
        f.state.G[:] = (-3.0, -0.5, 2.0, 1.0)
        f.state.eb.sign[:] = np.sign(f.state.G)
    d = fs.forecast()
    assert d.probs == (0.5, 0.5) and d.buckets == (1, 2) and d.points == (0.5, 0.5 + 0.001)
    d = fu.forecast()
    c_lo, c_hi = -0.5 / 1.5, 2.0 / 3.0
    assert d.buckets == (1, 2) and d.probs[0] == pytest.approx(c_hi / (c_hi - c_lo))


# -- cdl with step="minimax" ------------------------------------------------------------------
def _minimax_and_two_point(f):
    """This round's minimax distribution of f (step="minimax"), and the two-point rule's on the same c."""
    d = f.forecast()
    c = f.state.mm.c.copy()
    pts, probs, bkt = np.zeros(2), np.zeros(2), np.zeros(2, dtype=np.int64)
    step1_from_c(c, f.params["delta"], pts, probs, bkt)
    k = 2 if probs[1] > 0 else 1
    return d, c, step1_value(c, d.points, d.probs, d.buckets), step1_value(c, pts[:k], probs[:k], bkt[:k])


def _lp_value(c, m, delta):
    """The value of the game over the 2m candidate points by linear programming (HiGHS), computed
    on gains scaled to about 1 (the LP's tolerances are absolute) and scaled back."""
    s = 1.0 / (delta * np.abs(c).max())
    A = np.array([[c[b] * x, c[b] * (x - 1.0)] for x, b in (_candidate(j, m, delta) for j in range(2 * m))])
    return minimax_lp(A * s) / s


def _set_state(f, G, Q):
    f.state.G[:] = G
    f.state.eb.sign[:] = np.sign(G)  # step 1 decides on the exact signs
    f.state.Q[:] = Q


def test_minimax_step_equals_two_point_value_on_one_sign_change():
    """One sign change of c, the other buckets' weights not small: the minimax value is the
    closed form delta |c_lo| c_hi / (|c_lo| + c_hi) of the two-point rule, on the same state."""
    T = 10_000
    G = np.array([-30.0, -12.0, -4.0, 7.0, 15.0, 40.0])
    Q = np.abs(G) * 0.6
    for oracle in ("dense", "sparse"):
        f = make_forecaster("cdl", horizon=T, m=6, step="minimax", oracle=oracle, delta=1e-3)
        two = make_forecaster("cdl", horizon=T, m=6, oracle=oracle, delta=1e-3)
        for h in (f, two):
            _set_state(h, G, Q)
            if oracle == "sparse":  # the normaliser's cached terms follow (G, Q)
                from fastcdl._compiled.msmwc import refresh_normaliser

                st = h.state
                refresh_normaliser(st.G, st.Q, st.eta, st.off, st.S, st.terms)
        d, c, v_minimax, v_two = _minimax_and_two_point(f)
        closed = 1e-3 * (-c[2]) * c[3] / (-c[2] + c[3])
        assert v_two == pytest.approx(closed, rel=1e-12)
        assert v_minimax == pytest.approx(v_two, rel=1e-9)
        assert d.buckets == (2, 3) and d.points == (0.5, 0.5 + 1e-3)
        # the default forecaster's own distribution on the same state is the two-point rule's
        d2 = two.forecast()
        assert d2.buckets == d.buckets and d2.points == d.points
        np.testing.assert_allclose(d2.probs, d.probs, rtol=1e-9)


def test_minimax_step_beats_bisection_with_several_sign_changes():
    """Several sign changes: bisection takes one bracket, the minimax step the best mixture."""
    G = np.array([-5.0, 0.5, -0.5, 5.0, -0.01, 0.01])
    f = make_forecaster("cdl", horizon=10_000, m=6, step="minimax", oracle="dense", delta=1e-4)
    _set_state(f, G, np.abs(G))
    d, c, v_minimax, v_two = _minimax_and_two_point(f)
    assert v_minimax < v_two
    assert v_minimax == pytest.approx(_lp_value(c, 6, 1e-4), rel=1e-7)


@pytest.mark.parametrize("oracle", ["sparse", "dense"])
@pytest.mark.parametrize("adversary", ["greedy", "drift", "contrarian"])
def test_minimax_step_runs_are_valid(oracle, adversary):
    """Every round: at most two points, probabilities in [0, 1] summing to 1, each point in its
    bucket; the value never above the two-point rule's on the same c, and equal to the LP's."""
    T, m = 1500, 8
    f = make_forecaster("cdl", horizon=T, seed=5, m=m, step="minimax", oracle=oracle)
    a = make_adversary(adversary, horizon=T, seed=5)
    delta = f.params["delta"]
    equal = mixed = 0
    for t in range(T):
        d, c, v_minimax, v_two = _minimax_and_two_point(f)
        assert 1 <= len(d.points) <= 2 and all(0.0 < p <= 1.0 for p in d.probs)
        assert sum(d.probs) == pytest.approx(1.0, abs=1e-12)
        for x, q, b in zip(d.points, d.predictions, d.buckets):
            assert q == (b + 1) / m and 0.0 <= x <= q and (b == 0 or b / m < x)
        scale = np.abs(c).max() * delta + 1e-300
        assert v_minimax <= v_two + 1e-12 * scale
        assert v_minimax <= delta * np.abs(c).max() + 1e-15
        equal += abs(v_minimax - v_two) <= 1e-9 * scale
        mixed += len(d.points) == 2
        if t % 100 == 0 and np.abs(c).max() > 0:
            assert v_minimax == pytest.approx(_lp_value(c, m, delta), abs=1e-7 * scale)
        y = a.respond(d)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
    assert mixed > 100 and equal > T // 2


def test_minimax_step_parameter():
    assert make_forecaster("cdl", horizon=1000).params["step"] == "two-point"
    assert make_forecaster("cdl", horizon=1000).state.mm is None
    with pytest.raises(ValueError, match="step"):
        make_forecaster("cdl", horizon=1000, step="lp")
    res = simulate("cdl", "bernoulli", horizon=500, seed=0, forecaster_params={"step": "two-point"})
    assert res.stats == simulate("cdl", "bernoulli", horizon=500, seed=0).stats


def test_minimax_step_compiles_in_a_fresh_process():
    # cdl's simulate loop is compiled without numba's reference counting, so what it calls
    # must not allocate; with step="minimax" it once failed to compile in a process that had
    # not compiled minimax_2xk before (a fresh process, no kernel cache)
    code = (
        "from fastcdl.online import simulate; "
        "simulate('cdl', 'greedy', horizon=50, seed=0, forecaster_params={'step': 'minimax'})"
    )
    env = dict(os.environ, FASTCDL_CACHE="0")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]


def test_minimax_line_order_and_the_allocation_free_solver():
    # minimax_2xk_into orders the lines by a merge sort of its own: the same permutation as
    # numpy's stable argsort (ties, -0.0 and 0.0 included), and the same solution as minimax_2xk
    from fastcdl._compiled.minimax import _order_by_slope, minimax_2xk, minimax_2xk_into

    rng = np.random.default_rng(12)
    for K in (1, 2, 3, 7, 8, 9, 64, 301):
        for trial in range(20):
            b = rng.choice([-1.0, -0.0, 0.0, 0.5, 2.0], K) if trial % 2 else rng.normal(size=K)
            order, tmp = np.empty(K, dtype=np.int64), np.empty(K, dtype=np.int64)
            _order_by_slope(b, K, order, tmp)
            assert order.tolist() == np.argsort(-b, kind="mergesort").tolist()
            A = np.column_stack([rng.random(K), rng.random(K) if trial % 3 else np.zeros(K)])
            i1, p1, i2, p2 = np.empty(2, np.int64), np.empty(2), np.empty(2, np.int64), np.empty(2)
            work = (np.empty(K), np.empty(K), np.empty(K, np.int64), np.empty(K, np.int64), np.empty(K, np.int64))
            assert minimax_2xk(A, i1, p1) == minimax_2xk_into(A, i2, p2, *work)
            assert i1.tolist() == i2.tolist() and p1.tolist() == p2.tolist()
            if K >= 3:
                assert abs(minimax_2xk(A, i1, p1)[0] - minimax_lp(A)) <= 1e-9
