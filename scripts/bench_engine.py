"""The open engine's cost: built-ins before and after, and a plug-in adversary next to the built-in.

    .venv/bin/python scripts/bench_engine.py --before c1f33e8 [--repeat 3]

Runs simulate for each (forecaster, adversary, T) in fresh processes, alternating between
the code at --before (checked out into a temporary git worktree) and the working tree, so
both meet the same machine load; and, in the working tree, the plug-in adversary `coin` of
tests/user_plugins.py (a user's module, entering the loop as a first-class function) next
to the built-in `bernoulli` it re-implements (the same draws, hence the same runs).
Figures are medians over --repeat processes of rounds/s (JIT excluded; each run's rounds/s is
simulate's own timer of its compiled loop), the processes alternating through
benchrecord.repeats (the one timing loop of scripts/). Writes results/benchmarks/engine.md
(--out elsewhere; --scale 0.001 runs every T a thousandth as long, to check the script).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "benchmarks" / "engine.md"
sys.path.insert(0, str(ROOT / "scripts"))
import benchrecord  # noqa: E402

PAIRS = [
    ("cdl", "bernoulli", 10**6),
    ("cdl", "greedy", 10**6),
    ("kt", "bernoulli", 4 * 10**6),
    ("kt", "greedy", 4 * 10**6),
    ("foster", "bernoulli", 10**7),
    ("foster", "greedy", 10**7),
    ("frequency", "bernoulli", 10**7),
]

CODE = """
import json, sys
from fastcdl.online import simulate
out = {}
for f, a, T in json.loads(sys.argv[1]):
    fp = {"m": 3163} if f in ("frequency", "user_plugins:RUNNING") else None  # the same grid for both
    simulate(f, a, horizon=1000, seed=0, forecaster_params={"m": 31} if fp else None)
    out[f"{f}|{a}|{T}"] = simulate(f, a, horizon=T, seed=1, adversary_params={ap},
                                   forecaster_params=fp).rounds_per_second
print(json.dumps(out))
"""


def machine() -> str:
    """The CPU, its vector extensions and its logical CPUs (benchrecord.cpu)."""
    c = benchrecord.cpu()
    return f"{c['model']} ({', '.join(c['vector']) or 'no vector extensions'}), {c['logical_cpus']} logical CPUs"


def measure(tree, pairs, plugin=False, plugin_forecaster=False):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT / "tests")])}
    rows = [
        (
            "user_plugins:RUNNING" if plugin_forecaster and f == "frequency" else f,
            "user_plugins:COIN" if plugin and a == "bernoulli" else a,
            T,
        )
        for f, a, T in pairs
    ]
    ap = '{"p": 0.5} if a.endswith("bernoulli") or a.endswith("COIN") else None'
    out = subprocess.run(
        [sys.executable, "-c", CODE.replace("{ap}", ap), json.dumps(rows)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tree,
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr.strip().splitlines()[-1])
    got = json.loads(out.stdout)
    return {(f, a, T): got[f"{g}|{b}|{T}"] for (f, a, T), (g, b, _) in zip(pairs, rows)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="git revision of the engine before")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--scale", type=float, default=1.0, help="run every T times this (a quick check)")
    args = ap.parse_args()
    pairs = [(f, a, max(1000, int(T * args.scale))) for f, a, T in PAIRS]
    freq = [("frequency", "greedy", max(1000, int(10**7 * args.scale)))]
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(old), args.before], cwd=ROOT, check=True)
        try:
            # one fresh process per call, alternating; each call keeps its rounds/s by pair
            calls = {
                "before": lambda: measure(old, pairs),
                "after": lambda: measure(ROOT, pairs),
                "plug": lambda: measure(ROOT, [p for p in pairs if p[1] == "bernoulli"], plugin=True),
                "plugf": lambda: measure(ROOT, freq, plugin_forecaster=True),
                "after_freq": lambda: measure(ROOT, freq),
            }
            runs = {k: [] for k in calls}
            benchrecord.repeats(
                {k: (lambda k=k, f=f: runs[k].append(f())) for k, f in calls.items()}, args.repeat, warmup=False
            )
            before, after, plug, plugf, after_freq = runs.values()
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=True)
    med = lambda runs, k: float(np.median([r[k] for r in runs]))  # noqa: E731
    lines = [
        "# The open engine: built-in speed before and after, and a plug-in adversary",
        "",
        f"Machine: {machine()}; load average {os.getloadavg()[0]:.1f} at the end of the run (other jobs "
        "shared the machine: compare the alternating columns, not absolute rates).",
        "",
        f"Command: `.venv/bin/python scripts/bench_engine.py --before {args.before} --repeat {args.repeat}"
        f"{'' if args.scale == 1 else f' --scale {args.scale:g}'}` "
        f"(rounds/s, median of {args.repeat} fresh processes per cell, before/after alternating; JIT excluded).",
        "",
        f"## Built-in forecasters and adversaries: {args.before} (integer-coded adversaries) vs the working tree "
        "(adversaries as first-class functions)",
        "",
        "| forecaster | adversary | T | before (rounds/s) | after (rounds/s) | after / before |",
        "|---|---|---|---|---|---|",
    ]
    for f, a, T in pairs:
        b, n = med(before, (f, a, T)), med(after, (f, a, T))
        lines.append(f"| {f} | {a} | {T:.0e} | {b:.3g} | {n:.3g} | {n / b:.2f} |")
    lines += [
        "",
        "Target: built-ins within 10% of before (after / before >= 0.91).",
        "",
        "## A plug-in adversary (tests/user_plugins.py `coin`) next to the built-in bernoulli",
        "",
        "| forecaster | T | bernoulli (rounds/s) | plug-in coin (rounds/s) | plug-in time / built-in time |",
        "|---|---|---|---|---|",
    ]
    for f, a, T in pairs:
        if a != "bernoulli":
            continue
        n, p = med(after, (f, a, T)), med(plug, (f, a, T))
        lines.append(f"| {f} | {T:.0e} | {n:.3g} | {p:.3g} | {n / p:.2f}x |")
    lines += ["", "Target: a plug-in adversary within 1.5x of the built-in Bernoulli's time.", ""]
    key = freq[0]
    b, p = float(np.median([r[key] for r in after_freq])), float(np.median([r[key] for r in plugf]))
    lines += [
        "## A plug-in forecaster (tests/user_plugins.py `running`) next to the built-in it re-implements",
        "",
        "| forecaster | adversary | T | m | rounds/s | plug-in time / built-in time |",
        "|---|---|---|---|---|---|",
        f"| built-in frequency | greedy | {key[2]:.0e} | 3163 | {b:.3g} | |",
        f"| plug-in running (engine's generic loop) | greedy | {key[2]:.0e} | 3163 | {p:.3g} | {b / p:.2f}x |",
        "",
        "Target: a plug-in forecaster within 1.5x of the equivalent built-in's time.",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
