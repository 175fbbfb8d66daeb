"""Where each entry point's first call spends its compile time: numba's compile events.

    .venv/bin/python scripts/compile_profile.py                  # every entry point, 1 process each
    .venv/bin/python scripts/compile_profile.py --only cdl metrics_100k
    .venv/bin/python scripts/compile_profile.py --render         # compile_profile.md from the JSON

Each entry point runs in a fresh process with an empty NUMBA_CACHE_DIR. A listener on
numba's ``numba:compile`` event (``numba.core.event.register``) records every compilation:
the dispatcher, its argument types, start and end. Compilations nest (a caller types its
callees, which compile inside it), so each record has a *total* (with what compiled inside
it) and a *self* time (without). A cached function's load is not a compilation and does not
appear. Wall time of the process is recorded beside the sum of top-level compilations, so
the part that is not compilation (imports, the work itself) shows as the difference.

Raw records: results/benchmarks/compile_profile.json (with the machine, load and source,
scripts/benchrecord.py); compile_profile.md is written from it (``--out`` names another JSON,
whose .md goes beside it). compile_profile_e3e2996.json is the same profile of the code before
the compile budget (commit e3e2996, six entry points).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import benchrecord  # noqa: E402

OUT_JSON = ROOT / "results" / "benchmarks" / "compile_profile.json"

_CSV = "import numpy as np\n" + (
    "rng = np.random.default_rng(0)\n"
    "p = rng.random(100_000)\n"
    "y = (rng.random(100_000) < p).astype(int)\n"
    "np.savetxt(CSV, np.column_stack([y, p]), delimiter=',', header='y,p', comments='', fmt=['%d', '%.17g'])\n"
)

# name: (python code run in the child, what it stands for). CSV is a path in the child's temp dir.
ENTRY_POINTS = {
    "cdl": ("import fastcdl as fc\nfc.cdl([0, 1, 1], [0.2, 0.8, 0.8])", "fc.cdl(y, p) on three rounds"),
    "ece_bins15": (
        "import fastcdl as fc\nfc.ece([0, 1, 1, 0], [0.2, 0.8, 0.8, 0.4], bins=15)",
        "fc.ece(y, p, bins=15)",
    ),
    "summary": ("import fastcdl as fc\nfc.summary([0, 1, 1, 0], [0.2, 0.8, 0.8, 0.4])", "fc.summary(y, p)"),
    "interval": (
        "import numpy as np, fastcdl as fc\nrng = np.random.default_rng(0)\np = rng.random(2000)\n"
        "y = (rng.random(2000) < p).astype(int)\nfc.interval('cdl_monotone', y, p)",
        "fc.interval('cdl_monotone', y, p) on 2,000 continuous scores",
    ),
    "metrics_100k": (
        _CSV + "import sys\nfrom fastcdl.cli import main\ntry:\n    main(['metrics', CSV])\nexcept SystemExit as e:\n"
        "    assert not e.code, e.code\n",
        "fastcdl metrics on a CSV of 100,000 continuous scores",
    ),
    "simulate": (
        "from fastcdl.online import simulate\nsimulate('cdl', 'bernoulli', horizon=100)",
        "simulate('cdl', 'bernoulli', horizon=100)",
    ),
    "quick": (
        "from fastcdl.cli import main\ntry:\n    main(['rates', '--preset', 'quick', '--out', TMP + '/quick'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n",
        "fastcdl rates --preset quick (workers compile too: only the parent is profiled)",
    ),
    "warmup": ("from fastcdl.warmup import warmup\nwarmup()", "fastcdl warmup"),
}

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numba.core.event as ev
records, stack = [], []

class L(ev.Listener):
    def on_start(self, event):
        d = event.data
        stack.append([d["dispatcher"], d["args"], time.perf_counter(), 0.0])
    def on_end(self, event):
        disp, args, start, inner = stack.pop()
        total = time.perf_counter() - start
        if stack:
            stack[-1][3] += total
        py = getattr(disp, "py_func", None)
        name = (py.__module__ + "." + py.__qualname__) if py is not None else repr(disp)
        records.append({"name": name, "args": str(args), "total": total, "self": total - inner,
                        "depth": len(stack), "start": start - t0})

ev.register("numba:compile", L())
TMP = sys.argv[2]
CSV = TMP + "/scores.csv"
setup, code = sys.argv[3], sys.argv[4]
exec(setup)
t1 = time.perf_counter()
exec(code)
t2 = time.perf_counter()
json.dump({"records": records, "setup_seconds": t1 - t0, "run_seconds": t2 - t1}, open(sys.argv[1], "w"))
"""


def profile(name):
    code, _ = ENTRY_POINTS[name]
    setup = ""
    if code.startswith(_CSV):  # writing the CSV is not part of what is timed
        setup, code = _CSV, code[len(_CSV) :]
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "numba-cache"
        cache.mkdir()
        out = Path(tmp) / "out.json"
        # FASTCDL_PREFETCH=0: everything an entry point needs is compiled in the process profiled
        # (a command's helper process would compile part of it, unseen; startup.md times both)
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "MPLBACKEND": "Agg", "FASTCDL_PREFETCH": "0"}
        load = os.getloadavg()[0]
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(out), tmp, setup, code],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed:\n{proc.stderr[-3000:]}")
        data = json.loads(out.read_text())
    top = [r for r in data["records"] if r["depth"] == 0]
    return {
        "entry_point": name,
        "what": ENTRY_POINTS[name][1],
        "wall_seconds": wall,
        "run_seconds": data["run_seconds"],
        "compile_seconds": sum(r["total"] for r in top),
        "compilations": len(data["records"]),
        "load_before": load,
        "records": data["records"],
    }


def by_kernel(records):
    """Self time summed per dispatcher (all its signatures), with the number of signatures."""
    agg = {}
    for r in records:
        a = agg.setdefault(r["name"], {"self": 0.0, "signatures": 0})
        a["self"] += r["self"]
        a["signatures"] += 1
    return sorted(agg.items(), key=lambda kv: -kv[1]["self"])


def render(record, top=12):
    lines = [
        "# Compile profile: what each entry point's first call compiles",
        "",
        f"Command: `{record['command']}` (one fresh process per entry point, empty NUMBA_CACHE_DIR; "
        "`--render` rewrites this file from the JSON beside it, which holds every compilation with its "
        "argument types, self and total time).",
        "",
        benchrecord.machine_line(record),
        "",
        "Compilation here is the time inside numba's `numba:compile` events (typing, lowering, LLVM); "
        "*self* excludes the callees that compiled inside a kernel. The process wall time also holds "
        "the imports, the work and writing the cache.",
        "",
        "| entry point | process wall (s) | compiling (s) | compilations | kernels | load before |",
        "|---|---|---|---|---|---|",
    ]
    for e in record["entries"]:
        lines.append(
            f"| {e['what']} | {e['wall_seconds']:.2f} | {e['compile_seconds']:.2f} | {e['compilations']} | "
            f"{len(by_kernel(e['records']))} | {e['load_before']:.2f} |"
        )
    for e in record["entries"]:
        lines += ["", f"## {e['what']}", "", f"Top {top} kernels by self compile time (all signatures summed):", ""]
        lines += ["| kernel | signatures | self (s) |", "|---|---|---|"]
        for name, a in by_kernel(e["records"])[:top]:
            lines.append(f"| `{name.removeprefix('fastcdl.')}` | {a['signatures']} | {a['self']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=sorted(ENTRY_POINTS), help="these entry points only")
    ap.add_argument("--render", action="store_true", help="rewrite the .md from the JSON")
    ap.add_argument("--out", type=Path, default=OUT_JSON)
    args = ap.parse_args(argv)
    if args.render:
        args.out.with_suffix(".md").write_text(render(json.loads(args.out.read_text())))
        return
    t0 = time.perf_counter()
    record = {
        "name": "compile_profile",
        "command": ".venv/bin/python scripts/compile_profile.py" + "".join(" " + a for a in (argv or sys.argv[1:])),
        "machine": {**benchrecord.cpu(), "numba_threads": benchrecord.numba_threads()},
        "source": benchrecord.source(),
        "versions": benchrecord.versions(),
        "load_start": benchrecord.loadavg(),
        "started": benchrecord.utc(),
    }
    entries = []
    for name in args.only or ENTRY_POINTS:
        e = profile(name)
        print(f"{name}: wall {e['wall_seconds']:.2f} s, compiling {e['compile_seconds']:.2f} s", flush=True)
        entries.append(e)
    record.update(
        load_end=benchrecord.loadavg(),
        finished=benchrecord.utc(),
        run_seconds=time.perf_counter() - t0,
        entries=entries,
    )
    if args.only:  # a partial run updates only its entries
        old = json.loads(args.out.read_text()) if args.out.exists() else None
        if old:
            keep = [e for e in old["entries"] if e["entry_point"] not in set(args.only)]
            record["entries"] = sorted(keep + entries, key=lambda e: list(ENTRY_POINTS).index(e["entry_point"]))
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, args.out)
    args.out.with_suffix(".md").write_text(render(record))


if __name__ == "__main__":
    main()
