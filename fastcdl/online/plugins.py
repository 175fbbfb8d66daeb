"""Forecasters and adversaries as plug-ins: the specs the engine runs, built-in or a user's own.

A built-in forecaster or adversary is one module of fastcdl/online/forecasters/ or
fastcdl/online/adversaries/ holding a spec (``FORECASTER`` or ``ADVERSARY``); a user's is
the same spec made with :func:`plugin_forecaster` or :func:`plugin_adversary` in the
user's own module. Every spec travels the same road: simulate, the per-round API,
presets (``name = "package.module:ATTRIBUTE"``), the trial store and Dask workers (which
import the module by name). The kernel contracts are in :mod:`fastcdl.online.engine`.

>>> from numba import njit
>>> from fastcdl.online.engine import uniform
>>> @njit
... def coin(view, table, par, rng):
...     return 1 if uniform(rng) < par[0] else 0
>>> adv = plugin_adversary(coin, name="coin", params={"p": 0.3})
>>> adv.resolve_params({}, horizon=10)
{'p': 0.3}
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numba
import numpy as np
from numba import types

from fastcdl._validate import ValidationError, check_horizon, check_int, check_real
from fastcdl.online import engine

__all__ = [
    "AdversarySpec",
    "ConvergenceWarning",
    "ForecasterSpec",
    "OnlineWarning",
    "ParameterWarning",
    "load_spec",
    "plugin_adversary",
    "plugin_forecaster",
]


class OnlineWarning(UserWarning):
    """Base class of fastcdl.online's warnings: filter them all with one entry.

    Examples
    --------
    >>> issubclass(ConvergenceWarning, OnlineWarning), issubclass(ParameterWarning, OnlineWarning)
    (True, True)
    """


class ParameterWarning(OnlineWarning):
    """A parameter that is accepted but almost certainly not what was meant (say m > T)."""


class ConvergenceWarning(OnlineWarning):
    """An iterative solve stopped at its iteration cap (the MsMwC normaliser Lam)."""


# -- the adversary's first-class function type ---------------------------------------------
_F64 = types.float64[::1]
_U64 = types.uint64[::1]


def _example_table():
    return engine.new_table(np.zeros(1))


ROUND_TYPE = numba.typeof(engine.Round(1, -1, 1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0, 0))
TABLE_TYPE = numba.typeof(_example_table())
ADVERSARY_SIGNATURE = types.int64(ROUND_TYPE, TABLE_TYPE, _F64, _U64)
PROB_SIGNATURE = types.float64(ROUND_TYPE, _F64)
ADVERSARY_TYPE = types.FunctionType(ADVERSARY_SIGNATURE)
# against a K-point forecaster (support > 2) the table is a KTable, showing the distribution
K_TABLE_TYPE = numba.typeof(engine.new_table(np.zeros(1), engine.new_draw(3)))
ADVERSARY_K_SIGNATURE = types.int64(ROUND_TYPE, K_TABLE_TYPE, _F64, _U64)
ADVERSARY_K_TYPE = types.FunctionType(ADVERSARY_K_SIGNATURE)
# an adversary's true mean: true_mean(hist, par) -> P(y = 1) of the round about to be played
HISTORY_TYPE = numba.typeof(engine.History(0, 0, -1))
MEAN_SIGNATURE = types.float64(HISTORY_TYPE, _F64)
MEAN_TYPE = types.FunctionType(MEAN_SIGNATURE)


def check_pairing(forecaster, adversary) -> None:
    """Refuse an adversary that reads only two-point rounds against a K-point forecaster, and
    one that states no true mean against a forecaster that needs it.

    Parameters
    ----------
    forecaster : ForecasterSpec
    adversary : AdversarySpec

    Raises
    ------
    ValidationError
        (a ValueError, argument ``adversary``) naming both, when the forecaster's support
        is above 2 and the adversary does not declare ``k_points``, or when the forecaster
        declares ``needs_mean`` and the adversary declares no ``true_mean`` (or
        ``needs_external`` and no ``external``).

    Examples
    --------
    >>> from fastcdl.online import registry
    >>> check_pairing(registry.forecaster("kt"), registry.adversary("greedy"))
    """
    if forecaster.k_point and not adversary.k_points:
        raise ValidationError(
            "adversary",
            "reads only two-point rounds",
            value=adversary.name,
            message=f"adversary {adversary.name!r} reads only two-point rounds (view.prob0, view.prob1) and "
            f"forecaster {forecaster.name!r} puts mass on more than two stated values a round; "
            "pair it with an adversary that declares k_points=True (it reads the distribution through "
            "engine.slots and engine.slot)",
        )
    if forecaster.needs_mean and adversary.true_mean is None:
        raise ValidationError(
            "adversary",
            "states no true mean",
            value=adversary.name,
            message=f"forecaster {forecaster.name!r} needs the round's true mean E[y_t | past] and adversary "
            f"{adversary.name!r} states none; pair it with an adversary that declares true_mean (bernoulli, "
            "drift, markov, segments, budget, or a plug-in made with plugin_adversary(..., true_mean=...))",
        )
    if forecaster.needs_external and adversary.external is None:
        raise ValidationError(
            "adversary",
            "states no external forecast",
            value=adversary.name,
            message=f"forecaster {forecaster.name!r} plays the calibeating game: it needs each round's external "
            f"forecast b_t, and adversary {adversary.name!r} states none; pair it with an environment that "
            "declares external (informed, or a plug-in made with plugin_adversary(..., external=...))",
        )


def _check_dispatcher(func, what):
    if not isinstance(func, numba.core.dispatcher.Dispatcher):
        raise ValidationError(
            what,
            "must be a numba-compiled function (decorate it with numba.njit)",
            message=f"{what} must be a numba-compiled function (numba.njit), got {type(func).__name__}",
        )
    return func


def _check_params(params, what) -> dict:
    params = dict(params or {})
    for k, v in params.items():
        if not isinstance(k, str) or not k.isidentifier():
            raise ValidationError("params", f"names must be identifiers, got {k!r}")
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, str))):
            raise ValidationError(k, f"default of {what} must be a number or a string", value=v)
    return params


def _unknown(given, allowed, what):
    extra = sorted(set(given) - set(allowed))
    if extra:
        hint = ", ".join(allowed) if allowed else "none"
        raise ValidationError(
            extra[0],
            f"is not a parameter of {what}",
            message=f"unknown parameter {extra[0]!r} for {what} (accepted: {hint})",
        )


@dataclass(frozen=True, eq=False)
class AdversarySpec:
    """An adversary: its kernel, parameters (declared order = the order of ``par``) and version.

    Made by :func:`plugin_adversary` (a user's) or by a module of fastcdl/online/adversaries/
    (a built-in's ``ADVERSARY``); frozen.

    Attributes
    ----------
    name : str
        The adversary's name.
    respond : numba dispatcher
        ``respond(view, table, par, rng) -> 0 or 1``, the outcome of the round.
    params : dict
        Parameter names with their defaults, in the order of ``par``.
    version : int
        Keys its stored trials.
    prob : numba dispatcher or None
        ``prob(view, par) -> P(y = 1)``, given by stochastic adversaries (the truthful
        forecaster states it).
    resolve : callable or None
        ``resolve(params, horizon) -> dict`` checks given parameters and fills defaults
        (default: every parameter a finite real number).
    doc : str
        One description, shown by the command line.
    scratch : callable or None
        ``scratch(resolved) -> int``: the adversary's working memory, that many float64
        slots appended to ``par`` after the parameters and zero at the start of every run
        (an adversary whose choice depends on a running summary of the public record keeps
        it there instead of recomputing it from the table each round).
    prepare : callable or None
        ``prepare(resolved, par, rng) -> None``: fills the scratch slots once, before round
        1, from the resolved parameters and the adversary's own generator (an environment
        drawn once per run, such as the segment means of ``segments``). It runs where the
        run's ``par`` and generator are made (:class:`fastcdl.online.adversaries.Adversary`),
        so simulate and the per-round API start from the same environment, and ``prob`` can
        read it from round 1 on. A string parameter (``segments``' given means) holds NaN in
        ``par``; prepare reads it from ``resolved``.
    k_points : bool
        It reads the round's distribution only through ``fastcdl.online.slots``
        and ``fastcdl.online.slot`` (or not at all), so it also plays forecasters
        whose rounds put mass on more than two stated values (their spec's ``support``);
        against those, an adversary without it is refused.
    true_mean : numba dispatcher or None
        ``true_mean(hist, par) -> e``: e = P(y = 1) of round hist.t + 1 given the past
        (:class:`History`: rounds done, ones, the last outcome; ``par`` as the run has it),
        computed before the forecast and without drawing: the very probability with which
        respond draws that round's y. Handed each round to a forecaster that declares
        ``needs_mean`` (spr); against those, an adversary without it is refused. The
        stochastic built-ins declare it (their ``prob`` reads only t and the last outcome).
    external : numba dispatcher or None
        ``external(hist, par) -> b``: the external forecast b of round hist.t + 1, in
        [0, 1], stated before the round from the past and the environment's own state (the
        calibeating game, docs/calibeating.md): another forecaster's prediction that the
        player may see and try to beat. Handed each round to a forecaster that declares
        ``needs_external``; against those, an adversary without it is refused. Signature as
        ``true_mean``'s.

    Examples
    --------
    >>> from fastcdl.online import registry
    >>> spec = registry.adversary("bernoulli")
    >>> spec.name, spec.stochastic, list(spec.params)
    ('bernoulli', True, ['p'])
    """

    name: str
    respond: Callable
    params: dict = field(default_factory=dict)
    version: int = 1
    prob: Callable | None = None
    resolve: Callable | None = None
    doc: str = ""
    scratch: Callable | None = None
    prepare: Callable | None = None
    k_points: bool = False
    true_mean: Callable | None = None
    external: Callable | None = None

    @property
    def stochastic(self) -> bool:
        """Whether it states P(y = 1) (it has ``prob``)."""
        return self.prob is not None

    def resolve_params(self, params, horizon=None) -> dict:
        """Checked parameters with defaults filled in, in declared order.

        Parameters
        ----------
        params : dict or None
            Given parameters by name.
        horizon : int, optional
            The run's horizon, for defaults that depend on it.

        Returns
        -------
        dict

        Raises
        ------
        ValidationError
            (a ValueError) for an unknown, missing or bad parameter.

        Examples
        --------
        >>> from fastcdl.online import registry
        >>> registry.adversary("bernoulli").resolve_params({"p": 0.3})
        {'p': 0.3}
        """
        params = dict(params or {})
        _unknown(params, tuple(self.params), f"adversary {self.name!r}")
        if self.resolve is not None:
            out = self.resolve(params, horizon)
        else:
            out = {}
            for k, default in self.params.items():
                v = params.get(k, default)
                if v is None:
                    raise ValidationError(k, "is needed", message=f"{k}: adversary {self.name!r} needs {k}=...")
                out[k] = check_real(v, k)
        return {k: out[k] for k in self.params if k in out}

    def parameter_vector(self, resolved: dict) -> np.ndarray:
        """``par`` of the kernel: the resolved parameters in declared order, float64, then
        the adversary's scratch slots (zeros), if it declares any. A string parameter, or
        one the resolved parameters leave out (an unused alternative, such as ``k_exponent``
        when ``k`` is given), holds NaN.

        Parameters
        ----------
        resolved : dict
            From :meth:`resolve_params`.

        Returns
        -------
        ndarray of float64

        Examples
        --------
        >>> from fastcdl.online import registry
        >>> registry.adversary("bernoulli").parameter_vector({"p": 0.3}).tolist()
        [0.3]
        """
        par = [
            math.nan if isinstance(resolved.get(k), str) or resolved.get(k) is None else float(resolved[k])
            for k in self.params
        ]
        extra = 0 if self.scratch is None else int(self.scratch(resolved))
        return np.array(par + [0.0] * extra, dtype=np.float64)

    def run_vector(self, resolved: dict, rng) -> np.ndarray:
        """``par`` as a run starts with it: :meth:`parameter_vector`, then ``prepare`` (if
        declared) with the generator ``rng`` (advanced by what it draws)."""
        par = self.parameter_vector(resolved)
        if self.prepare is not None:
            self.prepare(resolved, par, rng)
        return par

    def compiled(self, k_points=False):
        """The respond kernel compiled for the engine's adversary signature (once per process).

        Parameters
        ----------
        k_points : bool, default False
            Compile it for a K-point forecaster's table (:data:`fastcdl.online.engine.KTable`)
            instead of the two-point :data:`fastcdl.online.engine.Table`.

        Returns
        -------
        numba dispatcher
            ``respond``, compiled (and ``prob``, when given).
        """
        self.respond.compile(ADVERSARY_K_SIGNATURE if k_points else ADVERSARY_SIGNATURE)
        if self.prob is not None:
            self.prob.compile(PROB_SIGNATURE)
        return self.respond

    def compiled_mean(self):
        """``true_mean`` compiled for the engine's signature (``MEAN_SIGNATURE``), or None.

        Returns
        -------
        numba dispatcher or None

        Examples
        --------
        >>> from fastcdl.online import registry
        >>> registry.adversary("contrarian").compiled_mean() is None
        True
        """
        if self.true_mean is None:
            return None
        self.true_mean.compile(MEAN_SIGNATURE)
        return self.true_mean

    def compiled_external(self):
        """``external`` compiled for the engine's signature (``MEAN_SIGNATURE``), or None.

        Returns
        -------
        numba dispatcher or None

        Examples
        --------
        >>> from fastcdl.online import registry
        >>> registry.adversary("bernoulli").compiled_external() is None
        True
        """
        if self.external is None:
            return None
        self.external.compile(MEAN_SIGNATURE)
        return self.external


@dataclass(frozen=True, eq=False)
class ForecasterSpec:
    """A forecaster: its initialiser, its two kernels, parameters and version.

    Made by :func:`plugin_forecaster` (a user's) or by a module of
    fastcdl/online/forecasters/ (a built-in's ``FORECASTER``); frozen. Contracts in
    fastcdl.online.engine and docs/engine.md.

    Attributes
    ----------
    name : str
        The forecaster's name.
    init : callable
        ``init(horizon, params, adversary) -> (state, q)`` (Python; q the stated values,
        increasing).
    forecast : numba dispatcher
        ``forecast(state, table, hist, out)``: writes the round's distribution into ``out``.
    observe : numba dispatcher
        ``observe(state, table, hist, out, slot, y)``: learns the outcome.
    params : dict
        Parameter names with their defaults.
    version : int
        Keys its stored trials.
    resolve : callable or None
        ``resolve(params, horizon) -> dict`` checks parameters and fills horizon-dependent
        defaults.
    loop : callable or None
        A built-in's own compiled (cached) simulate loop; plug-ins run in the engine's
        generic loop.
    needs_adversary : bool
        init receives the adversary (spec, resolved params, par: its parameter vector as the
        run's adversary starts with it, prepared environment included), as the truthful
        forecaster does.
    report : callable or None
        ``report(state, rounds)``, called after forecasts and runs (warnings such as
        non-convergence).
    doc : str
        One description, shown by the command line.
    grid : callable or None
        ``grid(resolved) -> m``: the grid j/m it rounds to, if any.
    support : int or callable
        K, the most stated values one round's distribution puts mass on (the length of the
        :class:`Draw` arrays it writes): 2 for the classic forecasters; more for one such as
        klcal, whose runs use a :data:`fastcdl.online.engine.KTable` and adversaries that
        declare ``k_points``. A built-in whose K depends on its parameters gives
        ``support(resolved) -> K`` (:meth:`slots`).
    needs_mean : bool
        It reads the round's true mean e_t = E[y_t | past] from the adversary: its forecast
        kernel is ``forecast(state, table, hist, out, e)``, its runs hand it the adversary's
        ``true_mean`` each round before the forecast, and an adversary without one is
        refused (``check_pairing``). False for every forecaster but spr.
    needs_external : bool
        It reads the round's external forecast b_t (the calibeating game,
        docs/calibeating.md): its forecast kernel is ``forecast(state, table, hist, out, b)``,
        its runs hand it the adversary's ``external`` each round before the forecast, and an
        adversary without one is refused. Not together with ``needs_mean``.
    point_mass : bool
        Every round's distribution is a point mass (the drawn slot has probability 1): its
        expected-count table is its bucket table, so the engine keeps none and
        :meth:`Forecaster.pseudo_stats` reads the public table. Declared by the built-ins
        that state one value a round (truthful, frequency, acrs, spr; tests check it round
        by round); a plug-in keeps the default False, under which the engine keeps the table
        from the distributions it publishes.

    Examples
    --------
    >>> from fastcdl.online import registry
    >>> spec = registry.forecaster("cdl")
    >>> spec.name, spec.grid_m({}, 1000) is not None
    ('cdl', True)
    """

    name: str
    init: Callable
    forecast: Callable
    observe: Callable
    params: dict = field(default_factory=dict)
    version: int = 1
    resolve: Callable | None = None
    loop: Callable | None = None
    needs_adversary: bool = False
    report: Callable | None = None
    doc: str = ""
    grid: Callable | None = None
    support: int | Callable = 2
    needs_mean: bool = False
    point_mass: bool = False
    needs_external: bool = False

    @property
    def side_input(self) -> str | None:
        """What its forecast kernel takes besides the round: "mean" (``needs_mean``),
        "external" (``needs_external``) or None."""
        return "mean" if self.needs_mean else "external" if self.needs_external else None

    @property
    def k_point(self) -> bool:
        """Whether its rounds may state more than two values (support above 2)."""
        return callable(self.support) or self.support > 2

    def slots(self, resolved) -> int:
        """K for these resolved parameters: the length of its Draw arrays.

        Parameters
        ----------
        resolved : dict
            From :meth:`resolve_params`.

        Returns
        -------
        int

        Examples
        --------
        >>> from fastcdl.online import registry
        >>> registry.forecaster("kt").slots({})
        2
        """
        return int(self.support(resolved)) if callable(self.support) else int(self.support)

    def grid_m(self, params, horizon) -> int | None:
        """m of the grid j/m at this horizon and these parameters, or None (no grid).

        Parameters
        ----------
        params : dict or None
            Given parameters by name.
        horizon : int
            T.

        Returns
        -------
        int or None

        Examples
        --------
        >>> from fastcdl.online import registry
        >>> registry.forecaster("frequency").grid_m({"m": 10}, 1000)
        10
        """
        return None if self.grid is None else int(self.grid(self.resolve_params(params, horizon)))

    def resolve_params(self, params, horizon) -> dict:
        """Checked parameters with the defaults for this horizon filled in.

        Parameters
        ----------
        params : dict or None
            Given parameters by name.
        horizon : int
            T.

        Returns
        -------
        dict

        Raises
        ------
        ValidationError
            (a ValueError) for an unknown, missing or bad parameter, or a bad horizon.

        Examples
        --------
        >>> from fastcdl.online import registry
        >>> registry.forecaster("frequency").resolve_params({"m": 10}, 1000)["m"]
        10
        """
        T = check_horizon(horizon)
        params = dict(params or {})
        _unknown(params, tuple(self.params), f"forecaster {self.name!r}")
        if self.resolve is not None:
            return self.resolve(params, T)
        out = {}
        for k, default in self.params.items():
            v = params.get(k, default)
            if v is None:
                raise ValidationError(k, "is needed", message=f"{k}: forecaster {self.name!r} needs {k}=...")
            out[k] = v if isinstance(v, str) else check_real(v, k)
        return out


def plugin_adversary(
    respond,
    *,
    name,
    params=None,
    version=1,
    prob=None,
    resolve=None,
    scratch=None,
    prepare=None,
    k_points=False,
    true_mean=None,
    external=None,
) -> AdversarySpec:
    """An adversary from a numba function ``respond(view, table, par, rng) -> 0 or 1``.

    Decorate the kernels with ``numba.njit(cache=True)`` so that processes load them from
    the cache. The object works wherever a built-in adversary's name does: simulate,
    make_adversary, trace, and presets as ``"package.module:ATTRIBUTE"``. Contracts of
    ``view`` (a :class:`Round`), ``table`` (a :class:`Table`) and ``rng`` in docs/engine.md.

    Parameters
    ----------
    respond : numba dispatcher
        ``respond(view, table, par, rng) -> 0 or 1``.
    name : str
        Non-empty; how runs and stored trials name it.
    params : dict, optional
        Parameter names mapped to defaults (their order is the order of ``par``).
    version : int, default 1
        Keys its stored trials, with a hash of its code (``code_hash``: a changed plug-in
        is never taken for the old one).
    prob : numba dispatcher, optional
        ``prob(view, par) -> P(y = 1)`` given the round's public data: makes it stochastic.
    resolve : callable, optional
        ``resolve(params, horizon) -> dict``: checks parameters and fills defaults.
    scratch : callable, optional
        ``scratch(resolved) -> int`` asks for that many float64 slots of working memory
        after the parameters in ``par``, zero at the start of every run.
    prepare : callable, optional
        ``prepare(resolved, par, rng)`` fills them once before round 1 (an environment drawn
        from the adversary's generator).
    k_points : bool, default False
        respond reads the round's distribution only through ``engine.slots`` and
        ``engine.slot`` (or not at all): it may then play forecasters whose rounds state more
        than two values (docs/engine.md).
    true_mean : numba dispatcher, optional
        ``true_mean(hist, par) -> e``, the probability of y = 1 of round hist.t + 1 given the
        past, computed without drawing: exactly the probability respond draws that round's
        y with. Forecasters that need the round's mean (``needs_mean``, as spr) play only
        adversaries that give it.
    external : numba dispatcher, optional
        ``external(hist, par) -> b``, the external forecast of round hist.t + 1 in [0, 1]
        (the calibeating game, docs/calibeating.md), handed to forecasters that declare
        ``needs_external``.

    Returns
    -------
    AdversarySpec

    Raises
    ------
    ValidationError
        (a ValueError) for an empty name, a kernel that is not a numba dispatcher, bad
        parameters or version.

    Examples
    --------
    >>> import numba
    >>> @numba.njit
    ... def always_one(view, table, par, rng):
    ...     return 1
    >>> spec = plugin_adversary(always_one, name="ones", params={"prior": 0.5})
    >>> spec.name, spec.params, spec.stochastic
    ('ones', {'prior': 0.5}, False)
    """
    if not isinstance(name, str) or not name:
        raise ValidationError("name", "must be a non-empty string", value=name)
    _check_dispatcher(respond, "respond")
    if prob is not None:
        _check_dispatcher(prob, "prob")
    check_int(version, "version", low=1)
    if scratch is not None and not callable(scratch):
        raise ValidationError("scratch", "must be a function of the resolved parameters returning a count")
    if prepare is not None and not callable(prepare):
        raise ValidationError("prepare", "must be a function (resolved, par, rng) -> None")
    if not isinstance(k_points, bool):
        raise ValidationError("k_points", "must be True or False", value=k_points)
    if true_mean is not None:
        _check_dispatcher(true_mean, "true_mean")
    if external is not None:
        _check_dispatcher(external, "external")
    return AdversarySpec(
        name,
        respond,
        _check_params(params, f"adversary {name!r}"),
        version,
        prob,
        resolve,
        respond.py_func.__doc__ or "",
        scratch,
        prepare,
        k_points,
        true_mean,
        external,
    )


def plugin_forecaster(
    *,
    name,
    init,
    forecast,
    observe,
    params=None,
    version=1,
    resolve=None,
    report=None,
    grid=None,
    support=2,
    needs_mean=False,
    needs_external=False,
) -> ForecasterSpec:
    """A forecaster from ``init(horizon, params) -> (state, q)`` and numba kernels
    ``forecast(state, table, hist, out)`` and ``observe(state, table, hist, out, slot, y)``.

    ``state`` is any numba-typed value the kernels share (a namedtuple of arrays is the
    usual choice; arrays are mutable, so the kernels update it in place); q is the
    increasing array of stated values. simulate runs it in the engine's generic loop (one
    indirect call per round for the adversary; compiled once per process).

    Parameters
    ----------
    name : str
        Non-empty; how runs and stored trials name it.
    init : callable
        ``init(horizon, params) -> (state, q)``, in Python.
    forecast : numba dispatcher
        ``forecast(state, table, hist, out)`` writes at most two raw points, their
        probabilities and bucket indices into ``out`` (a :class:`Draw`; a point mass:
        probs = (1, 0) and slot 1 repeating slot 0), or at most ``support`` of them.
    observe : numba dispatcher
        ``observe(state, table, hist, out, slot, y)``, called before the engine records
        the round.
    params : dict, optional
        Parameter names mapped to defaults.
    version : int, default 1
        Keys its stored trials, with a hash of its code.
    resolve : callable, optional
        ``resolve(params, horizon) -> dict``: checks parameters and fills defaults.
    report : callable, optional
        ``report(state, rounds)``, called after forecasts and runs (to warn).
    grid : callable, optional
        ``grid(resolved) -> m``: the grid j/m it rounds to, if any (the worst-case search
        then searches levels in its units).
    support : int, default 2
        K, the length of ``out``'s arrays: the most stated values a round puts mass on
        (unused slots keep probability 0). Above 2 the adversaries it plays must declare
        ``k_points`` (docs/engine.md).
    needs_mean : bool, default False
        It reads the round's true mean: ``forecast(state, table, hist, out, e)`` with e the
        adversary's ``true_mean`` for the round; it plays only adversaries that declare one.
    needs_external : bool, default False
        It plays the calibeating game: ``forecast(state, table, hist, out, b)`` with b the
        adversary's ``external`` forecast for the round; only against adversaries that
        declare one (docs/calibeating.md).

    Returns
    -------
    ForecasterSpec

    Raises
    ------
    ValidationError
        (a ValueError) for an empty name, kernels that are not numba dispatchers, a
        non-callable init or grid, bad parameters or version.

    Examples
    --------
    >>> import numba
    >>> import numpy as np
    >>> def init(horizon, params):
    ...     return np.zeros(1), np.array([0.5])
    >>> @numba.njit
    ... def forecast(st, table, hist, out):
    ...     out.points[:] = 0.5; out.probs[0] = 1.0; out.probs[1] = 0.0; out.buckets[:] = 0
    >>> @numba.njit
    ... def observe(st, table, hist, out, slot, y):
    ...     st[0] += y
    >>> spec = plugin_forecaster(name="half", init=init, forecast=forecast, observe=observe)
    >>> spec.name, spec.loop is None
    ('half', True)
    """
    if not isinstance(name, str) or not name:
        raise ValidationError("name", "must be a non-empty string", value=name)
    if grid is not None and not callable(grid):
        raise ValidationError("grid", "must be a function of the resolved parameters returning m, or None")
    if not callable(init):
        raise ValidationError("init", "must be callable")
    _check_dispatcher(forecast, "forecast")
    _check_dispatcher(observe, "observe")
    check_int(version, "version", low=1)

    def init3(horizon, params, adversary):
        return init(horizon, params)

    init3.__wrapped__ = init  # code_hash reads the user's init, not this wrapper

    support = check_int(support, "support", low=2)
    if not isinstance(needs_mean, bool):
        raise ValidationError("needs_mean", "must be True or False", value=needs_mean)
    if not isinstance(needs_external, bool):
        raise ValidationError("needs_external", "must be True or False", value=needs_external)
    if needs_mean and needs_external:
        raise ValidationError("needs_external", "cannot be declared together with needs_mean", value=needs_external)
    return ForecasterSpec(
        name,
        init3,
        forecast,
        observe,
        _check_params(params, f"forecaster {name!r}"),
        version,
        resolve,
        None,
        False,
        report,
        init.__doc__ or "",
        grid,
        support,
        needs_mean,
        needs_external=needs_external,
    )


_HASHES: dict = {}


def code_hash(spec) -> str:
    """12 hex digits of sha256 over a plug-in's code as this process loaded it: the bytecode,
    constants and names of its functions (its kernels' Python functions, init, resolve, prob,
    report, grid, scratch), of the user's functions they refer to (helpers of the same module
    or of another one, followed through globals and closures), and the values of the plain
    globals they read (numbers, strings, tuples, arrays: numba compiles these in as
    constants). fastcdl, numba, numpy and other installed packages are left out (the engine's
    version covers fastcdl's part). Line numbers, comments and paths do not count, so a moved
    project keeps its keys; the Python version does (its bytecode differs).

    The rate experiments key a plug-in's stored trials by it beside its ``version``, so a
    plug-in whose code changed is never taken for the old one.

    >>> from numba import njit
    >>> @njit
    ... def ones(view, table, par, rng):
    ...     return 1
    >>> len(code_hash(plugin_adversary(ones, name="ones")))
    12
    """
    hit = _HASHES.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    names = (
        ("respond", "prob", "resolve", "scratch")
        if isinstance(spec, AdversarySpec)
        else ("init", "forecast", "observe", "resolve", "report", "grid")
    )
    h = hashlib.sha256()
    seen = set()
    if getattr(spec, "prepare", None) is not None:  # only when given: older plug-ins keep their hashes
        names += ("prepare",)
    if getattr(spec, "true_mean", None) is not None:
        names += ("true_mean",)
    if getattr(spec, "external", None) is not None:
        names += ("external",)
    for name in names:
        h.update(name.encode())
        _feed(getattr(spec, name), h, seen)
    if getattr(spec, "needs_mean", False):  # its forecast kernel takes the mean: another contract
        h.update(b"needs_mean")
    if getattr(spec, "needs_external", False):
        h.update(b"needs_external")
    digest = h.hexdigest()[:12]
    _HASHES[id(spec)] = (spec, digest)
    return digest


@functools.cache
def _installed_roots() -> tuple:
    """fastcdl's folder, the standard library's and the installed packages' (site-packages)."""
    import sys
    import sysconfig

    roots = {sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")} | {sys.prefix, sys.base_prefix}
    return (Path(__file__).resolve().parents[1], *(Path(r).resolve() for r in roots))


def _installed(fn) -> bool:
    """True for a function of fastcdl or of an installed package (the standard library,
    site-packages): not the user's code, which is counted by its name alone."""
    try:
        path = inspect.getsourcefile(fn)
    except TypeError:
        return True  # a builtin
    if path is None:
        return False  # typed at a prompt: the user's
    path = Path(path).resolve()
    return any(path == r or r in path.parents for r in _installed_roots())


def _feed(obj, h, seen) -> None:
    """Add a function (a numba dispatcher's Python function, a wrapper's wrapped one) and what it
    refers to, to the hash h."""
    if obj is None:
        h.update(b"-")
        return
    fn = inspect.unwrap(getattr(obj, "py_func", obj))
    if id(fn) in seen:
        return
    seen.add(id(fn))
    code = getattr(fn, "__code__", None)
    if code is None or _installed(fn):
        h.update(f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}".encode())
        return
    _feed_code(code, h)
    refs = [fn.__globals__[n] for n in sorted(_global_names(code)) if n in fn.__globals__]
    refs += [c.cell_contents for c in fn.__closure__ or () if c.cell_contents is not None]
    for v in refs:
        if isinstance(v, (bool, int, float, complex, str, bytes, tuple, frozenset, type(None))):
            h.update(_canonical(v).encode())
        elif isinstance(v, np.ndarray):
            h.update(f"{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif callable(v) and not isinstance(v, type):
            _feed(v, h, seen)


def _feed_code(code, h) -> None:
    h.update(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_argcount, code.co_kwonlyargcount)).encode())
    for c in code.co_consts:
        if inspect.iscode(c):
            _feed_code(c, h)
        else:
            h.update(_canonical(c).encode())


def _canonical(v) -> str:
    """repr with the elements of sets sorted (a frozenset constant's order moves with the hash seed)."""
    if isinstance(v, (frozenset, set)):
        return "{" + ",".join(sorted(_canonical(x) for x in v)) + "}"
    if isinstance(v, tuple):
        return "(" + ",".join(_canonical(x) for x in v) + ")"
    return repr(v)


def _global_names(code) -> set:
    """The names a code object (and the code nested in it) may look up as globals."""
    out = set(code.co_names)
    for c in code.co_consts:
        if inspect.iscode(c):
            out |= _global_names(c)
    return out


def load_spec(text: str, kind: type):
    """The spec named by ``"package.module:ATTRIBUTE"`` (imported as Dask workers import it)."""
    what = "adversary" if kind is AdversarySpec else "forecaster"
    module, _, attr = text.partition(":")
    if not module or not attr:
        raise ValidationError(what, "must be a built-in name or 'package.module:ATTRIBUTE'", value=text)
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ValidationError(what, f"cannot be loaded from {text!r}: {e}", value=text) from None
    if not isinstance(obj, kind):
        raise ValidationError(
            what,
            f"{text!r} is not an {kind.__name__}",
            value=text,
            message=f"{what}: {text!r} is a {type(obj).__name__}, not a plug-in made with plugin_{what}",
        )
    return obj


# -- parameter helpers shared by the built-in forecasters -----------------------------------
def given_m(params, T, default):
    """A user-given number of buckets m, checked; warns (ParameterWarning) when m > T.

    Accepted all the same (a short test run of a long-horizon setting is legitimate), but
    with more buckets than rounds most buckets never fill and the forecaster cannot
    become calibrated: m = 100000 at T = 1024 gives CDL 1.0.
    """
    m = check_int(params["m"], "m", low=1)
    if m > T:
        warnings.warn(
            ParameterWarning(
                f"m = {m} buckets for a horizon of T = {T} rounds: more buckets than rounds, so "
                f"most buckets never fill and the forecaster cannot become calibrated (CDL stays "
                f"near its worst); this forecaster's default at T = {T} is m = {default}"
            ),
            stacklevel=6,  # given_m < resolver < lambda or resolve_grid < resolve_params < make_forecaster < caller
        )
    return m


def default_cdl_m(T, m_scale=1.0):
    """m = max(2, ceil(m_scale * sqrt(T) / ln T)) (docs/algorithm1.md; m = 2 for T < 3)."""
    if T < 3:
        return 2
    return max(2, math.ceil(m_scale * math.sqrt(T) / math.log(T)))


def icbrt_up(T):
    """The smallest m with m^3 >= T."""
    m = max(1, round(T ** (1.0 / 3.0)))
    while m**3 < T:
        m += 1
    while m > 1 and (m - 1) ** 3 >= T:
        m -= 1
    return m


def isqrt_up(T):
    """The smallest r with r^2 >= T."""
    r = math.isqrt(T)
    return r if r * r == T else r + 1
