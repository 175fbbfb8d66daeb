"""The l2cal forecaster (Fishelson, Kleinberg, Okoroafor, Paes Leme, Schneider and Teng 2025;
docs/l2cal.md) against a slow reference written from the paper's definitions: the grid
{0, eps, ..., 1}, Algorithm 3's gradient steps on the scaled squared loss, Algorithm 4's rounding
onto the two neighbours with the expert's mean, and a stationary distribution of the rounding
matrix found by linear algebra on the closed class with the largest least element (numpy),
round by round; the per-round API and the compiled loop against each other; the edges; the rate."""

import math

import numpy as np
import pytest

from fastcdl.online import make_adversary, make_forecaster, registry, simulate, trace

ALPHA = 2.0  # (p - y)^2 is 2-strongly convex in p


def ref_grid(k):
    return np.array([i / k for i in range(k + 1)])


def ref_rounding(s, q):
    """H(q): the distribution on the grid with mean q supported on the cell [s_j, s_{j+1}] that
    holds q (a grid point alone when q is one)."""
    row = np.zeros(len(s))
    on = [i for i in range(len(s)) if s[i] == q]
    if on:
        row[on[0]] = 1.0
        return row
    j = max(i for i in range(len(s)) if s[i] < q)
    lam = (q - s[j]) / (s[j + 1] - s[j])  # q = (1 - lam) s_j + lam s_{j+1}
    row[j], row[j + 1] = 1.0 - lam, lam
    return row


def ref_stationary(Q):
    """The stationary distribution of the closed communicating class of Q with the largest least
    element: reachability by repeated boolean squaring, then (x Q = x, sum x = 1) on that class
    by least squares."""
    n = Q.shape[0]
    reach = (Q > 0) | np.eye(n, dtype=bool)
    for _ in range(n.bit_length() + 1):
        reach = reach | ((reach.astype(int) @ reach.astype(int)) > 0)
    closed = [i for i in range(n) if all(reach[j, i] for j in range(n) if reach[i, j])]
    classes = {tuple(j for j in range(n) if reach[i, j]) for i in closed}
    C = list(max(classes, key=min))
    A = np.vstack([Q[np.ix_(C, C)].T - np.eye(len(C)), np.ones(len(C))])
    rhs = np.zeros(len(C) + 1)
    rhs[-1] = 1.0
    x = np.zeros(n)
    x[C] = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return x


def ref_run(ys, k):
    """The reference's distribution x_t of each round, given the outcomes so far."""
    s = ref_grid(k)
    q = [0.5] * (k + 1)  # each expert's recommendation (Algorithm 3's x_1)
    G = [0.0] * (k + 1)
    for y in ys:
        Q = np.array([ref_rounding(s, qi) for qi in q])
        x = ref_stationary(Q)
        yield s, x
        for i in range(k + 1):
            g = x[i]  # the scale of expert i: the mass of its grid point
            G[i] += g
            eta = 1.0 / ALPHA if G[i] <= 1.0 else 1.0 / (ALPHA * G[i])
            grad = 2.0 * (q[i] - y)  # d/dq (q - y)^2
            q[i] = min(1.0, max(0.0, q[i] - eta * g * grad))


def play(adversary, T, k, seed, **aparams):
    """A run through the per-round API: each round's (grid, distribution), outcomes, draws."""
    f = make_forecaster("l2cal", horizon=T, seed=seed, k=k)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    dists, ys, ps = [], [], []
    for _ in range(T):
        fc = f.forecast()
        x = np.zeros(k + 1)
        x[list(fc.buckets)] = fc.probs
        dists.append((np.array(fc.grid), x))
        y = a.respond(fc)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ys.append(y)
        ps.append(p)
    return f, dists, ys, ps


CASES = [
    ("bernoulli", 2, {}),
    ("bernoulli", 7, {"p": 0.3}),
    ("contrarian", 3, {}),
    ("contrarian", 8, {}),
    ("greedy", 5, {}),
    ("greedy", 6, {}),
    ("sweep", 4, {}),
]


@pytest.mark.parametrize("adversary,k,aparams", CASES)
def test_l2cal_equals_the_reference_round_by_round(adversary, k, aparams):
    T, seed = 300, 5
    f, dists, ys, ps = play(adversary, T, k, seed, **aparams)
    # the reference, fed the same outcomes (its distributions must be the engine's ones, so the
    # adversary's answers would be the same too)
    for t, ((s, x), (sr, xr)) in enumerate(zip(dists, ref_run(ys, k))):
        assert np.array_equal(s, sr), t
        assert np.abs(x - xr).max() <= 1e-12, (t, x, xr)
    # the compiled loop, same seed: the same draws and outcomes, the same tables
    res, p, y = trace("l2cal", adversary, horizon=T, seed=seed, forecaster_params={"k": k}, adversary_params=aparams)
    assert y.tolist() == ys and p.tolist() == ps
    sim = simulate("l2cal", adversary, horizon=T, seed=seed, forecaster_params={"k": k}, adversary_params=aparams)
    for got in (res.pseudo_stats, sim.pseudo_stats):
        want = f.pseudo_stats()
        assert got.values.tolist() == want.values.tolist()
        assert np.abs(got.counts - want.counts).max() <= 1e-12 * T
        assert np.abs(got.positives - want.positives).max() <= 1e-12 * T
    assert sim.stats.counts.tolist() == f.stats().counts.tolist() and sim.pseudo_k2 == res.pseudo_k2


def test_the_first_two_rounds_by_hand():
    """Round 1: every expert at 1/2, so the point mass at 1/2 (k even), or 1/2 split evenly
    between its neighbours (k odd). Round 2 (k = 2): expert 1/2 had all the mass, G = 1, eta = 1/2,
    so it moved to y exactly; the others stayed at 1/2. The chain 1/2 -> y -> 1/2 gives {1/2, y}
    half and half."""
    assert make_forecaster("l2cal", horizon=1).forecast().predictions == (0.5,)
    fc = make_forecaster("l2cal", horizon=1, k=3).forecast()
    assert fc.buckets == (1, 2) and fc.probs == pytest.approx((0.5, 0.5), abs=1e-15)
    for y in (0, 1):
        f = make_forecaster("l2cal", horizon=2)
        f.forecast()
        f.draw()
        f.observe(y)
        fc = f.forecast()
        assert sorted(fc.predictions) == sorted((0.5, float(y)))
        assert fc.probs == pytest.approx((0.5, 0.5), abs=1e-15)


@pytest.mark.parametrize("T", [1, 2])
def test_horizons_one_and_two(T):
    assert make_forecaster("l2cal", horizon=T).params == {"k": 2}
    res, p, y = trace("l2cal", "contrarian", horizon=T)
    assert int(res.stats.total) == T and p[0] == 0.5 and y[0] == 0  # contrarian: a mean of 1/2 says 0
    assert abs(float(res.pseudo_stats.counts.sum()) - T) <= 1e-12
    if T == 2:  # round 2 is {0, 1/2} half and half: mean 1/4, so contrarian says 1
        assert y[1] == 1
        # the expected-count table: 1/2 stated 1.5 times (outcomes 0, then 1 with weight 1/2), 0 half a time
        assert res.pseudo_stats.values.tolist() == [0.0, 0.5]
        assert res.pseudo_stats.counts.tolist() == [0.5, 1.5]
        assert res.pseudo_stats.positives.tolist() == [0.5, 0.5]
        assert res.pseudo_k2 == pytest.approx((0.5 * 1.0 + 1.5 * (1 / 3 - 1 / 2) ** 2) / 2, abs=1e-15)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_outcomes_all_zero_or_all_one(p):
    """A constant outcome: the reference round by round, and the distribution moves to the end of
    the grid that is the outcome (its pseudo l2-calibration per round falls towards 0)."""
    T, k = 400, 6
    _, dists, ys, _ = play("bernoulli", T, k, 1, p=p)
    assert set(ys) == {int(p)}
    for t, ((_, x), (_, xr)) in enumerate(zip(dists, ref_run(ys, k))):
        assert np.abs(x - xr).max() <= 1e-12, t
    s = ref_grid(k)
    mean = [float(x @ s) for _, x in dists]
    far = [abs(m - p) for m in mean]
    assert far[0] == 0.5 and far[-1] < 0.05 and far[-1] < far[T // 4] < far[0]
    short, long = (
        simulate("l2cal", "bernoulli", horizon=T, forecaster_params={"k": k}, adversary_params={"p": p}).pseudo_k2
        for T in (100, 1600)
    )
    assert long < short / 4


def test_all_ones_is_the_mirror_of_all_zeros():
    """The squared loss, the grid, the rounding and the start 1/2 are symmetric under p -> 1 - p,
    y -> 1 - y: so are the runs."""
    T, k = 200, 5
    _, zeros, _, _ = play("bernoulli", T, k, 0, p=0.0)
    _, ones, _, _ = play("bernoulli", T, k, 0, p=1.0)
    for t, ((_, x0), (_, x1)) in enumerate(zip(zeros, ones)):
        assert np.abs(x0 - x1[::-1]).max() <= 1e-12, t


def test_default_k_is_the_papers_cube_root():
    """k = ceil(T^(1/3)) (eps = T^(-1/3) with 1/eps an integer), at least 2."""
    for T, k in ((1, 2), (2, 2), (8, 2), (9, 3), (27, 3), (28, 4), (4096, 16), (4097, 17), (2**16, 41), (10**6, 100)):
        assert make_forecaster("l2cal", horizon=T).params == {"k": k}
        assert k == max(2, math.ceil(round(T ** (1 / 3), 9)))
    spec = registry.forecaster("l2cal")
    resolved = spec.resolve_params({"k": 9}, 100)
    assert resolved == {"k": 9} and spec.slots(resolved) == 10 and spec.grid_m({"k": 9}, 100) == 9
    assert spec.k_point and spec.version == 1


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, True, "4", None])
def test_bad_k_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="k") as e:
        make_forecaster("l2cal", horizon=100, k=bad)
    assert e.value.argument == "k"


def test_an_unknown_parameter_is_refused_naming_it():
    with pytest.raises(ValueError, match="even") as e:
        make_forecaster("l2cal", horizon=100, even=1)
    assert e.value.argument == "even"


def test_pseudo_l2_calibration_falls_with_T_on_a_fair_coin():
    """pseudo_k2 (sum_j W_j (rho_j - s_j)^2 / T over the expected-count table) against a fair
    coin, T = 8^3, 8^4, 8^5 (k = 8, 16, 32: 1/2 on the grid at each), three seeds each: the mean
    falls at every step, and over the window at least as fast as T^-0.4 (the paper's bound per
    round is T^(-2/3) log T; a forecaster stuck at a floor would show a slope near 0)."""
    Ts = [8**3, 8**4, 8**5]
    means = [
        np.mean(
            [
                simulate("l2cal", "bernoulli", horizon=T, seed=seed, adversary_params={"p": 0.5}).pseudo_k2
                for seed in range(3)
            ]
        )
        for T in Ts
    ]
    assert means[0] > means[1] > means[2] > 0
    slope = np.polyfit(np.log(Ts), np.log(means), 1)[0]
    assert slope < -0.4, (means, slope)


def test_l2cal_is_refused_against_an_adversary_reading_two_points():
    import user_plugins

    with pytest.raises(ValueError, match="adversary 'spite'.*forecaster 'l2cal'"):
        simulate("l2cal", user_plugins.SPITE, horizon=10)
