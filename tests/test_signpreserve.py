"""signpreserve's target against its definition (tests/baseline_reference.py, exact
arithmetic), on random tables and at the edges: empty tables, stated values at 0 and 1,
ties at the mean prediction, consistent and inconsistent signs. Whole runs and fixed
forecast sequences are checked in tests/test_baselines.py with the other adversaries."""

from fractions import Fraction

import numpy as np
import pytest

import baseline_reference as R
from fastcdl.online import make_adversary, simulate
from fastcdl.online.adversaries.signpreserve import target
from fastcdl.online.forecasters import Forecast

REF = R.SignPreserve()


def _kernel(stated, n, s, entries):
    q = np.array([float(v) for v in stated])
    mean = sum(p * float(stated[b]) for p, b in entries)
    return target(q, np.array(n, dtype=np.int64), np.array(s, dtype=np.int64), mean)


def _both(stated, n, s, entries):
    return _kernel(stated, n, s, entries), REF.target(entries, stated, n, s)


GRIDS = {
    "eighths": [Fraction(j, 8) for j in range(9)],  # 0 and 1 stated: the end gaps are empty
    "fifteenths": [Fraction(j, 15) for j in range(16)],
    "kt7": [Fraction(b + 1, 7) for b in range(7)],  # 1 stated, 0 not
    "cdl-like": [Fraction(2 * b + 1, 22) for b in range(11)],  # midpoints of 11 buckets
}


@pytest.mark.parametrize("grid", list(GRIDS))
def test_target_matches_the_definition_on_random_tables(grid):
    stated = GRIDS[grid]
    m = len(stated)
    g = np.random.default_rng(len(grid))
    for case in range(400):
        scale = int(g.choice([1, 5, 50, 1000]))
        n = [int(x) for x in g.integers(0, scale + 1, m)]
        if case % 4 == 0:
            n = [x if g.random() < 0.3 else 0 for x in n]  # mostly unused values: many ties
        s = [int(g.integers(0, x + 1)) for x in n]
        i = int(g.integers(m))
        if g.random() < 0.4:
            entries = [(1.0, i)]
        else:
            j = int(g.integers(m - 1))
            j += j >= i
            p = float(g.choice([0.25, 0.5, 0.75, g.random()]))
            entries = [(p, min(i, j)), (1.0 - p, max(i, j))]
        k, r = _both(stated, n, s, entries)
        assert abs(k - float(r)) < 1e-12, (case, n, s, entries, k, r)


def test_empty_table_targets_the_gap_next_to_the_prediction():
    stated = GRIDS["eighths"]
    zero = [0] * 9
    # a point mass at 3/8: the gaps below and above are equally near; the lower one wins
    assert _both(stated, zero, zero, [(1.0, 3)]) == (5 / 16, Fraction(5, 16))
    # mean 0.40625 = 13/32 (3/8 w.p. 3/4, 1/2 w.p. 1/4): the gap (3/8, 1/2) is nearer
    assert _both(stated, zero, zero, [(0.75, 3), (0.25, 4)]) == (7 / 16, Fraction(7, 16))
    # a point mass at 0: the empty gap (0, 0) is skipped, the target is 1/16
    assert _both(stated, zero, zero, [(1.0, 0)]) == (1 / 16, Fraction(1, 16))
    # a point mass at 1: the empty gap (1, 1) is skipped, the target is 15/16
    assert _both(stated, zero, zero, [(1.0, 8)]) == (15 / 16, Fraction(15, 16))


def test_single_stated_values():
    for v, mean_target in ((Fraction(0), 0.5), (Fraction(1), 0.5), (Fraction(1, 2), 0.25)):
        assert _both([v], [0], [0], [(1.0, 0)]) == (mean_target, Fraction(mean_target))
    # 1/2 said 10 times with 9 ones: bias -4 (said too rarely); the target above keeps it
    assert _both([Fraction(1, 2)], [10], [9], [(1.0, 0)]) == (0.75, Fraction(3, 4))
    # with 1 one: bias +4 (said too often); the target below keeps it
    assert _both([Fraction(1, 2)], [10], [1], [(1.0, 0)]) == (0.25, Fraction(1, 4))


def test_consistent_signs_are_all_kept():
    """Negative bias below 1/2, positive above: the target is in a gap between the two groups
    (nothing flippable), the one nearest the prediction."""
    stated = GRIDS["eighths"]
    n = [0, 10, 10, 10, 0, 10, 10, 10, 0]
    s = [0, 5, 6, 7, 0, 3, 4, 5, 0]  # 1/8*10 - 5 < 0, ..., 5/8*10 - 3 > 0, ...
    for entries, want in (
        ([(1.0, 0)], Fraction(7, 16)),
        ([(1.0, 8)], Fraction(9, 16)),
        ([(0.5, 3), (0.5, 5)], Fraction(7, 16)),
    ):
        k, r = _both(stated, n, s, entries)
        assert r == want and k == float(want)


def test_inconsistent_signs_keep_the_heavier_side():
    """1/4 with bias +3 below 3/4 with bias -1: no target keeps both; +3 weighs more, so the
    target is below 1/4, in the gap nearest the prediction (1/2): (1/8, 1/4)."""
    stated = GRIDS["eighths"]
    n = [0, 0, 20, 0, 0, 0, 4, 0, 0]
    s = [0, 0, 2, 0, 0, 0, 4, 0, 0]  # bias(1/4) = 5 - 2 = 3, bias(3/4) = 3 - 4 = -1
    k, r = _both(stated, n, s, [(1.0, 4)])
    assert r == Fraction(3, 16) and k == 3 / 16
    n[6], s[6] = 16, 16  # bias(3/4) = 12 - 16 = -4 outweighs +3: a gap above 3/4, (3/4, 7/8)
    k, r = _both(stated, n, s, [(1.0, 4)])
    assert r == Fraction(13, 16) and k == 13 / 16


def test_outcomes_follow_the_target():
    """Over many rounds of one fixed table the outcome frequency is the target (1/4 here)."""
    grid = np.array([0.0, 0.5, 1.0])
    a = make_adversary("signpreserve", seed=3)
    f = Forecast((0.0,), (1.0,), (0.0,), (0,), grid)  # respond() without observe(): table stays empty
    ys = [a.respond(f) for _ in range(20000)]
    assert abs(np.mean(ys) - 0.25) < 0.015


def test_simulate_runs_and_is_reproducible():
    a = simulate("cdl", "signpreserve", horizon=3000, seed=4)
    b = simulate("cdl", "signpreserve", horizon=3000, seed=4)
    assert a.ece == b.ece and a.cdl == b.cdl and a.ece > 0
