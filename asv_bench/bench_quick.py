"""`make bench-quick`: every asv benchmark's timed body once, under pytest-benchmark.

A thin adapter, not a second suite: it imports the benchmark classes of asv_bench/benchmarks/
(the definitions asv tracks) and turns each (class, parameter combination, ``time_*`` or
``timeraw_*`` method) into one pytest item. An item follows asv's protocol: ``setup(*params)``
(a ``NotImplementedError`` there skips the combination, as asv does), one untimed warm-up call
(asv warms up too: a kernel that setup did not compile is compiled there, never in the timed
call), the method timed once by ``benchmark.pedantic`` (one round, one iteration), then
``teardown``. A ``timeraw_*`` method returns code (and setup code)
that asv times in a fresh interpreter; here the whole fresh interpreter is timed, its start-up
included (about 0.05 s on the reference machine, stated in docs/benchmarks.md). ``track_*`` and
``peakmem_*`` benchmarks measure no time and are left to asv.

pytest-benchmark saves each run (``--benchmark-autosave``, in .benchmarks/) and the Makefile
compares it with the previous saved run on the same machine (``--benchmark-compare``), failing
when a median is slower by more than the documented threshold. Run it from the repository root:

    make bench-quick                                 # all, compared with the last saved run
    .venv/bin/python -m pytest asv_bench/bench_quick.py -k CDLSuite --benchmark-autosave
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # the benchmarks package, imported as asv imports it

import benchmarks  # noqa: E402

TIMED = ("time_", "timeraw_")


def _combinations(cls) -> list[tuple]:
    """asv's parameter combinations: one list for one parameter name, else the product of lists."""
    params = getattr(cls, "params", None)
    if params is None:
        return [()]
    names = getattr(cls, "param_names", None)
    if names is not None and len(names) == 1 or not isinstance(params[0], (list, tuple)):
        return [(p,) for p in params]
    return list(itertools.product(*params))


def cases():
    """(module, class name, method, parameters) of every timed asv benchmark, as pytest params."""
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"benchmarks.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            for method in sorted(m for m in vars(cls) if m.startswith(TIMED)):
                for combo in _combinations(cls):
                    label = ",".join(map(str, combo))
                    yield pytest.param(module, name, method, combo, id=f"{info.name}.{name}.{method}({label})")


def _raw(code: str, setup: str) -> None:
    """A timeraw body: the setup code and then the code, in one fresh interpreter."""
    subprocess.run([sys.executable, "-c", f"{setup}\n{code}"], check=True, capture_output=True)


@pytest.mark.parametrize(("module", "name", "method", "params"), list(cases()))
def test_asv_benchmark(benchmark, module, name, method, params):
    cls = getattr(module, name)
    bench = cls()
    if hasattr(bench, "setup"):
        try:
            bench.setup(*params)
        except NotImplementedError as e:  # asv's way of skipping a combination
            pytest.skip(str(e))
    try:
        body = getattr(bench, method)
        if method.startswith("timeraw_"):
            out = body(*params)
            code, setup = (out, "") if isinstance(out, str) else out
            benchmark.pedantic(_raw, args=(code, setup), rounds=1, iterations=1, warmup_rounds=0)
        else:
            benchmark.pedantic(body, args=params, rounds=1, iterations=1, warmup_rounds=1)
    finally:
        if hasattr(bench, "teardown"):
            bench.teardown(*params)
