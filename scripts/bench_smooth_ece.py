"""results/benchmarks/smooth-ece.{json,md}: fc.smece against relplot's smECE (the authors'
package, 1.0.3) from T raw rounds, T = 10^4, 10^5, 10^6, interleaved repeats, and where
fc.smece's time goes at the largest T.

    .venv/bin/python scripts/bench_smooth_ece.py [--repeat 5]

The rounds: p ~ U[0, 1] and y ~ Bernoulli(p + 0.2 sin(2 pi p)) (the miscalibrated curve of
relplot's demo), seed 0; a second set with calibrated labels, y ~ Bernoulli(p), where the
bandwidth search ends below 0.01 and needs five grids instead of one. Both libraries start from
the same arrays (relplot from float labels, its documented input): building fastcdl's grids from
the rounds is part of its time. Each timing checks that the two values agree to 1e-6.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this tree's fastcdl, whatever is installed

from benchrecord import Recorder, load, machine_line, write_md  # noqa: E402

NAME = "smooth-ece"
SIZES = (10**4, 10**5, 10**6)
LABELS = {
    "miscalibrated": "y ~ Bernoulli(p + 0.2 sin(2 pi p))",
    "calibrated": "y ~ Bernoulli(p)",
}


def rounds(T: int, labels: str):
    import numpy as np

    rng = np.random.default_rng(0)
    p = rng.random(T)
    u = rng.random(T)
    mean = p + 0.2 * np.sin(2 * np.pi * p) if labels == "miscalibrated" else p
    return (u < mean).astype(np.int64), p


def lscpu_model() -> str | None:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Model name":
            return value.strip()
    return None


def phases(rec: Recorder, T: int, repeat: int) -> None:
    """fc.smece at T split in three: checking and converting the rounds (with the residuals
    p - y), rounding them onto the grid (both grids, counts and residuals), the bandwidth
    search and the value on the grids already built (convolutions, interpolation)."""
    from fastcdl.smooth_ece import _grid_size, _smoother

    y, p = rounds(T, "miscalibrated")
    _, sm = _smoother(y, p, None, None, "uniform")
    M = _grid_size(sm.bandwidth())

    def grids():
        _, fresh = _smoother(y, p, None, None, "uniform")
        fresh.grid("n", M)
        fresh.grid("r", M)
        return fresh

    built = [grids() for _ in range(repeat + 1)]

    def search():
        s = built.pop()
        return s.smece_at(s.bandwidth())

    rec.interleaved(
        f"phases/T={T}",
        {
            "rounds": lambda: _smoother(y, p, None, None, "uniform"),
            "rounds+grids": grids,
            "search on built grids": search,
        },
        repeat=repeat,
    )


def run(repeat: int) -> None:
    import numpy as np
    import relplot
    import scipy

    import fastcdl as fc

    rec = Recorder(NAME, sys.argv, repeat=repeat)
    rec.doc["machine"]["lscpu_model_name"] = lscpu_model()
    rec.doc["versions"]["scipy"] = scipy.__version__
    rec.doc["versions"]["relplot"] = _dist("relplot")
    rec.doc["source"]["fastcdl_imported_from"] = str(Path(fc.__file__).resolve().parent)
    for labels in LABELS:
        for T in SIZES:
            y, p = rounds(T, labels)
            yf = y.astype(np.float64)
            a, (b, sigma) = fc.smece(y, p), relplot.smECE(p, yf, return_width=True)
            if not abs(a - b) <= 1e-6:
                raise AssertionError(f"{labels}, T={T}: fastcdl {a} and relplot {b} differ")
            rec.value(f"{labels}/T={T}", {"smece": a, "relplot": b, "sigma": sigma, "grids": _grids(y, p)})
            rec.interleaved(
                f"{labels}/T={T}",
                {"fastcdl": lambda: fc.smece(y, p), "relplot": lambda: relplot.smECE(p, yf)},
                repeat=repeat,
            )
    phases(rec, SIZES[-1], repeat)
    first_calls(rec, repeat)
    rec.save()


FIRST_CALL = (
    "import time, numpy as np; t0 = time.perf_counter(); import fastcdl as fc; "
    "p = np.random.default_rng(0).random({T}); y = (p > 0.5).astype(int); "
    "t1 = time.perf_counter(); fc.smece(y, p); print(time.perf_counter() - t1)"
)
TRIVIAL = (
    "import time; t0 = time.perf_counter(); import numba; f = numba.njit(lambda x: x + 1); "
    "f(1); print(time.perf_counter() - t0)"
)


def first_calls(rec: Recorder, repeat: int) -> None:
    """The first fc.smece of a fresh process, at 2^17 - 1 rounds (numpy's rounding) and 2^17 (the
    compiled kernel), with an empty numba cache and with a filled one, next to numba's own cold
    compile of a trivial function (import included there, excluded from fc.smece's time)."""
    import os
    import tempfile

    from fastcdl.smooth_ece import COMPILED_FROM

    def run(code, cache):
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    filled = tempfile.mkdtemp(prefix="smece-warm-")
    run(FIRST_CALL.format(T=COMPILED_FROM), filled)
    rows = {
        "numba cold: import + compile a trivial function": lambda: run(TRIVIAL, tempfile.mkdtemp()),
        f"first fc.smece, {COMPILED_FROM - 1} rounds, empty cache": lambda: run(
            FIRST_CALL.format(T=COMPILED_FROM - 1), tempfile.mkdtemp()
        ),
        f"first fc.smece, {COMPILED_FROM} rounds, empty cache": lambda: run(
            FIRST_CALL.format(T=COMPILED_FROM), tempfile.mkdtemp()
        ),
        f"first fc.smece, {COMPILED_FROM} rounds, filled cache": lambda: run(
            FIRST_CALL.format(T=COMPILED_FROM), filled
        ),
    }
    times = {k: [] for k in rows}
    for _ in range(repeat):
        for k, f in rows.items():
            times[k].append(f())
    for k, ts in times.items():
        rec.add(f"first/{k}", ts, clock="perf_counter in a fresh process")


def _grids(y, p) -> int:
    """How many grid sizes the bandwidth search visits (each costs one pass over the rounds)."""
    from fastcdl.smooth_ece import _smoother

    _, sm = _smoother(y, p, None, None, "uniform")
    sm.bandwidth()
    return len(sm._rounded)


def _dist(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def render() -> None:
    doc = load(NAME)
    t, v = doc["timings"], doc["values"]
    vers = doc["versions"]
    lines = [
        "# smECE: fastcdl against relplot",
        "",
        f"Command: `{doc['command']}`; every repeat is in `{NAME}.json`, which this file is written from.",
        "",
        machine_line(doc),
        f" lscpu model name: {doc['machine'].get('lscpu_model_name')}; scipy {vers.get('scipy')}, "
        f"relplot {vers.get('relplot')}.",
        "",
        "`fc.smece(y, p)` and `relplot.smECE(p, y)` (automatic bandwidth) from the same T rounds, "
        "p ~ U[0, 1], seed 0, each once per repeat in turn; median seconds of "
        f"{doc['params'].get('repeat')} repeats. fastcdl's time includes checking the rounds and "
        "rounding them onto the grid (from 2^17 rounds in one compiled pass, below it by numpy's "
        "bincount, which needs no compile; the compiled kernel is loaded before the timings). "
        "The two values agree to 1e-6 in every case (the script stops otherwise).",
        "",
        "| labels | T | sigma | grids | fastcdl (s) | relplot (s) | relplot / fastcdl |",
        "|---|---|---|---|---|---|---|",
    ]
    for labels, words in LABELS.items():
        for T in SIZES:
            key = f"{labels}/T={T}"
            if f"{key}/fastcdl" not in t:
                continue
            a, b = t[f"{key}/fastcdl"]["median"], t[f"{key}/relplot"]["median"]
            lines.append(
                f"| {words} | {T:.0e} | {v[key]['sigma']:.4g} | {v[key]['grids']} | {a:.3g} | {b:.3g} | {b / a:.1f}x |"
            )
    T = SIZES[-1]
    ph = {k.split("/")[-1]: t[k]["median"] for k in t if k.startswith(f"phases/T={T}/")}
    if ph:
        rounds_s = ph["rounds"]
        grids_s = ph["rounds+grids"] - rounds_s
        search_s = ph["search on built grids"]
        total = rounds_s + grids_s + search_s
        lines += [
            "",
            f"Where fastcdl's time goes at T = {T:.0e} (miscalibrated labels, one grid), medians of "
            "interleaved repeats:",
            "",
            "| phase | seconds | share |",
            "|---|---|---|",
            f"| checking the rounds, residuals p - y | {rounds_s:.3g} | {rounds_s / total:.0%} |",
            f"| rounding onto the grid (counts, residuals and outcomes in one compiled pass) | {grids_s:.3g} | {grids_s / total:.0%} |",
            f"| bandwidth search and value on the built grids (FFT) | {search_s:.3g} | {search_s / total:.0%} |",
        ]
    first = {k[len("first/") :]: t[k]["median"] for k in t if k.startswith("first/")}
    if first:
        lines += [
            "",
            "First call in a fresh process (medians of fresh processes, interleaved; fc.smece's time "
            "excludes the import, numba's row includes it): the compiled rounding is used from "
            "2^17 rounds, so smaller inputs compile nothing.",
            "",
            "| process | seconds |",
            "|---|---|",
            *(f"| {k} | {s:.3g} |" for k, s in first.items()),
        ]
    write_md(NAME, lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--render", action="store_true", help="only rewrite the Markdown from the JSON")
    a = ap.parse_args()
    if not a.render:
        run(a.repeat)
    render()
