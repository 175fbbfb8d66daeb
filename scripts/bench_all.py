"""Write every table of results/benchmarks/ that README.md and docs/ quote: the one entry point.

    .venv/bin/python scripts/bench_all.py                 # every table (each file records its run_seconds)
    .venv/bin/python scripts/bench_all.py --only online,io
    .venv/bin/python scripts/bench_all.py --render        # every .md again from its .json

Needs the `peers` extra for peers and the smCE comparison (`make peers` installs it). Each table
has its module below (a script that also runs alone). The modules take what they time from the
benchmark definitions of asv_bench/benchmarks/ (the tracked asv suite: the data, the kernels'
loops, the numpy baselines; benchrecord.definitions()), time through benchrecord.repeats() (the
one timing loop: warm-up calls, alternation, batches, per-operation times, simulate's own timer)
and record through scripts/benchrecord.py: results/benchmarks/<name>.json holds every repeat, the
CPU model and its vector extensions, the load average at the start, at every timing and at the
end, the git commit (and whether the tree differed) and a hash of fastcdl's sources; the Markdown
beside it is written from that file; at the end README.md's Speed table and the figures docs/
quote are written from the files (scripts/speed_table.py, scripts/docs_numbers.py). The modules
run one at a time, so that no two of them share the cores. Each file records how long its run
took (run_seconds) and the load at its start, at every timing and at its end. Run by hand:
`bench_online.py --budget 300` adds a memory run at T = 10^9, and `bench_multiclass.py
--old-timeout 1200` lets the first formulation run to 1200 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name: (script, arguments); in this order (bench_estimators writes after bench_metrics into metrics.md)
RUNS = {
    "metrics": ("bench_metrics.py", []),
    "estimators": ("bench_estimators.py", ["--repeat", "5"]),
    "peers": ("compare_peers.py", ["--repeat", "5"]),
    "online": ("bench_online.py", []),
    "rounds": ("bench_loops.py", ["--all"]),
    "io": ("bench_io.py", ["--repeat", "3"]),
    "multiclass": ("bench_multiclass.py", ["--old-timeout", "60"]),
    "kernels": ("bench_kernels.py", ["--repeat", "21"]),
    "startup": ("bench_startup.py", ["--repeat", "3", "--warmup"]),
    "sample-costs": ("bench_sample_costs.py", []),
    "bucket-speed": ("bench_buckets.py", ["--repeat", "15"]),  # --render: bucket-speed.md only
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated names of " + ", ".join(RUNS))
    ap.add_argument("--render", action="store_true", help="rewrite every .md from its .json, measure nothing")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(RUNS)
    unknown = set(names) - set(RUNS)
    if unknown:
        ap.error(f"--only: unknown {', '.join(sorted(unknown))}; known: {', '.join(RUNS)}")
    t0 = time.perf_counter()
    for name in names:
        script, extra = RUNS[name]
        if args.render:
            extra = ["--parts", ""] if name == "estimators" else ["--render"]
        t = time.perf_counter()
        print(f"== {name}: {script} {' '.join(extra)}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(HERE / script), *extra], check=True, stdout=subprocess.DEVNULL)
        print(f"== {name}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    # README's Speed table and the figures docs/ quote, from the new files (tests/test_results_readmes.py
    # names any figure that still differs from its file)
    for script in ("speed_table.py", "docs_numbers.py"):
        subprocess.run([sys.executable, str(HERE / script)], check=True)
    print(
        f"== all: {time.perf_counter() - t0:.0f} s; README.md's Speed table and docs' figures rewritten",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    main()
