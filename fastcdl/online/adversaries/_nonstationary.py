"""Shared by the non-stationary environments (segments, budget): the span of rounds an
environment is laid out over, and sizes given either as a number or as an exponent of it
(K = span^a, C = span^b), so that a preset can let them grow with T."""

import math

from fastcdl._validate import ValidationError, check_horizon, check_real

# floor(span^a) with a relative guard: 2^16 ** 0.25 is 16 in exact arithmetic but could round below it
POWER_GUARD = 1e-12


def resolve_span(params, horizon, who):
    """span: the rounds the environment is laid out over; the run's horizon unless given."""
    if params.get("span") is not None:
        return check_horizon(params["span"], "span")
    if horizon is None:
        raise ValidationError(
            "span", "is needed", message=f"span: the {who} adversary needs span=... or horizon=... (span = horizon)"
        )
    return check_horizon(horizon)


def exponent(params, name):
    """The exponent parameter ``name`` (in [0, 1]), or None when not given."""
    if params.get(name) is None:
        return None
    return check_real(params[name], name, 0.0, 1.0)


def floor_power(span, a):
    """floor(span^a), exact powers kept whole (POWER_GUARD)."""
    return max(1, math.floor(span**a * (1.0 + POWER_GUARD)))
