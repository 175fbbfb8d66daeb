"""First-call and import latency, as ratios to numba's own floor measured in the same run.

    .venv/bin/python scripts/bench_startup.py [--repeat 5] [--warmup]
    .venv/bin/python scripts/bench_startup.py --render     # startup.md from startup.json
    .venv/bin/python scripts/bench_startup.py --summary    # one run of each first call, printed only (CI)

Each figure is the median wall time of --repeat fresh processes. "Cold" processes get an
empty NUMBA_CACHE_DIR of their own (what a pip user, a CI job, a container or a new Dask
worker meets); "warm" ones share a cache filled once beforehand. Baselines, run
interleaved with the measured commands:

- numba cold: import numba and compile one trivial @njit function;
- numba import: ``python -c "import numba"``;
- numba warm floor: import numba and call one cached trivial function (the first call of
  any numba function loads numba's typing registries, which import scipy.linalg when
  scipy is installed; no numba program avoids that cost).

fastcdl's modules are byte-compiled first (``compileall``), as installing the package does: a
checkout run with PYTHONDONTWRITEBYTECODE set would otherwise compile about 140 source files in
every process (about 0.1 s), which no installed copy pays.

Every process's time, the machine, load and source: results/benchmarks/startup.json
(scripts/benchrecord.py); startup.md is written from it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import benchrecord  # noqa: E402

S = benchrecord.definitions("startup")  # asv's StartupSuite: the same programs, as timeraw_ benchmarks
MODULE_DIR = tempfile.mkdtemp(prefix="fastcdl-trivial-")
Path(MODULE_DIR, "trivial_numba.py").write_text(
    "import numba\n\n\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n"
)
TRIVIAL, CDL = S.TRIVIAL, S.CDL
EXAMPLE = str(ROOT / "examples" / "forecasts.csv")
SCORES = S.SCORES  # 100,000 continuous scores, written by S.write_scores()

COMMANDS = {
    "numba cold: import + compile a trivial function": ("cold", ["-c", TRIVIAL]),
    "numba import alone": ("warm", ["-c", "import numba"]),
    "numba warm floor: import + call a cached trivial function": ("warm", ["-c", TRIVIAL]),
    "first fc.cdl(y, p), empty cache": ("cold", ["-c", CDL]),
    "fastcdl metrics forecasts.csv --bins 15, empty cache": (
        "cold",
        ["-m", "fastcdl", "metrics", EXAMPLE, "--bins", "15"],
    ),
    "fastcdl plot forecasts.csv, empty cache": ("cold", ["-m", "fastcdl", "plot", EXAMPLE, "--out", "{tmp}"]),
    "import fastcdl + fc.cdl(y, p), warm cache": ("warm", ["-c", CDL]),
    "fastcdl metrics forecasts.csv --bins 15, warm cache": (
        "warm",
        ["-m", "fastcdl", "metrics", EXAMPLE, "--bins", "15"],
    ),
    "fastcdl metrics on 100,000 continuous scores, empty cache": ("cold", ["-m", "fastcdl", "metrics", SCORES]),
    "fastcdl metrics on 100,000 continuous scores, warm cache": ("warm", ["-m", "fastcdl", "metrics", SCORES]),
    # the same without the helper process that compiles the report's later steps on the second
    # core (fastcdl.prefetch): what a machine of one core gets
    "fastcdl metrics on 100,000 continuous scores, empty cache, no helper process": (
        "cold",
        ["-m", "fastcdl", "metrics", SCORES],
        {"FASTCDL_PREFETCH": "0"},
    ),
}
# measured once, with --warmup (about three minutes a run)
WARMUP_ROW = "fastcdl warmup, empty cache"
WARMUP_COMMAND = ("cold", ["-m", "fastcdl", "warmup"])
COLD_TRIVIAL = "numba cold: import + compile a trivial function"
WARM_FLOOR = "numba warm floor: import + call a cached trivial function"
# what .ci/run prints after the tests (--summary): one run each, interleaved, nothing written
SUMMARY = [
    COLD_TRIVIAL,
    "first fc.cdl(y, p), empty cache",
    "fastcdl metrics on 100,000 continuous scores, empty cache",
    WARM_FLOOR,
    "fastcdl metrics on 100,000 continuous scores, warm cache",
]

# (measured, baseline, bar) as in the issue that set them
TARGETS = [
    ("first fc.cdl(y, p), empty cache", "numba cold: import + compile a trivial function", 3.0),
    ("fastcdl metrics on 100,000 continuous scores, empty cache", COLD_TRIVIAL, 10.0),
    ("fastcdl metrics on 100,000 continuous scores, warm cache", WARM_FLOOR, 2.0),
    (WARMUP_ROW, COLD_TRIVIAL, 60.0),
    ("fastcdl metrics forecasts.csv --bins 15, empty cache", "numba cold: import + compile a trivial function", 5.0),
    ("import fastcdl + fc.cdl(y, p), warm cache", "numba import alone", 1.5),
    ("import fastcdl + fc.cdl(y, p), warm cache", "numba warm floor: import + call a cached trivial function", 1.5),
]


def run_once(args, cache_dir, env=None):
    """One fresh process running args with NUMBA_CACHE_DIR=cache_dir (a new empty one if None),
    and the variables of ``env`` set."""
    cache_dir = cache_dir or tempfile.mkdtemp(prefix="fastcdl-cold-")
    with tempfile.TemporaryDirectory() as tmp:
        argv = [a.replace("{tmp}", tmp) for a in args]
        env = {
            **os.environ,
            "NUMBA_CACHE_DIR": cache_dir,
            "MPLBACKEND": "Agg",
            "PYTHONPATH": os.pathsep.join([MODULE_DIR, os.environ.get("PYTHONPATH", "")]),
            **(env or {}),
        }
        out = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {out.stderr.strip().splitlines()[-1:]}")


def byte_compile():
    """Write fastcdl's bytecode (__pycache__) where it is missing or stale, as an install does."""
    import compileall

    if not compileall.compile_dir(str(ROOT / "fastcdl"), quiet=1):
        raise SystemExit("byte-compiling fastcdl failed")


def render(doc):
    med = lambda name: benchrecord.median(doc, name)  # noqa: E731
    lines = benchrecord.header(doc, "Startup: first calls and imports")
    lines += [
        f"Median wall time of {doc['params']['repeat']} fresh processes per row, rows interleaved; cold rows "
        "get an empty NUMBA_CACHE_DIR each.",
        "",
        "| process | median (s) | min (s) | max (s) |",
        "|---|---|---|---|",
    ]
    for name in [*COMMANDS, WARMUP_ROW]:
        if name not in doc["timings"]:
            continue
        ts = doc["timings"][name]["seconds"]
        lines.append(f"| {name} | {med(name):.2f} | {min(ts):.2f} | {max(ts):.2f} |")
    lines += ["", "| ratio | measured | bar | met |", "|---|---|---|---|"]
    for a, b, bar in TARGETS:
        if a not in doc["timings"]:
            continue
        r = med(a) / med(b)
        lines.append(f"| {a} / {b} | {r:.2f}x | {bar:g}x | {'yes' if r <= bar else 'no'} |")
    lines += [
        "",
        "Reading: the first call of any numba function loads numba's typing registries, which import "
        "scipy.linalg when scipy is installed, so the warm floor is numba's own and no numba program that "
        "calls a kernel goes below it; against `import numba` alone (a process that calls nothing) a bar of "
        "1.5x is below that floor, so it is reported, not claimed. The ratios move with the machine's load.",
    ]
    return lines


def summary():
    """One fresh process per first call of SUMMARY (each cold one with an empty cache), printed
    next to numba's own: what CI shows after the tests, so that a regression is seen in the
    next run. No bar is asserted."""
    import time

    warm_cache = tempfile.mkdtemp(prefix="fastcdl-warm-")
    for name in SUMMARY:  # fill the warm cache (and the OS's file cache) first
        kind, cmd, *env = COMMANDS[name]
        if kind == "warm":
            run_once(cmd, warm_cache, *env)
    seconds = {}
    for name in SUMMARY:
        kind, cmd, *env = COMMANDS[name]
        t0 = time.perf_counter()
        run_once(cmd, None if kind == "cold" else warm_cache, *env)
        seconds[name] = time.perf_counter() - t0
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"first calls (one fresh process each; load average {load}; bars of docs/compile-time.md):")
    base = {True: seconds[COLD_TRIVIAL], False: seconds[WARM_FLOOR]}
    for name in SUMMARY:
        cold = COMMANDS[name][0] == "cold"
        bar = next((b for a, _, b in TARGETS if a == name), None)
        ratio = "" if name in (COLD_TRIVIAL, WARM_FLOOR) else f"  {seconds[name] / base[cold]:5.2f}x numba's"
        print(f"  {seconds[name]:7.2f} s  {name}{ratio}{f' (bar {bar:g}x)' if bar and ratio else ''}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--render", action="store_true", help="only write startup.md from startup.json")
    ap.add_argument("--warmup", action="store_true", help="also time `fastcdl warmup` on an empty cache, once")
    ap.add_argument(
        "--summary",
        action="store_true",
        help="time each first call of SUMMARY once (interleaved), print them with their ratios; write nothing",
    )
    ap.add_argument(
        "--out-dir",
        type=Path,
        default=benchrecord.OUT_DIR,
        help="folder of startup.json and startup.md (default results/benchmarks)",
    )
    args = ap.parse_args()
    S.write_scores()
    byte_compile()
    if args.summary:
        summary()
        return
    if not args.render:
        rec = benchrecord.Recorder("startup", repeat=args.repeat)
        warm_cache = tempfile.mkdtemp(prefix="fastcdl-warm-")
        # the warm-up call of each fills the shared cache; then interleaved, so load on the
        # machine hits every command alike; a cold process gets a new empty cache each time
        funcs = {
            name: (lambda cmd=cmd, kind=kind, env=env: run_once(cmd, None if kind == "cold" else warm_cache, *env))
            for name, (kind, cmd, *env) in COMMANDS.items()
        }
        rec.record("", benchrecord.repeats(funcs, args.repeat), interleaved=True, process="fresh, wall time around it")
        if args.warmup:
            kind, cmd = WARMUP_COMMAND
            rec.record(
                "",
                benchrecord.repeats({WARMUP_ROW: lambda: run_once(cmd, None)}, 1),
                process="fresh, wall time around it",
            )
        rec.save(args.out_dir / "startup.json")
    lines = render(benchrecord.load("startup", args.out_dir))
    benchrecord.write_md("startup", lines, args.out_dir)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
