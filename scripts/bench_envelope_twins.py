"""The two implementations of the table's V-kink curve, timed against each other before one is
retired: fastcdl/_envelope.py (numpy's np.unique and stable argsorts in Python, then the sweep
kernel) and fastcdl/_kernels/envelope.py (fastcdl's compiled stable sorts, then the same sweep).
Writes results/benchmarks/envelope-twins.md and .json.

    .venv/bin/python scripts/bench_envelope_twins.py [--repeat 7]

For m = 10^3 .. 10^6 buckets (q sorted uniform, n in 1..99, s ~ Bin(n, q), float64 counts as
BucketStats.table() gives): the whole curve (cdl_report), UCal, and f at 64 kinks
(decision_loss_curve); each pair checked bit for bit, then timed back to back in rotating order;
the ratio is the median of the paired ratios numba / numpy. Runs only where fastcdl/_envelope.py
exists (before its removal; `git show` the commit named in the result to reproduce).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_buckets import machine, source_hash  # noqa: E402

from fastcdl import _envelope as numpy_twin  # noqa: E402
from fastcdl._kernels import envelope as numba_twin  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WHAT = {"curve": "whole curve (cdl_report)", "ucal": "UCal", "v": "f at 64 kinks (decision_loss_curve)"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    out = {"machine": machine(), "command": "python " + " ".join([Path(sys.argv[0]).as_posix()] + sys.argv[1:]),
           "source": source_hash(), "started": datetime.now(UTC).isoformat(), "load_before": os.getloadavg(), "rows": []}
    for M in (10**3, 10**4, 10**5, 10**6):
        rng = np.random.default_rng(M)
        q = np.sort(rng.random(M))
        n = rng.integers(1, 100, M).astype(float)
        s = rng.binomial(n.astype(int), q).astype(float)
        mus = rng.random(64)
        a, b = numpy_twin.cdl_curve(q, n, s, n.sum()), numba_twin.cdl_curve(q, n, s)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
        assert numpy_twin.ucal_value(q, n, s, n.sum()) == numba_twin.ucal_of_table(q, n, s)
        assert np.array_equal(numpy_twin.v_curve(q, n, s, n.sum(), mus), numba_twin.v_left(q, n, s, mus))
        fs = {"curve/numpy": lambda: numpy_twin.cdl_curve(q, n, s, n.sum()), "curve/numba": lambda: numba_twin.cdl_curve(q, n, s),
              "ucal/numpy": lambda: numpy_twin.ucal_value(q, n, s, n.sum()), "ucal/numba": lambda: numba_twin.ucal_of_table(q, n, s),
              "v/numpy": lambda: numpy_twin.v_curve(q, n, s, n.sum(), mus), "v/numba": lambda: numba_twin.v_left(q, n, s, mus)}
        R = args.repeat if M >= 10**5 else 4 * args.repeat + 3
        names = list(fs)
        ts = {k: [] for k in names}
        for r in range(R):
            for k in names[r % len(names):] + names[: r % len(names)]:
                t0 = time.perf_counter()
                fs[k]()
                ts[k].append(time.perf_counter() - t0)
        row = {"m": M, "repeat": R, "times": ts, "load": os.getloadavg()}
        for w in WHAT:
            row[w] = float(np.median(np.array(ts[w + "/numba"]) / np.array(ts[w + "/numpy"])))
        out["rows"].append(row)
    out["load_after"] = os.getloadavg()
    folder = ROOT / "results" / "benchmarks"
    (folder / "envelope-twins.json").write_text(json.dumps(out, indent=1) + "\n")
    (folder / "envelope-twins.md").write_text(render(out))
    print(render(out))


def render(o) -> str:
    mc = o["machine"]
    lines = [
        "# The table's V-kink curve: numpy's sorts against fastcdl's compiled sorts",
        "",
        f"Machine: {mc['cpu']} (LLVM: {mc['llvm_cpu']}), {mc['cores']} cores, vector extensions "
        f"{', '.join(mc['vector_extensions'])}; numpy {mc['numpy']}, numba {mc['numba']}.",
        f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in o['load_before'])}; after: "
        f"{', '.join(f'{x:.2f}' for x in o['load_after'])} (a shared machine: the ratios, medians of timings taken "
        "back to back, move much less than the times).",
        f"Source: {o['source']} (the last commit holding both; fastcdl/_envelope.py was removed after it). "
        f"Run {o['started'][:16]} UTC.",
        "",
        f"Command: `{o['command']}` (every time in `envelope-twins.json` beside this file).",
        "",
        "Each pair gives the same floats (checked bit for bit before timing). Median time in ms, and the",
        "median over repeats of the paired ratio numba / numpy (below 1: the compiled sorts are faster).",
        "",
        "| m | " + " | ".join(f"{w}: numpy / numba (ms), numba / numpy" for w in WHAT.values()) + " |",
        "|---|" + "---|" * len(WHAT),
    ]
    for r in o["rows"]:
        t = r["times"]
        cells = [f"{np.median(t[w + '/numpy']) * 1e3:.3g} / {np.median(t[w + '/numba']) * 1e3:.3g}, **{r[w]:.2f}x**" for w in WHAT]
        lines.append(f"| {r['m']:.0e} | " + " | ".join(cells) + " |")
    lo = min(r[w] for r in o["rows"] for w in WHAT)
    hi = max(r[w] for r in o["rows"] for w in WHAT)
    lines += ["", f"The compiled sorts took {lo:.2f}x to {hi:.2f}x the time of numpy's in every cell, so the numpy twin",
              "was retired: cdl_report, ucal and decision_loss_curve call fastcdl._kernels.envelope.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
