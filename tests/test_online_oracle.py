"""The MsMwC oracle of Algorithm 1: sparse == dense == brute-force mirror descent, and its
pathwise regret guarantee (docs/algorithm1.md)."""

import math

import numpy as np
import pytest

from fastcdl._compiled.msmwc import n_copies
from fastcdl.online import ADVERSARIES, make_adversary, make_forecaster
from online_reference import copies, msmwc_mirror_descent, regret_bound


def _lockstep(adversary, T, seed, m=None, aparams=None):
    """Run the sparse and dense cdl forecasters side by side on one adversary's outcomes."""
    kw = {} if m is None else {"m": m}
    fs = make_forecaster("cdl", horizon=T, seed=seed, oracle="sparse", **kw)
    fd = make_forecaster("cdl", horizon=T, seed=seed, oracle="dense", **kw)
    adv = make_adversary(adversary, horizon=T, seed=seed, **(aparams or {}))
    worst_c = 0.0
    mixed = 0
    for t in range(T):
        ds, dd = fs.forecast(), fd.forecast()
        assert ds.points == dd.points and ds.buckets == dd.buckets, f"round {t}: {ds} != {dd}"
        np.testing.assert_allclose(ds.probs, dd.probs, rtol=1e-9, atol=1e-12)
        if len(ds.probs) == 2:
            mixed += 1
            # par = [delta, lam, ln|c_lo|, ln c_hi]: equal logs to 1e-9 = equal c to 1e-9 relative
            err = np.max(np.abs(fs.state.logc - fd.state.logc))
            worst_c = max(worst_c, err)
            assert err < 1e-9, f"round {t}: ln|c| sparse {fs.state.logc} dense {fd.state.logc}"
            assert abs(fs.state.lam[0] - fd.state.lam[0]) <= 1e-9 * (1 + abs(fd.state.lam[0]))
        y = adv.respond(ds)
        ps, pd = fs.draw(), fd.draw()
        assert ps == pd, f"round {t}: draws differ"
        fs.observe(y)
        fd.observe(y)
        adv.observe(ps, y)
        assert np.array_equal(fs.state.G, fd.state.G) and np.array_equal(fs.state.Q, fd.state.Q)
    assert fs.stats() == fd.stats()
    return worst_c, mixed


# adversaries whose defaults leave Algorithm 1 at one point (no mixture, no c to compare):
# rawpoint at its defaults answers exactly at the raw point 0 where Algorithm 1 starts
LOCKSTEP_PARAMS = {"rawpoint": {"mix": 1.0, "shift": -0.02}}


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_sparse_equals_dense(adversary):
    worst, mixed = _lockstep(adversary, 10_000, seed=7, aparams=LOCKSTEP_PARAMS.get(adversary, {}))
    assert mixed > 100  # the comparison of c happened


def test_sparse_equals_dense_many_buckets():
    # m = 200 over 3000 rounds: several refreshes of F_k, and buckets far from the action
    worst, mixed = _lockstep("drift", 3000, seed=3, m=200)
    assert mixed > 100


def test_sparse_normaliser_tracks_exact():
    """The incrementally updated F_k equals a from-scratch recomputation between refreshes."""
    from fastcdl._compiled.msmwc import refresh_normaliser

    f = make_forecaster("cdl", horizon=10**6, seed=1, m=500)
    adv = make_adversary("greedy", seed=1)
    for _ in range(499):  # just before the refresh at round 500
        d = f.forecast()
        y = adv.respond(d)
        p = f.draw()
        f.observe(y)
        adv.observe(p, y)
    off, S, terms = np.zeros_like(f.state.off), np.zeros_like(f.state.S), np.zeros_like(f.state.terms)
    refresh_normaliser(f.state.G, f.state.Q, f.state.eta, off, S, terms)
    np.testing.assert_allclose(f.state.off + np.log(f.state.S), off + np.log(S), rtol=0, atol=1e-12)
    np.testing.assert_allclose(f.state.terms * np.exp(f.state.off), terms * np.exp(off), rtol=1e-12)


def test_copies_count():
    for T in [1, 2, 3, 4, 5, 15, 16, 17, 10**6, 2**26, 10**8, 10**9]:
        assert n_copies(T) == math.ceil(0.5 * math.log2(T)) + 1 == copies(T).size


@pytest.mark.parametrize("adversary", ["greedy", "drift", "bernoulli"])
def test_dense_closed_form_equals_mirror_descent(adversary):
    """Dense closed-form weights == explicit MsMwC over all K * K_eta copies, round by round."""
    T, m = 300, 5
    f = make_forecaster("cdl", horizon=T, seed=11, oracle="dense", m=m)
    adv = make_adversary(adversary, horizon=T, seed=11)
    path, cs = [], []
    for _ in range(T):
        d = f.forecast()
        cs.append(f.state.c.copy())
        y = adv.respond(d)
        p = f.draw()
        j = f.slot
        path.append((int(f.out.buckets[j]), float(f.out.points[j] - y)))
        f.observe(y)
        adv.observe(p, y)
    ref, totals = msmwc_mirror_descent(m, T, path)
    np.testing.assert_allclose(totals, 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.array(cs), ref, rtol=1e-9, atol=1e-13)
    assert np.abs(ref).max() > 1e-3  # the weights were far from trivial


def _regret_ratio(adversary, T, seed):
    """Largest regret / bound over all 2m+1 experts along one run (dense weights c each round)."""
    f = make_forecaster("cdl", horizon=T, seed=seed, oracle="dense")
    adv = make_adversary(adversary, horizon=T, seed=seed)
    m = f.params["m"]
    K = 2 * m + 1
    X = 0.0
    for _ in range(T):
        d = f.forecast()
        y = adv.respond(d)
        p = f.draw()
        j = f.slot
        b = f.out.buckets[j]
        X += f.state.c[b] * (f.out.points[j] - y)  # learner's gain <w_t, l_t> = c_{i_t} g_t
        f.observe(y)
        adv.observe(p, y)
    worst = -X / regret_bound(0.0, K)  # the zero-gain expert
    for i in range(m):
        for sign in (1.0, -1.0):
            worst = max(worst, (sign * f.state.G[i] - X) / regret_bound(f.state.Q[i], K))
    return worst, X


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_pathwise_regret_bound(adversary, record_property):
    ratio, X = _regret_ratio(adversary, 5000, seed=5)
    record_property("max_regret_over_bound", float(ratio))  # a plain float: pytest-xdist sends it between processes
    print(f"cdl vs {adversary}: largest regret / bound = {ratio:.4f}")
    assert ratio <= 1.0
    assert math.isfinite(X)


@pytest.mark.parametrize("shift", [0.0, 100.0, -599.99])
def test_update_lanes_equals_update_bucket_to_the_bit(shift):
    """The vector update and the copy-by-copy one give the same G, Q, off, S and terms, bit for
    bit, also on their rare paths: shift = 100 raises every offset so that S_k < 1e-30 (the
    renormalisation), shift = -599.99 lowers them so that a term soon exceeds e^600 (the offset
    move)."""
    from fastcdl._compiled import msmwc

    m, K = 6, 11
    rng = np.random.default_rng(5)
    lanes, tpad = msmwc.new_lanes(m, K)
    G, Q = rng.normal(0.0, 30.0, m), rng.uniform(0.0, 40.0, m)
    G[2] = 0.0
    eta, off, S, terms = lanes[msmwc.ETA, :K], lanes[msmwc.OFF, :K], lanes[msmwc.SUM, :K], tpad[:, :K]
    msmwc.refresh_normaliser(G, Q, eta, off, S, terms)
    for k in range(K):
        msmwc._shift_offset(k, shift, off, S, terms)
    ref = [a.copy() for a in (G, Q, off, S, terms)]
    seen = {"tiny": 0, "moved": 0}
    for _ in range(400):
        i, g = int(rng.integers(0, m)), float(rng.choice([-1.0, -0.3, 0.0, 0.7, 1.0]))
        if rng.uniform() < 0.7:  # mostly away from 0, so that |G_i| and the terms grow
            g = abs(g) * (1.0 if G[i] >= 0.0 else -1.0)
        before = off.copy()
        msmwc.update_lanes(i, g, G, Q, lanes, tpad)
        msmwc.update_bucket(i, g, ref[0], ref[1], eta.copy(), *ref[2:])
        seen["tiny"] += int(np.any(off < before))
        seen["moved"] += int(np.any(off > before))
        for got, want in zip((G, Q, off, S, terms), ref):
            assert np.array_equal(got, want)
        # the bucket's cached tanh is that of its |G_i|, as _term forms it
        P = lanes.shape[1]
        assert tpad[i, 2 * P] == abs(G[i])
        em = np.array([msmwc.expm1_lane(-2.0 * e * abs(G[i])) for e in eta])
        assert np.array_equal(tpad[i, P : P + K], -em / (2.0 + em))
    if shift > 0:
        assert seen["tiny"] > 0
    if shift < 0:
        assert seen["moved"] > 0
