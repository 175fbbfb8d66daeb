"""The online engine's contracts: what forecasters and adversaries see, write and return.

One round: the forecaster writes its distribution (raw points, their probabilities and
bucket indices: at most two for the classic forecasters, at most K for a forecaster whose
spec declares ``support = K``) into a :data:`Draw` buffer; the adversary sees that
distribution and the public record and returns y in {0, 1}; the engine draws the slot with
the forecaster's generator, the forecaster observes (slot, y), and the engine records the
stated prediction and y in the public :data:`Table`. The per-round Python API runs the
compiled loops a round at a time (:mod:`fastcdl.online.stepping`; a plug-in forecaster's calls
its kernels), so both give identical runs.

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
  fastcdl._compiled.exact);
- ``par``: float64 array of the adversary's parameters, in the order they were declared;
- ``rng``: the adversary's own generator (uint64[4]); draw with :func:`uniform`.

An outcome other than 0 or 1 stops the run at that round, before the forecaster observes it
or the table records it (:func:`not_outcome`, :func:`stopped`), and simulate raises a
ValueError naming the adversary, the round and the value.

**K-point rounds.** A forecaster with ``support = K > 2`` writes K slots (probability 0
for the unused ones). Its run's table is a :data:`KTable`, the Table with the Draw's arrays
as three more fields (``points``, ``probs``, ``buckets``, length K): the adversary reads the
whole distribution there, and ``view`` carries slots 0 and 1 as for two points. An
adversary that reads the distribution through :func:`slots` and :func:`slot` (or not at
all) declares ``k_points=True`` and plays both kinds of forecasters: for a two-point
forecaster's :data:`Table` these compile to the view's two slots, so its two-point code is
unchanged. The two-point loops never see a KTable (results/benchmarks/kpoint.md).

The round's scalars travel in ``view`` and the arrays in ``table`` (built once per run)
because an array inside a tuple built every round costs about 3.5 ns of reference
counting per array and round (measured), a third of an indirect call.

**Forecasters** are numba functions ``forecast(state, table, hist, out)`` and
``observe(state, table, hist, out, slot, y)`` over a state of the forecaster's own type
(a namedtuple of arrays), with ``hist`` (:data:`History`: t rounds done, ones = rounds
with y = 1, prev_y) and ``out`` (:data:`Draw`). ``observe`` runs before the engine
records the round in the table.

**The true mean.** A forecaster whose spec declares ``needs_mean`` (spr) forecasts with
``forecast(state, table, hist, out, e)``: its loop asks the adversary's ``true_mean(hist,
par)`` for e = P(y = 1) of the round about to be played, from the past only, before the
forecast (:func:`run_rounds_mean`); the adversary then draws y with that same probability.
A mean outside [0, 1] (or NaN) stops the run before the forecast (:func:`bad_mean`,
:func:`mean_stopped`). Only the loops of such forecasters call it: the two-point loops are
unchanged.

**The external forecast.** A forecaster whose spec declares ``needs_external`` plays the
calibeating game (docs/calibeating.md): its loop asks the adversary's ``external(hist, par)``
for b_t, another forecaster's prediction for the round, before the forecast, hands it to
``forecast(state, table, hist, out, b)``, and notes (b_t, y_t) in an
:data:`fastcdl.online.external.ExternalRecord` after the outcome (:func:`run_rounds_external`).

>>> Round._fields[:3]
('t', 'prev_y', 'm')
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

from fastcdl._compiled._jit import kernel
from fastcdl._compiled.exact import rational_grid
from fastcdl._compiled.rng import uniform
from fastcdl.online.external import note_external

__all__ = [
    "Draw",
    "History",
    "KTable",
    "Round",
    "Table",
    "k_point_only",
    "next_round",
    "slot",
    "slots",
    "two_point_only",
    "uniform",
]

Round = namedtuple(
    "Round", ["t", "prev_y", "m", "point0", "point1", "prob0", "prob1", "stated0", "stated1", "bucket0", "bucket1"]
)
Table = namedtuple("Table", ["q", "n", "s", "num", "den"])
KTable = namedtuple("KTable", ["q", "n", "s", "num", "den", "points", "probs", "buckets"])
_NONE = np.zeros(0)  # the default of pw and pwy: no expected-count table (length 0: nothing to write;
# writable, so that a Draw made without them has the type of one made with them)
Draw = namedtuple("Draw", ["points", "probs", "buckets", "pw", "pwy"], defaults=(_NONE, _NONE))
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
KTable.__doc__ = """The public record of a K-point forecaster's run: :class:`Table` and the round's distribution.

Attributes
----------
q, n, s, num, den
    As in :class:`Table`.
points, probs, buckets : ndarray, shape (K,)
    The forecaster's :class:`Draw` arrays (the same arrays): this round's raw points, their
    probabilities (0 for an unused slot) and bucket indices.

Examples
--------
>>> new_table(np.array([0.0, 0.5, 1.0]), new_draw(3)).probs.shape
(3,)
"""
Draw.__doc__ = """The buffer a forecaster writes its round's distribution into.

Attributes
----------
points : ndarray of float64, shape (K,)
    The raw points (K = 2 unless the forecaster's spec declares ``support = K``).
probs : ndarray of float64, shape (K,)
    Their probabilities (a point mass of a two-point forecaster: (1, 0), slot 1 repeating
    slot 0; a K-point forecaster leaves unused slots at probability 0).
buckets : ndarray of int64, shape (K,)
    The bucket index of each point.
pw, pwy : ndarray of float64, shape (len(q),) or (0,)
    The expected-count table the engine keeps (``settle``), as its difference from the
    public table: per stated value j, sum_t (P_t(j) - [j drawn in round t]) and the same
    weighted by y_t, so that sum_t P_t(j) = n_j + pw_j and sum_t P_t(j) y_t = s_j + pwy_j
    (a point-mass round adds 0 and is skipped); empty (the default) when it is not kept.
    Forecasters never write them.

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


def new_table(q, draw=None):
    """An empty public table over the stated values q (float64, increasing), with their exact
    fractions (:func:`fastcdl._compiled.exact.rational_grid`); a :data:`KTable` showing the
    arrays of ``draw`` when it has more than two slots. The table holds its own writable copy
    of q (a read-only grid, as the per-round API hands out, would type every adversary and
    loop a second time: numba compiles read-only arrays as a type of their own)."""
    q = np.array(q, dtype=np.float64, order="C")
    num = np.zeros(q.shape[0], dtype=np.int64)
    den = rational_grid(q, num)
    n, s = np.zeros(q.shape[0], dtype=np.int64), np.zeros(q.shape[0], dtype=np.int64)
    if draw is not None and draw.probs.shape[0] > 2:
        return KTable(q, n, s, num, den, draw.points, draw.probs, draw.buckets)
    return Table(q, n, s, num, den)


def new_draw(k=2, pseudo=0) -> Draw:
    """A zeroed :data:`Draw` of k slots (2 unless the forecaster declares a larger support),
    keeping the expected-count table over ``pseudo`` stated values (none when 0)."""
    return Draw(np.zeros(k), np.zeros(k), np.zeros(k, dtype=np.int64), np.zeros(pseudo), np.zeros(pseudo))


# The overloads below that choose by the table's type (slots, slot, choose_slot,
# keep_pseudo_of) are compiled as functions of their own, which LLVM inlines: numba's own IR
# inlining (inline="always") lost a table made inside the caller's kernel, whose counts then
# stayed 0 (tests/test_pseudo.py, a kernel that makes its game).
def _is_ktable(table) -> bool:
    return isinstance(table, types.BaseNamedTuple) and table.instance_class is KTable


def slots(view, table):
    """How many slots the round's distribution has: 2 for a :data:`Table`, K for a :data:`KTable`.

    For adversary kernels (numba); a compile-time 2 for a two-point forecaster's table.

    Parameters
    ----------
    view : Round
    table : Table or KTable

    Returns
    -------
    int

    Examples
    --------
    >>> from numba import njit
    >>> f = njit(lambda v, t: slots(v, t))
    >>> f(Round(1, -1, 3, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5, 1, 1), new_table(np.array([0.0, 0.5, 1.0])))
    2
    """
    return table.probs.shape[0] if isinstance(table, KTable) else 2


def slot(view, table, i):
    """Slot i of the round's distribution: (probability, stated value, bucket, raw point).

    For adversary kernels (numba): from the view's slot 0 or 1 for a :data:`Table`, from the
    distribution's arrays for a :data:`KTable`. A slot of probability 0 is not stated.

    Parameters
    ----------
    view : Round
    table : Table or KTable
    i : int
        0 <= i < slots(view, table).

    Returns
    -------
    tuple of (float, float, int, float)

    Examples
    --------
    >>> t = new_table(np.array([0.0, 0.5, 1.0]), new_draw(3))
    >>> t.probs[:] = 0.25, 0.5, 0.25; t.buckets[:] = 0, 1, 2; t.points[:] = 0.0, 0.5, 1.0
    >>> slot(view_of(History(0, 0, -1), t, t), t, 2)
    (0.25, 1.0, 2, 1.0)
    """
    if isinstance(table, KTable):
        b = int(table.buckets[i])
        return float(table.probs[i]), float(table.q[b]), b, float(table.points[i])
    if i == 0:
        return view.prob0, view.stated0, view.bucket0, view.point0
    return view.prob1, view.stated1, view.bucket1, view.point1


@overload(slots)
def _slots(view, table):
    if _is_ktable(table):
        return lambda view, table: table.probs.shape[0]
    return lambda view, table: 2


@overload(slot)
def _slot(view, table, i):
    if _is_ktable(table):

        def k_slot(view, table, i):
            b = table.buckets[i]
            return table.probs[i], table.q[b], b, table.points[i]

        return k_slot

    def two_slot(view, table, i):
        if i == 0:
            return view.prob0, view.stated0, view.bucket0, view.point0
        return view.prob1, view.stated1, view.bucket1, view.point1

    return two_slot


def k_point_only(func, dummy):
    """``func`` for a K-point forecaster's table and a constant for a two-point one, chosen when
    the kernel compiles: for the K-point branch of an adversary kernel (``k(view, table, par)``
    under ``if slots(view, table) > 2``, with ``k = k_point_only(func, dummy)`` made at import).

    numba compiles every callee of a kernel for its argument types, also in a branch that never
    runs: a two-point kernel whose K-point branch calls ``func`` directly compiles ``func`` for a
    :data:`Table` though ``slots`` is 2 there (cdlahead's K-point code was about a fifth of its
    two-point compilation). The function returned is chosen by the table's type when the
    kernel is compiled: ``func(view, table, *args)`` for a :data:`KTable`, ``dummy`` (of the
    type ``func`` returns; never reached, as the branch is not taken) for a :data:`Table`. The
    same results: only what is compiled changes.

    Parameters
    ----------
    func : numba dispatcher
        The K-point code, called as ``func(view, table, *args)``.
    dummy : int, float or bool
        What a two-point table's version returns.

    Returns
    -------
    function
        For compiled code (calling it from Python raises TypeError).

    Examples
    --------
    >>> from numba import njit
    >>> @njit
    ... def heavy(view, table):
    ...     return table.q.shape[0]
    >>> k = k_point_only(heavy, 0)
    >>> f = njit(lambda v, t: k(v, t) if slots(v, t) > 2 else -1)
    >>> f(Round(1, -1, 3, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5, 1, 1), new_table(np.array([0.0, 0.5, 1.0])))
    -1
    >>> heavy.signatures  # not compiled for the two-point table
    []
    """

    def k_point(view, table, *args):
        raise TypeError(f"{func.__name__}'s K-point branch is for compiled code only")

    @overload(k_point)
    def _k_point(view, table, *args):
        if _is_ktable(table):
            return lambda view, table, *args: func(view, table, *args)
        return lambda view, table, *args: dummy

    k_point.__name__ = k_point.__qualname__ = f"{func.__name__}_k_point_only"
    return k_point


def two_point_only(func, dummy):
    """``func`` for a two-point forecaster's table and a constant for a K-point one, chosen when
    the kernel compiles: :func:`k_point_only`'s mirror, for an adversary's two-point code after
    its K-point branch (``return t(view, table, par, rng)`` with ``t = two_point_only(func,
    dummy)`` made at import).

    A kernel compiled for a :data:`KTable` types its two-point code for it too, though it never
    runs there: cdlahead's K-point version compiled its two-point envelope a second time (about
    4 s). ``func`` takes an adversary's arguments and should be a kernel of ``inline="always"``:
    the choice is inlined into the calling kernel with it, so that a two-point round makes no
    call (a call there made greedy's rounds against frequency 17 ns -> 49 ns, measured). The
    same results: only what is compiled changes.

    Parameters
    ----------
    func : numba dispatcher
        The two-point code, called as ``func(view, table, par, rng)``.
    dummy : int, float or bool
        What a K-point table's version returns.

    Returns
    -------
    function
        For compiled code (calling it from Python raises TypeError).

    Examples
    --------
    >>> from numba import njit
    >>> from fastcdl._compiled._jit import kernel
    >>> @kernel(cache=False, inline="always")
    ... def heavy(view, table, par, rng):
    ...     return table.q.shape[0]
    >>> t = two_point_only(heavy, 0)
    >>> f = njit(lambda v, t_, par, rng: -1 if slots(v, t_) > 2 else t(v, t_, par, rng))
    >>> k = new_table(np.array([0.0, 0.5, 1.0]), new_draw(3))
    >>> par, rng = np.zeros(1), np.zeros(4, dtype=np.uint64)
    >>> f(view_of(History(0, 0, -1), k, k), k, par, rng), heavy.signatures  # not compiled for it
    (-1, [])
    >>> f(Round(1, -1, 3, 0.5, 0.5, 1.0, 0.0, 0.5, 0.5, 1, 1), new_table(np.array([0.0, 0.5, 1.0])), par, rng)
    3
    """

    def two_point(view, table, par, rng):
        raise TypeError(f"{func.__name__}'s two-point branch is for compiled code only")

    # inlined into the caller at numba's IR level, with ``func`` (a kernel of inline="always"):
    # the two-point rounds run the code they ran before the split, with no call in between
    @overload(two_point, inline="always")
    def _two_point(view, table, par, rng):
        if _is_ktable(table):
            return lambda view, table, par, rng: dummy
        return lambda view, table, par, rng: func(view, table, par, rng)

    two_point.__name__ = two_point.__qualname__ = f"{func.__name__}_two_point_only"
    return two_point


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
    return Round(
        hist.t + 1,
        hist.prev_y,
        table.q.shape[0],
        out.points[0],
        out.points[1],
        out.probs[0],
        out.probs[1],
        table.q[b0],
        table.q[b1],
        b0,
        b1,
    )


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
    >>> from fastcdl._compiled.rng import seed_states
    >>> out = new_draw(); out.probs[0] = 1.0
    >>> draw_slot(out, seed_states(0)[0])
    0
    """
    if out.probs[1] > 0.0 and uniform(rng) >= out.probs[0]:
        return 1
    return 0


@kernel(inline="always")
def draw_slot_k(out, rng):
    """The slot drawn from a K-slot distribution with the forecaster's generator.

    A point mass (one slot of positive probability) is that slot, drawn without a uniform;
    otherwise one uniform u and the first slot i of positive probability with u < probs[0] +
    ... + probs[i] (the last slot of positive probability when rounding leaves u above the
    sum). For two slots of positive probability this is :func:`draw_slot`'s rule.

    Parameters
    ----------
    out : Draw
        The round's distribution (K slots).
    rng : ndarray of uint64, shape (4,)
        The forecaster's generator.

    Returns
    -------
    int

    Examples
    --------
    >>> from fastcdl._compiled.rng import seed_states
    >>> out = new_draw(4); out.probs[2] = 1.0
    >>> draw_slot_k(out, seed_states(0)[0])
    2
    """
    probs = out.probs
    last = -1
    stated = 0
    for i in range(probs.shape[0]):
        if probs[i] > 0.0:
            last = i
            stated += 1
    if stated <= 1:
        return max(last, 0)
    u = uniform(rng)
    acc = 0.0
    for i in range(last):
        if probs[i] > 0.0:
            acc += probs[i]
            if u < acc:
                return i
    return last


def choose_slot(out, table, rng):
    """The round's drawn slot: :func:`draw_slot` for a two-point run, :func:`draw_slot_k`
    for a K-point run (chosen by the table's type when compiled)."""
    if isinstance(table, KTable):
        return draw_slot_k(out, rng)
    return draw_slot(out, rng)


@overload(choose_slot)
def _choose_slot(out, table, rng):
    if _is_ktable(table):
        return lambda out, table, rng: draw_slot_k(out, rng)
    return lambda out, table, rng: draw_slot(out, rng)


@kernel(inline="always")
def record(table, b, y):
    table.n[b] += 1
    table.s[b] += y


@kernel(inline="always")
def keep_pseudo(out, slot, y):
    """Add the round's distribution minus its draw to the expected-count table's difference
    from the public table: pw[b_i] += p_i for every slot i of positive probability and
    pw[b_slot] -= 1 (pwy likewise when y = 1). A point-mass round (the drawn slot has
    probability 1) adds nothing and costs one comparison; none when the table is not kept.
    O(K) for a randomized round.

    pwy takes p_i y and -y in every randomized round, without a branch on y (which a fair
    coin's outcomes would mispredict half the time): adding 0.0 leaves every value these
    sums reach unchanged bit for bit (they start at +0.0 and, rounding to nearest, never
    become -0.0), so the table is the one the branch on y kept."""
    if out.pw.shape[0] > 0 and out.probs[slot] < 1.0:
        fy = float(y)
        for i in range(out.probs.shape[0]):
            p = out.probs[i]
            if p > 0.0:
                b = out.buckets[i]
                out.pw[b] += p
                out.pwy[b] += p * fy
        b = out.buckets[slot]
        out.pw[b] -= 1.0
        out.pwy[b] -= fy


@kernel(inline="always")
def keep_pseudo_two(out, slot, y):
    """:func:`keep_pseudo` for a two-slot Draw, unrolled: the same additions in the same order
    (slot 0, slot 1, the drawn slot), so the same table bit for bit."""
    if out.pw.shape[0] > 0 and out.probs[slot] < 1.0:
        fy = float(y)
        p0, p1 = out.probs[0], out.probs[1]
        if p0 > 0.0:
            b = out.buckets[0]
            out.pw[b] += p0
            out.pwy[b] += p0 * fy
        if p1 > 0.0:
            b = out.buckets[1]
            out.pw[b] += p1
            out.pwy[b] += p1 * fy
        b = out.buckets[slot]
        out.pw[b] -= 1.0
        out.pwy[b] -= fy


def keep_pseudo_of(table, out, slot, y):
    """:func:`keep_pseudo` for a K-point run, :func:`keep_pseudo_two` for a two-point one
    (chosen by the table's type when compiled)."""
    if isinstance(table, KTable):
        return keep_pseudo(out, slot, y)
    return keep_pseudo_two(out, slot, y)


@overload(keep_pseudo_of)
def _keep_pseudo_of(table, out, slot, y):
    if _is_ktable(table):
        return lambda table, out, slot, y: keep_pseudo(out, slot, y)
    return lambda table, out, slot, y: keep_pseudo_two(out, slot, y)


@kernel(inline="always")
def keep_trace(t, p, y, trace_p, trace_y):
    if trace_p.shape[0] > 0:
        trace_p[t] = p
        trace_y[t] = y


@kernel(inline="always")
def play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y):
    """Round t after the forecast: the adversary's outcome, the draw, the trace. Returns (slot, y)."""
    y = adversary(view_of(hist, out, table), table, apar, arng)
    slot = choose_slot(out, table, rng)
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
    """Record the round in the public table and the expected-count table (when kept); the
    history after it.

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
    keep_pseudo_of(table, out, slot, y)
    return History(hist.t + 1, hist.ones + y, y)


@kernel(inline="always")
def next_round(hist):
    """The adversary's view of round hist.t + 1 before any forecast: t and prev_y; the
    distribution's fields NaN (raw points, probabilities, stated values) and -1 (m, buckets).

    For an adversary's ``true_mean`` built on its ``prob`` (numba), when that prob reads only
    the round and the last outcome, as the stochastic built-ins' do: ``prob(next_round(hist),
    par)`` is then exactly the probability respond draws the round's y with.

    Parameters
    ----------
    hist : History

    Returns
    -------
    Round

    Examples
    --------
    >>> v = next_round(History(4, 2, 1))
    >>> v.t, v.prev_y, v.bucket0
    (5, 1, -1)
    """
    nan = np.nan
    return Round(hist.t + 1, hist.prev_y, -1, nan, nan, nan, nan, nan, nan, -1, -1)


@kernel(inline="always")
def bad_mean(e):
    """True when a true mean e is not a probability (outside [0, 1], or NaN); expected never to be."""
    return _rarely(not (e >= 0.0 and e <= 1.0))


@kernel(inline="always")
def mean_stopped(hist):
    """What a loop returns when the adversary's true mean of round hist.t + 1 is not a
    probability: t = -(that round), ones = -1 (marks a bad mean, not a bad outcome; the caller
    recounts the ones from the table) and the last outcome."""
    return History(-(hist.t + 1), -1, hist.prev_y)


@kernel(cache=False)
def run_rounds_mean(T, forecast, observe, state, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y, mean):
    """:func:`run_rounds` for a plug-in forecaster that declares ``needs_mean``: each round
    e = mean(hist, apar), the adversary's true mean (a numba function), then
    ``forecast(state, table, hist, out, e)``. Returns the History after the run, or
    :func:`stopped`'s or :func:`mean_stopped`'s.
    """
    for t in range(T):
        e = mean(hist, apar)
        if bad_mean(e):
            return mean_stopped(hist)
        forecast(state, table, hist, out, e)
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        observe(state, table, hist, out, slot, y)
        hist = settle(table, out, slot, y, hist)
    return hist


@kernel(cache=False)
def run_rounds_external(
    T, forecast, observe, state, table, out, rng, adversary, apar, arng, hist, trace_p, trace_y, external, rec
):
    """:func:`run_rounds` for a plug-in forecaster that declares ``needs_external`` (the
    calibeating game): each round b = external(hist, apar), the environment's external forecast,
    then ``forecast(state, table, hist, out, b)``; after the outcome the engine notes (b, y) in
    ``rec`` (:func:`fastcdl.online.external.note_external`). A b outside [0, 1] stops the run
    as a bad true mean does (:func:`mean_stopped`)."""
    for t in range(T):
        b = external(hist, apar)
        if bad_mean(b):
            return mean_stopped(hist)
        forecast(state, table, hist, out, b)
        slot, y = play_round(t, hist, out, table, rng, adversary, apar, arng, trace_p, trace_y)
        if not_outcome(y):
            return stopped(hist, y)
        observe(state, table, hist, out, slot, y)
        note_external(rec, b, y)
        hist = settle(table, out, slot, y, hist)
    return hist


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
