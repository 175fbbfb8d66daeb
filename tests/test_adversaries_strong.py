"""The adversaries that see raw points (rawpoint), know the grid (gridedge), sweep with
alternating biases (sweep) and look ahead on the CDL (lookahead), against the exact
references of tests/adversary_reference.py, round by round, on fixed forecast sequences
whose raw points differ from the stated values (as Algorithm 1's do); then through simulate.

K-point rounds (docs/engine.md): those four and greedy and signpreserve (references in
tests/baseline_reference.py) against the same references on fixed K-slot forecast sequences
(slots of probability 0, slot 0 among them; stated values 0, 1/2 and 1; dyadic weights that
make exact ties) and in whole games against klcal (K-point) and kt (two-point), compiled
loop, per-round API and reference round by round; and a K-point table whose round has two
slots gives what a two-point table gives (cdlahead: tests/test_cdlahead.py).
"""

from fractions import Fraction

import numpy as np
import pytest

import adversary_reference as A
import baseline_reference as R
from fastcdl.online import make_adversary, make_forecaster, simulate
from fastcdl.online.forecasters import Forecast
from fastcdl.online.simulate import trace


def _words(state):
    return [int(w) for w in state]


def _algorithm1_forecasts(m, rounds, seed, delta=1e-9):
    """Distributions shaped like Algorithm 1's: stated values b/m (b = 1..m, indices 0..m-1);
    a mixture of the raw points lo/m (bucket lo - 1) and lo/m + delta (bucket lo), or a point
    mass at 0 (bucket 0) or 1 (bucket m - 1) or at a grid point; random mixing weights,
    including the dyadic ones that make exact ties."""
    g = np.random.default_rng(seed)
    q = np.arange(1, m + 1) / m
    out = []
    for _ in range(rounds):
        u = g.random()
        if u < 0.1:
            out.append(((0.0,), (1.0,), (0,)))
        elif u < 0.2:
            out.append(((1.0,), (1.0,), (m - 1,)))
        elif u < 0.3:
            b = int(g.integers(m))
            out.append(((float(q[b]),), (1.0,), (b,)))
        else:
            lo = int(g.integers(1, m))
            r = float(g.choice([0.5, 0.25, 0.75, g.random()]))
            out.append(((lo / m, lo / m + delta), (r, 1.0 - r), (lo - 1, lo)))
    return q, out


def _foster_forecasts(m, rounds, seed):
    """Stated = raw on the grid 0, 1/m, ..., 1 (Foster's forecaster), mixtures of neighbours."""
    g = np.random.default_rng(seed)
    q = np.arange(m + 1) / m
    out = []
    for _ in range(rounds):
        i = int(g.integers(m))
        if g.random() < 0.3:
            out.append(((float(q[i]),), (1.0,), (i,)))
        else:
            r = float(g.choice([0.5, g.random()]))
            out.append(((float(q[i]), float(q[i + 1])), (r, 1.0 - r), (i, i + 1)))
    return q, out


CASES = [
    ("rawpoint", {}),
    ("rawpoint", {"mix": 0.5}),
    ("rawpoint", {"shift": -0.03, "mix": 0.25}),
    ("rawpoint", {"shift": 0.2, "mix": 1.0}),
    ("gridedge", {}),
    ("gridedge", {"position": 0.0}),
    ("gridedge", {"position": 0.3}),
    ("gridedge", {"position": 1.0}),
    ("sweep", {}),
    ("sweep", {"low": 0.0, "high": 1.0, "amp": 0.2, "period": 37.5}),
    ("sweep", {"low": 0.4, "high": 0.4, "amp": 0.5, "period": 10.0}),
    ("lookahead", {"kinks": 8}),
    ("lookahead", {"kinks": 2}),
    ("lookahead", {"kinks": 32}),
]


def _id(a, p):
    return a + "".join(f"-{k}{v}" for k, v in p.items())


@pytest.mark.parametrize("grid", ["algorithm1", "foster"])
@pytest.mark.parametrize("adversary,aparams", CASES, ids=[_id(a, p) for a, p in CASES])
def test_adversary_against_reference(adversary, aparams, grid):
    rounds, seed, T = 600 if adversary == "lookahead" else 1500, 11, 400
    q, forecasts = _algorithm1_forecasts(9, rounds, 3) if grid == "algorithm1" else _foster_forecasts(8, rounds, 3)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ra = A.make(adversary, T, **aparams)
    _, arng = R.streams(seed)
    pick = np.random.default_rng(99)  # stands in for the forecaster's draw
    n, s, prev_y, ys = [0] * len(q), [0] * len(q), -1, []
    for t, (points, ps, buckets) in enumerate(forecasts, start=1):
        stated = tuple(float(q[b]) for b in buckets)
        y = a.respond(Forecast(points, ps, stated, buckets, q))
        ry = ra.respond(t, prev_y, list(zip(ps, points, buckets)), list(q), n, s, arng)
        assert (y, _words(a._rng)) == (ry, arng.s), f"round {t}: {points} {ps} {buckets}: kernel {y}, reference {ry}"
        k = 0 if len(buckets) == 1 or pick.random() < ps[0] else 1
        a.observe(stated[k], y)
        n[buckets[k]] += 1
        s[buckets[k]] += y
        prev_y = y
        ys.append(y)
        if adversary == "lookahead" and t % 50 == 0:
            K = aparams["kinks"]
            # the incrementally kept grid values equal the ones recomputed from the table (after
            # the next round folds this round in, so compare the state as of the previous round)
            a_F = a._par[1 : K + 2]
            n_prev, s_prev = list(n), list(s)
            n_prev[buckets[k]] -= 1
            s_prev[buckets[k]] -= y
            assert list(a_F) == [float(v) for v in ra.f_scaled(list(q), n_prev, s_prev)]
    assert 0 < sum(ys) < rounds


def test_lookahead_objective_is_cdl_on_the_kink_grid():
    """CDL_K (the envelope of f at the kinks j/K only) never exceeds the exact CDL of
    fastcdl.cdl, and approaches it as K grows: f has slope at most 1 in absolute value
    between its jumps, so a kink grid of spacing 1/K loses at most about 2/K."""
    import fastcdl as fc

    g = np.random.default_rng(4)
    for _ in range(25):
        m = int(g.integers(1, 6))
        q = np.sort(g.choice(np.arange(1, 17) / 16, m, replace=False))
        n = g.integers(1, 40, m)
        s = np.array([int(g.integers(0, ni + 1)) for ni in n])
        exact = fc.cdl(fc.BucketStats.from_table(q, n, s))
        T = int(n.sum())
        for K in (2, 16, 256):
            ref = A.Lookahead(kinks=K)
            cdl_k = float(ref.cdl_k(ref.f_scaled(list(q), list(n), list(s))) / (K * T))
            assert cdl_k <= exact + 1e-12
            if K == 256:
                assert cdl_k >= exact - 4.0 / K


RUNS = [("rawpoint", {"mix": 1.0, "shift": -0.02}), ("gridedge", {}), ("sweep", {}), ("lookahead", {})]


@pytest.mark.parametrize("forecaster", ["cdl", "foster"])
@pytest.mark.parametrize("adversary,aparams", RUNS, ids=[a for a, _ in RUNS])
def test_simulate_equals_per_round(forecaster, adversary, aparams):
    """simulate's compiled loop and the per-round API give the same run (the scratch memory
    of lookahead starts at zero in each)."""
    from fastcdl.online import make_forecaster
    from fastcdl.online.simulate import trace

    T, seed = 2500, 5
    res, tp, ty = trace(forecaster, adversary, horizon=T, seed=seed, adversary_params=aparams)
    f = make_forecaster(forecaster, horizon=T, seed=seed)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ps, ys = [], []
    for _ in range(T):
        y = a.respond(f.forecast())
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ps.append(p)
        ys.append(y)
    assert np.array_equal(tp, ps) and np.array_equal(ty, ys)
    assert res.stats == f.stats()
    if forecaster != "foster" or adversary not in ("gridedge", "rawpoint"):
        assert 0 < sum(ys) < T  # foster starts at 0, whose bucket edge and target are 0: all y = 0


def test_rawpoint_makes_algorithm1_carry_its_rounding_offset():
    """Outcomes calibrated at the raw points: Algorithm 1 starts at the raw point 0, which it
    states as 1/m; every outcome is then 0 and nothing moves it, so ECE is exactly 1/m."""
    from fastcdl.online.plugins import default_cdl_m

    T = 2**12
    width = 1.0 / default_cdl_m(T)
    res = simulate("cdl", "rawpoint", horizon=T, seed=0, adversary_params={"shift": 0.0, "mix": 0.0})
    assert res.ece == pytest.approx(width, rel=1e-12) and res.stats.positives.sum() == 0


@pytest.mark.parametrize(
    "params,match", [({"kinks": 3}, "power of two"), ({"kinks": 8192}, "power of two"), ({"kinks": 1}, "kinks")]
)
def test_lookahead_rejects_bad_kinks(params, match):
    with pytest.raises(ValueError, match=match):
        make_adversary("lookahead", **params)


@pytest.mark.parametrize(
    "adversary,params,match",
    [
        ("sweep", {"low": 0.6, "high": 0.5}, "high must be >= low"),
        ("sweep", {"amp": 0.6}, "amp"),
        ("rawpoint", {"mix": 2}, "mix"),
        ("gridedge", {"position": -0.1}, "position"),
        ("sweep", {"period": 0}, "period"),
    ],
)
def test_bad_parameters(adversary, params, match):
    with pytest.raises(ValueError, match=match):
        make_adversary(adversary, horizon=100, **params)


def test_plugin_scratch_persists_within_a_run_and_starts_at_zero():
    """A plug-in adversary's scratch slots (after its parameters in par) keep their values
    from round to round and are zero at the start of every run."""
    from numba import njit

    from fastcdl.online import plugin_adversary
    from fastcdl.online.simulate import trace

    @njit
    def every_third(view, table, par, rng):
        par[1] += 1.0  # scratch slot 0 (par[0] is the parameter 'every')
        return 1 if par[1] % par[0] == 0 else 0

    adv = plugin_adversary(every_third, name="every_third", params={"every": 3.0}, scratch=lambda p: 1)
    for _ in range(2):
        _, _, ys = trace("kt", adv, horizon=30, seed=1)
        assert list(ys) == [1 if (t + 1) % 3 == 0 else 0 for t in range(30)]
    with pytest.raises(ValueError, match="scratch"):
        plugin_adversary(every_third, name="x", params={"every": 3.0}, scratch=2)


# -- K-point rounds ----------------------------------------------------------------------------
def _reference(name, T, params):
    """respond(t, prev_y, entries, table_q, n, s, rng) of the adversary's reference; greedy's and
    signpreserve's (tests/baseline_reference.py) read (probability, bucket) and exact stated values."""
    if name in ("greedy", "signpreserve"):
        ra = R.make_adversary(name, T, **params)

        def respond(t, prev_y, entries, table_q, n, s, rng):
            stated = [Fraction(float(v)) for v in table_q]
            return ra.respond(t, prev_y, [(p, b) for p, x, b in entries], stated, n, s, rng)

        return respond
    return A.make(name, T, **params).respond


def _kpoint_forecasts(m, rounds, seed, K=5):
    """K-slot distributions over the grid j/m (0, 1/2 and 1 stated for even m): 2 to K slots
    of positive probability on distinct buckets, the others of probability 0 at random
    positions (slot 0 too) and buckets; dyadic weights (exact ties) or random ones; raw points
    at the stated values or up to a bucket below; a point mass now and then."""
    g = np.random.default_rng(seed)
    q = np.arange(m + 1) / m
    out = []
    for _ in range(rounds):
        used = int(g.integers(1, K + 1))
        buckets = [int(b) for b in g.choice(m + 1, size=used, replace=False)]
        if used == 1:
            probs = [1.0]
        elif g.random() < 0.5:
            probs = [1.0 / used] * used if used in (2, 4) else [0.5] + [0.5 / (used - 1)] * (used - 1)
            if used == 3 and g.random() < 0.5:
                probs = [0.25, 0.5, 0.25]
        else:
            w = g.random(used)
            probs = [float(v) for v in w / w.sum()]
        points = [float(q[b]) - (float(g.random()) / m if g.random() < 0.5 and b > 0 else 0.0) for b in buckets]
        while len(probs) < K:  # unused slots, anywhere
            i = int(g.integers(len(probs) + 1))
            probs.insert(i, 0.0)
            buckets.insert(i, int(g.integers(m + 1)))
            points.insert(i, float(q[buckets[i]]))
        out.append((tuple(points), tuple(probs), tuple(buckets)))
    return q, out


K_CASES = [
    ("rawpoint", {}),
    ("rawpoint", {"shift": -0.03, "mix": 0.25}),
    ("gridedge", {}),
    ("gridedge", {"position": 0.0}),
    ("sweep", {}),
    ("sweep", {"low": 0.4, "high": 0.4, "amp": 0.5, "period": 10.0}),
    ("lookahead", {"kinks": 8}),
    ("lookahead", {"kinks": 32}),
    ("greedy", {}),
    ("signpreserve", {}),
]


def _scratch(name, a):
    """The kept summary of an adversary with one (lookahead's grid values F_0..F_K), else None."""
    if name == "lookahead":
        return list(a._par[1 : int(a._par[0]) + 2])
    return None


@pytest.mark.parametrize("m", [8, 9])
@pytest.mark.parametrize("adversary,aparams", K_CASES, ids=[_id(a, p) for a, p in K_CASES])
def test_k_point_rounds_against_reference(adversary, aparams, m):
    """Fixed K-slot forecasts (per-round API, KTable): every outcome and the generator after it
    equal the reference's; lookahead's grid values equal the ones recomputed from the table."""
    rounds, seed, T = 300 if adversary == "lookahead" else 1000, 7, 400
    q, forecasts = _kpoint_forecasts(m, rounds, 5)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ra = _reference(adversary, T, aparams)
    _, arng = R.streams(seed)
    pick = np.random.default_rng(98)
    n, s, prev_y, ys = [0] * len(q), [0] * len(q), -1, []
    for t, (points, ps, buckets) in enumerate(forecasts, start=1):
        stated = tuple(float(q[b]) for b in buckets)
        y = a.respond(Forecast(points, ps, stated, buckets, q, support=len(ps)))
        ry = ra(t, prev_y, list(zip(ps, points, buckets)), list(q), n, s, arng)
        assert (y, _words(a._rng)) == (ry, arng.s), f"round {t}: {points} {ps} {buckets}: kernel {y}, reference {ry}"
        k = int(np.searchsorted(np.cumsum(ps), pick.random() * sum(ps), side="right"))
        k = min(k, len(ps) - 1)
        while ps[k] == 0.0:
            k -= 1
        a.observe(stated[k], y)
        if adversary == "lookahead" and t % 25 == 0:  # as of the previous round (folded in the next)
            assert _scratch(adversary, a) == [float(v) for v in ra.__self__.f_scaled(list(q), n, s)]
        n[buckets[k]] += 1
        s[buckets[k]] += y
        prev_y = y
        ys.append(y)
    assert 0 < sum(ys) < rounds


@pytest.mark.parametrize("forecaster", ["klcal", "kt"])
@pytest.mark.parametrize("adversary,aparams", K_CASES, ids=[_id(a, p) for a, p in K_CASES])
def test_game_against_reference(adversary, aparams, forecaster):
    """A whole game against klcal (K-point rounds; stated values without exact fractions) and
    kt (two-point): simulate's compiled loop, the per-round API and the reference agree on
    every outcome and stated prediction, the reference's generator on every word."""
    T, seed = (150 if adversary == "lookahead" else 400), 2
    # klcal with the paper's grid size (odd here): 1/2 off the grid, so it mixes three or more
    # stated values in more rounds than with its default even K
    fparams = {"even": 0} if forecaster == "klcal" else {}
    res, tp, ty = trace(
        forecaster, adversary, horizon=T, seed=seed, adversary_params=aparams, forecaster_params=fparams
    )
    f = make_forecaster(forecaster, horizon=T, seed=seed, **fparams)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ra = _reference(adversary, T, aparams)
    _, arng = R.streams(seed)
    q = list(f.table.q)
    n, s, prev_y, wide = [0] * len(q), [0] * len(q), -1, 0
    for t in range(1, T + 1):
        d = f.forecast()
        wide += len(d.probs) > 2
        y = a.respond(d)
        ry = ra(t, prev_y, list(zip(d.probs, d.points, d.buckets)), q, n, s, arng)
        assert (y, _words(a._rng)) == (ry, arng.s), f"round {t}: {d}: kernel {y}, reference {ry}"
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        assert (p, y) == (tp[t - 1], ty[t - 1]), f"round {t}: simulate and the per-round API differ"
        b = d.buckets[list(d.predictions).index(p)]
        n[b] += 1
        s[b] += y
        prev_y = y
    assert res.stats == f.stats()
    if forecaster == "kt":
        assert wide == 0
    elif (adversary, aparams) != K_CASES[5]:  # against that sweep (targets -0.1 and 0.9) klcal mixes two values
        assert wide >= T // 20  # rounds of three or more stated values


TWO_AS_K = [
    ("rawpoint", {"shift": -0.03, "mix": 0.25}),
    ("gridedge", {"position": 0.3}),
    ("sweep", {}),
    ("lookahead", {"kinks": 16}),
    ("greedy", {}),
    ("signpreserve", {}),
    ("cdlahead", {}),
]


@pytest.mark.parametrize("grid", ["algorithm1", "foster"])
@pytest.mark.parametrize("adversary,aparams", TWO_AS_K, ids=[a for a, _ in TWO_AS_K])
def test_two_slots_of_a_k_point_table_play_as_two_points(adversary, aparams, grid):
    """The K-point rule on a round with two slots (the others of probability 0) is the two-point
    rule: the same outcomes, the same generator, the same kept summary (lookahead's F, cdlahead's
    H, caught up through the weighted count in the K-point run) round after round."""
    from fastcdl.online.adversaries import cdlahead

    rounds, seed, T = 400, 4, 400
    q, forecasts = _algorithm1_forecasts(9, rounds, 6) if grid == "algorithm1" else _foster_forecasts(8, rounds, 6)
    two = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    wide = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    pick = np.random.default_rng(97)
    for t, (points, ps, buckets) in enumerate(forecasts, start=1):
        stated = tuple(float(q[b]) for b in buckets)
        y = two.respond(Forecast(points, ps, stated, buckets, q))
        yk = wide.respond(Forecast(points, ps, stated, buckets, q, support=4))
        assert (y, _words(two._rng)) == (yk, _words(wide._rng)), f"round {t}"
        if adversary == "lookahead":
            assert _scratch(adversary, two) == _scratch(adversary, wide)
        if adversary == "cdlahead":
            H = slice(cdlahead._H, cdlahead._H + len(q))
            assert np.array_equal(two._par[H], wide._par[H]), f"round {t}"
        k = 0 if len(buckets) == 1 or pick.random() < ps[0] else 1
        two.observe(stated[k], y)
        wide.observe(stated[k], y)
