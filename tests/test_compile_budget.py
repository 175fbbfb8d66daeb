"""What a call compiles: the compile budget's rules, checked by listening to numba's compile events.

- a forecaster's loop is compiled once, whatever the adversary: the adversary enters it as a
  first-class function, so a new adversary compiles only its own kernels (F + A loops, not F x A);
- a first fc.cdl on a small table compiles neither the radix sort nor the validation kernels.
Seconds are never asserted: only which kernels compile.
"""

import os
import subprocess
import sys

import numba.core.event as ev
import pytest

from fastcdl.online import simulate


class _Compiled(ev.Listener):
    def __init__(self):
        self.names = []

    def on_start(self, event):
        py = getattr(event.data["dispatcher"], "py_func", None)
        self.names.append(f"{py.__module__}.{py.__qualname__}" if py is not None else "?")

    def on_end(self, event):
        pass


def _compiled_by(fn):
    listener = _Compiled()
    ev.register("numba:compile", listener)
    try:
        fn()
    finally:
        ev.unregister("numba:compile", listener)
    return listener.names


def test_a_new_adversary_compiles_no_forecaster_loop_again():
    simulate("kt", "bernoulli", horizon=32, seed=0)  # the loop, compiled or loaded
    names = _compiled_by(lambda: simulate("kt", "contrarian", horizon=32, seed=0))
    assert not [n for n in names if n.startswith("fastcdl.online.forecasters.")], names
    simulate("frequency", "contrarian", horizon=32, seed=0)
    names = _compiled_by(lambda: simulate("frequency", "bernoulli", horizon=32, seed=0))
    assert not [n for n in names if n.startswith("fastcdl.online.forecasters.")], names


# a fresh process records what numba compiles while ``code`` runs, and prints it
LISTEN = """
import sys
import numba.core.event as ev
names = []
class L(ev.Listener):
    def on_start(self, event):
        py = event.data["dispatcher"].py_func
        names.append(py.__module__ + "." + py.__qualname__)
    def on_end(self, event):
        pass
ev.register("numba:compile", L())
{code}
print("\\n".join(names))
"""


def _compiled_in_fresh_process(code, cache, *args):
    """The names of the kernels numba compiled while ``code`` ran in a fresh process with the
    empty NUMBA_CACHE_DIR ``cache`` (``args`` are its sys.argv[1:])."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", LISTEN.format(code=code), *args], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_first_cdl_on_a_small_table_compiles_only_what_it_runs(tmp_path):
    """An empty cache: the small table's path compiles no radix sort, huge-page sort,
    validation kernel or kernel that builds the table (they are for inputs large enough to use
    them): the sweep and its helpers only."""
    code = "import fastcdl as fc\nfc.cdl([0, 1, 1, 0, 1], [0.1, 0.5, 0.5, 0.9, 0.3])"
    names = set(_compiled_in_fresh_process(code, tmp_path))
    assert "fastcdl._compiled.tablecdl.sweep" in names  # it did compile, into the empty cache
    for large in (
        "_radix",
        "sort_pairs",
        "first_bad_prob",
        "outcomes_to_u8",
        "table_cdl",
        "outcome_keys",
        "count_runs",
        "runs_of_keys",
    ):
        assert not [n for n in names if n.endswith("." + large)], sorted(names)


COMPILE_ADVERSARIES = """
from fastcdl.online import registry
for a in sys.argv[2:]:
    registry.adversary(a).compiled(k_points=sys.argv[1] == "K")
"""


# lookahead's two-point code (inlined into its kernel through engine.two_point_only) calls these
TWO_POINT_ONLY = {
    "fastcdl.online.adversaries.lookahead.catch_up",
    "fastcdl.online.adversaries.lookahead.expected_value",
}


def test_a_two_point_table_compiles_no_k_point_code(tmp_path):
    """An empty cache: an adversary compiled for a two-point forecaster's table compiles none
    of its K-point functions (engine.k_point_only), though its kernel holds their branch; the
    same adversaries compiled for a K-point table do compile them, and none of the two-point
    code that follows the branch (engine.two_point_only)."""
    adversaries = ["greedy", "contrarian", "lookahead"]
    compiled, two = {}, {}
    for kind in ("2", "K"):
        names = _compiled_in_fresh_process(COMPILE_ADVERSARIES, tmp_path / kind, kind, *adversaries)
        for a in adversaries:
            assert f"fastcdl.online.adversaries.{a}.respond" in names  # it did compile, into the empty cache
        compiled[kind] = {n for n in names if n.startswith("fastcdl.online.adversaries.") and n.endswith("_k")}
        two[kind] = {n for n in names if n in TWO_POINT_ONLY}
    assert not compiled["2"], compiled["2"]
    assert {
        "fastcdl.online.adversaries.greedy.respond_k",
        "fastcdl.online.adversaries.lookahead.respond_k",
    } <= compiled["K"]
    assert not two["K"], two["K"]
    assert two["2"] == TWO_POINT_ONLY


def test_the_k_point_choice_is_for_compiled_code_only():
    """Called from Python, a k_point_only function says it is for compiled code (TypeError)."""
    from fastcdl.online.adversaries import greedy

    with pytest.raises(TypeError, match="respond_k's K-point branch is for compiled code only"):
        greedy._respond_k(None, None, None)
    from fastcdl.online.adversaries import lookahead

    with pytest.raises(TypeError, match="respond_two's two-point branch is for compiled code only"):
        lookahead._respond_two(None, None, None, None)


def test_continuous_scores_take_no_radix_sort_and_no_curve(monkeypatch):
    """The report of 100,000 continuous scores calls neither the fused kernel's radix sort
    (one-round buckets sort with numpy below 2^21 buckets) nor cdl_report's curve (the report
    does not show the worst task there), so a first report compiles neither."""
    import numpy as np

    import fastcdl as fc
    from fastcdl._compiled import envelope, tablecdl

    def refuse(*args):
        raise AssertionError("called")

    monkeypatch.setattr(tablecdl, "table_cdl", refuse)
    monkeypatch.setattr(envelope, "cdl_curve", refuse)
    rng = np.random.default_rng(0)
    p = rng.random(100_000)
    y = rng.random(100_000) < p
    s = fc.summary(y, p, intervals=False)
    assert s.sparse and s["cdl"] == s["cdl"] and s["vcdl"] <= s["cdl"]
    monkeypatch.undo()
    assert s.worst_task.gain <= s["cdl"] + 1e-12  # computed when read, with the curve


def test_read_only_arguments_compile_once_for_both_kinds_of_caller():
    """A kernel whose array argument is marked read_only, called from compiled code with a
    writable array and with a read-only one, compiles one version (the read-only one); an
    unmarked kernel compiles one per kind; a marked kernel that writes the argument is still
    typed (as numba would: a version per kind) and runs."""
    import numpy as np

    from fastcdl._compiled._jit import kernel, readonly

    @kernel(cache=False, read_only=(0,))
    def marked(x):
        return x.sum()

    @kernel(cache=False)
    def unmarked(x):
        return x.sum()

    @kernel(cache=False, read_only=(0,))
    def writes(x):
        x[0] = 7.0
        return x[0]

    @kernel(cache=False)
    def outer(x):
        return marked(x) + unmarked(x)

    @kernel(cache=False)
    def outer_writes(x):
        return writes(x)

    fresh, frozen = np.ones(3), readonly(np.ones(3))
    assert outer(fresh) == outer(frozen) == 6.0
    assert [s[0].mutable for s in marked.signatures] == [False]
    assert sorted(s[0].mutable for s in unmarked.signatures) == [False, True]
    assert outer_writes(fresh) == 7.0 and fresh[0] == 7.0
    assert not frozen.flags.writeable and readonly(frozen) is frozen
