"""The one timing loop and recorder behind every table of results/benchmarks/.

scripts/bench_all.py writes every table; each table's script takes what it times from the
benchmark definitions of asv_bench/benchmarks/ (the tracked asv suite: its data, kernels' loops
and baselines, through definitions()), times through repeats() (warm-up call, alternation,
batches, per-operation times, a function's own timer) and records through a Recorder (every
repeat kept, not only the median), saves results/benchmarks/<name>.json and writes its
Markdown from that file, so every figure a README or docs page quotes can be traced to the
repeats that gave it:

    K = definitions("kernels")          # asv_bench/benchmarks/kernels.py
    rec = Recorder("metrics", sys.argv)
    rec.time("bucket_stats/float64", lambda: fc.bucket_stats(y, p, bins=1000), repeat=7)
    rec.interleaved("njit", {"public": lambda: K.public_loop(q, n, s, 100)}, repeat=7, n_inner=100)
    rec.add("simulate/cdl/1e8", [r.seconds for r in runs], unit="s", per=1e8)
    rec.save()                          # writes metrics.json
    doc = load("metrics")               # what the Markdown is rendered from

The file records the CPU model and its vector extensions (/proc/cpuinfo), the logical CPUs,
numba's threads, the load average (1, 5, 15 min) at the start and at the end and at every
timing, the git commit with a dirty flag, a hash of fastcdl's sources and one of each fastcdl
module the run loaded (``timed_modules``: scripts/bench_check.py lists the numbers whose code
changed since), the command and the versions of Python, numpy, numba and scipy.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "results" / "benchmarks"
ASV_DIR = ROOT / "asv_bench"
PERF_COUNTER = time.perf_counter  # the default clock (Recorder.time shadows the module in its class)

# the extensions that decide which code numba's LLVM emits for these kernels
VECTOR_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512ifma",
    "avx512_vnni",
)


def definitions(module: str):
    """asv_bench/benchmarks/<module>.py, imported as asv imports it (package ``benchmarks``): the
    benchmark definitions asv tracks, which the table scripts time too."""
    if str(ASV_DIR) not in sys.path:
        sys.path.insert(0, str(ASV_DIR))
    return importlib.import_module(f"benchmarks.{module}")


def cpu() -> dict:
    """{"model", "vector", "logical_cpus"} from /proc/cpuinfo (the platform's words elsewhere)."""
    model, flags = None, set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model is None:
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    return {
        "model": model or platform.processor() or platform.machine(),
        "vector": [f for f in VECTOR_FLAGS if f in flags],
        "logical_cpus": os.cpu_count(),
    }


def source() -> dict:
    """git commit, whether fastcdl/ or scripts/ differ from it (and which files), and a hash of
    fastcdl/'s Python sources (its first 12 digits are bench_estimators.code_hash, which keys the
    smCE runs)."""

    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    h = hashlib.sha256()
    for path in sorted((ROOT / "fastcdl").rglob("*.py")):
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    changed = [line[3:] for line in git("status", "--porcelain", "--", "fastcdl", "scripts").splitlines()]
    return {
        "commit": git("rev-parse", "HEAD").strip() or None,
        "dirty": bool(changed),
        "changed": changed,
        "fastcdl_sources_sha256": h.hexdigest()[:16],
    }


def module_hash(path: Path) -> str:
    """sha256 of a file's bytes, 16 hex digits."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def timed_modules() -> dict:
    """{path: module_hash} of every fastcdl module this process has loaded: the code the run
    timed. scripts/bench_check.py compares them with the files as they are now."""
    pkg = ROOT / "fastcdl"
    out = {}
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f:
            continue
        path = Path(f).resolve()
        if path.suffix == ".py" and pkg in path.parents:
            out[path.relative_to(ROOT).as_posix()] = module_hash(path)
    return dict(sorted(out.items()))


def versions() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "numba", "scipy", "fastcdl"):
        try:
            out[mod] = __import__(mod).__version__
        except ImportError:
            out[mod] = None
    return out


def numba_threads():
    try:
        import numba

        return numba.config.NUMBA_NUM_THREADS
    except ImportError:
        return None


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


class Recorder:
    """Collects every repeat of every timing of one script's run; save() writes the JSON."""

    def __init__(self, name: str, argv: list[str] | None = None, **params):
        self.name = name
        argv = list(sys.argv if argv is None else argv)
        script = Path(argv[0]).resolve()
        try:
            script = script.relative_to(ROOT)
        except ValueError:
            pass
        self.doc = {
            "name": name,
            "command": " ".join([".venv/bin/python", script.as_posix(), *argv[1:]]),
            "params": params,
            "started": utc(),
            "machine": {**cpu(), "numba_threads": numba_threads()},
            "load_start": loadavg(),
            "source": source(),
            "versions": versions(),
            "timings": {},
            "values": {},
        }
        self._t0 = time.perf_counter()

    def add(self, key: str, seconds: list[float], clock: str = "perf_counter", **info) -> float:
        """Record the repeats of one timing (seconds each) and return their median."""
        seconds = [float(s) for s in seconds]
        self.doc["timings"][key] = {
            "seconds": seconds,
            "median": statistics.median(seconds),
            "clock": clock,
            "load": loadavg(),
            **info,
        }
        return self.doc["timings"][key]["median"]

    def time(
        self,
        key: str,
        f: Callable[[], object],
        repeat: int,
        warmup: bool = True,
        clock: Callable[[], float] = PERF_COUNTER,
        **options,
    ) -> float:
        """Median seconds of `repeat` timings of f (after one warm-up call), recorded under key;
        ``options`` as for :func:`repeats` (calls, n_inner, seconds) and info for the JSON."""
        timings = repeats({key: f}, repeat, warmup=warmup, clock=clock, **_split(options)[0])
        return self.record("", timings, **_split(options)[1])[key]

    def interleaved(
        self,
        prefix: str,
        funcs: dict[str, Callable[[], object]],
        repeat: int,
        warmup: bool = True,
        clock: Callable[[], float] = PERF_COUNTER,
        **options,
    ) -> dict[str, float]:
        """Each of funcs once per repeat, in turn (a change of load falls on all); medians by name,
        recorded under prefix/name. ``options`` as for :func:`repeats`, and info for the JSON."""
        timings = repeats(funcs, repeat, warmup=warmup, clock=clock, **_split(options)[0])
        return self.record(prefix, timings, interleaved=True, **_split(options)[1])

    def record(self, prefix: str, timings: "Timings", **info) -> dict[str, float]:
        """Record the repeats of :func:`repeats` under prefix/name (or name when prefix is empty);
        medians by name."""
        out = {}
        for name, seconds in timings.seconds.items():
            extra = {"calls_per_repeat": timings.calls[name]} if timings.calls[name] != 1 else {}
            if timings.cpu_seconds:
                extra["thread_cpu_seconds"] = timings.cpu_seconds[name]
            out[name] = self.add(f"{prefix}/{name}" if prefix else name, seconds, clock=timings.clock, **extra, **info)
        return out

    def seconds(self, key: str) -> list[float]:
        """Every repeat recorded under key, in the order they were timed."""
        return self.doc["timings"][key]["seconds"]

    def value(self, key: str, value) -> None:
        """A figure that is not a time (a count, a CDL, a memory peak), kept beside the timings."""
        self.doc["values"][key] = value

    def save(self, path: Path | None = None) -> Path:
        self.doc["source"]["timed_modules"] = timed_modules()
        self.doc["load_end"] = loadavg()
        self.doc["finished"] = utc()
        self.doc["run_seconds"] = round(time.perf_counter() - self._t0, 1)
        path = path or OUT_DIR / f"{self.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1) + "\n")
        tmp.replace(path)
        return path


MIN_BATCH = 0.05  # seconds: with calls="auto", a shorter call is timed in a batch at least this long


class Timings(NamedTuple):
    """What :func:`repeats` measured: per name, the seconds of every repeat (per call), the calls
    per timing, and the value of the last call; the clock's name; with ``cpu=True``, the calling
    thread's CPU seconds of every repeat too (per call)."""

    seconds: dict[str, list[float]]
    calls: dict[str, int]
    values: dict[str, object]
    clock: str
    cpu_seconds: dict[str, list[float]] = {}


_REPEAT_OPTIONS = ("calls", "n_inner", "seconds", "timer", "rotate", "cpu")


def _split(options: dict) -> tuple[dict, dict]:
    """Options of :func:`repeats`, and the rest (info recorded beside the timings)."""
    return (
        {k: v for k, v in options.items() if k in _REPEAT_OPTIONS},
        {k: v for k, v in options.items() if k not in _REPEAT_OPTIONS},
    )


def repeats(
    funcs: dict[str, Callable[[], object]],
    repeat: int,
    warmup: bool = True,
    clock: Callable[[], float] = time.perf_counter,
    calls: int | str = 1,
    n_inner: int = 1,
    seconds: Callable[[object], float] | None = None,
    timer: str = "the function's own timer",
    rotate: bool = False,
    cpu: bool = False,
) -> Timings:
    """The one timing loop of every benchmark script: `repeat` rounds in which each function of
    funcs runs in turn (one warm-up call each first, unless warmup is False).

    clock: time.perf_counter (wall, the default), time.process_time (the process's CPU time) or
    any clock of the time module; its name goes into the JSON. rotate: each round starts one
    function later in funcs' order (a burst of load does not always fall on the same neighbour).
    cpu: also record the calling thread's CPU seconds of each timing (time.thread_time: for a
    kernel on one thread, the time it ran, whatever else the shared machine runs meanwhile), in
    Timings.cpu_seconds.

    calls: how many calls one timing covers, back to back ("auto": as many as last MIN_BATCH
    seconds, from the warm-up call, like timeit's autorange, so microsecond calls are not timed
    cold after a slow one). n_inner: how many operations one call performs (a loop inside f);
    the recorded seconds are per operation. seconds: a function of f's return value that gives
    the time to record instead of the clock's (simulate's own timer of its compiled loop), and
    timer names it in the JSON.
    """
    if calls == "auto" and not warmup:
        raise ValueError('calls="auto" sizes the batch from the warm-up call: needs warmup=True')
    values, batch = {}, {}
    for name, f in funcs.items():
        batch[name] = 1 if calls == "auto" else int(calls)
        if warmup:
            t = clock()
            values[name] = f()
            if calls == "auto":
                batch[name] = max(1, int(MIN_BATCH / max(clock() - t, 1e-9)))
    names = list(funcs)
    ts = {name: [] for name in names}
    cpu_ts = {name: [] for name in names} if cpu else {}
    for r in range(repeat):
        k = r % len(names) if rotate else 0
        for name in names[k:] + names[:k]:
            f = funcs[name]
            c = time.thread_time() if cpu else 0.0
            t = clock()
            for _ in range(batch[name]):
                values[name] = f()
            elapsed = clock() - t if seconds is None else seconds(values[name])
            if cpu:
                cpu_ts[name].append((time.thread_time() - c) / batch[name] / n_inner)
            ts[name].append(elapsed / batch[name] / n_inner)
    name = timer if seconds is not None else getattr(clock, "__name__", "perf_counter")
    calls_out = {k: batch[k] * n_inner for k in funcs}
    return Timings(ts, calls_out, values, name, cpu_ts)


def load(name: str, folder: Path = OUT_DIR) -> dict:
    return json.loads((Path(folder) / f"{name}.json").read_text())


def median(doc: dict, key: str) -> float:
    return doc["timings"][key]["median"]


def machine_line(doc: dict) -> str:
    """The Machine/load/source sentence every rendered Markdown file starts with."""
    m, s, v = doc["machine"], doc["source"], doc["versions"]
    vec = ", ".join(m["vector"]) or "none of " + ", ".join(VECTOR_FLAGS)
    commit = (s["commit"] or "no git")[:10]
    if s["dirty"]:
        commit += " with uncommitted changes" + (f" to {', '.join(s['changed'])}" if s.get("changed") else "")
    return (
        f"Machine: {m['model']} ({vec}), {m['logical_cpus']} logical CPUs, numba "
        f"{m['numba_threads']} threads. Load average (1, 5, 15 min) "
        f"{', '.join(map(str, doc['load_start']))} at the start and "
        f"{', '.join(map(str, doc['load_end']))} at the end (the load at every timing is in the "
        f"JSON). Source: commit {commit}, fastcdl sources {s['fastcdl_sources_sha256']}; Python "
        f"{v['python']}, numpy {v['numpy']}, numba {v['numba']}. Measured {doc['started']} to "
        f"{doc['finished']} ({doc['run_seconds']:.0f} s)."
    )


def header(doc: dict, title: str) -> list[str]:
    return [
        f"# {title}",
        "",
        f"Command: `{doc['command']}`. Every repeat of every timing, and the machine, load and "
        f"source below, are in `{doc['name']}.json` beside this file; this file is written from it.",
        "",
        machine_line(doc) + "",
        "",
    ]


def write_md(name: str, lines: list[str], folder: Path = OUT_DIR) -> Path:
    path = Path(folder) / f"{name}.md"
    tmp = path.with_suffix(".mdtmp")
    tmp.write_text("\n".join(lines).rstrip("\n") + "\n")
    tmp.replace(path)
    return path
