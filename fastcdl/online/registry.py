"""The registries of forecasters and adversaries: every built-in module, found by name.

A built-in forecaster is a module of ``fastcdl/online/forecasters/`` with a
``FORECASTER`` spec; an adversary a module of ``fastcdl/online/adversaries/`` with an
``ADVERSARY`` spec. Adding one is adding its module (and its test): presets, the CLI, the
trial store, the plots and the per-round API read the names from here. A user's plug-in
is looked up by object or by ``"package.module:ATTRIBUTE"``.

>>> sorted(adversaries())[:2]
['bernoulli', 'budget']
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from fastcdl._validate import ValidationError
from fastcdl.online.plugins import AdversarySpec, ForecasterSpec, load_spec

__all__ = ["adversaries", "adversary", "forecaster", "forecasters", "stochastic"]


def _discover(package: str, attr: str, kind) -> dict:
    pkg = importlib.import_module(package)
    found = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        spec = getattr(importlib.import_module(f"{package}.{info.name}"), attr, None)
        if isinstance(spec, kind):
            found[spec.name] = spec
    return found


@functools.cache
def forecasters() -> dict[str, ForecasterSpec]:
    """Built-in forecasters by name, in a fixed order (cdl first, then alphabetical).

    Returns
    -------
    dict of str to ForecasterSpec
        Found once, from the modules of fastcdl/online/forecasters/.

    Examples
    --------
    >>> list(forecasters())[0]
    'cdl'
    """
    found = _discover("fastcdl.online.forecasters", "FORECASTER", ForecasterSpec)
    return {k: found[k] for k in sorted(found, key=lambda n: (n != "cdl", n))}


@functools.cache
def adversaries() -> dict[str, AdversarySpec]:
    """Built-in adversaries by name, alphabetical.

    Returns
    -------
    dict of str to AdversarySpec
        Found once, from the modules of fastcdl/online/adversaries/.

    Examples
    --------
    >>> adversaries()["bernoulli"].stochastic
    True
    """
    return _discover("fastcdl.online.adversaries", "ADVERSARY", AdversarySpec)


def stochastic() -> tuple[str, ...]:
    """Names of the built-in adversaries that state P(y = 1) (the truthful forecaster's).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> "bernoulli" in stochastic()
    True
    """
    return tuple(n for n, a in adversaries().items() if a.stochastic)


def _lookup(what, table, kind, name_or_spec):
    if isinstance(name_or_spec, kind):
        return name_or_spec
    if isinstance(name_or_spec, str):
        if name_or_spec in table:
            return table[name_or_spec]
        if ":" in name_or_spec:
            return load_spec(name_or_spec, kind)
    raise ValidationError(
        what,
        f"must be one of {', '.join(table)} or a plug-in",
        value=name_or_spec,
        message=f"{what} must be one of {', '.join(table)}, a plug-in made with "
        f"plugin_{what}, or 'package.module:ATTRIBUTE'; got {name_or_spec!r}",
    )


def forecaster(name_or_spec) -> ForecasterSpec:
    """The spec of a built-in forecaster name, a ForecasterSpec, or 'package.module:ATTRIBUTE'.

    Parameters
    ----------
    name_or_spec : str or ForecasterSpec
        A name of :func:`forecasters`, a spec (returned as it is), or the import path of a
        module attribute holding one.

    Returns
    -------
    ForecasterSpec

    Raises
    ------
    ValidationError
        (a ValueError) naming the known forecasters, when it is none of these.

    Examples
    --------
    >>> forecaster("cdl").name
    'cdl'
    """
    return _lookup("forecaster", forecasters(), ForecasterSpec, name_or_spec)


def adversary(name_or_spec) -> AdversarySpec:
    """The spec of a built-in adversary name, an AdversarySpec, or 'package.module:ATTRIBUTE'.

    Parameters
    ----------
    name_or_spec : str or AdversarySpec
        A name of :func:`adversaries`, a spec (returned as it is), or the import path of a
        module attribute holding one.

    Returns
    -------
    AdversarySpec

    Raises
    ------
    ValidationError
        (a ValueError) naming the known adversaries, when it is none of these.

    Examples
    --------
    >>> adversary("bernoulli").name
    'bernoulli'
    """
    return _lookup("adversary", adversaries(), AdversarySpec, name_or_spec)
