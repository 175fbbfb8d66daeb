"""Measure fastcdl.kernels against the internal kernel and the Python API; write results/benchmarks/kernels.md.

    .venv/bin/python scripts/bench_kernels.py [--repeat 41] [--t-max 10000000]
    .venv/bin/python scripts/bench_kernels.py --render     # kernels.md from kernels.json

1. A user's njit loop calling fastcdl.kernels.cdl_of_table on a bucket table, against the same loop
   calling the internal envelope kernel (fastcdl._compiled.envelope.cdl_kernel) with the
   breakpoints and argsorts that fastcdl.cdl computes with numpy beforehand, i.e. without
   the sorts that the public kernel does itself. Per-call times are medians over loops of
   calls, and the ratio is the median of ratios of loops timed back to back (robust on a
   busy machine).
2. The Python API's fixed cost on small inputs: fastcdl.cdl(y, p) (validation, table
   building, numpy sorts, kernel) against the compiled path a user writes with the public
   kernels (add the rounds to a table in an njit loop, read its CDL), for T rounds on a
   grid of 101 predictions.

JIT compilation is excluded everywhere (one warm-up call first). Every repeat, the machine, load
and source are kept in results/benchmarks/kernels.json (scripts/benchrecord.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fastcdl as fc  # noqa: E402
import benchrecord  # noqa: E402
from fastcdl import kernels as K  # noqa: E402
from fastcdl._compiled import envelope as env  # noqa: E402

# the loops, tables and arguments asv times (KernelsInNjitSuite, PythonOverheadSuite)
D = benchrecord.definitions("kernels")


def njit_ratio(rec, key, q, n, s, repeat):
    iargs = D.internal_args(q, n, s)
    assert K.cdl_of_table(q, n, s) == D.internal_loop(*iargs, 1) == fc.cdl(fc.BucketStats(q, n, s, q * n))
    reps = max(20, 200000 // q.shape[0])
    D.public_loop(q, n, s, 1)
    D.internal_loop(*iargs, 1)
    # back to back, so each ratio sees one load
    rec.interleaved(
        key,
        {"public": lambda: D.public_loop(q, n, s, reps), "internal": lambda: D.internal_loop(*iargs, reps)},
        repeat,
        n_inner=reps,
    )
    ratios = [a / b for a, b in zip(rec.seconds(f"{key}/public"), rec.seconds(f"{key}/internal"))]
    rec.value(f"{key}/ratio", float(np.median(ratios)))
    # cdl_report's pipeline once the table exists: the sorts, then the unfused kernel
    qf, nf, sf = (np.asarray(x, dtype=np.float64) for x in (q, n, s))
    reps = max(5, 20000 // qf.shape[0])
    rec.time(f"{key}/python", lambda: env.cdl_curve(qf, nf, sf), max(5, repeat // 4), calls=reps)


OVERHEAD = ("cdl(y, p)", "bucket_stats(y, p)", "cdl(table)", "kernels.cdl", "compiled path")


def overhead_rows(rec, t_max, repeat):
    rng = np.random.default_rng(1)
    T = 100
    while T <= t_max:
        p = rng.integers(0, 101, T) / 100
        y = (rng.random(T) < p).astype(np.int64)
        st = fc.bucket_stats(y, p)
        q, n, s = st.values, st.counts, st.positives
        assert D.stream_then_cdl(p, y) == fc.cdl(y, p) == K.cdl_of_table(q, n, s)
        r = max(3, min(repeat, int(2e6 // T)))
        rec.interleaved(
            f"overhead/{T:.0e}",
            dict(
                zip(
                    OVERHEAD,
                    (
                        lambda: fc.cdl(y, p),
                        lambda: fc.bucket_stats(y, p),
                        lambda: fc.cdl(st),
                        lambda: K.cdl_of_table(q, n, s),
                        lambda: D.stream_then_cdl(p, y),
                    ),
                )
            ),
            r,
            T=T,
        )
        T *= 10


COLD = r"""
import json, sys
sys.path.insert(0, {scripts!r})
import benchrecord


def first(f):  # seconds of one first call of f (one repeat, no warm-up) and its value
    t = benchrecord.repeats({"f": f}, 1, warmup=False)
    return t.seconds["f"][0], t.values["f"]


def imports():
    import numpy as np
    from numba import njit
    import fastcdl.kernels as K
    return np, njit, K


seconds, (np, njit, K) = first(imports)
out = {"import fastcdl.kernels": seconds}
q, n, s = np.array([0.25, 0.75]), np.array([2, 2]), np.array([0, 2])

@njit
def loop(p, y):
    tab = K.table_new(8)
    for t in range(p.shape[0]):
        tab = K.table_add(tab, p[t], y[t])
    q, n, s = K.table_view(tab)
    return K.cdl_of_table(q, n, s)

for name, f in (("cdl from Python", lambda: K.cdl_of_table(q, n, s)),
                ("a user's njit loop: table_add, table_view, cdl", lambda: loop(np.array([0.5, 0.25]), np.array([1, 0]))),
                ("vcdl, ece, k2", lambda: (K.vcdl_of_table(q, n, s), K.ece_of_table(q, n, s), K.k2_of_table(q, n, s))),
                ("ucal", lambda: K.ucal_of_table(q, n, s)),
                ("msmwc_init, msmwc_lam, msmwc_c", lambda: K.msmwc_c(K.msmwc_init(4, 100), 0) + K.msmwc_lam(K.msmwc_init(4, 100)))):
    out[name] = first(f)[0]
print(json.dumps(out))
""".replace("{scripts!r}", repr(str(Path(__file__).resolve().parent)))


def cold_rows():
    """First calls in fresh processes: an empty NUMBA_CACHE_DIR, then the same one again."""
    import json
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "FASTCDL_CACHE": "1"}
        runs = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", COLD], env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(r.stdout))
    return {k: {"empty cache": runs[0][k], "warm cache": runs[1][k]} for k in runs[0]}


def us(x):
    return f"{x * 1e6:.1f}" if x < 1e-2 else f"{x * 1e6:,.0f}"


TABLES = (("asv table", 100), ("shuffled frequencies", 100), ("asv table", 10**4))


def render(doc):
    med = lambda key: benchrecord.median(doc, key)  # noqa: E731
    lines = benchrecord.header(doc, "fastcdl.kernels: measured speed")
    lines += [
        f"Medians of {doc['params']['repeat']} timings after a warm-up call; one process; JIT compilation "
        "excluded. asv tracks the same comparisons, with the same loops and tables: "
        "`asv_bench/benchmarks/kernels.py`.",
        "",
        "## fastcdl.kernels.cdl_of_table in a user's njit loop, against the internal kernel",
        "",
        "Per call. *internal* is `fastcdl._compiled.envelope.cdl_kernel` called from the same kind of loop",
        "with the float table, breakpoints and argsorts prepared before calling it",
        "(`fastcdl._compiled.envelope.curve_inputs`; numpy's sorts in runs before the numpy twin was retired),",
        "so it does not sort; the public kernel sorts the frequencies itself and fuses the",
        "sweep, the hull and the read-out (docs/kernels.md). *Python pipeline*: what `cdl_report`",
        "runs once the table exists (the sorts, then the unfused kernel), called from Python. The ratio is the",
        "median of the ratios of loops timed back to back.",
        "",
        "| table | m | public, njit loop (us) | internal kernel, njit loop (us) | public / internal | Python pipeline (us) |",
        "|---|---|---|---|---|---|",
    ]
    for label, m in TABLES:
        key = f"njit/{label}/{m}"
        lines.append(
            f"| {label} | {m} | {us(med(key + '/public'))} | {us(med(key + '/internal'))} | "
            f"{doc['values'][key + '/ratio']:.2f}x | {us(med(key + '/python'))} |"
        )
    lines += [
        "",
        "Target: within 1.2x of the internal kernel on the 100-bucket asv table.",
        "",
        "## The Python API's fixed cost on small inputs",
        "",
        "T rounds with predictions on the grid k/100 (at most 101 buckets). *compiled path*: the rounds",
        "added one by one to a `fastcdl.kernels` table inside an njit function, then its CDL",
        "(`stream_then_cdl` in asv_bench/benchmarks/kernels.py); equal to `fastcdl.cdl(y, p)` bit for bit.",
        "The five calls alternate within each repeat.",
        "",
        "| T | fastcdl.cdl(y, p) (us) | fastcdl.bucket_stats(y, p) (us) | fastcdl.cdl(table) (us) "
        "| kernels.cdl_of_table(q, n, s) from Python (us) | compiled path (us) | fastcdl.cdl(y, p) / compiled |",
        "|---|---|---|---|---|---|---|",
    ]
    Ts = sorted({v["T"] for k, v in doc["timings"].items() if k.startswith("overhead/")})
    over = [(T, *(med(f"overhead/{T:.0e}/{name}") for name in OVERHEAD)) for T in Ts]
    fixed = over[0][1] - over[0][5]  # at T = 100: fastcdl.cdl(y, p) minus the compiled path's work
    for T, a, b, c, d, e in over:
        lines.append(f"| {T:.0e} | {us(a)} | {us(b)} | {us(c)} | {us(d)} | {us(e)} | {a / e:.1f}x |")
    lines += [
        "",
        f"Fixed cost of `fastcdl.cdl(y, p)`: {us(fixed)} us per call (its time at T = 100 minus the compiled",
        "path's), spent on validation, building the table object, converting it, numpy's sorts and",
        "read-only views. Share of the call: "
        + ", ".join(f"{fixed / a:.0%} at T = {T:.0e}" for T, a, *_ in over[:4])
        + f". On a table that already exists, `fastcdl.cdl(table)` costs {us(over[0][3])} us where",
        f"`kernels.cdl_of_table` called from Python costs {us(over[0][4])} us.",
        "",
        "## First calls: compilation",
        "",
        "Seconds, in a fresh process with an empty `NUMBA_CACHE_DIR` (everything compiles), then in a",
        "second fresh process with the same cache (everything loads); one run each. Each row adds to the",
        "rows above it.",
        "",
        "| step | empty cache (s) | warm cache (s) |",
        "|---|---|---|",
    ]
    lines += [f"| {k} | {v['empty cache']:.2f} | {v['warm cache']:.2f} |" for k, v in doc["values"]["cold"].items()]
    lines += ["", "The njit loop is the script's own function without cache=True: it compiles in both processes."]
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=41)
    ap.add_argument("--t-max", type=int, default=10**7)
    ap.add_argument("--render", action="store_true", help="only write kernels.md from kernels.json")
    args = ap.parse_args()
    if not args.render:
        rec = benchrecord.Recorder("kernels", repeat=args.repeat, t_max=args.t_max)
        for label, m in TABLES:
            make = D.table if label == "asv table" else D.shuffled_table
            njit_ratio(rec, f"njit/{label}/{m}", *make(m), args.repeat)
        overhead_rows(rec, args.t_max, args.repeat)
        rec.value("cold", cold_rows())
        rec.save()
    lines = render(benchrecord.load("kernels"))
    benchrecord.write_md("kernels", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
