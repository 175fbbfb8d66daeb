"""Names that older versions of fastcdl lack, for asv's history.

asv installs each commit of the history and imports every module of this suite against it; one
module that fails to import stops the discovery of all of them. So the modules import the names
that came later through :func:`optional`: a name the installed fastcdl lacks becomes a
:class:`Missing` stand-in that raises ``NotImplementedError`` when it is used, in a benchmark's
setup, which asv records as a skipped benchmark for that commit.
"""

import importlib


class Missing:
    """Stands in for a name the installed fastcdl does not have; any use raises NotImplementedError."""

    def __init__(self, what):
        self._what = what

    def _missing(self, *args, **kwargs):
        raise NotImplementedError(f"{self._what} is not in this version of fastcdl")

    __call__ = __getitem__ = __iter__ = __len__ = _missing

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._missing()

    def __bool__(self):
        return False


def optional(module, name=None):
    """``module`` (or its attribute ``name``) if the installed fastcdl has it, else a Missing stand-in."""
    what = module if name is None else f"{module}.{name}"
    try:
        mod = importlib.import_module(module)
        return mod if name is None else getattr(mod, name)
    except (ImportError, AttributeError):
        return Missing(what)


def require(*things):
    """Raise NotImplementedError (asv: skipped) if any of ``things`` is a Missing stand-in."""
    for t in things:
        if isinstance(t, Missing):
            t._missing()
