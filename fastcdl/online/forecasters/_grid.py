"""Shared by the grid forecasters (foster, truthful, frequency): stated values j/m, j = 0..m,
the raw point equal to the stated value; the default grid sizes."""

import numpy as np

from fastcdl.online.plugins import given_m, isqrt_up


def grid(m):
    """q_j = j/m, j = 0..m."""
    return np.arange(m + 1) / m


def resolve_m(params, T, default):
    return {"m": given_m(params, T, default) if "m" in params else default}


def default_sqrt(T):
    """max(2, ceil(sqrt T)): the grid of truthful and frequency."""
    return max(2, isqrt_up(T))
