"""spr (sign preservation with reuse, Dai & Fishelson 2026) and the true-mean hand-off.

The compiled forecaster is compared round by round with tests/spr_reference.py, written from
the notes' pseudo-code (docs/spr.md); the hand-off is checked against the adversaries' own
probabilities and generators: the mean a forecaster is handed is the probability the round's
outcome is drawn with.
"""

import math
import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest
from numba import njit

import spr_reference as ref
from fastcdl._compiled.rng import seed_states, uniform
from fastcdl._validate import ValidationError
from fastcdl.online import make_adversary, make_forecaster, plugin_adversary, plugin_forecaster, registry, simulate
from fastcdl.online import trace
from fastcdl.online.engine import History, Round, next_round
from fastcdl.online.forecasters import spr
from fastcdl.online.plugins import check_pairing

MEAN_FAMILIES = ("bernoulli", "drift", "markov", "segments", "budget")


def handed_means(adversary, params, T, seed, y):
    """e_t as the adversary states it from the past (its true_mean on the rounds' history)."""
    a = make_adversary(adversary, horizon=T, seed=seed, **params)
    out, ones, prev = [], 0, -1
    for t in range(T):
        out.append(a.spec.true_mean(History(t, ones, prev), a._par))
        ones += int(y[t])
        prev = int(y[t])
    return out


# -- plug-in adversaries with a stated mean that stress the games ---------------------------
@njit(cache=True)
def golden_mean(hist, par):
    """frac((t) (sqrt 5 - 1) / 2): equidistributed means, every cell visited."""
    x = (hist.t + 1) * 0.6180339887498949
    return x - math.floor(x)


@njit(cache=True)
def zigzag_mean(hist, par):
    """A triangle wave of period par[0] rounds between 0 and 1, both included."""
    k = (hist.t % int(par[0])) / (par[0] / 2.0)
    return k if k <= 1.0 else 2.0 - k


@njit(cache=True)
def from_mean_golden(view, table, par, rng):
    x = view.t * 0.6180339887498949
    return 1 if uniform(rng) < x - math.floor(x) else 0


@njit(cache=True)
def from_mean_zigzag(view, table, par, rng):
    k = ((view.t - 1) % int(par[0])) / (par[0] / 2.0)
    return 1 if uniform(rng) < (k if k <= 1.0 else 2.0 - k) else 0


GOLDEN = plugin_adversary(from_mean_golden, name="golden", true_mean=golden_mean)
ZIGZAG = plugin_adversary(from_mean_zigzag, name="zigzag", params={"period": 96.0}, true_mean=zigzag_mean)


CASES = [
    ("bernoulli", {"p": 0.3}),
    ("bernoulli", {"p": 0.0}),
    ("bernoulli", {"p": 0.5}),
    ("bernoulli", {"p": 1.0}),
    ("drift", {}),
    ("drift", {"amplitude": 0.5, "period": 300.0}),
    ("segments", {"k": 8, "random": 1}),
    ("segments", {"means": "0,0.5,1,0.25,0.75"}),
    ("markov", {"p01": 0.3, "p10": 0.05}),
    ("budget", {}),
    (GOLDEN, {}),
    (ZIGZAG, {}),
    (ZIGZAG, {"period": 1000.0}),
]


@pytest.mark.parametrize("adversary, params", CASES)
@pytest.mark.parametrize("T", [777, 4096])
def test_the_compiled_forecaster_matches_the_reference_round_by_round(adversary, params, T):
    """Same prediction every round as the slow reference fed the same means (edge means 0, 1/2, 1
    included: bernoulli p = 0, 1/2, 1, segments with means 0, 1/2, 1; zigzag's ends)."""
    res, p, y = trace("spr", adversary, horizon=T, seed=5, adversary_params=params)
    e = handed_means(adversary, params, T, 5, y)
    r = ref.SPRReference(T)
    expected = np.array([r.predict(x) for x in e])
    assert np.array_equal(p, expected), np.nonzero(p != expected)[0][:5]
    assert int(res.stats.total) == T


SHORT = [("bernoulli", {"p": 0.3}), ("drift", {}), (GOLDEN, {}), ("segments", {"means": "0,0.5,1,0.25,0.75"})]


@pytest.mark.parametrize("adversary, params", SHORT)
@pytest.mark.parametrize("tau", [3, 6])
def test_levels_set_for_fewer_rounds_reach_the_fallback_as_the_reference_does(adversary, params, tau):
    """tau below log2 T: the games fill and the fallback states the nearest multiple of
    2^-(i0+h+1) (ties down), round by round as in the reference. Under a mean that stays put
    (bernoulli, segments) the fallback is reached; under moving means removal keeps cells open."""
    T = 4096
    _, p, y = trace("spr", adversary, horizon=T, seed=8, adversary_params=params, forecaster_params={"tau": tau})
    r = ref.SPRReference(T, tau=tau)
    expected = []
    steps = set()
    for x in handed_means(adversary, params, T, 8, y):
        expected.append(r.predict(x))
        steps.add(r.step)
    assert np.array_equal(p, np.array(expected))
    if adversary in ("bernoulli", "segments"):
        assert "fallback" in steps


def test_the_stress_runs_reach_every_step_and_both_signs():
    """The cases above reach removal, placement and fallback, both signs, erasures and phase 2
    of the labeler (with L > 0), so the comparison covers them."""
    steps, signs, erased = set(), set(), 0
    shifted = ref.B.shifted_made
    for adversary, params, tau in [(a, p, None) for a, p in CASES] + [(a, p, 6) for a, p in SHORT]:
        T = 4096
        _, _, y = trace(
            "spr",
            adversary,
            horizon=T,
            seed=5 if tau is None else 8,
            adversary_params=params,
            forecaster_params={} if tau is None else {"tau": tau},
        )
        r = ref.SPRReference(T, tau=tau)
        for x in handed_means(adversary, params, T, 5 if tau is None else 8, y):
            r.predict(x)
            steps.add(r.step)
        for g in r.games.values():
            signs |= {s for s in g.sign if s}
            erased += len(g.erased)
    assert steps == {"removal", "placement", "fallback"}
    assert signs == {1, -1} and erased > 0 and ref.B.shifted_made > shifted


@pytest.mark.parametrize("n, seed", [(1, 0), (2, 1), (8, 2), (64, 3), (256, 4)])
def test_the_lazy_labeler_gives_the_eager_labelers_signs(n, seed):
    """label() of the kernel (nodes made when first reached) against the notes' A(1, n, 0) built
    eagerly, on 3000 requests: uniform cells, then runs on few cells (long phases)."""
    from numba import typed

    rng = np.random.default_rng(seed)
    requests = np.concatenate([rng.integers(1, n + 1, 1500), np.repeat(rng.integers(1, n + 1, 30), 50)])
    anodes = typed.List([np.zeros((4, 5), dtype=np.int64)])
    bnodes = typed.List([np.zeros((4, 12), dtype=np.int64)])
    used = np.zeros(2, dtype=np.int64)
    root = spr.new_a(anodes, used, 1, n, 0)
    eager = ref.A(1, n, 0)
    shifted = ref.B.shifted_made
    got = [spr.label(anodes, bnodes, used, root, int(s)) for s in requests]
    want = [eager.label(int(s)) for s in requests]
    assert got == want
    if n >= 64:
        assert set(want) == {1, -1} and ref.B.shifted_made > shifted


def test_erased_records_are_within_one_and_records_stay_bounded():
    """Placement happens only when no removal applies, so every sign the board erases has a
    record in [-1, 1] (the reference's log); in the kernel's state after a run, every inactive
    record is in [-1, 1] and every record below its game's threshold plus one cell width."""
    T = 4096
    for adversary, params in [(GOLDEN, {}), (ZIGZAG, {}), ("drift", {})]:
        _, _, y = trace("spr", adversary, horizon=T, seed=2, adversary_params=params)
        e = handed_means(adversary, params, T, 2, y)
        r = ref.SPRReference(T)
        for x in e:
            r.predict(x)
        assert all(abs(rec) <= 1.0 for g in r.games.values() for (_, _, rec) in g.erased)
        f = make_forecaster("spr", horizon=T)
        for x in e:
            f.forecast(mean=x)
            f.draw()
            f.observe(1)
        st = f.state
        for g in range(st.games.level.shape[0]):
            n, first = 2 ** st.games.level[g], st.games.first[g]
            sign = st.sign[first : first + n]
            plus, minus = st.rec_plus[first : first + n], st.rec_minus[first : first + n]
            assert (plus >= 0).all() and (minus <= 0).all()
            assert (np.abs(plus[sign != 1]) <= 1).all() and (np.abs(minus[sign != -1]) <= 1).all()
            bound = st.games.threshold[g] + 2.0 ** -(st.games.level[g] + 1)
            assert (plus < bound).all() and (-minus < bound).all()


def test_the_fallback_is_the_nearest_multiple_ties_down():
    """T = 16: levels 1..2, R = 16. A constant mean fills every cell's thresholds and then states
    the nearest k / 16: at 3/32 (between 1/16 and 2/16) that is 1/16, at 5/32 it is 2/16."""
    for e, k in [(3 / 32, 1), (5 / 32, 2), (0.2, 3)]:
        st, q = spr.init(16, {"tau": 4})
        r = ref.SPRReference(16)
        got = [spr.choose(st, e) for _ in range(400)]
        want = [r.predict(e) for _ in range(400)]
        assert [g / 16 for g in got] == want
        assert got[-1] == k and r.step == "fallback"


def test_levels_and_the_grid():
    assert spr.levels(18) == (5, 8) and spr.levels(10) == (3, 4) and spr.levels(0) == (0, 0)
    spec = registry.forecaster("spr")
    assert spec.resolve_params({}, 1000) == {"tau": 10} == spec.resolve_params({}, 1024)
    assert spec.resolve_params({}, 1025) == {"tau": 11} and spec.resolve_params({}, 1) == {"tau": 0}
    assert spec.grid_m({}, 2**18) == 2**14
    _, q = spr.init(2**18, {"tau": 18})
    assert np.array_equal(q, np.arange(2**14 + 1) / 2**14)
    with pytest.raises(ValueError, match="tau"):
        spec.resolve_params({"tau": 31}, 100)
    with pytest.raises(ValueError, match="tau"):
        spec.resolve_params({"tau": -1}, 100)


def test_one_round_and_tau_zero():
    """T = 1: no level, every round the nearest multiple of 1/2, ties down (0 at 1/4, 1/2 at 3/4)."""
    for e, p in [(0.0, 0.0), (0.25, 0.0), (0.26, 0.5), (0.75, 0.5), (1.0, 1.0)]:
        f = make_forecaster("spr", horizon=1)
        assert f.forecast(mean=e).predictions == (p,)
        assert ref.SPRReference(1).predict(e) == p


# -- the hand-off ----------------------------------------------------------------------------
Seen = namedtuple("Seen", ["e", "t"])


def _seen_init(horizon, params):
    return Seen(np.full(horizon, np.nan), np.zeros(1, dtype=np.int64)), np.array([0.0, 0.5, 1.0])


@njit(cache=True)
def _seen_forecast(st, table, hist, out, e):
    st.e[hist.t] = e
    out.points[:] = 0.5
    out.probs[0] = 1.0
    out.probs[1] = 0.0
    out.buckets[:] = 1


@njit(cache=True)
def _seen_observe(st, table, hist, out, slot, y):
    st.t[0] += 1


SEEN = plugin_forecaster(name="seen", init=_seen_init, forecast=_seen_forecast, observe=_seen_observe, needs_mean=True)


@pytest.mark.parametrize(
    "adversary, params",
    [
        ("bernoulli", {"p": 0.37}),
        ("drift", {}),
        ("markov", {"p01": 0.2, "p10": 0.6}),
        ("segments", {"k": 16, "random": 1}),
        ("budget", {"c": 100.0, "cycles": 3}),
    ],
)
def test_the_handed_mean_is_the_probability_the_outcome_is_drawn_with(adversary, params):
    """Through the engine's generic mean loop: e_t handed before round t's forecast equals the
    adversary's prob of round t (its view: t and the previous outcome) exactly, and y_t = [u_t <
    e_t] with u_t the adversary's t-th uniform after its environment was drawn: the mean is the
    very probability of the outcome about to be drawn, computed from the past only."""
    from fastcdl.online.forecasters import Forecaster
    from fastcdl.online.simulate import _run_loop

    T, seed = 3000, 11
    spec = registry.adversary(adversary)
    resolved = spec.resolve_params(params, T)
    f = Forecaster(SEEN, T, seed, {})
    a = make_adversary(adversary, horizon=T, seed=seed, **params)
    trace_p, trace_y = np.zeros(T), np.zeros(T, dtype=np.int8)
    _run_loop(f, a, T, trace_p, trace_y)
    e = f.state.e
    rng = seed_states(seed)[1]
    par = spec.run_vector(resolved, rng)
    prev = -1
    for t in range(T):
        view = Round(t + 1, prev, 3, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5, 1, 1)
        assert e[t] == spec.prob(view, par)
        assert trace_y[t] == (1 if uniform(rng) < e[t] else 0)
        prev = int(trace_y[t])
    assert len(set(e.tolist())) > 1 or adversary == "bernoulli"


def test_the_per_round_api_reproduces_simulate():
    """f.forecast(mean=a.mean()) round by round gives simulate's predictions (markov: the mean
    depends on the last outcome; segments: on the environment drawn from the seed)."""
    for adversary, params in [("markov", {}), ("segments", {"k": 5, "random": 1})]:
        T = 600
        _, p, y = trace("spr", adversary, horizon=T, seed=4, adversary_params=params)
        f = make_forecaster("spr", horizon=T, seed=4)
        a = make_adversary(adversary, horizon=T, seed=4, **params)
        for t in range(T):
            fc = f.forecast(mean=a.mean())
            yt = a.respond(fc)
            pt = f.draw()
            f.observe(yt)
            a.observe(pt, yt)
            assert (pt, yt) == (p[t], y[t])


def test_next_round_and_the_builtins_true_mean():
    v = next_round(History(9, 4, 0))
    assert (v.t, v.prev_y, v.bucket0) == (10, 0, -1) and math.isnan(v.point0)
    for name in MEAN_FAMILIES:
        spec = registry.adversary(name)
        assert spec.true_mean is not None and spec.compiled_mean() is spec.true_mean
    assert all(registry.adversary(n).true_mean is None for n in ("contrarian", "greedy", "signpreserve"))


# -- refusals ----------------------------------------------------------------------------------
@pytest.mark.parametrize("adversary", ["contrarian", "greedy", "lookahead", "signpreserve"])
def test_a_forecaster_that_needs_the_mean_is_refused_an_adversary_without_one(adversary):
    with pytest.raises(ValidationError) as e:
        simulate("spr", adversary, horizon=64)
    assert e.value.argument == "adversary"
    assert str(e.value).startswith(
        f"forecaster 'spr' needs the round's true mean E[y_t | past] and adversary {adversary!r} states none"
    )
    with pytest.raises(ValidationError, match="needs the round's true mean"):
        check_pairing(SEEN, registry.adversary(adversary))
    with pytest.raises(ValidationError, match="states no true mean"):
        make_adversary(adversary, horizon=64).mean()
    check_pairing(registry.forecaster("kt"), registry.adversary(adversary))  # the others play it


def test_the_experiments_treat_the_pair_as_refused():
    from fastcdl.experiments.presets import Component
    from fastcdl.experiments.runner import refusal

    assert refusal(Component("spr"), Component("contrarian")).startswith("forecaster 'spr' needs")
    assert refusal(Component("spr"), Component("bernoulli")) is None


def test_the_per_round_api_checks_the_mean():
    f = make_forecaster("spr", horizon=64)
    with pytest.raises(ValidationError, match=r"forecast\(mean=adversary.mean\(\)\)"):
        f.forecast()
    with pytest.raises(ValidationError, match="mean"):
        f.draw()
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(ValidationError, match="mean"):
            f.forecast(mean=bad)
    assert f.rounds == 0
    with pytest.raises(ValidationError, match="is not taken by forecaster 'kt'"):
        make_forecaster("kt", horizon=64).forecast(mean=0.5)


@njit(cache=True)
def _bad_mean(hist, par):
    return 1.5 if hist.t == 6 else 0.25


@njit(cache=True)
def _quarter(view, table, par, rng):
    return 1 if uniform(rng) < 0.25 else 0


BAD_MEAN = plugin_adversary(_quarter, name="badmean", true_mean=_bad_mean)


@pytest.mark.parametrize("forecaster", ["spr", SEEN])
def test_a_true_mean_that_is_no_probability_stops_the_run_at_its_round(forecaster):
    """Both loops (spr's, the generic mean loop) stop before round 7's forecast; the error
    names the adversary, the round and the value; the rounds before stay recorded."""
    from fastcdl.online.simulate import _build, _run_loop

    with pytest.raises(ValidationError) as e:
        simulate(forecaster, BAD_MEAN, horizon=64)
    assert (e.value.argument, e.value.index, e.value.value) == ("true_mean", 7, 1.5)
    assert str(e.value).startswith("adversary 'badmean': true_mean returned 1.5 for round 7")
    f, a = _build(forecaster, BAD_MEAN, 64, 0, None, None)
    with pytest.raises(ValidationError):
        _run_loop(f, a, 64, np.zeros(0), np.zeros(0, dtype=np.int8))
    assert f.rounds == 6 and int(f.stats().total) == 6 and f.hist.ones == int(f.table.s.sum())


def test_the_command_line_refuses_in_one_line(tmp_path):
    """fastcdl rates with spr against contrarian: one line naming both, exit status 2."""
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "fastcdl",
            "rates",
            "--forecasters",
            "spr",
            "--adversaries",
            "contrarian",
            "--t-max",
            "2^11",
            "--seeds",
            "2",
            "--out",
            str(tmp_path / "x"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "forecaster 'spr' needs the round's true mean" in lines[0]
    assert "adversary 'contrarian' states none" in lines[0]
    assert not (tmp_path / "x").exists()


def test_a_preset_that_skips_refused_pairs_drops_spr_against_contrarian():
    from fastcdl.experiments.presets import PresetError, preset_from_dict
    from fastcdl.experiments.runner import plan

    raw = {
        "name": "t",
        "seeds": 2,
        "t_min": 1024,
        "t_max": 2048,
        "forecasters": [{"name": "spr"}, {"name": "kt"}],
        "adversaries": [{"name": "contrarian"}, {"name": "bernoulli"}],
    }
    with pytest.raises(PresetError, match="needs the round's true mean"):
        preset_from_dict(raw)
    p = preset_from_dict({**raw, "skip_refused": True})
    pairs = {(t.forecaster, t.adversary) for t in plan(p)}
    assert pairs == {("spr", "bernoulli"), ("kt", "contrarian"), ("kt", "bernoulli")}


def test_the_worst_case_search_offers_spr_the_families_that_state_a_mean():
    from fastcdl.experiments.worst_search import _families

    assert [f.name for f in _families(None, "spr", 2**12)] == ["bernoulli", "drift", "markov"]
    assert len(_families(None, "kt", 2**12)) == len(_families(None, "cdl", 2**12)) > 3
    with pytest.raises(ValidationError, match="needs the round's true mean"):
        _families(["bernoulli", "contrarian"], "spr", 2**12)


def test_a_grown_table_keeps_its_rows_and_adds_zeros():
    nodes = np.arange(15, dtype=np.int64).reshape(3, 5)
    bigger = spr.grown(nodes)
    assert bigger.shape == (6, 5) and bigger.dtype == np.int64
    assert bigger.tolist() == np.vstack([nodes, np.zeros((3, 5), dtype=np.int64)]).tolist()
