"""What `fastcdl leaderboard --add` costs on the committed grid: a copy of results/leaderboard,
the README's plug-in (tests/readme_plugin.py, HALFWAY) added with two workers, once with numba's
cache filled (the plug-in's loops compiled by a first run into another copy) and once with an
empty cache; each in a fresh process, the load average beside every timing.

    .venv/bin/python scripts/bench_leaderboard_add.py     # its run time is recorded in the JSON

Writes results/benchmarks/leaderboard-add.json (every run kept) and leaderboard-add.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchrecord import ROOT, Recorder, load, loadavg, machine_line, write_md  # noqa: E402

BOARD = ROOT / "results" / "leaderboard"
SPEC = "readme_plugin:HALFWAY"


def _add(board: Path, cache: Path) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), "NUMBA_CACHE_DIR": str(cache)}
    argv = [sys.executable, "-m", "fastcdl", "leaderboard", "--dir", str(board), "--add", SPEC]
    t0 = time.perf_counter()
    r = subprocess.run([*argv, "--workers", "2", "--no-progress"], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"leaderboard --add failed: {r.stderr.strip()}")
    return seconds, r.stdout.splitlines()[0]


def main() -> None:
    rec = Recorder("leaderboard-add", sys.argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cold_cache, warm_cache = tmp / "cold-cache", tmp / "warm-cache"
        cold_cache.mkdir()
        warm_cache.mkdir()
        for name in ("cold", "warm-fill", "warm"):
            shutil.copytree(BOARD, tmp / name, ignore=shutil.ignore_patterns("*.png"))
        before = loadavg()
        seconds, line = _add(tmp / "cold", cold_cache)
        rec.add("empty numba cache", [seconds], unit="s", first_line=line, load_before=before)
        _add(tmp / "warm-fill", warm_cache)  # compiles the plug-in's loops into warm_cache
        before = loadavg()
        seconds, line = _add(tmp / "warm", warm_cache)
        rec.add("numba cache filled", [seconds], unit="s", first_line=line, load_before=before)
    path = rec.save()
    doc = load("leaderboard-add")
    lines = [
        "# `fastcdl leaderboard --add` on the committed grid",
        "",
        f"Command: `.venv/bin/python scripts/bench_leaderboard_add.py` (a copy of results/leaderboard; "
        f"`fastcdl leaderboard --dir COPY --add {SPEC} --workers 2`, tests on the Python path).",
        "",
        machine_line(doc),
        "",
        "| numba cache | wall (s) | minutes | load (1 min) before | first line printed |",
        "|---|---|---|---|---|",
    ]
    for key, entry in doc["timings"].items():
        s = entry["seconds"][0]
        load_before = entry["load_before"][0]
        lines.append(f"| {key} | {s:.0f} | {s / 60:.1f} | {load_before} | {entry.get('first_line', '')} |")
    write_md("leaderboard-add", lines)
    print(path)


if __name__ == "__main__":
    main()
