"""The Python API's fixed cost on small inputs under two source trees (before / after a change).

    .venv/bin/python scripts/bench_fixed_cost.py BEFORE_TREE AFTER_TREE [--repeats 7] [--json out.json]

Each repeat runs one fresh process per tree (the trees' order alternating), each with its own
numba cache folder (filled by a first, untimed process); a process times fc.cdl(y, p),
fc.cdl(table) and fc.bucket_stats(y, p) at T = 100 and 10^4 (the minimum over 7 batches of
timeit, microseconds per call). Prints the medians over the repeats and the ratio after / before,
with the load average. A tree is a checkout of fastcdl (`git worktree add /tmp/old COMMIT`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, timeit, numpy as np, fastcdl as fc
out = {}
for T in (100, 10_000):
    rng = np.random.default_rng(0)
    y = (rng.random(T) < 0.5).astype(int); p = np.round(rng.random(T), 2)
    st = fc.bucket_stats(y, p)
    for name, f in (("fc.cdl(y, p)", lambda: fc.cdl(y, p)), ("fc.cdl(table)", lambda: fc.cdl(st)),
                    ("fc.bucket_stats(y, p)", lambda: fc.bucket_stats(y, p))):
        f()
        number = 2000 if T == 100 else 200
        out[f"{name}, T = {T}"] = min(timeit.repeat(f, number=number, repeat=7)) / number * 1e6
print(json.dumps(out))
"""


def _once(tree, cache):
    env = dict(os.environ, PYTHONPATH=tree, NUMBA_CACHE_DIR=cache)
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=tree, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{tree}: {r.stderr[-2000:]}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args()
    caches = {t: tempfile.mkdtemp(prefix="fastcdl-fixed-") for t in (args.before, args.after)}
    for t in caches:
        _once(t, caches[t])  # compile into each tree's cache, untimed
    runs = {"before": [], "after": []}
    loads = []
    for i in range(args.repeats):
        order = [("before", args.before), ("after", args.after)][:: 1 if i % 2 == 0 else -1]
        for side, tree in order:
            runs[side].append(_once(tree, caches[tree]))
        loads.append(round(os.getloadavg()[0], 2))
    rows = {}
    for key in runs["before"][0]:
        b = statistics.median(r[key] for r in runs["before"])
        a = statistics.median(r[key] for r in runs["after"])
        rows[key] = {"before_us": b, "after_us": a, "ratio": a / b}
        print(f"{key:28s} before {b:7.1f} us  after {a:7.1f} us  after/before {a / b:5.2f}")
    print(f"load average (1 min) at each repeat: {loads}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "command": " ".join(sys.argv),
                    "before": args.before,
                    "after": args.after,
                    "repeats": args.repeats,
                    "loads": loads,
                    "rows": rows,
                    "runs": runs,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
