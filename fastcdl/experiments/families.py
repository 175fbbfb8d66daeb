"""The adversary families of the worst-case search, and their coordinates in the attacked
forecaster's own units (docs/worst-case.md).

A family is an adversary and the box its parameters are searched in. Each parameter has a
*kind* that says what it means to a forecaster that rounds to a grid j/m
(:attr:`fastcdl.online.plugins.ForecasterSpec.grid`):

- ``level``: a probability, threshold or level in [0, 1]. Searched in grid coordinates
  g = value x m (cell floor(g), offset g - floor(g) inside it) and carried to another
  horizon relative to the nearest of 0, 1/2 and 1: the same cell counted from that anchor
  (from the cell holding 1/2 for the middle), the same offset inside it;
- ``offset``: a difference of levels (an amplitude, a shift): measured in cells (value x m),
  carried as the same number of cells;
- ``cell``: a position inside the bucket the forecaster is in (gridedge): already in grid units;
- ``cycles``: a count of periods over the horizon (the adversary receives period = T / cycles);
- ``log`` / ``linear``: anything else, the same value at every horizon.

For a forecaster without a grid, ``level`` and ``offset`` are plain linear coordinates.

>>> fam = FAMILIES["bernoulli"]
>>> fam.sweep_points(m=4)[:3]   # 8 points per cell of the grid j/4
[0.0, 0.03125, 0.0625]
>>> carry_level(0.51, 10, 20)   # 1/10 above the cell that holds 1/2: the same at m = 20
0.505
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fastcdl._validate import ValidationError

__all__ = ["FAMILIES", "Dim", "Family", "carry", "carry_level", "family_for"]

PER_CELL = 8  # sweep points per grid cell (the floor; docs/worst-case.md)
NO_GRID_POINTS = 512  # sweep points of a 1-D family against a forecaster without a grid
KINDS = ("level", "offset", "cell", "cycles", "log", "linear")


@dataclass(frozen=True)
class Dim:
    """One searched parameter: its range (in the parameter's own units) and its kind; frozen.

    Attributes
    ----------
    name : str
        The adversary's parameter ("cycles" stands for the period, as cycles over T).
    lo, hi : float
        Its range.
    kind : {"linear", "log", "cycles", "level", "offset", "cell"}
        How it is scaled and carried: "log" and "cycles" on a log scale; "level" (a
        probability level), "offset" (a distance) and "cell" (a position inside a cell) in
        the forecaster's grid units.

    Examples
    --------
    >>> d = Dim("p01", 1e-3, 1.0, "log")
    >>> round(d.value(0.5), 6), d.unit(d.value(0.5))
    (0.031623, 0.5)
    """

    name: str
    lo: float
    hi: float
    kind: str = "linear"

    def value(self, u: float) -> float:
        """The parameter at u in [0, 1] (log scale for ``log`` and ``cycles``).

        Parameters
        ----------
        u : float
            Clipped to [0, 1].

        Returns
        -------
        float
        """
        u = min(max(float(u), 0.0), 1.0)
        if self.kind in ("log", "cycles"):
            return math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo)))
        return self.lo + u * (self.hi - self.lo)

    def unit(self, v: float) -> float:
        """The inverse of :meth:`value`.

        Parameters
        ----------
        v : float
            A value of the parameter.

        Returns
        -------
        float
            Its point in [0, 1].
        """
        if self.kind in ("log", "cycles"):
            return (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return 0.0 if self.hi == self.lo else (v - self.lo) / (self.hi - self.lo)


@dataclass(frozen=True)
class Family:
    """An adversary and the box its parameters are searched in; frozen.

    Attributes
    ----------
    adversary : str
        The adversary's registered name (also the family's :attr:`name`).
    dims : tuple of Dim
        The searched parameters; () for a family run once.
    fixed : dict
        Parameters passed as they are.
    max_T : int or None
        The largest horizon it is run at (its cost per round grows with m).

    Examples
    --------
    >>> f = FAMILIES["drift"]
    >>> f.params((0.5, 0.5), 1024)
    {'amplitude': 0.25, 'period': 90.50966799187809}
    >>> f.unit_of_params(f.params((0.5, 0.5), 1024), 1024)
    [0.5, 0.5]
    """

    adversary: str
    dims: tuple = ()
    fixed: dict = field(default_factory=dict)
    max_T: int | None = None

    @property
    def name(self) -> str:
        """The family's name: its adversary's."""
        return self.adversary

    def params(self, u, T) -> dict:
        """The adversary's parameters at the unit-cube point u.

        Parameters
        ----------
        u : sequence of float
            One coordinate in [0, 1] per dim.
        T : int
            The horizon (a period is T / cycles).

        Returns
        -------
        dict
        """
        return self.params_of_values([d.value(x) for d, x in zip(self.dims, u)], T)

    def params_of_values(self, values, T) -> dict:
        """The adversary's parameters from one value per dim (cycles become a period).

        Parameters
        ----------
        values : sequence of float
        T : int

        Returns
        -------
        dict
        """
        out = dict(self.fixed)
        for d, v in zip(self.dims, values):
            if d.kind == "cycles":
                out["period"] = T / v
            else:
                out[d.name] = float(v)
        return out

    def values_of_params(self, params, T) -> list[float]:
        """The inverse of :meth:`params_of_values`.

        Parameters
        ----------
        params : dict
        T : int

        Returns
        -------
        list of float
        """
        return [T / params["period"] if d.kind == "cycles" else params[d.name] for d in self.dims]

    def unit_of_params(self, params, T) -> list[float]:
        """The inverse of :meth:`params`.

        Parameters
        ----------
        params : dict
        T : int

        Returns
        -------
        list of float
            A point of the unit cube.
        """
        return [d.unit(v) for d, v in zip(self.dims, self.values_of_params(params, T))]

    def sweep_points(self, m) -> list[float]:
        """The dense sweep of a 1-D family: its parameter at PER_CELL points per grid cell
        over the whole range (grid points included; NO_GRID_POINTS + 1 evenly spaced
        without a grid, and for a ``cell`` position PER_CELL**2 + 1 over the cell).

        Parameters
        ----------
        m : int or None
            The forecaster's grid.

        Returns
        -------
        list of float

        Examples
        --------
        >>> FAMILIES["bernoulli"].sweep_points(2)[:3]
        [0.0, 0.0625, 0.125]
        """
        (d,) = self.dims
        if d.kind == "cell" or m is None or d.kind not in ("level", "offset"):
            n = PER_CELL**2 if d.kind == "cell" else NO_GRID_POINTS
            return [d.lo + (d.hi - d.lo) * i / n for i in range(n + 1)]
        lo_g, hi_g = d.lo * m, d.hi * m
        k0 = math.ceil(lo_g * PER_CELL - 1e-9)
        k1 = math.floor(hi_g * PER_CELL + 1e-9)
        return [k / PER_CELL / m for k in range(k0, k1 + 1)]

    def cell_width(self, dim: Dim, m) -> float:
        """One grid cell as a fraction of the dim's range (for local searches).

        Parameters
        ----------
        dim : Dim
        m : int or None
            The forecaster's grid (1/32 of the range without one).

        Returns
        -------
        float
        """
        if dim.kind in ("level", "offset") and m is not None and dim.hi > dim.lo:
            return 1.0 / m / (dim.hi - dim.lo)
        return 1.0 / 32.0


def carry_level(v: float, m0: int, m1: int) -> float:
    """A level v of the grid j/m0 carried to the grid j/m1: the same cell counted from the
    nearest of 0, 1/2 and 1 (the middle counted from the cell that holds 1/2), and the same
    offset inside it."""
    g = v * m0
    anchor = min((abs(v), 0), (abs(v - 0.5), 1), (abs(1.0 - v), 2))[1]
    if anchor == 0:
        g1 = g
    elif anchor == 2:
        g1 = m1 - (m0 - g)
    else:
        k = math.floor(g) - m0 // 2
        g1 = m1 // 2 + k + (g - math.floor(g))
    return min(max(g1 / m1, 0.0), 1.0)


def carry(family: Family, params: dict, T0: int, m0, T1: int, m1) -> dict:
    """A candidate of ``family`` at horizon T0 (grid m0) carried to T1 (grid m1): levels by
    :func:`carry_level`, offsets as the same number of cells, cycles as the same count over
    the horizon; other parameters unchanged."""
    values = family.values_of_params(params, T0)
    out = []
    for d, v in zip(family.dims, values):
        if m0 is not None and m1 is not None and d.kind == "level":
            v = carry_level(v, m0, m1)
        elif m0 is not None and m1 is not None and d.kind == "offset":
            v = v * m0 / m1
        out.append(min(max(v, d.lo), d.hi))
    return family.params_of_values(out, T1)


def grid_coordinates(family: Family, params: dict, T: int, m) -> str:
    """A readable description of a candidate in grid units: 'p: cell 20 + 0.375 (m = 42)'."""
    if m is None:
        return ""
    parts = []
    for d, v in zip(family.dims, family.values_of_params(params, T)):
        if d.kind in ("level", "offset"):
            g = v * m
            parts.append(f"{d.name}: cell {math.floor(g)} + {g - math.floor(g):.4g}")
    return "; ".join(parts) + (f" (m = {m})" if parts else "")


#: The searched families by name: every built-in adversary, with the box of its parameters.
FAMILIES = {
    "bernoulli": Family("bernoulli", (Dim("p", 0.0, 1.0, "level"),)),
    "gridedge": Family("gridedge", (Dim("position", 0.0, 1.0, "cell"),)),
    "drift": Family("drift", (Dim("amplitude", 0.0, 0.5, "offset"), Dim("cycles", 0.5, 256.0, "cycles"))),
    "markov": Family("markov", (Dim("p01", 1e-3, 1.0, "log"), Dim("p10", 1e-3, 1.0, "log"))),
    "rawpoint": Family("rawpoint", (Dim("shift", -0.1, 0.1, "offset"), Dim("mix", 0.0, 1.0))),
    "sweep": Family(
        "sweep",
        (
            Dim("low", 0.0, 0.5, "level"),
            Dim("high", 0.5, 1.0, "level"),
            Dim("amp", 0.0, 0.3, "offset"),
            Dim("cycles", 0.5, 256.0, "cycles"),
        ),
    ),
    "contrarian": Family("contrarian"),
    "greedy": Family("greedy"),
    "lookahead": Family("lookahead", fixed={"kinks": 32}),
    "signpreserve": Family("signpreserve"),
    "cdlahead": Family("cdlahead", max_T=2**20),  # O(m) a round, ~1 us: run up to 2^20
}


def family_for(name: str, forecaster: str, T: int, *, ranges=None) -> Family:
    """The family ``name`` against ``forecaster`` at horizon T, with the ranges of
    ``ranges`` (parameter -> (lo, hi) or {"lo", "hi", "units": "value" | "cells"}; cells
    are units of the forecaster's grid at T, an error for a forecaster without one).
    ValueError naming the family, the parameter and the forecaster."""
    from fastcdl.online import registry

    if name not in FAMILIES:
        raise ValidationError(
            "families",
            f"must be among {', '.join(FAMILIES)}",
            value=name,
            message=f"unknown adversary family {name!r} (families: {', '.join(FAMILIES)})",
        )
    fam = FAMILIES[name]
    spec = registry.forecaster(forecaster)
    dims = list(fam.dims)
    for pname, r in (ranges or {}).items():
        idx = [i for i, d in enumerate(dims) if d.name == pname]
        if not idx:
            raise ValidationError(
                pname,
                "is not searched",
                message=f"family {name!r} has no searched parameter "
                f"{pname!r} (it searches: {', '.join(d.name for d in dims) or 'nothing'})",
            )
        d = dims[idx[0]]
        units = "value"
        if isinstance(r, dict):
            units = r.get("units", "value")
            r = (r.get("lo", d.lo), r.get("hi", d.hi))
        lo, hi = (float(x) for x in r)
        if units not in ("value", "cells"):
            raise ValidationError(pname, "units must be 'value' or 'cells'", value=units)
        if units == "cells":
            if d.kind not in ("level", "offset"):
                raise ValidationError(
                    pname,
                    "has no grid units",
                    message=f"family {name!r}, parameter {pname!r}: "
                    f"units = 'cells' applies to a level or an offset, not to a {d.kind} parameter",
                )
            if spec.grid is None:
                raise ValidationError(
                    pname,
                    "grid units need a grid",
                    message=f"family {name!r}, parameter "
                    f"{pname!r}: units = 'cells' for forecaster {spec.name!r}, which declares no grid",
                )
            m = spec.grid_m({}, T)
            lo, hi = lo / m, hi / m
        if not (lo <= hi) or not (d.lo <= lo and hi <= d.hi):
            raise ValidationError(
                pname,
                f"range must lie in [{d.lo}, {d.hi}]",
                message=f"family {name!r}, "
                f"parameter {pname!r}, forecaster {spec.name!r}: range [{lo}, {hi}] is not inside "
                f"the valid [{d.lo}, {d.hi}]",
            )
        dims[idx[0]] = Dim(d.name, lo, hi, d.kind)
    return Family(fam.adversary, tuple(dims), dict(fam.fixed), fam.max_T)
