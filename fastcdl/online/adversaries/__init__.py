"""Adversaries of the online game, one round at a time (docs/algorithm1.md)::

    a = make_adversary("greedy", horizon=T, seed=0)   # or a plug-in (plugin_adversary)
    y = a.respond(f.forecast())   # sees the round's distribution, never the draw
    a.observe(p, y)               # the public record: stated prediction and outcome

respond() calls the adversary's compiled kernel with the same view and table that
simulate() builds, so a Python-driven run reproduces simulate. The built-in adversaries
are the modules of this package (one module each; see fastcdl.online.registry).
"""

from __future__ import annotations

import numpy as np

from fastcdl._compiled.rng import seed_states
from fastcdl._validate import ValidationError, check_outcome, check_seed
from fastcdl.online import engine, registry

__all__ = ["Adversary", "make_adversary"]


def not_an_outcome(adversary: str, t: int, y: int) -> ValidationError:
    """The error of an adversary that answered round t (1-based, as view.t) with y, not 0 or 1."""
    return ValidationError(
        "adversary",
        "must return an outcome, 0 or 1",
        index=t,
        value=y,
        message=f"adversary {adversary!r} returned {y} in round {t} (view.t = {t}); an adversary's "
        "respond must return an outcome, 0 or 1; the run stopped there",
    )


class Adversary:
    """An adversary with its own generator and its copy of the public record.

    Made by :func:`make_adversary`. The record is the table of the forecaster's stated
    values (n rounds and s outcomes y = 1 at each), the round number and the previous
    outcome: what the adversary contract (fastcdl.online.engine) shows.

    Attributes
    ----------
    spec : AdversarySpec
        What is run.
    name : str
        Its name.
    params : dict
        The resolved parameters.
    seed : int
        The run's seed.

    Examples
    --------
    >>> from fastcdl.online import make_forecaster
    >>> f = make_forecaster("frequency", horizon=10, m=4)
    >>> a = make_adversary("contrarian")
    >>> y = a.respond(f.forecast()); p = f.draw(); f.observe(y); a.observe(p, y)
    >>> p, y
    (0.5, 0)
    """

    def __init__(self, spec, params: dict, seed: int):
        self.spec = spec
        self.name = spec.name
        self.params = params
        self.seed = seed
        self._rng = seed_states(seed)[1]
        self._par = spec.run_vector(params, self._rng)  # with the run's environment, drawn before round 1
        self._table = None
        self._last = None
        self._t = 0
        self._ones = 0
        self._prev = -1

    def _table_for(self, grid, support):
        k = support if support > 2 else 2
        if (
            self._table is None
            or self._table.q.shape != grid.shape
            or not np.array_equal(self._table.q, grid)
            or getattr(self._table, "probs", np.zeros(2)).shape[0] != k
        ):
            if self._table is not None and self._t > 0:
                raise ValidationError(
                    "forecast", "comes from a forecaster with other stated values than the rounds observed so far"
                )
            self._table = engine.new_table(grid, engine.new_draw(k))
        return self._table

    def respond(self, forecast) -> int:
        """The outcome for a round whose distribution is ``forecast``.

        The adversary sees the distribution, never the draw.

        Parameters
        ----------
        forecast : Forecast
            From :meth:`Forecaster.forecast`.

        Returns
        -------
        int
            y, 0 or 1.

        Raises
        ------
        ValidationError
            (a ValueError) for a malformed forecast, one from a forecaster with other stated
            values, or a kernel that returns something other than 0 or 1.

        Examples
        --------
        >>> from fastcdl.online import make_forecaster
        >>> make_adversary("contrarian").respond(make_forecaster("frequency", horizon=10, m=4).forecast())
        0
        """
        k = len(forecast.probs)
        support = int(getattr(forecast, "support", 2))
        if support > 2 and not self.spec.k_points:
            raise ValidationError(
                "forecast",
                "states more than two values",
                value=self.name,
                message=f"adversary {self.name!r} reads only two-point rounds and the forecast comes from a "
                f"forecaster with support {support}; use an adversary that declares k_points=True",
            )
        if not 1 <= k <= max(support, 2) or len(forecast.predictions) != k or len(forecast.buckets) != k:
            raise ValidationError(
                "forecast", f"must have one to {max(support, 2)} entries (probs, predictions, buckets)"
            )
        table = self._table_for(forecast.grid, support)
        if support > 2:  # the distribution's arrays, as the forecaster's Draw holds them (zeros elsewhere)
            table.points[:] = 0.0
            table.probs[:] = 0.0
            table.buckets[:] = 0
            table.points[:k] = forecast.points
            table.probs[:k] = forecast.probs
            table.buckets[:k] = forecast.buckets
        j1 = 1 if k >= 2 else 0
        view = engine.Round(
            self._t + 1,
            self._prev,
            table.q.shape[0],
            float(forecast.points[0]),
            float(forecast.points[j1]),
            float(forecast.probs[0]),
            float(forecast.probs[1]) if k >= 2 else 0.0,
            float(table.q[forecast.buckets[0]]),
            float(table.q[forecast.buckets[j1]]),
            int(forecast.buckets[0]),
            int(forecast.buckets[j1]),
        )
        y = int(self.spec.compiled(support > 2)(view, table, self._par, self._rng))
        if y not in (0, 1):
            raise not_an_outcome(self.name, self._t + 1, y)
        self._last = forecast
        return y

    def observe(self, p, y) -> None:
        """Add the round's stated prediction p and outcome y to the public record.

        Parameters
        ----------
        p : float
            The stated prediction drawn this round (one of the forecast's predictions).
        y : int
            The outcome, 0 or 1.

        Raises
        ------
        ValidationError
            (a ValueError) for a call before :meth:`respond`, a p the forecast did not
            state, or an outcome other than 0 or 1.

        Examples
        --------
        See :class:`Adversary`.
        """
        y = check_outcome(y)
        if self._last is None:
            raise ValidationError(
                "p",
                "was observed before respond()",
                message="observe(p, y) before respond(forecast): respond to each round first",
            )
        p = float(p)
        f = self._last
        where = [b for b, v in zip(f.buckets, f.predictions) if v == p]
        if not where:
            raise ValidationError("p", "is not a stated prediction of the round's forecast", value=p)
        engine.record(self._table, where[0], y)
        self._t += 1
        self._ones += y
        self._prev = y
        self._last = None

    def mean(self) -> float:
        """The true mean of the next round: P(y = 1) given the rounds observed so far, the
        probability its outcome will be drawn with (the spec's ``true_mean``).

        What a forecaster that needs the mean (spr) is handed each round:
        ``f.forecast(mean=a.mean())``.

        Returns
        -------
        float
            In [0, 1].

        Raises
        ------
        ValidationError
            (a ValueError) when the adversary states no true mean, or its true_mean returns
            something other than a probability.

        Examples
        --------
        >>> make_adversary("bernoulli", p=0.25).mean()
        0.25
        """
        if self.spec.true_mean is None:
            raise ValidationError(
                "adversary",
                "states no true mean",
                value=self.name,
                message=f"adversary {self.name!r} states no true mean (its spec declares no true_mean)",
            )
        hist = engine.History(self._t, self._ones, self._prev)
        e = float(self.spec.compiled_mean()(hist, self._par))
        if not 0.0 <= e <= 1.0:
            raise self.bad_mean(hist, e)
        return e

    def external(self) -> float:
        """The external forecast of the next round (the calibeating game, docs/calibeating.md):
        b = the spec's ``external(hist, par)`` given the rounds observed so far.

        What a forecaster that needs it is handed each round:
        ``f.forecast(external=a.external())``.

        Returns
        -------
        float
            In [0, 1].

        Raises
        ------
        ValidationError
            (a ValueError) when the adversary states no external forecast, or its external
            returns something other than a probability.

        Examples
        --------
        >>> 0.0 <= make_adversary("informed", horizon=10).external() <= 1.0
        True
        """
        if self.spec.external is None:
            raise ValidationError(
                "adversary",
                "states no external forecast",
                value=self.name,
                message=f"adversary {self.name!r} states no external forecast (its spec declares no external)",
            )
        hist = engine.History(self._t, self._ones, self._prev)
        b = float(self.spec.compiled_external()(hist, self._par))
        if not 0.0 <= b <= 1.0:
            raise self.bad_side_input(hist, "external", b)
        return b

    def bad_side_input(self, hist, what, value=None) -> ValidationError:
        """The error of a true mean (``what="mean"``) or external forecast (``"external"``)
        that is not a probability, for round hist.t + 1 (recomputed from ``hist`` when value
        is not given)."""
        if what == "mean":
            return self.bad_mean(hist, value)
        if value is None:
            value = float(self.spec.compiled_external()(hist, self._par))
        t = int(hist.t) + 1
        return ValidationError(
            "external",
            "must return a probability in [0, 1]",
            index=t,
            value=value,
            message=f"adversary {self.name!r}: external returned {value} for round {t}, not a "
            "probability in [0, 1]; the run stopped there",
        )

    def bad_mean(self, hist, e=None) -> ValidationError:
        """The error of a true mean that is not a probability, for round hist.t + 1 (recomputed
        from ``hist`` when e is not given)."""
        if e is None:
            e = float(self.spec.compiled_mean()(hist, self._par))
        t = int(hist.t) + 1
        return ValidationError(
            "true_mean",
            "must return a probability in [0, 1]",
            index=t,
            value=e,
            message=f"adversary {self.name!r}: true_mean returned {e} for round {t}, not a "
            "probability in [0, 1]; the run stopped there",
        )

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Adversary({self.name!r}, seed={self.seed}{args}; rounds={self._t})"


def make_adversary(adversary, *, horizon: int | None = None, seed: int = 0, **params) -> Adversary:
    """An adversary by name (or a plug-in) with its parameters (docs/algorithm1.md).

    The generator is child 1 of numpy.random.SeedSequence(seed), so with the same seed a
    forecaster and an adversary made here reproduce simulate(..., seed=seed).

    Parameters
    ----------
    adversary : str or AdversarySpec
        A name below, an AdversarySpec from :func:`plugin_adversary`, or
        "package.module:ATTRIBUTE".
    horizon : int, optional
        T, for defaults that depend on it (``period``).
    seed : int, default 0
        Seeds the adversary's generator.
    **params
        The adversary's parameters, below.

    Returns
    -------
    Adversary

    Raises
    ------
    ValidationError
        (a ValueError) for an unknown name or parameter or a bad value.

    Notes
    -----
    The built-in adversaries and their parameters:

    - "bernoulli": p=0.5, i.i.d. outcomes;
    - "drift": amplitude=0.4 (in [0, 1/2]), period=horizon/8: y ~ Bernoulli(1/2 +
      amplitude sin(2 pi t / period)), t = 1, 2, ...; needs horizon or period;
    - "markov": p01=0.1, p10=0.1, a two-state chain started from its stationary law;
    - "segments": k=4 (or k_exponent=a: K = floor(T^a)), random=0, low=0, high=1,
      means="": K i.i.d. segments, their means drawn from the seed or given; needs horizon
      or span (docs/nonstationary.md);
    - "budget": c (or c_exponent=0.5: C = T^b), center=0.5, cycles=4: a sine drift around
      center whose l1 distance from the best constant is C; needs horizon or span;
    - "contrarian": y = 1 when the expected stated prediction is below 1/2, else 0;
    - "greedy": the y with the larger expected increase of sum over stated values of
      ``|bias|`` (bias = sum of stated prediction minus outcome); ties by a fair coin;
    - "rawpoint": shift=0, mix=0, outcomes at the raw points (mix = 0) or the stated
      values (mix = 1) or between, plus shift;
    - "gridedge": position=0.5, outcomes at a position inside the stated values' buckets;
    - "sweep": low=0.1, high=0.9, amp=0.05, period=horizon/8, a sweeping target with
      biases of alternating sign from bucket to bucket;
    - "lookahead": kinks=32, one-step lookahead on the CDL over a kink grid;
    - "cdlahead": the exact one-step lookahead on the CDL (the y with the larger expected
      CDL of the table after the round);
    - "signpreserve": y ~ Bernoulli(c), c the midpoint of the gap between stated values that
      keeps the sign of the most accumulated bias (docs/ece-lower-bound.md);
    - "spbisect": steer=0, depth=floor(log4(3 span + 1)), span=horizon: y ~ Bernoulli(p_k), p_k
      the midpoint of a dyadic cell bisected level by level on a 4^k schedule, halves by coins
      (steer=0) or by the table's flippable bias (steer=1); needs horizon or span
      (docs/ece-lower-bound-adversary.md);
    - "informed": the calibeating environment, each round its own chance and an overconfident
      model of it as the external forecast (docs/calibeating.md);
    - an AdversarySpec from fastcdl.online.plugin_adversary, or "package.module:ATTRIBUTE".

    Examples
    --------
    >>> a = make_adversary("bernoulli", p=0.25, seed=3)
    >>> a.params
    {'p': 0.25}
    """
    spec = registry.adversary(adversary)
    return Adversary(spec, spec.resolve_params(params, horizon), check_seed(seed))
