"""Measure the metric kernels against numpy baselines in one process; write results/benchmarks/metrics.md.

    .venv/bin/python scripts/bench_metrics.py [--T 100000000] [--repeat 7]
    .venv/bin/python scripts/bench_metrics.py --render     # metrics.md from metrics.json

Every figure is the median of --repeat runs after a warm-up call (JIT excluded), and
every claim is a ratio to a baseline timed in the same run on the same arrays; every repeat,
the machine, the load and the source are in results/benchmarks/metrics.json (scripts/benchrecord.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import benchrecord
import numpy as np

import fastcdl as fc

OUT = Path(__file__).resolve().parents[1] / "results" / "benchmarks" / "metrics.md"
BEGIN = "<!-- scripts/bench_estimators.py -->"
KERNELS = ("cdl", "cdl_report", "vcdl", "ucal", "ece")
D = benchrecord.definitions("data")  # the rounds, table and numpy binning asv's metric suites time


def measure(args, rec):
    T, bins = args.T, args.bins
    y_bool, p = D.sample_rounds(T)
    edges = np.linspace(0.0, 1.0, bins + 1)
    for label, y in (("bool", y_bool), ("float64", y_bool.astype(np.float64))):
        # the sum and the table alternate, so a change of load falls on both
        rec.interleaved(
            f"bucket_stats/{label}",
            {
                "sum": lambda: (p.sum(), y.sum()),
                "fastcdl": lambda: fc.bucket_stats(y, p, bins=bins),
            },
            args.repeat,
        )
        rec.time(f"bucket_stats/{label}/numpy", lambda: D.numpy_binning(edges, y, p), max(3, args.repeat // 2))
        st = fc.bucket_stats(y, p, bins=bins)
        ref = D.numpy_binning(edges, y, p)
        assert np.array_equal(st.counts, ref[0][ref[0] > 0])

    table = D.table(args.m)
    for name in KERNELS:
        f = getattr(fc, name)
        rec.time(f"envelope/{name}", lambda: f(table), args.repeat)


def render(doc):
    T, bins, m, repeat = (doc["params"][k] for k in ("T", "bins", "m", "repeat"))
    lines = benchrecord.header(doc, "Metric kernels: measured speed")
    lines += [
        f"Medians of {repeat} runs after a warm-up call (the numpy binning: {max(3, repeat // 2)}); "
        "the sum and the table alternate within each repeat; one process, same arrays.",
        "",
        f"## bucket_stats, T = {T:.0e} uniform predictions, bins = {bins}",
        "",
        "| outcomes dtype | numpy sum of p and y (s) | fastcdl.bucket_stats (s) | numpy searchsorted + 3 bincount (s) | fastcdl / sum | bincount / fastcdl |",
        "|---|---|---|---|---|---|",
    ]
    for label in ("bool", "float64"):
        t_sum = benchrecord.median(doc, f"bucket_stats/{label}/sum")
        t_fc = benchrecord.median(doc, f"bucket_stats/{label}/fastcdl")
        t_np = benchrecord.median(doc, f"bucket_stats/{label}/numpy")
        lines.append(f"| {label} | {t_sum:.3f} | {t_fc:.3f} | {t_np:.3f} | {t_fc / t_sum:.2f}x | {t_np / t_fc:.1f}x |")
    lines += [
        "",
        "Targets: within 3x of the sum, at least 10x faster than bincount.",
        "",
        f"## Envelope kernels on a table of m = {m:.0e} buckets",
        "",
        "| function | median (s) |",
        "|---|---|",
    ]
    lines += [f"| {name} | {benchrecord.median(doc, f'envelope/{name}'):.3f} |" for name in KERNELS]
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=10**8)
    ap.add_argument("--bins", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--m", type=int, default=10**6)
    ap.add_argument("--render", action="store_true", help="only write metrics.md from metrics.json")
    args = ap.parse_args()
    if not args.render:
        rec = benchrecord.Recorder("metrics", T=args.T, bins=args.bins, repeat=args.repeat, m=args.m)
        measure(args, rec)
        rec.save()
    lines = render(benchrecord.load("metrics"))
    # the sample estimators' section is scripts/bench_estimators.py's: kept as it is
    kept = ""
    if OUT.exists() and BEGIN in OUT.read_text():
        kept = "\n" + OUT.read_text()[OUT.read_text().index(BEGIN) :]
    benchrecord.write_md("metrics", lines + [kept] if kept else lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
