"""The klcal forecaster (Luo, Senapati and Sharan 2025; docs/klcal.md) against a slow reference
written from the definitions: the sin^2 grid, the experts' Laplace forecasts, the randomized
rounding onto the two neighbours, and a stationary distribution of the rounding matrix found by
linear algebra on the closed class with the largest least element (numpy), round by round."""

import math

import numpy as np
import pytest

from fastcdl.online import make_adversary, make_forecaster, simulate, trace
from fastcdl.online.forecasters import klcal


def ref_grid(K):
    z = [math.sin(math.pi * i / (2 * K)) ** 2 for i in range(K + 1)]
    z[0] = math.sin(math.pi / (4 * K)) ** 2
    z[K] = math.cos(math.pi / (4 * K)) ** 2
    return np.array(z)


def ref_row(z, w):
    """w rounded onto its neighbours z_k <= w < z_{k+1}: weights u on z_k, v on z_{k+1}."""
    row = np.zeros(len(z))
    if w < z[0]:
        row[0] = 1.0
    elif w >= z[-1]:
        row[-1] = 1.0
    else:
        k = max(i for i in range(len(z)) if z[i] <= w)
        u = (z[k + 1] - w) / (z[k + 1] * (1 - z[k + 1]))
        v = (w - z[k]) / (z[k] * (1 - z[k]))
        row[k], row[k + 1] = u / (u + v), v / (u + v)
    return row


def ref_stationary(R):
    """The stationary distribution of the closed communicating class of R with the largest least
    element: reachability by search, then (P R = P, sum P = 1) on that class by least squares."""
    n = R.shape[0]
    reach = []
    for i in range(n):
        seen, todo = {i}, [i]
        while todo:
            s = todo.pop()
            for j in np.nonzero(R[s] > 0)[0]:
                if j not in seen:
                    seen.add(int(j))
                    todo.append(int(j))
        reach.append(seen)
    closed = [i for i in range(n) if all(i in reach[j] for j in reach[i])]  # recurrent states
    lead = max(min(reach[i]) for i in closed)
    C = sorted(reach[next(i for i in closed if min(reach[i]) == lead)])
    sub = R[np.ix_(C, C)]
    A = np.vstack([sub.T - np.eye(len(C)), np.ones(len(C))])
    rhs = np.zeros(len(C) + 1)
    rhs[-1] = 1.0
    p = np.linalg.lstsq(A, rhs, rcond=None)[0]
    P = np.zeros(n)
    P[C] = p
    return P


def ref_run(ys_and_rounds, K):
    """The reference's distribution of each round, given the outcomes so far."""
    z = ref_grid(K)
    a = np.zeros(K + 1)
    b = np.zeros(K + 1)
    for y in ys_and_rounds:
        R = np.array([ref_row(z, (a[i] + 1) / (a[i] + b[i] + 2)) for i in range(K + 1)])
        P = ref_stationary(R)
        yield z, P
        a += P * y
        b += P * (1 - y)


@pytest.mark.parametrize("adversary,K", [("bernoulli", 4), ("bernoulli", 7), ("contrarian", 5), ("contrarian", 8)])
def test_klcal_equals_the_reference_round_by_round(adversary, K):
    T = 400
    f = make_forecaster("klcal", horizon=T, seed=5, k=K)
    a = make_adversary(adversary, horizon=T, seed=5)
    ys = []
    dists = []
    for _ in range(T):
        fc = f.forecast()
        P = np.zeros(K + 1)
        P[list(fc.buckets)] = fc.probs
        dists.append((np.array(fc.grid), P))
        y = a.respond(fc)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ys.append(y)
    # the reference, fed the same outcomes (its distributions must be the engine's ones, so the
    # adversary's answers would be the same too)
    for t, ((z, P), (zr, Pr)) in enumerate(zip(dists, ref_run(ys, K))):
        assert np.array_equal(z, zr) or np.abs(z - zr).max() <= 1e-15, t
        assert np.abs(P - Pr).max() <= 1e-12, (t, P, Pr)
    res, p, y = trace("klcal", adversary, horizon=T, seed=5, forecaster_params={"k": K})
    assert y.tolist() == ys


def test_the_grid_is_inside_zero_one_and_holds_one_half_for_even_k():
    for K in (2, 3, 8, 43):
        z = klcal.grid(K)
        assert np.all(np.diff(z) > 0) and 0 < z[0] and z[-1] < 1
        assert np.abs(z - ref_grid(K)).max() <= 1e-15
    assert abs(klcal.grid(8)[4] - 0.5) <= 1e-15


def test_default_k_is_the_papers_rounded_up_to_even():
    """default_k is the paper's K; the forecaster rounds it up to an even number unless even=0."""
    for T, K in ((2**12, 8), (2**16, 19), (2**20, 43), (2, 2)):
        assert klcal.default_k(T) == K
        assert make_forecaster("klcal", horizon=T).params["k"] == K + K % 2
        assert make_forecaster("klcal", horizon=T, even=0).params["k"] == K


def test_stationary_handles_a_reducible_matrix():
    # two closed classes {0, 1} and {3}; state 2 transient: the class with the larger least element, {3}
    R = np.array([[0.5, 0.5, 0, 0], [0.25, 0.75, 0, 0], [0.2, 0, 0.3, 0.5], [0, 0, 0, 1.0]])
    P = np.zeros(4)
    klcal.stationary(R.copy(), P)
    assert P.tolist() == [0.0, 0.0, 0.0, 1.0]
    R = np.array([[0.5, 0.5, 0, 0], [0.25, 0.75, 0, 0], [0.2, 0, 0.3, 0.5], [0, 0, 0.6, 0.4]])
    P = np.zeros(4)
    klcal.stationary(R.copy(), P)
    assert np.abs(P - ref_stationary(R)).max() <= 1e-14


def test_klcal_is_refused_against_an_adversary_reading_two_points_and_runs_against_k_point_ones():
    import user_plugins
    from fastcdl.online import registry

    with pytest.raises(ValueError, match="adversary 'spite'.*forecaster 'klcal'"):
        simulate("klcal", user_plugins.SPITE, horizon=10)
    res = simulate("klcal", "segments", horizon=2000, seed=1)
    assert int(res.stats.total) == 2000 and np.isfinite(res.pseudo_klcal)
    for name in registry.adversaries():  # every built-in plays it (tests/test_adversaries_strong.py: their rules)
        assert int(simulate("klcal", name, horizon=64, seed=0).stats.total) == 64
    with pytest.raises(ValueError, match="k"):
        make_forecaster("klcal", horizon=100, k=1)


def test_even_rounds_the_default_k_up_to_an_even_number():
    for T in (2**12, 2**16, 2**20):
        k = klcal.default_k(T)
        assert make_forecaster("klcal", horizon=T, even=1).params["k"] == k + (k % 2)
        assert make_forecaster("klcal", horizon=T).params == make_forecaster("klcal", horizon=T, even=1).params
    assert make_forecaster("klcal", horizon=2**16, even=0).params["k"] == 19
    assert make_forecaster("klcal", horizon=2**16, k=19).params["k"] == 19  # k alone: as given, odd or not
    for bad in ({"even": 2}, {"even": True}, {"even": 1, "k": 4}, {"even": 0, "k": 4}):
        with pytest.raises(ValueError, match="even"):
            make_forecaster("klcal", horizon=100, **bad)


def test_the_rate_readme_table_is_the_bar_file():
    """results/klcal-rates/README.md's slope table against bar.csv beside it."""
    import csv
    import re
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "results" / "klcal-rates"
    bar = {
        (r["forecaster"], r["adversary"], r["window"]): r
        for r in csv.DictReader((folder / "bar.csv").read_text().splitlines())
        if r["metric"] == "pseudo_klcal"
    }
    checked = 0
    for line in (folder / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not re.fullmatch(r"-?\d\.\d+", cells[4]):
            continue
        window = "all" if cells[2] == "all nine" else cells[2]
        r = bar[(cells[0], cells[1], window)]
        assert cells[3] == r["ks"]
        lo, hi = re.findall(r"-?\d+\.\d+", cells[5])
        assert (float(cells[4]), float(lo), float(hi)) == (float(r["slope"]), float(r["lo"]), float(r["hi"]))
        checked += 1
    assert checked == 8
