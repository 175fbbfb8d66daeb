"""The online engine's contracts: what forecasters and adversaries see, write and return.

One round: the forecaster writes its distribution (at most two raw points, their
probabilities and bucket indices) into a :data:`Draw` buffer; the adversary sees that
distribution and the public record and returns y in {0, 1}; the engine draws the slot with
the forecaster's generator, the forecaster observes (slot, y), and the engine records the
stated prediction and y in the public :data:`Table`. The same kernels run in the compiled
loops and in the per-round Python API, so both give identical runs.

**Adversaries** are numba functions ``respond(view, table, par, rng) -> 0 or 1``:

- ``view`` (:data:`Round`, scalars): t (the round, 1-based), prev_y (-1 before the first
  round), m (the number of stated values), point0/point1 (raw points), prob0/prob1 (their
  probabilities; a point mass has prob1 = 0 and repeats slot 0), stated0/stated1 (the
  stated predictions), bucket0/bucket1 (their indices in the table);
- ``table`` (:data:`Table`): q (every stated value the forecaster can say, increasing), n
  and s (rounds so far at each, and how many had y = 1): the public record; and num, den:
  the stated values as exact fractions q_b = num_b / den (den <= 2^20, the least common
  denominator; den = 0 when the grid has none that small), for decisions made exactly
  (an adversary compares den * (q_b n_b - s_b) = num_b n_b - den s_b, an integer; see
  fastcdl._kernels.exact);
- ``par``: float64 array of the adversary's parameters, in the order they were declared;
- ``rng``: the adversary's own generator (uint64[4]); draw with :func:`uniform`.

An outcome other than 0 or 1 stops the run at that round, before the forecaster observes it
or the table records it (:func:`not_outcome`, :func:`stopped`), and simulate raises a
ValueError naming the adversary, the round and the value.

The round's scalars travel in ``view`` and the arrays in ``table`` (built once per run)
because an array inside a tuple built every round costs about 3.5 ns of reference
counting per array and round (measured), a third of an indirect call.

**Forecasters** are numba functions ``forecast(state, table, hist, out)`` and
``observe(state, table, hist, out, slot, y)`` over a state of the forecaster's own type
(a namedtuple of arrays), with ``hist`` (:data:`History`: t rounds done, ones = rounds
with y = 1, prev_y) and ``out`` (:data:`Draw`). ``observe`` runs before the engine
records the round in the table.

>>> Round._fields[:3]
('t', 'prev_y', 'm')
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from fastcdl._kernels._jit import kernel
from fastcdl._kernels.exact import rational_grid
from fastcdl._kernels.rng import uniform

__all__ = ["Draw", "History", "Round", "Table", "uniform"]

Round = namedtuple("Round", ["t", "prev_y", "m", "point0", "point1", "prob0", "prob1",
                             "stated0", "stated1", "bucket0", "bucket1"])
Table = namedtuple("Table", ["q", "n", "s", "num", "den"])
Draw = namedtuple("Draw", ["points", "probs", "buckets"])
History = namedtuple("History", ["t", "ones", "prev_y"])

Round.__doc__ = """The adversary's view of one round: scalars only (the arrays are in :class:`fastcdl.online.Table`).

Attributes
----------
t : int
    The round, 1-based.
prev_y : int
    The previous outcome, -1 before the first round.
m : int
    The number of stated values.
point0, point1 : float
    The raw points.
prob0, prob1 : float
    Their probabilities; a point mass has prob1 = 0 and repeats slot 0.
stated0, stated1 : float
    The stated predictions.
bucket0, bucket1 : int
    Their indices in the table.

Examples
--------
>>> Round._fields[:3]
('t', 'prev_y', 'm')
"""
Table.__doc__ = """The public record: every stated value with its rounds and outcomes so far.

Attributes
----------
q : ndarray of float64
    Every stated value the forecaster can say, increasing.
n, s : ndarray of int64
    Rounds so far at each value, and how many had y = 1.
num : ndarray of int64
    The stated values as exact fractions q_b = num_b / den.
den : int
    Their least common denominator (at most 2^20); 0 when the grid has none that small.

Examples
--------
>>> new_table(np.array([0.0, 0.5, 1.0])).den
2
"""
Draw.__doc__ = """The buffer a forecaster writes its round's distribution into.

Attributes
----------
points : ndarray of float64, shape (2,)
    The raw points.
probs : ndarray of float64, shape (2,)
    Their probabilities (a point mass: (1, 0), slot 1 repeating slot 0).
buckets : ndarray of int64, shape (2,)
    The bucket index of each point.

Examples
--------
>>> new_draw().points.shape
(2,)
"""
History.__doc__ = """What the forecaster knows of the rounds so far, besides the table.

Attributes
----------
t : int
    Rounds done.
ones : int
    Rounds with y = 1.
prev_y : int
    The last outcome, -1 before the first round.

Examples
--------
>>> History(0, 0, -1).prev_y
-1
"""


def new_table(q) -> Table:
    """An empty public table over the stated values q (float64, increasing), with their exact
    fractions (:func:`fastcdl._kernels.exact.rational_grid`)."""
    q = np.ascontiguousarray(q, dtype=np.float64)
    num = np.zeros(q.shape[0], dtype=np.int64)
    den = rational_grid(q, num)
    return Table(q, np.zeros(q.shape[0], dtype=np.int64), np.zeros(q.shape[0], dtype=np.int64), num, den)


def new_draw() -> Draw:
    return Draw(np.zeros(2), np.zeros(2), np.zeros(2, dtype=np.int64))


@kernel(inline="always")
def view_of(hist, out, table):
    """The adversary's view of this round (the distribution, never the draw).

    Parameters
    ----------
    hist : History
    out : Draw
        The round's distribution.
    table : Table
        The public record.

    Returns
    -------
    Round

    Examples
    --------
    >>> table, out = new_table(np.array([0.0, 0.5, 1.0])), new_draw()
    >>> out.points[:] = 0.5; out.probs[0] = 1.0; out.buckets[:] = 1
    >>> v = view_of(History(0, 0, -1), out, table)
    >>> v.t, v.stated0, v.bucket0
    (1, 0.5, 1)
    """
    b0 = out.buckets[0]
    b1 = out.buckets[1]
    return Round(hist.t + 1, hist.prev_y, table.q.shape[0], out.points[0], out.points[1],
                 out.probs[0], out.probs[1], table.q[b0], table.q[b1], b0, b1)


@kernel(inline="always")
def draw_slot(out, rng):
    """The slot drawn with the forecaster's generator: 1 with probability probs[1], else 0.

    Draws a uniform only when slot 1 has positive probability (point masses use none).

    Parameters
    ----------
    out : Draw
        The round's distribution.
    rng : ndarray of uint64, shape (4,)
        The forecaster's generator, advanced when a uniform is drawn.

    Returns
    -------
    int
        0 or 1.

    Examples
    --------
    >>> from fastcdl._kernels.rng import seed_states
    >>> out = new_draw(); out.probs[0] = 1.0
    >>> draw_slot(out, seed_states(0)[0])
    0
    """
    if out.probs[1] > 0.0 and uniform(rng) >= out.probs[0]:
        return 1
    return 0


@kernel(inline="always")
def record(table, b, y):
    table.n[b] += 1
    table.s[b] += y


@kernel(inline="always")
def keep_trace(t, p, y, trace_p, trace_y):
    if trace_p.shape[0] > 0:
        trace_p[t] = p
        trace_y[t] = y


@kernel(inline="always")
def play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y):
    """Round t after the forecast: the adversary's outcome, the draw, the trace. Returns (slot, y)."""
    y = adversary(view_of(hist, out, table), table, apar, arng)
    slot = draw_slot(out, rng)
    keep_trace(t, table.q[out.buckets[slot]], y, trace_p, trace_y)
    return slot, y


@intrinsic
def _rarely(typingctx, cond):
    """cond, told to LLVM to be almost always false (llvm.expect): the loop's registers go to
    the common path, and the rare branch costs a compare and a jump."""
    if not isinstance(cond, types.Boolean):
        return None

    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(ir.IntType(1), [ir.IntType(1), ir.IntType(1)])
        expect = cgutils.get_or_insert_function(builder.module, fnty, "llvm.expect.i1")
        return builder.call(expect, [args[0], ir.Constant(ir.IntType(1), 0)])

    return types.boolean(types.boolean), codegen


@kernel(inline="always")
def not_outcome(y):
    """True when the adversary's answer y is not an outcome, 0 or 1 (y >> 1 is 0 only for
    those); expected never to be."""
    return _rarely((y >> 1) != 0)


@kernel(inline="always")
def stopped(hist, y):
    """What a loop returns when round hist.t + 1 got the answer y, not an outcome: a History
    with t = -(that round), ones of the rounds before it and prev_y = y. The loop returns it at
    once, and its caller (simulate) raises naming the round and y: the compiled loops cannot
    raise an exception that carries values (they run without numba's reference counting).
    The round, not hist.t, because the loop computes it anyway (view.t): returning hist.t would
    keep one more register busy in every round."""
    return History(-(hist.t + 1), hist.ones, y)


@kernel(inline="always")
def settle(table, out, slot, y, hist):
    """Record the round in the public table; the history after it.

    Parameters
    ----------
    table : Table
        Updated in place.
    out : Draw
        The round's distribution.
    slot : int
        The drawn slot.
    y : int
        The outcome.
    hist : History
        Before the round.

    Returns
    -------
    History
        After the round.

    Examples
    --------
    >>> table, out = new_table(np.array([0.0, 0.5, 1.0])), new_draw()
    >>> out.buckets[:] = 1
    >>> settle(table, out, 0, 1, History(0, 0, -1)), table.n.tolist()
    (History(t=1, ones=1, prev_y=1), [0, 1, 0])
    """
    record(table, out.buckets[slot], y)
    return History(hist.t + 1, hist.ones + y, y)


@kernel(cache=False)
def run_rounds(T, forecast, observe, state, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y):
    """The simulate loop for a plug-in forecaster (forecast, observe: numba functions).

    Every built-in forecaster module runs this same body in a loop of its own, which numba
    can cache; a loop that takes functions as arguments is compiled once per process (it
    cannot be cached). Returns the History after the run, or :func:`stopped`'s.
    """
    for t in range(T):
        forecast(state, table, hist, out)
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        observe(state, table, hist, out, slot, y)
        hist = settle(table, out, slot, y, hist)
    return hist
