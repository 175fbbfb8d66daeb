"""The exact CDL and UCal of a table from numpy's sort (the front) or from the compiled radix sort
(the fused kernels), on one-round tables (continuous scores) and on tables with many distinct
frequencies; writes results/benchmarks/one-round-front.md and .json.

    .venv/bin/python scripts/bench_one_round_front.py [--repeat 7] [--max-exp 7]

Why: a first `fastcdl metrics` on continuous scores compiled the radix sort and its huge-page
helpers (results/benchmarks/compile_profile.md) for tables whose frequencies are all 0 or 1.
fastcdl._compiled.tablecdl.cdl_of_table takes the numpy front for such tables below
ONE_ROUND_FUSED_FROM buckets, envelope.ucal_from_table at every size; this file is the measurement behind those rules.
Both paths give the same float (checked here on every table before timing, and in
tests/test_kernels_api.py). Each ratio is the median over repeats of front / fused, the two
timed back to back in turn.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchrecord  # noqa: E402

from fastcdl._compiled import envelope, tablecdl  # noqa: E402

NAME = "one-round-front"


def table(kind, m, rng):
    q = np.sort(rng.random(m))
    if kind == "one-round":
        return q, np.ones(m), (rng.random(m) < q) * 1.0
    n = rng.integers(1, 50, m) * 1.0
    return q, n, np.floor(n * rng.random(m))


def front(fn):
    """fn with the rule's size limit lifted (RADIX_MIN out of reach), so that the numpy front runs
    at every size timed."""

    def call(*args):
        old = tablecdl.RADIX_MIN, envelope.RADIX_MIN
        tablecdl.RADIX_MIN = envelope.RADIX_MIN = 1 << 62
        try:
            return fn(*args)
        finally:
            tablecdl.RADIX_MIN, envelope.RADIX_MIN = old

    return call


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--max-exp", type=int, default=7)
    ap.add_argument("--render", action="store_true", help="rewrite the .md from the JSON")
    args = ap.parse_args(argv)
    if not args.render:
        rec = benchrecord.Recorder(NAME, repeat=args.repeat, max_exp=args.max_exp)
        rng = np.random.default_rng(0)
        cdl_front = front(lambda q, n, s: tablecdl.cdl_of_table(q, n, s, True))
        ucal_front = front(envelope.ucal_from_table)
        for kind in ("one-round", "distinct"):
            for e in range(4, args.max_exp + 1):
                q, n, s = table(kind, 10**e, rng)
                pairs = {
                    "cdl": (lambda: tablecdl.table_cdl(q, n, s, True), lambda: cdl_front(q, n, s)),
                    "ucal": (lambda: envelope.ucal_of_table(q, n, s), lambda: ucal_front(q, n, s)),
                }
                for measure, (fused, numpy_front) in pairs.items():
                    a, b = fused(), numpy_front()
                    same = a == b if measure == "ucal" else a[:4] == b[:4] and a[5] == b[5]
                    if not same:
                        raise SystemExit(f"{measure} {kind} 10^{e}: the front gave {b}, the kernel {a}")
                    rec.interleaved(f"{measure}/{kind}/1e{e}", {"fused": fused, "front": numpy_front}, args.repeat)
                print(f"{kind} 10^{e} done", flush=True)
        rec.save()
    render()


def render():
    doc = benchrecord.load(NAME)
    lines = benchrecord.header(doc, "Exact CDL and UCal: numpy's sort in front of the sweep, or the radix sort")
    lines += [
        "Median milliseconds per call over the repeats, the two paths timed back to back in turn; "
        "front / fused above 1 means numpy's sort is slower. One-round tables: T buckets of one round each "
        "(continuous scores; frequencies 0 or 1). Distinct: 1 to 49 rounds per bucket (many distinct "
        "frequencies).",
        "",
        "| measure | table | buckets | fused (ms) | numpy front (ms) | front / fused |",
        "|---|---|---|---|---|---|",
    ]
    keys = sorted(
        {k.rsplit("/", 1)[0] for k in doc["timings"]},
        key=lambda k: (k.split("/")[0], k.split("/")[1], float(k.split("/")[2])),
    )
    for key in keys:
        measure, kind, size = key.split("/")
        fused = benchrecord.median(doc, f"{key}/fused")
        fr = benchrecord.median(doc, f"{key}/front")
        lines.append(f"| {measure} | {kind} | 10^{size[2:]} | {fused * 1e3:.2f} | {fr * 1e3:.2f} | {fr / fused:.2f} |")
    lines += [
        "",
        "The rules: fastcdl.cdl on a one-round table below 2^21 buckets takes the front "
        "(fastcdl._compiled.tablecdl.ONE_ROUND_FUSED_FROM), so that a first report of continuous scores "
        "compiles no radix sort, at the cost above; fastcdl.ucal takes it on one-round tables of any size. "
        "Tables with many distinct frequencies keep the radix sort from 512 buckets on.",
    ]
    benchrecord.write_md(NAME, lines)


if __name__ == "__main__":
    main()
