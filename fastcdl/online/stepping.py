"""One round of a built-in forecaster's simulate loop, for the per-round API.

The per-round API (:class:`fastcdl.online.Forecaster`) runs the same compiled loop as
:func:`fastcdl.online.simulate`, one round at a time, instead of compiling the forecaster's
``forecast`` and ``observe`` kernels a second time as entry points of their own (their
bodies are inlined into the loop; called from Python each was a compilation of its own, 0.1 s
to 1.7 s apiece for the built-ins: docs/compile-time.md). Two adversaries that are not
players drive the loop:

- :func:`pause` answers 2, not an outcome: the loop stops right after the forecast, before
  the forecaster observes anything or the table records anything (``engine.stopped``);
- :func:`replay` answers the outcome it is given (``par[0]``): the loop plays the round to
  its end.

and :func:`given` states the round's true mean or external forecast (``par[1]``) to a
forecaster that needs one. So ``forecast()`` is a paused round, and ``observe(y)`` puts back
the arrays the paused round wrote (a :class:`Snapshot` taken before it) and replays the round
with y: the forecast is computed again from the same state (a function of it: the built-ins
keep their generators in their state), the slot is drawn from the generator as ``draw()``
found it, and the round is observed and recorded as the loop records every round. Cost per
round: one more forecast and a copy of the state's arrays, O(m) (the built-ins' state).

>>> import numpy as np
>>> s = Snapshot.of((np.zeros(2), (np.ones(1), 3)))
>>> s.arrays[0][:] = 5.0; s.restore(); s.arrays[0].tolist()
[0.0, 0.0]
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from fastcdl._compiled._jit import kernel
from fastcdl.online import engine, plugins

__all__ = [
    "Address",
    "Snapshot",
    "entry",
    "given",
    "given_side",
    "loop_args",
    "loop_call",
    "pause",
    "replay",
    "stepper",
]

PAUSE = 2  # the answer that stops a loop after the forecast (engine.not_outcome)


@kernel
def pause(view, table, par, rng):
    """An adversary that answers 2, not an outcome: the loop stops after the forecast."""
    return PAUSE


@kernel
def replay(view, table, par, rng):
    """An adversary that answers the outcome par[0]."""
    return np.int64(par[0])


@kernel
def given(hist, par):
    """The round's true mean (or external forecast), par[1], as the forecaster was given it."""
    return par[1]


class Address:
    """A compiled function as a loop's first-class function argument, its address found once.

    numba finds the address of a dispatcher passed as a first-class function on every call of
    the loop (a lookup of its compiled version by argument types, then of the symbol: about
    50 us for an adversary's types, measured); an object with ``__wrapper_address__`` is asked
    for it instead (numba's protocol), and a round of the per-round API makes two calls.

    Attributes
    ----------
    dispatcher
        The compiled function (kept alive with its machine code).
    address : int
        Its C wrapper's address for the signature.
    """

    def __init__(self, dispatcher, sig):
        self.dispatcher = dispatcher
        cres = dispatcher.get_compile_result(sig)  # as numba finds it for a first-class function
        self.address = cres.library.get_pointer_to_function(cres.fndesc.llvm_cfunc_wrapper_name)

    def __wrapper_address__(self):
        return self.address


@functools.cache
def stepper(which, k_points=False):
    """``pause`` or ``replay`` compiled for the two-point (or K-point) adversary signature, as
    an :class:`Address` (once per process)."""
    adv = {"pause": pause, "replay": replay}[which]
    sig = plugins.ADVERSARY_K_SIGNATURE if k_points else plugins.ADVERSARY_SIGNATURE
    adv.compile(sig)
    return Address(adv, sig)


@functools.cache
def given_side():
    """:func:`given` compiled for the true mean's signature (``plugins.MEAN_SIGNATURE``), as an
    :class:`Address` (once per process)."""
    given.compile(plugins.MEAN_SIGNATURE)
    return Address(given, plugins.MEAN_SIGNATURE)


_ENTRIES = {}


def entry(loop, args, adversary_at, k_points=False, mean_at=None):
    """The loop compiled for these argument types with the adversary (args[adversary_at]) and,
    for a forecaster that needs it, the adversary's true mean (args[mean_at]) as first-class
    functions: one machine-code loop per forecaster serves every adversary, and numba caches
    it. Compiling (or loading) happens here, before any timing."""
    adv = plugins.ADVERSARY_K_TYPE if k_points else plugins.ADVERSARY_TYPE
    types = [
        adv if i == adversary_at else plugins.MEAN_TYPE if i == mean_at else numba.typeof(x) for i, x in enumerate(args)
    ]
    key = (id(loop), tuple(types))
    if key not in _ENTRIES:
        _ENTRIES[key] = loop.compile(tuple(types))
    return _ENTRIES[key]


def loop_args(f, T, rng, respond, apar, arng, side, record, trace_p, trace_y):
    """(loop, args, compile): the compiled loop of forecaster ``f`` (a :class:`fastcdl.online.Forecaster`)
    and the arguments that play T rounds from its state with the forecaster's generator
    ``rng`` against ``respond`` (a compiled adversary), its parameters and generator; ``side``
    is the true mean's (or external forecast's) compiled function or None, ``record`` the
    external record or None. ``compile()`` gives the loop's machine code for these argument
    types (:func:`entry`; the types of one forecaster's arguments never change)."""
    k = f.out.probs.shape[0] > 2
    mean = () if side is None else (side,)
    rec = () if record is None else (record,)
    if f.spec.loop is not None:
        args = (T, f.state, f.table, f.out, rng, respond, apar, arng, f.hist, trace_p, trace_y) + mean + rec
        return args, lambda: entry(f.spec.loop, args, 5, k, 11 if mean else None)
    # a plug-in forecaster: the engine's generic loop
    args = (
        (
            T,
            f.spec.forecast,
            f.spec.observe,
            f.state,
            f.table,
            f.out,
            rng,
            respond,
            apar,
            arng,
            f.hist,
            trace_p,
            trace_y,
        )
        + mean
        + rec
    )
    loop = {None: engine.run_rounds, "mean": engine.run_rounds_mean, "external": engine.run_rounds_external}[
        f.spec.side_input
    ]
    return args, lambda: entry(loop, args, 7, k, 13 if mean else None)


def loop_call(f, T, rng, respond, apar, arng, side, record, trace_p, trace_y):
    """(run, args): :func:`loop_args`'s arguments and the loop compiled for them."""
    args, compile_ = loop_args(f, T, rng, respond, apar, arng, side, record, trace_p, trace_y)
    return compile_(), args


class Snapshot:
    """The writable arrays of a forecaster's state (a tree of tuples and arrays), copied, so
    that ``restore`` can put them back into the same objects (a caller's references stay
    valid).

    ``of`` returns None for a state holding anything else that could change: a numba typed
    list (spr keeps its growing tables in one; reading one from Python compiles numba's list
    methods in every process: spr's per-round step of a warmup took 3.3 s so, where its two
    kernels compile in 1.8 s) or a plug-in's own containers. Such a forecaster calls its kernels.

    Attributes
    ----------
    arrays : list of ndarray
        The state's writable arrays.
    copies : list of ndarray
        Their contents when taken.
    """

    def __init__(self, arrays):
        self.arrays = arrays
        self.copies = [a.copy() for a in arrays]

    @classmethod
    def of(cls, *trees):
        """A snapshot of every writable array in ``trees``, or None when one holds anything
        other than arrays, tuples, None and Python or numpy scalars."""
        arrays = []

        def walk(x):
            if isinstance(x, np.ndarray):
                if x.flags.writeable:
                    arrays.append(x)
                return True
            if isinstance(x, tuple):
                return all(walk(v) for v in x)
            return x is None or isinstance(x, (bool, int, float, str, np.generic))

        if not all(walk(t) for t in trees):
            return None
        return cls(arrays)

    def restore(self) -> None:
        """Put every array's contents back as they were."""
        for a, c in zip(self.arrays, self.copies):
            np.copyto(a, c)
