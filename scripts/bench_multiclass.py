"""Exact multiclass CDL: the constraint-generation LP (fastcdl.cdl_multiclass) against the first
formulation (all ordered pairs of R, point masses included; fastcdl.multiclass._cdl_lp_all_pairs)
on the same inputs. Writes results/benchmarks/multiclass.md.

    .venv/bin/python scripts/bench_multiclass.py [--old-timeout 60]
    .venv/bin/python scripts/bench_multiclass.py --render     # multiclass.md from multiclass.json

Inputs: k = 10 outcomes, m distinct rows (Dirichlet(0.5) rows rounded to 0.01, 20 rounds each,
outcomes drawn from the rows pulled 30% toward uniform), and the scikit-learn digits test split
(T = 899) with a logistic regression's predict_proba rounded to 0.01 and renormalised. Each
formulation runs in its own process (the old one under a time limit); times are wall clock of
one call, the values must agree to 1e-9. Every time, the machine, load and source are kept in
results/benchmarks/multiclass.json (scripts/benchrecord.py).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
from pathlib import Path

import benchrecord
import numpy as np

# asv_bench/benchmarks/multiclass.py: the cases (synthetic rows, digits) MulticlassCDLSuite times
M = benchrecord.definitions("multiclass")


def _run_one(which, name, queue):
    import fastcdl as fc
    from fastcdl.multiclass import _cdl_lp_all_pairs

    y, P = M.case(name)
    f = fc.cdl_multiclass if which == "new" else _cdl_lp_all_pairs
    timings = benchrecord.repeats({which: lambda: f(y, P)}, 1, warmup=False)  # one call: its first
    queue.put((timings.values[which], timings.seconds[which][0]))


def timed(which, name, timeout):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_run_one, args=(which, name, q))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None, None
    return q.get()


def measure(args, rec):
    for name in args.cases.split(","):
        y, P = M.case(name)
        m = np.unique(P, axis=0).shape[0]
        new_v, new_t = timed("new", name, None)
        old_v, old_t = timed("old", name, args.old_timeout)
        rec.add(f"{name}/new", [new_t], clock="perf_counter, one call in a fresh process")
        if old_t is not None:
            rec.add(f"{name}/old", [old_t], clock="perf_counter, one call in a fresh process")
        rec.value(
            name,
            dict(
                T=int(len(y)),
                k=int(P.shape[1]),
                m=int(m),
                new=new_v,
                old=old_v,
                old_stopped_at=None if old_t is not None else args.old_timeout,
            ),
        )
        print(name, json.dumps(rec.doc["values"][name]), flush=True)


def render(doc):
    lines = benchrecord.header(doc, "Exact multiclass CDL: constraint generation against the first formulation")
    lines += [
        "Both formulations solve the LP of docs/metrics.md with HiGHS (scipy); each call runs once in a fresh",
        "process and includes finding the buckets. *new* is `fastcdl.cdl_multiclass` (properness at the",
        "predictions only, values u_q as variables, constraint generation, interior point with crossover);",
        "*old* is the first formulation, every ordered pair of R = rows ∪ frequencies ∪ point masses",
        "(`fastcdl.multiclass._cdl_lp_all_pairs`, HiGHS's default method), stopped after "
        f"{doc['params']['old_timeout']:g} s.",
        "",
        "| case | T | k | distinct rows m | new (s) | old (s) | old / new | CDL (new) | new - old |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in doc["values"].items():
        new_s = benchrecord.median(doc, f"{name}/new")
        if r["old_stopped_at"] is None:
            old_s = benchrecord.median(doc, f"{name}/old")
            old_c, ratio, diff = f"{old_s:.1f}", f"{old_s / new_s:.0f}x", f"{r['new'] - r['old']:.1e}"
        else:
            old_c, ratio, diff = (
                f"> {r['old_stopped_at']:g} (stopped)",
                f"> {math.floor(r['old_stopped_at'] / new_s)}x",
                "—",
            )
        label = "digits (sklearn, logistic regression, rounded to 0.01)" if name == "digits" else "synthetic"
        lines.append(
            f"| {label} | {r['T']} | {r['k']} | {r['m']} | {new_s:.2f} | {old_c} | {ratio} | {r['new']:.6f} | {diff} |"
        )
    lines += [
        "",
        "Synthetic cases: m Dirichlet(0.5) rows over k = 10 outcomes rounded to 0.01, 20 rounds per row,",
        "outcomes drawn from the rows pulled 30% toward uniform (so every bucket's frequency is its own",
        "point of R: |R| is about 2m). tests/test_multiclass.py checks new = old to 1e-9 on small cases.",
        "The digits case has one or two rounds per distinct row, so most frequencies are point masses and",
        "|R| is about m + k: there both formulations take a fraction of a second.",
    ]
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old-timeout", type=float, default=60.0)
    ap.add_argument("--cases", default="50,100,200,400,digits")
    ap.add_argument("--render", action="store_true", help="only write multiclass.md from multiclass.json")
    ap.add_argument(
        "--out-dir",
        type=Path,
        default=benchrecord.OUT_DIR,
        help="folder of multiclass.json and multiclass.md (default results/benchmarks)",
    )
    args = ap.parse_args()
    if not args.render:
        rec = benchrecord.Recorder("multiclass", old_timeout=args.old_timeout, cases=args.cases)
        measure(args, rec)
        rec.save(args.out_dir / "multiclass.json")
    print(benchrecord.write_md("multiclass", render(benchrecord.load("multiclass", args.out_dir)), args.out_dir))


if __name__ == "__main__":
    sys.exit(main())
