"""The K-point round contract: forecasters whose rounds put mass on more than two stated values.

References written from the contract (fastcdl.online.engine): the drawn slot is the first
slot of positive probability whose cumulative probability exceeds the uniform; contrarian's
rule is the exact comparison of the expected stated value with 1/2 (fractions); the
compiled loop and the per-round API agree round by round; an adversary that reads only two
slots is refused by name.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import user_plugins
from fastcdl._compiled.exact import sign_sum
from fastcdl._compiled.rng import seed_states, uniform
from fastcdl.online import engine, make_adversary, make_forecaster, simulate, trace
from fastcdl.online.adversaries import contrarian


def _per_round(spec, adversary, T, seed, **params):
    f = make_forecaster(spec, horizon=T, seed=seed, **params)
    a = make_adversary(adversary, horizon=T, seed=seed)
    ps, ys = [], []
    for _ in range(T):
        fc = f.forecast()
        y = a.respond(fc)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ps.append(p)
        ys.append(y)
    return np.array(ps), np.array(ys)


@pytest.mark.parametrize("adversary", ["bernoulli", "contrarian", user_plugins.LOW_MEAN])
def test_a_k_point_forecaster_runs_the_same_compiled_and_round_by_round(adversary):
    res, p, y = trace(user_plugins.SPREAD, adversary, horizon=600, seed=4)
    p2, y2 = _per_round(user_plugins.SPREAD, adversary, 600, 4)
    assert np.array_equal(p, p2) and np.array_equal(y, y2)
    assert int(res.stats.total) == 600


def test_three_stated_values_are_drawn_with_their_probabilities():
    # SPREAD puts 1/4, 1/2, 1/4 on three grid points inside the grid: all three are drawn
    res, p, y = trace(user_plugins.SPREAD, "bernoulli", horizon=4000, seed=1)
    assert len(np.unique(p)) >= 3


def test_low_mean_reads_every_slot():
    # SPREAD's first round: j = 4 of m = 8 -> mean 1/2 exactly -> low_mean says 0; a Table view of
    # the first two slots only would give (1/4 x 3/8 + 1/2 x 1/2) < 1/2 and say 1
    res, p, y = trace(user_plugins.SPREAD, user_plugins.LOW_MEAN, horizon=1, seed=0)
    assert y[0] == 0


def _reference_slot(probs, u):
    """The slot the contract draws: a point mass without a uniform, else the first slot of
    positive probability whose cumulative sum exceeds u (the last positive one otherwise)."""
    pos = [i for i, p in enumerate(probs) if p > 0]
    if len(pos) <= 1:
        return (pos or [0])[0], False
    acc = 0.0
    for i in pos:
        acc += probs[i]
        if u < acc:
            return i, True
    return pos[-1], True


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=7), st.integers(0, 2**32))
def test_draw_slot_k_follows_the_contract(weights, seed):
    total = sum(weights)
    probs = [w / total if total > 0 else 0.0 for w in weights]
    out = engine.new_draw(len(probs))
    out.probs[:] = probs
    rng = seed_states(seed)[0]
    ref_rng = rng.copy()
    got = engine.draw_slot_k(out, rng)
    u = uniform(ref_rng.copy())
    want, used = _reference_slot(probs, u)
    assert got == want
    assert np.array_equal(rng, ref_rng) != used  # a uniform is drawn exactly when two or more slots are stated


def test_draw_slot_k_agrees_with_draw_slot_on_two_slots():
    for seed in range(200):
        out = engine.new_draw(2)
        out.probs[:] = 0.3, 0.7
        a, b = seed_states(seed)[0], seed_states(seed)[0]
        assert engine.draw_slot(out, a) == engine.draw_slot_k(out, b)
        assert np.array_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 10), st.integers(0, 1000)), min_size=3, max_size=6), st.sampled_from([10, 7, 4])
)
def test_contrarian_on_k_slots_is_the_exact_comparison_with_one_half(entries, m):
    q = np.arange(m + 1) / m
    out = engine.new_draw(len(entries))
    table = engine.new_table(q, out)
    total = sum(w for _, w in entries) or 1
    for i, (j, w) in enumerate(entries):
        out.buckets[i] = min(j, m)
        out.probs[i] = w / total
        out.points[i] = q[min(j, m)]
    view = engine.view_of(engine.History(0, 0, -1), out, table)
    got = contrarian.ADVERSARY.compiled(True)(view, table, np.zeros(0), seed_states(0)[1])
    mean = sum(Fraction(float(out.probs[i])) * Fraction(int(out.buckets[i]), m) for i in range(len(entries)))
    assert got == (1 if mean < Fraction(1, 2) else 0)


def test_contrarian_on_k_slots_at_an_exact_half():
    # 1/4 x 2/10 + 1/2 x 5/10 + 1/4 x 8/10 = 1/2 exactly: says 0
    q = np.arange(11) / 10
    out = engine.new_draw(3)
    table = engine.new_table(q, out)
    out.probs[:] = 0.25, 0.5, 0.25
    out.buckets[:] = 2, 5, 8
    view = engine.view_of(engine.History(0, 0, -1), out, table)
    assert contrarian.ADVERSARY.compiled(True)(view, table, np.zeros(0), seed_states(0)[1]) == 0
    out.buckets[2] = 7  # below 1/2
    assert contrarian.ADVERSARY.compiled(True)(view, table, np.zeros(0), seed_states(0)[1]) == 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1e300, 1e300) | st.integers(-(2**60), 2**60).map(float), min_size=0, max_size=9))
def test_sign_sum_is_the_sign_of_the_exact_sum(terms):
    exact = sum((Fraction(x) for x in terms), Fraction(0))
    want = (exact > 0) - (exact < 0)
    assert sign_sum(np.array(terms, dtype=np.float64)) == want


def test_sign_sum_at_cancellation():
    assert sign_sum(np.array([1e16, 1.0, -1e16, -0.5])) == 1
    assert sign_sum(np.array([0.1, 0.2, -0.1, -0.2])) == 0
    assert sign_sum(np.array([2.0**-1074, 1e300, -1e300])) == 1


def test_an_adversary_reading_two_slots_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"adversary 'spite'.*forecaster 'spread'"):
        simulate(user_plugins.SPREAD, user_plugins.SPITE, horizon=10)
    f = make_forecaster(user_plugins.SPREAD, horizon=10)
    with pytest.raises(ValueError, match="adversary 'spite' reads only two-point rounds"):
        make_adversary(user_plugins.SPITE, horizon=10).respond(f.forecast())


def test_every_built_in_adversary_plays_k_point_rounds():
    """Each reads the round's distribution through slots and slot (or not at all); the refusal
    is left for plug-ins that read view.prob0/prob1 only (user_plugins.SPITE)."""
    from fastcdl.online import registry

    assert [a for a, spec in registry.adversaries().items() if not spec.k_points] == []
    assert not user_plugins.SPITE.k_points


def test_slot_of_a_two_point_table_is_the_views_slots():
    from numba import njit

    @njit
    def read(view, table):
        out = []
        for i in range(engine.slots(view, table)):
            out.append(engine.slot(view, table, i))
        return out

    q = np.array([0.0, 0.5, 1.0])
    view = engine.Round(1, -1, 3, 0.4, 0.6, 0.25, 0.75, 0.5, 1.0, 1, 2)
    assert read(view, engine.new_table(q)) == [(0.25, 0.5, 1, 0.4), (0.75, 1.0, 2, 0.6)]


def test_plugin_forecaster_refuses_a_support_below_two():
    from fastcdl.online import plugin_forecaster

    with pytest.raises(ValueError, match="support"):
        plugin_forecaster(
            name="x",
            init=user_plugins.spread_init,
            forecast=user_plugins.spread_forecast,
            observe=user_plugins.spread_observe,
            support=1,
        )
