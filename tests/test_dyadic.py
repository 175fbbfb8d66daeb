"""The dyadic forecaster (Roth, Zhang, Morgenstern and Huang 2026, marginal case; docs/dyadic.md)
against a slow reference written from the definitions in plain Python: a sorted list of dyadic
leaves, each with its pair of AdaNormalHedge experts (weights from Phi directly), a linear scan
for the weighted-feasibility step, the sleeping update of the drawn leaf and its split; round by
round through the per-round API, and the compiled loop against it; the edges (horizons 1 and 2,
all-0 and all-1 outcomes, bad parameters); and the paper's claims a small run can check."""

import math

import numpy as np
import pytest

from fastcdl.online import make_adversary, make_forecaster, registry, simulate, trace
from fastcdl.online.forecasters import dyadic
from fastcdl.online.simulate import _run_loop


# -- the reference ------------------------------------------------------------------------
def ref_weight(R, C):
    """AdaNormalHedge's w(R, C) = (Phi(R + 1, C + 1) - Phi(R - 1, C + 1)) / 2, Phi(R, C) = exp([R]_+^2 / 3C)."""

    def phi(r, c):
        return math.exp(max(r, 0.0) ** 2 / (3.0 * c))

    return 0.5 * (phi(R + 1.0, C + 1.0) - phi(R - 1.0, C + 1.0))


class RefLeaf:
    def __init__(self, lo, depth):
        self.lo, self.depth = lo, depth  # the interval [lo, lo + 2^-depth)
        self.n = 0
        self.R = {+1: 0.0, -1: 0.0}  # the experts "up" (+1) and "down" (-1)
        self.C = {+1: 0.0, -1: 0.0}

    @property
    def mid(self):
        return self.lo + 0.5**self.depth / 2

    def pi(self):
        """The awake pair's AdaNormalHedge distribution (uniform when both weights are 0)."""
        wu, wd = ref_weight(self.R[+1], self.C[+1]), ref_weight(self.R[-1], self.C[-1])
        if wu + wd == 0.0:
            return {+1: 0.5, -1: 0.5}
        return {+1: wu / (wu + wd), -1: wd / (wu + wd)}

    def lean(self):
        pi = self.pi()
        return pi[+1] - pi[-1]


class Reference:
    def __init__(self, T, split=1.0, depth=None):
        self.split = split
        if depth is None:
            depth = 0
            while depth < 19 and math.ceil(split * 4**depth) <= T:
                depth += 1
        self.D = depth
        self.leaves = [RefLeaf(0.0, 0)]  # left to right

    def distribution(self):
        """[(leaf, probability)]: the first leaf with lean <= 0 and, when it leans down and is not
        the first, its left neighbour (which leans up), mixed so that the leans cancel."""
        leans = [leaf.lean() for leaf in self.leaves]
        low = [i for i, v in enumerate(leans) if v <= 0]
        if not low:
            return [(self.leaves[-1], 1.0)]
        k = low[0]
        if k == 0 or leans[k] == 0:
            return [(self.leaves[k], 1.0)]
        lam = -leans[k] / (leans[k - 1] - leans[k])
        return [(self.leaves[k - 1], lam), (self.leaves[k], 1.0 - lam)]

    def observe(self, leaf, p, y):
        pi = leaf.pi()
        g = y - p
        loss = {+1: (1 - g) / 2, -1: (1 + g) / 2}
        expected = pi[+1] * loss[+1] + pi[-1] * loss[-1]
        for s in (+1, -1):
            r = expected - loss[s]
            leaf.R[s] += r
            leaf.C[s] += abs(r)
        leaf.n += 1
        if leaf.depth < self.D and leaf.n >= math.ceil(self.split * 4**leaf.depth):
            i = self.leaves.index(leaf)
            half = 0.5 ** (leaf.depth + 1)
            self.leaves[i : i + 1] = [RefLeaf(leaf.lo, leaf.depth + 1), RefLeaf(leaf.lo + half, leaf.depth + 1)]


def play(adversary, T, seed, fparams, aparams):
    """A run through the per-round API checked against the reference round by round; returns the
    stated predictions and outcomes."""
    f = make_forecaster("dyadic", horizon=T, seed=seed, **fparams)
    a = make_adversary(adversary, horizon=T, seed=seed, **aparams)
    ref = Reference(T, **fparams)
    ps, ys, mixed = [], [], 0
    for t in range(T):
        fc = f.forecast()
        want = ref.distribution()
        assert len(fc.probs) == len(want), (t, fc, [(w.mid, pr) for w, pr in want])
        for point, prob, stated, (leaf, pr) in zip(fc.points, fc.probs, fc.predictions, want):
            assert point == stated == leaf.mid and abs(prob - pr) <= 1e-12, (t, fc)
        mixed += len(want) > 1
        y = a.respond(fc)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ref.observe(next(leaf for leaf, _ in want if leaf.mid == p), p, y)
        ps.append(p)
        ys.append(y)
    leaves = [(leaf.depth, leaf.lo) for leaf in ref.leaves]
    return ps, ys, mixed, f, leaves


CASES = [
    ("bernoulli", {"p": 0.3}, {}),
    ("bernoulli", {"p": 0.5}, {}),
    ("segments", {"means": "0.15,0.85,0.4", "k": 3}, {}),
    ("contrarian", {}, {}),
    ("contrarian", {}, {"split": 0.25, "depth": 4}),  # a shallow cap, reached
    ("greedy", {}, {"split": 3.0}),
]


@pytest.mark.parametrize("adversary,aparams,fparams", CASES)
def test_dyadic_equals_the_reference_round_by_round_and_the_compiled_loop(adversary, aparams, fparams):
    T, seed = 500, 7
    ps, ys, mixed, f, leaves = play(adversary, T, seed, fparams, aparams)
    assert mixed > 0  # the two-leaf step was exercised
    got = sorted(
        (int(f.state.depth[k]), (k - 2 ** int(f.state.depth[k])) * 0.5 ** int(f.state.depth[k]))
        for k in np.nonzero(f.state.kind == dyadic.LEAF)[0]
    )
    assert got == sorted(leaves)  # the same tree
    assert len(leaves) > 3
    if fparams.get("depth") is not None:
        assert max(d for d, _ in leaves) == fparams["depth"]
    res, tp, ty = trace("dyadic", adversary, horizon=T, seed=seed, forecaster_params=fparams, adversary_params=aparams)
    assert tp.tolist() == ps and ty.tolist() == ys
    assert int(res.stats.total) == T


# -- edges --------------------------------------------------------------------------------
def test_horizons_one_and_two():
    assert dyadic.FORECASTER.resolve_params({}, 1) == {"split": 1.0, "depth": 1}
    f = make_forecaster("dyadic", horizon=1)
    assert f.forecast().predictions == (0.5,) and f.table.q.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    res, p, y = trace("dyadic", "bernoulli", horizon=1, seed=3)
    assert p.tolist() == [0.5] and int(res.stats.total) == 1
    for mean in (0.0, 1.0):  # [0, 1] splits after its first round; the left half is tried next
        res, p, y = trace("dyadic", "bernoulli", horizon=2, seed=0, adversary_params={"p": mean})
        assert p.tolist() == [0.5, 0.25] and y.tolist() == [int(mean)] * 2


def blocks(T, D, block):
    """1/2, then the (value, rounds) blocks of depths 1..D, cut at T (the last value repeated
    when the blocks run out: a leaf at depth D never splits)."""
    out = [0.5]
    for d in range(1, D + 1):
        for value, rounds in block(d):
            out += [value] * rounds
        if len(out) >= T:
            break
    return out[:T] if len(out) >= T else out + [out[-1]] * (T - len(out))


def test_all_zero_outcomes_walk_down_the_left_edge():
    """All y = 0: each leaf at the left edge is played until it splits (4^d rounds at depth d),
    then its left half: 1/2 once, 1/4 four times, 1/8 sixteen times..., always a point mass."""
    T = 4096
    D = dyadic.FORECASTER.resolve_params({}, T)["depth"]
    assert D == 7
    res, p, y = trace("dyadic", "bernoulli", horizon=T, seed=1, adversary_params={"p": 0.0})
    want = blocks(T, D, lambda d: [(0.5 ** (d + 1), 4**d)])
    assert y.sum() == 0 and p.tolist() == want
    assert res.ece * T == pytest.approx(sum(want))  # the bias of every round is its prediction
    assert res.ece * T <= 2 * math.sqrt(T)


def test_all_one_outcomes_walk_up_the_right_edge():
    """All y = 1: after each split the fresh left half is tried once (it then leans up for good),
    then the right half is played until it splits: 1/2, 1/4, 3/4 x4, 5/8, 7/8 x16, ..."""
    T = 4096
    D = dyadic.FORECASTER.resolve_params({}, T)["depth"]
    res, p, y = trace("dyadic", "bernoulli", horizon=T, seed=1, adversary_params={"p": 1.0})
    want = blocks(T, D, lambda d: [(1 - 3 * 0.5 ** (d + 1), 1), (1 - 0.5 ** (d + 1), 4**d)])
    assert y.sum() == T and p.tolist() == want
    assert res.ece * T <= 2 * math.sqrt(T) + D


@pytest.mark.parametrize("mean", [0.0, 1.0])
def test_constant_outcomes_give_point_masses_only(mean):
    f = make_forecaster("dyadic", horizon=300, seed=0)
    for _ in range(300):
        assert f.forecast().probs == (1.0,)
        f.draw()
        f.observe(int(mean))


@pytest.mark.parametrize(
    "bad,name",
    [
        ({"split": 0}, "split"),
        ({"split": -1.0}, "split"),
        ({"split": float("nan")}, "split"),
        ({"split": math.inf}, "split"),
        ({"split": "1"}, "split"),
        ({"split": True}, "split"),
        ({"depth": -1}, "depth"),
        ({"depth": 20}, "depth"),
        ({"depth": 2.5}, "depth"),
        ({"depth": True}, "depth"),
        ({"m": 8}, "m"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(bad, name):
    with pytest.raises(ValueError, match=name) as e:
        make_forecaster("dyadic", horizon=100, **bad)
    assert e.value.argument == name


def test_the_spec_and_its_grid():
    spec = registry.forecaster("dyadic")
    assert spec.version == 1 and spec.slots({}) == 2 and not spec.point_mass and not spec.k_point
    for T, D in ((4, 2), (1000, 5), (10**6, 10), (2**62, 19)):
        assert spec.resolve_params({}, T)["depth"] == D
        assert spec.grid_m({}, T) == 2 ** (D + 1)
    assert spec.resolve_params({"split": 4.0}, 10**6) == {"split": 4.0, "depth": 9}
    assert spec.resolve_params({"depth": 3}, 10**6) == {"split": 1.0, "depth": 3}
    st, q = spec.init(1000, spec.resolve_params({}, 1000), None)
    m = spec.grid_m({}, 1000)
    assert np.array_equal(q, np.arange(m + 1) / m)
    assert st.theta.tolist() == [1, 4, 16, 64, 256, 1024]
    f = make_forecaster("dyadic", horizon=1000)
    assert f.table.den == m  # the stated values keep exact fractions


# -- the paper's claims, at small horizons ------------------------------------------------
def ece(adversary, T, seeds, forecaster="dyadic", **aparams):
    return float(
        np.mean([simulate(forecaster, adversary, horizon=T, seed=s, adversary_params=aparams).ece for s in seeds])
    )


def test_on_segments_it_tracks_the_changes():
    """Piecewise-stationary outcomes (J = 2 segments, means 0.2 and 0.8): its ECE is a fraction of
    that of the running frequency, which ignores the change, and falls with T."""
    means = {"means": "0.2,0.8", "k": 2}
    T = 2**14
    mine = ece("segments", T, range(3), **means)
    blind = ece("segments", T, range(3), forecaster="frequency", **means)
    assert mine < 0.3 * blind
    assert mine < 0.5 * ece("segments", 2**10, range(3), **means)


def test_on_a_coin_it_beats_the_worst_case_rate_and_keeps_a_thin_tree():
    """i.i.d. outcomes: ECE falls faster than T^(-1/3), the worst-case rate (the paper: O~(T^(-1/2)));
    the tree stays a few paths (a handful of leaves per depth: O(log T)), while 16 segments make it
    grow."""
    small, large = ece("bernoulli", 2**10, range(4), p=0.3), ece("bernoulli", 2**14, range(4), p=0.3)
    assert large < 16 ** (-1 / 3) * small

    def leaves(adversary, **aparams):
        f = make_forecaster("dyadic", horizon=2**16, seed=0)
        a = make_adversary(adversary, horizon=2**16, seed=0, **aparams)
        _run_loop(f, a, 2**16, np.zeros(0), np.zeros(0, dtype=np.int8))  # simulate's loop, on f's state
        return int((f.state.kind == dyadic.LEAF).sum()), int(f.state.depth[f.state.kind == dyadic.LEAF].max())

    n_coin, depth = leaves("bernoulli", p=0.3)
    assert n_coin <= 3 * depth
    n_segments, _ = leaves("segments", k=16)
    assert n_segments > 2 * n_coin
