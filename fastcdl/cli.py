"""Command line: ``fastcdl metrics FILE``, ``fastcdl rates``, ``fastcdl plot PATH``, ``fastcdl warmup``.

Errors print one line on stderr and exit with status 2; nothing is written. ``rates``
stopped by SIGINT or SIGTERM prints one line and exits with status 128 + the signal.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from pathlib import Path

from fastcdl.io import InputError, read_stats


def _task_in_words(report) -> list[str]:
    names = {1: ["act", "wait"], 2: ["low", "high"], 3: ["low", "middle", "high"]}
    u = report.payoff
    # name the rows by the belief region where each one is the best response
    probe = [0.0] + [float(k) for k in report.kinks] + [1.0]
    mids = [(a + b) / 2 for a, b in zip(probe[:-1], probe[1:])]
    order = []
    for p in mids:
        a = report.action_at(p)
        if a not in order:
            order.append(a)
    label = dict(zip(order, names.get(len(order), [f"a{i}" for i in range(len(order))])))
    k = report.kinks
    last = f"at p = {k[-1]:.4g}" if k[-1] == 1.0 else f"above {k[-1]:.4g}"
    if len(k) == 1:
        regions = f"'{label[order[0]]}' when p < {k[0]:.4g}, '{label[order[-1]]}' {last}"
    else:
        regions = (
            f"'{label[order[0]]}' when p < {k[0]:.4g}, "
            + (f"'{label[order[1]]}' between {k[0]:.4g} and {k[1]:.4g}, " if len(order) == 3 else "")
            + f"'{label[order[-1]]}' {last}"
        )
    pay = ", ".join(f"{label.get(a, f'a{a}')} ({u[a, 0]:.4g}, {u[a, 1]:.4g})" for a in order)
    return [
        f"worst decision task: {regions}",
        f"  payoffs (if y=0, if y=1): {pay}",
        f"  acting on the recalibrated frequencies gains it {report.value:.4g} per round",
    ]


def cmd_metrics(args) -> int:
    from fastcdl.metrics import cdl_report, ece, k2, ucal

    st = read_stats(
        args.file, y_col=args.y_col, p_col=args.p_col, weight_col=args.weight_col, bins=args.bins
    )
    rep = cdl_report(st)
    T = st.total
    out = {
        "n_buckets": st.n_buckets,
        "T": int(T) if not st.weighted else float(T),
        "ece": ece(st),
        "k2": k2(st),
        "vcdl": rep.vcdl,
        "vcdl_kink": rep.vcdl_kink,
        "cdl": rep.value,
        "ucal": ucal(st),
        "worst_task": {
            "kinks": rep.kinks.tolist(),
            "weights": rep.weights.tolist(),
            "payoff": rep.payoff.tolist(),
        },
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"{args.file}: T = {out['T']} rounds in {out['n_buckets']} buckets")
    rows = [
        ("ECE", out["ece"], "expected calibration error"),
        ("K2", out["k2"], "squared calibration error"),
        ("VCDL", out["vcdl"], f"worst V-shaped task, kink {rep.vcdl_kink:.4g}"),
        ("CDL", out["cdl"], "calibration decision loss (any task, payoffs in [0,1])"),
        ("UCal", out["ucal"], "U-calibration error"),
    ]
    for name, value, what in rows:
        print(f"  {name:<5} {value:10.6f}   {what}")
    for line in _task_in_words(rep):
        print(line)
    return 0


@contextlib.contextmanager
def _stop_on_signals(received: list):
    """SIGINT and SIGTERM raise KeyboardInterrupt (once: later signals are ignored while the
    run stops its workers); the signal number is appended to received."""
    def handler(signum, frame):
        if not received:
            received.append(signum)
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():  # handlers only install there
        yield
        return
    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def cmd_rates(args) -> int:
    from fastcdl.experiments import load_preset, override, run

    preset = load_preset(args.preset)
    split = lambda v: None if v is None else [x.strip() for x in v.split(",") if x.strip()]  # noqa: E731
    preset = override(
        preset,
        forecasters=split(args.forecasters),
        adversaries=split(args.adversaries),
        t_min=args.t_min,
        t_max=args.t_max,
        seeds=args.seeds,
        master_seed=args.master_seed,
    )
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    if args.scheduler is not None and not args.scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise InputError(f"--scheduler must be a Dask scheduler address like tcp://HOST:PORT, got {args.scheduler!r}")
    out = Path(args.out or f"results/{preset.name}")
    received = []
    try:
        with _stop_on_signals(received):
            summary = run(preset, out, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress)
    except KeyboardInterrupt as e:  # its message says how many trials are left undone
        signum = received[0] if received else signal.SIGINT
        print(f"fastcdl: stopped by {signal.Signals(signum).name}" + (f": {e}" if str(e) else ""), file=sys.stderr)
        return 128 + signum
    if summary["n_done"] < summary["n_trials"]:  # run() said on stderr what is left undone
        return 1
    print(f"{summary['n_done']}/{summary['n_trials']} trials in {out}/trials.sqlite; summary in {out}/summary.csv")
    shown = [s for s in summary["slopes"] if s["metric"] in ("cdl", "ece")]
    if shown:
        print(f"{'forecaster':<14} {'adversary':<12} {'metric':<5} {'slope':>7}  95% interval     T fitted")
        for s in shown:
            print(
                f"{s['forecaster']:<14} {s['adversary']:<12} {s['metric']:<5} {s['slope']:7.3f}  "
                f"[{s['slope_lo']:6.3f}, {s['slope_hi']:6.3f}]  {s['t_min_fit']}..{s['t_max_fit']}"
            )
    return 0


def cmd_plot(args) -> int:
    path = Path(args.path)
    if path.is_dir():
        file_only = [opt for opt, v in (("--bins", args.bins), ("--y-col", args.y_col), ("--p-col", args.p_col),
                                        ("--weight-col", args.weight_col)) if v is not None]
        if file_only:
            raise InputError(f"{path}: {', '.join(file_only)} applies to a file of predictions, not to a run folder")
    elif not path.is_file():
        raise InputError(f"{path}: no such file or folder")
    try:
        from fastcdl.plot import plot_file, plot_run
    except ImportError:
        raise InputError("plotting needs matplotlib: pip install 'fastcdl[plot]'") from None
    if path.is_dir():
        written = plot_run(path, args.out)
    else:
        written = plot_file(path, args.out, y_col=args.y_col or "y", p_col=args.p_col or "p",
                            weight_col=args.weight_col, bins=args.bins)
    for f in written:
        print(f)
    return 0


def cmd_warmup(args) -> int:
    import time

    from fastcdl.warmup import GROUPS, warmup

    groups = GROUPS if args.only is None else tuple(g.strip() for g in args.only.split(","))
    t0 = time.perf_counter()
    warmup(groups, report=lambda step: print(f"  {step.seconds:7.2f} s  {step.name}", flush=True))
    print(f"compiled in {time.perf_counter() - t0:.1f} s (cache: FASTCDL_CACHE=0 turns it off)")
    return 0


def _bins_arg(text: str) -> int:
    try:
        m = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bins must be a positive integer, got {text!r}") from None
    if m <= 0:
        raise argparse.ArgumentTypeError(f"bins must be a positive integer, got {m}")
    return m


class _Parser(argparse.ArgumentParser):
    """argparse with the command line's error convention: one line on stderr, exit status 2
    (argparse's default also prints the usage block)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="fastcdl", description="Exact calibration decision loss.")
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("metrics", help="calibration metrics of a file of predictions")
    m.add_argument("file", help="CSV, Parquet or .npz with an outcome and a probability column")
    m.add_argument("--y-col", default="y", help="outcome column, 0/1 (default: y)")
    m.add_argument("--p-col", default="p", help="probability column (default: p)")
    m.add_argument("--weight-col", default=None, help="optional sample-weight column")
    m.add_argument("--bins", type=_bins_arg, default=None, help="equal-width bins (default: exact)")
    m.add_argument("--json", action="store_true", help="print one JSON object")
    m.set_defaults(func=cmd_metrics)

    r = sub.add_parser("rates", help="run (or resume) a rate experiment: CDL vs ECE decay with T")
    r.add_argument("--preset", default="quick", help="quick, paper, msweep, or a .toml file (default: quick)")
    r.add_argument("--forecasters", help="comma-separated forecaster names or labels (override the preset)")
    r.add_argument("--adversaries", help="comma-separated adversary names or labels")
    r.add_argument("--t-min", help="smallest horizon (integer or 2^k)")
    r.add_argument("--t-max", help="largest horizon (integer or 2^k)")
    r.add_argument("--seeds", type=int, help="seeds per grid point")
    r.add_argument("--master-seed", type=int, help="master seed all trial seeds derive from")
    r.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    r.add_argument("--scheduler", help="Dask scheduler address tcp://HOST:PORT (default: local pool)")
    r.add_argument("--out", help="run folder (default: results/<preset name>)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.set_defaults(func=cmd_rates)

    pl = sub.add_parser("plot", help="PNG figures of a run folder or of a file of predictions")
    pl.add_argument("path", help="run folder (with trials.sqlite) or CSV, Parquet or .npz file of predictions")
    pl.add_argument("--out", help="folder for the PNG files (default: the run folder, or the file's folder)")
    pl.add_argument("--y-col", help="outcome column of a predictions file, 0/1 (default: y)")
    pl.add_argument("--p-col", help="probability column of a predictions file (default: p)")
    pl.add_argument("--weight-col", help="optional sample-weight column of a predictions file")
    pl.add_argument("--bins", type=_bins_arg, help="equal-width bins for a predictions file (default: exact)")
    pl.set_defaults(func=cmd_plot)

    w = sub.add_parser("warmup", help="compile every kernel once (later processes load them from the cache)")
    w.add_argument("--only", help="comma-separated groups: metrics, binning, online (default: all)")
    w.set_defaults(func=cmd_warmup)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as e:  # InputError and the library's validation errors
        print(f"fastcdl: error: {e}", file=sys.stderr)
        return 2
    except MemoryError as e:  # numpy says how much it could not allocate; plain MemoryError says nothing
        print(_one_line("fastcdl: error: out of memory", e), file=sys.stderr)
        return 2
    except OSError as e:  # a full disk, a folder that cannot be written, ...
        what = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else (e.strerror or str(e))
        print(_one_line(f"fastcdl: error: {what}", None), file=sys.stderr)
        return 2


def _one_line(head: str, e) -> str:
    text = f"{head}: {e}" if e is not None and str(e) else head
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
