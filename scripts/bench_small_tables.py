"""The exact table of fewer than 2^14 rounds from numpy or from the kernels: the price per call and
the compilation it saves; writes results/benchmarks/small-tables.md and .json.

    .venv/bin/python scripts/bench_small_tables.py [--repeat 7] [--processes 3]

Why: below _RADIX_FROM (2^14) rounds, fastcdl builds the exact table (the outcome keys and their
runs: fastcdl._tables.outcome_keys.outcome_keys_numpy, runs_of_sorted_keys) in numpy, so that a
first ``fc.cdl`` on a small input compiles neither ``outcome_keys``, ``count_runs`` nor
``runs_of_keys``. Both paths give the same arrays (checked here before timing, and in
tests/test_sort_keys.py). Per call: keys, numpy's sort and runs, each path once per batch in
turn, medians of batches; ``fc.cdl(y, p)`` on the same rounds for scale. First call: a fresh
process with an empty numba cache calls the three kernels on five rounds (the import, and numba's
own first compilation of a trivial function, excluded), medians of fresh processes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchrecord  # noqa: E402

NAME = "small-tables"
SIZES = (5, 100, 1000, 10_000, (1 << 14) - 1)
ROOT = Path(__file__).resolve().parents[1]

FIRST_CALL = """
import time
import numba
import numpy as np
from fastcdl._compiled import buckets as kb
numba.njit(lambda x: x + 1)(1)  # numba's own first-compile costs (its typing registries) go first
p = np.array([0.1, 0.5, 0.5, 0.9, 0.3]); y = np.array([0, 1, 1, 0, 1], dtype=np.uint8)
t = time.perf_counter()
keys = np.sort(kb.outcome_keys(y, p.view(np.uint64), np.empty(5, dtype=np.uint64)))
m = kb.count_runs(keys)
kb.runs_of_keys(keys, np.empty(m, dtype=np.uint64), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64))
print(time.perf_counter() - t)
"""


def first_call() -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="fastcdl-small-tables-")}
    out = subprocess.run(
        [sys.executable, "-c", FIRST_CALL], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--render", action="store_true", help="rewrite the .md from the JSON")
    args = ap.parse_args(argv)
    if not args.render:
        import fastcdl as fc
        from fastcdl._compiled import buckets as kb
        from fastcdl._tables import outcome_keys as ok

        warnings.simplefilter("ignore")  # the samples' size warnings
        rec = benchrecord.Recorder(NAME, repeat=args.repeat, processes=args.processes)
        rng = np.random.default_rng(0)
        for T in SIZES:
            p = np.round(rng.random(T), 3)  # ties, as scores of three digits have
            y = (rng.random(T) < p).astype(np.uint8)
            bits = p.view(np.uint64)
            keys = np.empty(T, dtype=np.uint64)

            def kernels():
                kb.outcome_keys(y, bits, keys)
                keys.sort()
                m = kb.count_runs(keys)
                q, n, s = np.empty(m), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
                kb.runs_of_keys(keys, q.view(np.uint64), n, s)
                return q, n, s

            def numpy():
                ok.outcome_keys_numpy(y, bits, keys)
                keys.sort()
                return ok.runs_of_sorted_keys(keys) if T < ok._RADIX_FROM else None

            a, b = kernels(), numpy()
            if not all(np.array_equal(u, v) for u, v in zip(a, b)):
                raise SystemExit(f"T = {T}: numpy's table differs from the kernels'")
            rec.interleaved(
                f"per-call/{T}",
                {"kernels": kernels, "numpy": numpy, "fc.cdl": lambda: fc.cdl(y, p)},
                args.repeat,
                calls="auto",
            )
            print(f"T = {T} done", flush=True)
        rec.add(
            "first-call/kernels", [first_call() for _ in range(args.processes)], clock="perf_counter, fresh process"
        )
        rec.save()
    render()


def render():
    doc = benchrecord.load(NAME)
    lines = benchrecord.header(doc, "The exact table of fewer than 2^14 rounds: numpy or the kernels")
    lines += [
        "Microseconds per call (median of batches, the three timed in turn): the outcome keys, numpy's "
        "sort and the runs (the table's q, n, s) by the kernels or by numpy, and `fc.cdl(y, p)` on the same "
        "rounds (predictions of three digits, so with ties), which builds its table by numpy.",
        "",
        "| rounds | kernels (us) | numpy (us) | numpy - kernels (us) | fc.cdl(y, p) (us) |",
        "|---|---|---|---|---|",
    ]
    for T in SIZES:
        a = benchrecord.median(doc, f"per-call/{T}/kernels") * 1e6
        b = benchrecord.median(doc, f"per-call/{T}/numpy") * 1e6
        c = benchrecord.median(doc, f"per-call/{T}/fc.cdl") * 1e6
        lines.append(f"| {T} | {a:.1f} | {b:.1f} | {b - a:+.1f} | {c:.1f} |")
    f = benchrecord.median(doc, "first-call/kernels")
    n = len(doc["timings"]["first-call/kernels"]["seconds"])
    even = {
        T: f / (benchrecord.median(doc, f"per-call/{T}/numpy") - benchrecord.median(doc, f"per-call/{T}/kernels"))
        for T in (100, 10_000)
    }
    lines += [
        "",
        f"The compilation of the three kernels in a fresh process with an empty numba cache, after numba's own "
        f"first compilation (median of {n} processes): {f:.2f} s, which a first `fc.cdl` on fewer than 2^14 "
        f"rounds no longer spends. A process that builds small tables one by one breaks even after about "
        f"{even[100]:,.0f} tables of 100 rounds or {even[10_000]:,.0f} of 10,000; a loop over many small "
        "tables belongs in compiled code (fastcdl.kernels, docs/kernels.md).",
    ]
    benchrecord.write_md(NAME, lines)


if __name__ == "__main__":
    main()
