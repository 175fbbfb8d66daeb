"""Command line: ``fastcdl metrics FILE``, ``fastcdl rates``, ``fastcdl worst``, ``fastcdl leaderboard``,
``fastcdl plot PATH``, ``fastcdl warmup``.

Errors print one line on stderr and exit with status 2; nothing is written. ``rates``
stopped by SIGINT or SIGTERM prints one line and exits with status 128 + the signal; a
worker process that dies (killed by the system, say out of memory) stops it with one line and
status 2. Either way the finished trials are kept, and re-running the same command resumes.
"""

from __future__ import annotations

import argparse
import os
import contextlib
import signal
import sys
import threading
import warnings
from pathlib import Path


from fastcdl.io import InputError, read_file, supported_formats


def cmd_metrics(args) -> int:
    """Read the file, build its report (fastcdl.summary) and print it, as text or JSON."""
    from fastcdl import prefetch
    from fastcdl.multiclass import MAX_ROWS
    from fastcdl.summary import summary_of_file
    from fastcdl.uncertainty import CoverageWarning

    if args.lp_rows < 0:
        raise InputError(f"--lp-rows must be >= 0, got {args.lp_rows}")
    if args.ci and args.no_ci:
        raise InputError("--ci and --no-ci contradict each other: give one")
    args.strategy = args.strategy or "uniform"
    if args.strategy == "quantile" and args.bins is None:
        raise InputError("--strategy quantile needs --bins M or --bins auto")
    read = {k: getattr(args, k) for k in ("y_col", "p_col", "p_cols", "p_prefix", "multiclass", "weight_col")}
    prefetch.start("report")  # an empty cache: a helper compiles the report's later steps meanwhile
    # distinct rows are counted to MAX_ROWS at least, so that the report can name their number
    fs = read_file(
        args.file,
        **read,
        bins=args.bins,
        strategy=args.strategy,
        fmt=args.format,
        delimiter=args.delimiter,
        skip_missing=args.skip_missing,
        max_rows=max(args.lp_rows, MAX_ROWS),
    )
    intervals = False if args.no_ci else (True if args.ci else "auto")
    with warnings.catch_warnings():  # the report says it in its note
        warnings.simplefilter("ignore", CoverageWarning)
        report = summary_of_file(fs, intervals=intervals, level=args.level, seed=args.seed, lp_rows=args.lp_rows)
    if args.json:
        print(report.to_json())
    else:
        name = "standard input" if args.file == "-" else args.file
        sys.stdout.write(report.to_text(name, estimators=args.estimators))
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
    from fastcdl.experiments.workers import WorkerDied

    from fastcdl.experiments.presets import parse_horizon

    for option, value in (("--t-min", args.t_min), ("--t-max", args.t_max)):
        if value is not None:
            parse_horizon(value, option)
    if args.master_seed is not None and args.master_seed < 0:
        raise InputError(f"--master-seed must be an integer >= 0, got {args.master_seed}")
    if args.seeds is not None and args.seeds < 2:
        raise InputError(f"--seeds must be an integer >= 2 (confidence intervals need two seeds), got {args.seeds}")
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
    except WorkerDied as e:  # its message says what happened and how many trials are left undone
        print(f"fastcdl: error: {e}", file=sys.stderr)
        return 2
    if summary["n_done"] < summary["n_trials"]:  # run() said on stderr what is left undone
        return 1
    print(
        f"{summary['n_done']}/{summary['n_trials']} trials in {out}/trials.sqlite ({summary['n_ran']} run now, "
        f"{summary['n_reused']} reused); summary in {out}/summary.csv"
    )
    for line in _slope_table(summary):
        print(line)
    print(f"plots: fastcdl plot {out}")
    return 0


def _slope_table(summary) -> list:
    """The CDL and ECE slopes of a run with their levels: the mean at the largest T fitted and
    its interval (rates.csv), every column as wide as its longest entry."""
    shown = [s for s in summary["slopes"] if s["metric"] in ("cdl", "ece")]
    if not shown:
        return []
    level = {(r["forecaster"], r["adversary"], r["metric"], int(r["T"])): r for r in summary.get("rates", [])}
    rows = []
    for s in shown:
        r = level.get((s["forecaster"], s["adversary"], s["metric"], int(s["t_max_fit"])))
        at = "" if r is None else f"{r['mean']:.4g} [{r['lo']:.4g}, {r['hi']:.4g}]"
        rows.append(
            (
                s["forecaster"],
                s["adversary"],
                s["metric"],
                at,
                f"{s['slope']:.3f}",
                f"[{s['slope_lo']:.3f}, {s['slope_hi']:.3f}]",
                f"{s['t_min_fit']}..{s['t_max_fit']}",
            )
        )
    head = ("forecaster", "adversary", "metric", "mean at largest T", "slope", "95% interval", "T fitted")
    width = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    right = (False, False, False, False, True, False, False)
    return [
        "  ".join(f"{v:>{w}}" if a else f"{v:<{w}}" for v, w, a in zip(r, width, right)).rstrip() for r in (head, *rows)
    ]


def cmd_worst(args) -> int:
    from fastcdl.experiments.presets import parse_horizon
    from fastcdl.experiments.worst import WorstPlan, run_plan

    if (args.plan is None) == (args.forecaster is None):
        raise InputError("give --forecaster NAME --t T for one search, or --plan NAME|FILE.toml for a grid")
    if args.plan is not None:
        if args.t is not None:
            raise InputError("--t applies to one search (--forecaster), not to a plan")
        plan = WorstPlan.load(args.plan)
    else:
        if args.t is None:
            raise InputError("--forecaster needs --t (integer or 2^k)")
        plan = WorstPlan.make(forecasters=[args.forecaster], search_horizons=[parse_horizon(args.t, "--t")])
    budget = {k: getattr(args, k) for k in ("search_seeds", "fresh_seeds") if getattr(args, k) is not None}
    for k, v in budget.items():
        if v < 2:
            raise InputError(f"--{k.replace('_', '-')} must be an integer >= 2, got {v}")
    if budget:
        from dataclasses import asdict, replace

        fields = asdict(plan.budget)
        fields.update(budget)
        fields["final_seeds"] = max(fields["final_seeds"], fields["search_seeds"])
        plan = replace(plan, budget=type(plan.budget)(**fields))
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    out = Path(args.out or ("results/worstcase" if args.plan else f"results/worst-{args.forecaster}"))
    received = []
    try:
        with _stop_on_signals(received):
            run_plan(plan, out, workers=args.workers, scheduler=args.scheduler, progress=True)
    except KeyboardInterrupt:
        signum = received[0] if received else signal.SIGINT
        print(
            f"fastcdl: stopped by {signal.Signals(signum).name}: finished trials are kept in {out}/trials.sqlite; "
            "re-run the same command to resume",
            file=sys.stderr,
        )
        return 128 + signum
    print(f"worst adversaries in {out}/worst.csv, every candidate in {out}/candidates.csv")
    if args.pack:
        from fastcdl.experiments.worst import pack_folder

        print(f"packed store: {pack_folder(out)} (bucket tables of the fresh-seed runs kept)")
    return 0


def _check_leaderboard_args(args) -> None:
    from fastcdl.experiments.presets import parse_horizon

    for option, value in (("--t-min", args.t_min), ("--t-max", args.t_max)):
        if value is not None:
            parse_horizon(value, option)
    if args.seeds is not None and args.seeds < 2:
        raise InputError(f"--seeds must be an integer >= 2 (confidence intervals need two seeds), got {args.seeds}")
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    if (args.claim or args.paper is not None) and not args.add:
        raise InputError("--claim and --paper describe the forecaster of --add: give --add MODULE:ATTRIBUTE")
    grid = {"t_min": args.t_min, "t_max": args.t_max, "seeds": args.seeds, "worst": args.worst}
    if not args.run and any(v is not None for v in grid.values()):
        given = [f"--{k.replace('_', '-')}" for k, v in grid.items() if v is not None]
        raise InputError(f"{', '.join(given)} set the grid of --run; --add plays the grid stored in --dir")


def _leaderboard_run(args, folder) -> None:
    """Run (or resume) the leaderboard's grid, then fill the measures added since."""
    from dataclasses import replace

    from fastcdl.experiments.fill import fill_measures
    from fastcdl.experiments.presets import load_preset, override
    from fastcdl.experiments.runner import run

    preset = override(load_preset(args.preset), t_min=args.t_min, t_max=args.t_max, seeds=args.seeds)
    if args.worst is not None:
        preset = replace(preset, worst=args.worst)
    summary = run(preset, folder, workers=args.workers, progress=not args.no_progress)
    print(
        f"{summary['n_done']}/{summary['n_trials']} trials in {folder}/trials.sqlite "
        f"({summary['n_ran']} run now, {summary['n_reused']} reused)"
    )
    filled = fill_measures(folder, workers=args.workers, progress=not args.no_progress)
    if filled["n_missing"]:
        print(
            f"later measures of {filled['n_missing']} trials stored before them: "
            f"{filled['n_from_tables']} from their bucket tables, {filled['n_replayed']} run again "
            "and checked against the stored row"
        )


def _leaderboard_add(args, folder, spec) -> None:
    """Play one plug-in forecaster on the stored grid and print where it ranks."""
    from fastcdl.experiments import leaderboard

    out = leaderboard.add(folder, spec, workers=args.workers, progress=not args.no_progress)
    print(
        f"{out['label']}: {out['n_trials']} trials in {folder}/trials.sqlite ({out['n_ran']} run now, "
        f"{out['n_reused']} reused)"
    )
    for env, why in out["refused"].items():
        print(f"  not played: {env} ({why})")
    for line in leaderboard.rank_lines(leaderboard.ranks(folder, out["label"])):
        print(line)
    from fastcdl.experiments.submissions import FILE

    command = f"fastcdl leaderboard --add {spec} --dir {folder}" + "".join(f" --claim {c}" for c in args.claim or ())
    leaderboard.record_submission(folder, out["label"], paper=args.paper, claims=args.claims, command=command)
    print(f"  its submission record: {folder}/{FILE}")


def cmd_leaderboard(args) -> int:
    from fastcdl.experiments import leaderboard
    from fastcdl.experiments.fill import ReplayMismatch
    from fastcdl.experiments.workers import WorkerDied

    _check_leaderboard_args(args)
    folder = Path(args.dir)
    from fastcdl.experiments.submissions import parse_claim

    try:
        args.claims = [parse_claim(c) for c in args.claim or ()]
    except ValueError as e:
        raise InputError(str(e)) from None
    received = []
    try:
        with _stop_on_signals(received):
            if args.run:
                _leaderboard_run(args, folder)
            for spec in args.add or ():
                _leaderboard_add(args, folder, spec)
    except KeyboardInterrupt:
        signum = received[0] if received else signal.SIGINT
        print(
            f"fastcdl: stopped by {signal.Signals(signum).name}: finished trials are kept in {folder}/trials.sqlite; "
            "re-run the same command to resume",
            file=sys.stderr,
        )
        return 128 + signum
    except (WorkerDied, ReplayMismatch) as e:
        print(f"fastcdl: error: {e}", file=sys.stderr)
        return 2
    if args.add and not args.run:
        return 0
    built = leaderboard.build(folder, figures=not args.no_figures)
    print(
        f"leaderboard of {built['n_trials']} trials, {len(built['measures'])} measures at T = {built['T']}: "
        f"{folder}/README.md"
    )
    if args.pack:
        from fastcdl.experiments.packed import pack

        print(f"packed store: {pack(folder / 'trials.sqlite', '1 = 1')} (every trial's bucket table kept)")
    return 0


_READ_OPTIONS = (
    "y_col",
    "p_col",
    "p_cols",
    "p_prefix",
    "multiclass",
    "weight_col",
    "bins",
    "strategy",
    "format",
    "delimiter",
    "skip_missing",
)


def cmd_plot(args) -> int:
    path = Path(args.path)
    if args.path != "-" and path.is_dir():
        file_only = ["--" + opt.replace("_", "-") for opt in _READ_OPTIONS if getattr(args, opt) not in (None, False)]
        if file_only:
            raise InputError(f"{path}: {', '.join(file_only)} applies to a file of predictions, not to a run folder")
    elif args.path != "-" and not path.is_file():
        raise InputError(f"{path}: no such file or folder")
    try:
        from fastcdl.plot import plot_file, plot_run
    except ImportError:
        raise InputError("plotting needs matplotlib: pip install 'fastcdl[plot]'") from None
    if args.path != "-" and path.is_dir():
        written = plot_run(path, args.out)
    else:
        written = plot_file(
            args.path,
            args.out,
            y_col=args.y_col or "y",
            p_col=args.p_col,
            weight_col=args.weight_col,
            bins=args.bins,
            strategy=args.strategy or "uniform",
            p_cols=args.p_cols,
            p_prefix=args.p_prefix,
            multiclass=args.multiclass,
            fmt=args.format,
            delimiter=args.delimiter,
            skip_missing=args.skip_missing,
        )
    for f in written:
        print(f)
    return 0


def cmd_warmup(args) -> int:
    import time

    from fastcdl.warmup import GROUPS, warmup

    groups = GROUPS if args.only is None else tuple(g.strip() for g in args.only.split(","))
    t0 = time.perf_counter()
    if args.jobs < 1:
        raise InputError(f"--jobs must be >= 1, got {args.jobs}")
    warmup(groups, report=lambda step: print(f"  {step.seconds:7.2f} s  {step.name}", flush=True), jobs=args.jobs)
    print(f"compiled in {time.perf_counter() - t0:.1f} s (cache: FASTCDL_CACHE=0 turns it off)")
    return 0


def _level_arg(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"level must lie strictly between 0 and 1, got {text}")
    return v


def _bins_arg(text: str):
    if text == "auto":
        return text
    try:
        m = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bins must be a positive integer or auto, got {text!r}") from None
    if m <= 0:
        raise argparse.ArgumentTypeError(f"bins must be a positive integer or auto, got {m}")
    return m


class _Parser(argparse.ArgumentParser):
    """argparse with the command line's error convention: one line on stderr, exit status 2
    (argparse's default also prints the usage block)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _read_arguments(p, plot=False):
    """The options that say how to read a file of predictions (metrics and plot share them)."""
    what = " of a predictions file" if plot else ""
    p.add_argument(
        "--y-col",
        default=None if plot else "y",
        help=f"outcome column{what}: 0/1 or true/false, or class labels 0..k-1 (default: y)",
    )
    p.add_argument("--p-col", default=None, help=f"probability column{what} (default: p)")
    p.add_argument(
        "--p-cols",
        help="one probability column per class, comma-separated: p_0,p_1,... "
        "(y then holds the labels 0..k-1 in that order)",
    )
    p.add_argument(
        "--p-prefix",
        help="the columns PREFIX0, PREFIX1, ... hold one probability per class "
        "(p0.., p_0.., prob_0.., proba_0.. are found without it when there is no column p)",
    )
    p.add_argument(
        "--multiclass",
        choices=("top-label", "classwise"),
        help="k classes: the confidence of the predicted class against being right (top-label, "
        "the default) or each class against the rest (classwise)",
    )
    p.add_argument("--weight-col", default=None, help="optional sample-weight column")
    p.add_argument(
        "--bins",
        type=_bins_arg,
        default=None,
        help="group the predictions in M bins, or auto = round(T^(1/3)) (default: exact buckets)",
    )
    p.add_argument(
        "--strategy",
        choices=("uniform", "quantile"),
        default=None,
        help="bins of equal width (uniform, the default) or of equal mass with edges at predictions "
        "(quantile; tied predictions are never split, so there may be fewer bins than asked)",
    )
    p.add_argument(
        "--format",
        help="the file's format when its name does not say it: csv, tsv, jsonl, "
        "parquet, feather, npz, npy (csv.gz, jsonl.zst, ... for compressed text)",
    )
    p.add_argument(
        "--delimiter",
        help="CSV delimiter: a character or tab, comma, semicolon, pipe (default: found in the header line)",
    )
    p.add_argument(
        "--skip-missing",
        action="store_true",
        help="skip rows with an empty, NA, NaN or null value (and count them) instead of refusing them",
    )


class _TopParser(_Parser):
    """The top-level parser: run bare, it prints its usage with the list of commands."""

    def error(self, message):
        if "required: command" in message.lower():
            self.print_help(sys.stderr)
            self.exit(2)
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    from fastcdl._version import __version__

    ap = _TopParser(
        prog="fastcdl",
        description="Exact calibration decision loss (CDL) and calibration metrics.",
        epilog="Run fastcdl COMMAND --help for a command's options.",
    )
    ap.add_argument("--version", action="version", version=f"fastcdl {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    m = sub.add_parser("metrics", help="calibration metrics of a file of predictions")
    m.add_argument("file", help=f"file of predictions: {supported_formats()}")
    _read_arguments(m)
    m.add_argument(
        "--lp-rows",
        type=int,
        default=200,
        help="k classes: the exact CDL over all outcomes is computed when the predictions take at "
        "most this many distinct rows (default: 200)",
    )
    m.add_argument(
        "--estimators",
        action="store_true",
        help="also print the sample estimators (CDL_M, cutoff CE, smCE, ATB) when the exact numbers "
        "are meaningful (they are printed anyway when most rounds sit in buckets of one round)",
    )
    m.add_argument(
        "--ci",
        action="store_true",
        help="print the sample estimators' debiased estimates with intervals (fastcdl.interval); done "
        "anyway when most rounds sit in buckets of one round",
    )
    m.add_argument(
        "--no-ci",
        action="store_true",
        help="no intervals (each costs 200 evaluations of its estimator on a quarter of the rounds: "
        "about 1 to 1.6 s at 200,000 scores, results/benchmarks/sample-costs.md)",
    )
    m.add_argument("--level", type=_level_arg, default=0.95, help="the intervals' nominal coverage (default: 0.95)")
    m.add_argument("--seed", type=int, default=0, help="seed of the intervals' subsamples (default: 0)")
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

    wc = sub.add_parser("worst", help="search the adversary that maximises a forecaster's mean CDL (resumable)")
    wc.add_argument("--forecaster", help="forecaster name (one search; with --t)")
    wc.add_argument("--t", help="horizon of the search (integer or 2^k)")
    wc.add_argument("--plan", help="a grid of searches: worstcase or a .toml file")
    wc.add_argument("--search-seeds", type=int, help="seeds that score candidates (default 4)")
    wc.add_argument("--fresh-seeds", type=int, help="held-out seeds that report the winner (default 16)")
    wc.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    wc.add_argument("--scheduler", help="Dask scheduler address tcp://HOST:PORT (default: local pool)")
    wc.add_argument(
        "--pack",
        action="store_true",
        help="also write trials.sqlite.xz, the store compacted for committing (fastcdl.experiments.packed)",
    )
    wc.add_argument("--out", help="folder (default: results/worst-<forecaster> or results/worstcase)")
    wc.set_defaults(func=cmd_worst)

    pl = sub.add_parser("plot", help="PNG figures of a run folder or of a file of predictions")
    pl.add_argument("path", help=f"run folder (with trials.sqlite) or file of predictions: {supported_formats()}")
    pl.add_argument("--out", help="folder for the PNG files (default: the run folder, or the file's folder)")
    _read_arguments(pl, plot=True)
    pl.set_defaults(func=cmd_plot)

    lb = sub.add_parser(
        "leaderboard",
        help="every forecaster against every environment on every measure: build "
        "the page from the store, run the grid (--run), or rank your forecaster (--add)",
    )
    lb.add_argument(
        "--dir", default="results/leaderboard", help="the leaderboard folder (default: results/leaderboard)"
    )
    lb.add_argument(
        "--run",
        action="store_true",
        help="run (or resume) the grid into --dir, complete the later measures (pseudo, KL, smCE) of trials "
        "stored before them, then build the page; without it the page is built from the stored trials",
    )
    lb.add_argument(
        "--add",
        action="append",
        metavar="MODULE:ATTRIBUTE",
        help="play this forecaster plug-in on the stored grid (every stored trial is reused) and print "
        "where it ranks on each measure; the page is not rewritten (repeatable)",
    )
    lb.add_argument(
        "--claim",
        action="append",
        metavar="MEASURE=EXPONENT[,LOG_POWER]",
        help="with --add: a rate the forecaster's paper claims, T^EXPONENT (log T)^LOG_POWER per round on "
        "MEASURE, recorded in submissions.json next to the measured slope (repeatable)",
    )
    lb.add_argument("--paper", help="with --add: the paper behind the claims, recorded in submissions.json")
    lb.add_argument("--preset", default="leaderboard", help="the grid of --run (default: leaderboard)")
    lb.add_argument("--t-min", help="smallest horizon of --run (integer or 2^k)")
    lb.add_argument("--t-max", help="largest horizon of --run (integer or 2^k)")
    lb.add_argument("--seeds", type=int, help="seeds of --run")
    lb.add_argument(
        "--worst",
        help="the worst.csv whose adversaries --run plays (default: the preset's, results/worstcase/worst.csv)",
    )
    lb.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    lb.add_argument("--no-figures", action="store_true", help="write the tables and the page, not the figures")
    lb.add_argument(
        "--pack",
        action="store_true",
        help="also write trials.sqlite.xz, the store compacted for committing (fastcdl.experiments.packed)",
    )
    lb.add_argument("--no-progress", action="store_true", help="no progress bar")
    lb.set_defaults(func=cmd_leaderboard)

    w = sub.add_parser("warmup", help="compile every kernel once (later processes load them from the cache)")
    w.add_argument("--only", help="comma-separated groups: metrics, binning, online (default: all)")
    w.add_argument(
        "--jobs",
        type=int,
        default=min(os.cpu_count() or 1, 4),
        help="processes that share the steps (default: the CPUs, at most 4; each kernel is still compiled once)",
    )
    w.set_defaults(func=cmd_warmup)
    return ap


def _import_from_the_current_folder() -> None:
    """Plug-ins named 'my_plugins:ATTR' are imported from the current folder, as `python -m
    fastcdl` finds them: the console script's sys.path starts with its own folder, not this one.
    Appended, so a file of the current folder never shadows an installed package; the local
    pool's workers inherit the path (Dask workers need the module importable on their hosts)."""
    import os

    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.append(here)


def main(argv=None) -> int:
    _import_from_the_current_folder()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader closed the pipe (fastcdl metrics FILE | head): a normal end
        _stdout_to_devnull()
        return 0
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


def _stdout_to_devnull() -> None:
    """Point standard output at /dev/null, so that the interpreter's last flush of what is
    still buffered does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor (captured output)
        pass


def _one_line(head: str, e) -> str:
    text = f"{head}: {e}" if e is not None and str(e) else head
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
