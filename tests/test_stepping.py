"""The per-round API on the simulate loop (fastcdl.online.stepping): snapshots, the paused and
replayed rounds, every built-in against its loop, and nothing compiled beside the loop."""

import subprocess
import sys

import numpy as np
import pytest
from numba import typed

from fastcdl.online import make_adversary, make_forecaster, registry
from fastcdl.online.external import score
from fastcdl.online.simulate import trace
from fastcdl.online.stepping import Snapshot
from new_forecasters_reference import run_api


def test_snapshot_restores_arrays_in_place():
    a, b = np.arange(3.0), np.zeros(2, dtype=np.int64)
    frozen = np.ones(2)
    frozen.flags.writeable = False
    s = Snapshot.of((a, (b, 7, None, 0.5, "x", np.int64(3))), frozen)
    assert [x is y for x, y in zip(s.arrays, (a, b))] == [True, True] and len(s.arrays) == 2
    a[:] = -1.0
    b[1] = 9
    s.restore()
    assert a.tolist() == [0.0, 1.0, 2.0] and b.tolist() == [0, 0]
    s.restore()  # again: the same
    assert a.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("leaf", [{"a": 1}, [np.zeros(2)], object(), typed.List([1, 2])])
def test_snapshot_refuses_what_it_cannot_copy(leaf):
    assert Snapshot.of((np.zeros(2), leaf)) is None


def _pair(name, spec):
    if spec.needs_adversary:
        return "bernoulli", {"adversary": ("bernoulli", {})}
    return {"mean": "bernoulli", "external": "informed"}.get(spec.side_input, "greedy"), {}


def _per_round(name, spec, T, seed):
    adversary, extra = _pair(name, spec)
    f, ps, ys = run_api(name, extra, adversary, {}, T, seed)
    return f, adversary, ps, ys


@pytest.mark.parametrize("name", list(registry.forecasters()))
def test_every_builtin_steps_as_its_loop_runs(name):
    spec = registry.forecasters()[name]
    T, seed = 300, 7
    f, adversary, ps, ys = _per_round(name, spec, T, seed)
    # every built-in's state is arrays in tuples but spr's (typed lists): it calls its kernels
    assert f._stepped == (name != "spr") and (Snapshot.of(f.state, f.table, f.out) is None) == (name == "spr")
    res, tp, ty = trace(name, adversary, horizon=T, seed=seed)
    assert np.array_equal(tp, ps) and np.array_equal(ty, ys)
    assert res.stats == f.stats() and res.pseudo_stats == f.pseudo_stats()
    if f.external_record is not None:  # the loop noted every round's (b, y), once
        assert score(f.external_record) == res.external


def test_a_paused_round_changes_nothing_the_round_records():
    f = make_forecaster("ftpl", horizon=50, seed=3)
    a = make_adversary("greedy", horizon=50, seed=3)
    for _ in range(20):
        d = f.forecast()
        p = f.draw()
        f.observe(a.respond(d))
        a.observe(p, f.hist.prev_y)
    rng, n, hist = f._rng.copy(), f.table.n.copy(), f.hist
    d = f.forecast()
    assert f._rng.tolist() == rng.tolist() and f.table.n.tolist() == n.tolist() and f.hist == hist
    assert f.forecast() == d  # once per round
    p = f.draw()
    drawn = f._rng.copy()  # draw() advances the generator (when the round is randomized)
    f.observe(1)
    assert p in d.predictions and f._rng.tolist() == drawn.tolist()  # the replay drew the same
    assert f.rounds == 21 and f.table.n.sum() == 21 and f.hist.prev_y == 1
    assert f.table.n[d.buckets[d.predictions.index(p)]] == n[d.buckets[d.predictions.index(p)]] + 1


def test_per_round_api_compiles_no_forecast_or_observe_kernel():
    code = (
        "from fastcdl.online import make_forecaster, registry\n"
        "f = make_forecaster('frequency', horizon=20, seed=0)\n"
        "for y in (1, 0, 1):\n"
        "    f.forecast(); f.draw(); f.observe(y)\n"
        "spec = registry.forecaster('frequency')\n"
        "print(len(spec.forecast.signatures), len(spec.observe.signatures), f.rounds)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "0", "3"]


def test_the_stepping_adversaries_are_found_by_their_address():
    from numba.experimental.function_type import _get_wrapper_address

    from fastcdl.online import plugins, stepping

    for k, sig in ((False, plugins.ADVERSARY_SIGNATURE), (True, plugins.ADVERSARY_K_SIGNATURE)):
        for which, fn in (("pause", stepping.pause), ("replay", stepping.replay)):
            a = stepping.stepper(which, k)
            assert a is stepping.stepper(which, k)  # once per process
            assert a.__wrapper_address__() == _get_wrapper_address(fn, sig) > 0
    g = stepping.given_side()
    assert g.__wrapper_address__() == _get_wrapper_address(stepping.given, plugins.MEAN_SIGNATURE)
