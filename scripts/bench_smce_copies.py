"""smCE's programme as one compiled copy for both sides (now) or as a copy specialised per side
(commit de3355b): run time and first-call compile time; writes results/benchmarks/smce-copies.md
and .json.

    .venv/bin/python scripts/bench_smce_copies.py [--repeat 9] [--processes 3]

Why: fastcdl._compiled.estimators.smce_side was an inlined body with ``side`` a constant,
compiled twice (one copy per side) and said to run 1.1x-1.5x faster than one generic copy. The
two copies were about a fifth of a first ``fastcdl metrics`` on continuous scores
(results/benchmarks/compile_profile.md). This file is the measurement behind keeping one copy.
The specialised module is the estimators file of commit de3355b, imported from a temporary folder
(it compiles into a cache of its own). Both give the same float on every table (checked here
before timing). Run time: the steps fastcdl.sample.smce runs (setup, both sides, the junction),
the two modules back to back in turn, medians. Compile time: a fresh process per module with an
empty numba cache, the first call of those steps on a tiny table (the import excluded), processes
interleaved, medians.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchrecord  # noqa: E402

NAME = "smce-copies"
BEFORE = "de3355b"  # the last commit with the specialised copies
ROOT = Path(__file__).resolve().parents[1]

FIRST_CALL = """
import importlib, sys, time
import numpy as np
sys.path.insert(0, {folder!r})
mod = importlib.import_module({module!r})
q, r, cp = np.array([0.1, 0.5, 0.9]), np.array([-0.1, 0.5, 0.1]), np.array([0.0, 0.5])
t = time.perf_counter()
h = np.empty(4)
R, sign, J, S, out = mod.smce_setup(q, cp)
for side in range(2):
    mod.smce_side(q, r, sign, J, side, cp, h, S, out)
mod.smce_value(r, 3.0, R, sign, J, h, S, out)
print(time.perf_counter() - t)
"""


def specialised_module(folder: Path) -> str:
    text = subprocess.run(
        ["git", "show", f"{BEFORE}:fastcdl/_compiled/estimators.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    (folder / "estimators_specialised.py").write_text(text)
    return "estimators_specialised"


def steps(mod, q, r, T, cp):
    h = np.empty(2 * max(q.shape[0] - 1, 1))
    R, sign, J, S, out = mod.smce_setup(q, cp)
    for side in range(2):
        mod.smce_side(q, r, sign, J, side, cp, h, S, out)
    return mod.smce_value(r, T, R, sign, J, h, S, out)


def table(T, miscalibrated, rng):
    p = np.sort(rng.random(T))
    mu = np.clip(p + 0.2 * np.sin(2 * np.pi * p), 0.0, 1.0) if miscalibrated else p
    return p, np.ones(T), (rng.random(T) < mu) * 1.0


def first_call(folder: str, module: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": tempfile.mkdtemp(prefix="fastcdl-smce-copies-")}
    code = FIRST_CALL.format(folder=folder, module=module)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--render", action="store_true", help="rewrite the .md from the JSON")
    args = ap.parse_args(argv)
    if not args.render:
        from fastcdl._compiled import estimators as one

        rec = benchrecord.Recorder(NAME, repeat=args.repeat, processes=args.processes, before=BEFORE)
        with tempfile.TemporaryDirectory(prefix="fastcdl-smce-copies-") as tmp:
            sys.path.insert(0, tmp)
            name = specialised_module(Path(tmp))
            import importlib

            two = importlib.import_module(name)
            rng = np.random.default_rng(0)
            for e in (4, 5, 6):
                for mis in (False, True):
                    q, n, s = table(10**e, mis, rng)
                    r = np.empty(q.shape[0])
                    cp = one.smce_checkpoints(q.shape[0])
                    T = one.table_residuals(q, n, s, r, cp)
                    a, b = steps(one, q, r, T, cp), steps(two, q, r, T, cp)
                    if a != b:
                        raise SystemExit(f"10^{e}: one copy gave {a}, the specialised copies {b}")
                    kind = "miscalibrated" if mis else "calibrated"
                    rec.interleaved(
                        f"run/{kind}/1e{e}",
                        {"one": lambda: steps(one, q, r, T, cp), "specialised": lambda: steps(two, q, r, T, cp)},
                        args.repeat,
                    )
                    print(f"run {kind} 10^{e} done", flush=True)
            firsts = {"one": [], "specialised": []}
            for _ in range(args.processes):
                firsts["one"].append(first_call(str(ROOT), "fastcdl._compiled.estimators"))
                firsts["specialised"].append(first_call(tmp, name))
            for k, v in firsts.items():
                rec.add(f"first-call/{k}", v, clock="perf_counter in a fresh process")
        rec.save()
    render()


def render():
    doc = benchrecord.load(NAME)
    lines = benchrecord.header(doc, "smCE's programme: one copy for both sides, or one specialised copy per side")
    lines += [
        f"The specialised copies are fastcdl/_compiled/estimators.py at commit {doc['params']['before']}. "
        "Run time: median milliseconds of the steps fastcdl.sample.smce runs (setup, both sides on one "
        "thread, the junction) on a table of T one-round buckets, p ~ U[0, 1] sorted, labels drawn with "
        "mean p (calibrated) or p + 0.2 sin(2 pi p) clipped (miscalibrated); the two back to back in turn.",
        "",
        "| labels | buckets | one copy (ms) | specialised (ms) | one / specialised |",
        "|---|---|---|---|---|",
    ]
    for kind in ("calibrated", "miscalibrated"):
        for e in (4, 5, 6):
            a = benchrecord.median(doc, f"run/{kind}/1e{e}/one")
            b = benchrecord.median(doc, f"run/{kind}/1e{e}/specialised")
            lines.append(f"| {kind} | 10^{e} | {a * 1e3:.3f} | {b * 1e3:.3f} | {a / b:.2f} |")
    a = benchrecord.median(doc, "first-call/one")
    b = benchrecord.median(doc, "first-call/specialised")
    n = len(doc["timings"]["first-call/one"]["seconds"])
    lines += [
        "",
        f"First call of those steps in a fresh process with an empty numba cache (median of {n} processes, "
        "interleaved; the import excluded): the compilation of the whole smCE programme.",
        "",
        "| copies | first call (s) |",
        "|---|---|",
        f"| one for both sides | {a:.2f} |",
        f"| one per side | {b:.2f} |",
        "",
        f"One copy saves {b - a:.2f} s of every first smCE (a first report of continuous scores, "
        "`fastcdl warmup`, each fresh test process that computes smCE) and costs the run-time ratios above.",
    ]
    benchrecord.write_md(NAME, lines)


if __name__ == "__main__":
    main()
