"""A grid of worst-case searches and the folder it writes (``fastcdl worst``).

WorstPlan (which searches: forecasters, horizons, families, budget), run_plan (run or resume
them into a folder: trials.sqlite, worst.csv, families.csv, candidates.csv, cross.csv and the
slopes), the rows of those files with their intervals, and pack_folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from fastcdl.experiments.families import FAMILIES, family_for, grid_coordinates
from fastcdl.experiments.runner import trial_seed
from fastcdl.experiments.store import params_json
from fastcdl.experiments.worst_report import worst_figure
from fastcdl.experiments.workers import connect
from fastcdl.experiments.worst_search import FRESH_MASTER, Budget, Evaluator, SearchResult, search, transfer, trial_pool


def interval(values, *cell) -> tuple[float, float, float]:
    """Mean and 95% interval of the mean over seeds: the rate experiments' studentized
    bootstrap (:func:`fastcdl.experiments.analysis.mean_interval`), its stream seeded by the
    cell's labels, so a cell's interval does not depend on what else was run."""
    from fastcdl.experiments.analysis import cell_rng, mean_interval

    return mean_interval(values, rng=cell_rng(FRESH_MASTER, "worst", *cell))


WORST_COLUMNS = ("forecaster", "adversary", "adversary_params", "T", "metric", "mean", "lo", "hi", "n_seeds")
CANDIDATE_COLUMNS = (
    "forecaster",
    "T",
    "m",
    "stage",
    "adversary",
    "adversary_params",
    "grid",
    "search_mean_cdl",
    "search_seeds",
    "final_mean_cdl",
    "final_seeds",
    "deep_mean_cdl",
    "deep_seeds",
)
FAMILY_COLUMNS = (
    "forecaster",
    "T",
    "m",
    "family",
    "adversary_params",
    "grid",
    "final_mean_cdl",
    "final_seeds",
    "winner_final_mean_cdl",
    "ratio_to_winner",
    "deep_mean_cdl",
    "is_winner",
)


def worst_rows(result: SearchResult, metrics=("cdl", "ece", "vcdl", "k2", "ucal")) -> list[dict]:
    """worst.csv rows of a search: each metric's mean over the fresh seeds with its interval."""
    out = []
    for m in metrics:
        mean, lo, hi = interval([r[m] for r in result.fresh], result.forecaster, m, result.T)
        out.append(
            dict(
                forecaster=result.forecaster,
                adversary=result.adversary,
                adversary_params=json.dumps(result.params, sort_keys=True),
                T=result.T,
                metric=m,
                mean=mean,
                lo=lo,
                hi=hi,
                n_seeds=len(result.fresh),
            )
        )
    return out


def family_rows(result: SearchResult, final_seeds: int) -> list[dict]:
    """families.csv rows of a search: the best candidate of every family next to the winner."""
    out = []
    w = result.winner()
    top = w.final_mean if w is not None else result.search_mean
    for fam, c in sorted(result.best_of_families().items(), key=lambda kv: -kv[1].final_mean):
        out.append(
            dict(
                forecaster=result.forecaster,
                T=result.T,
                m=result.m if result.m is not None else "",
                family=fam,
                adversary_params=params_json(c.params),
                grid=grid_coordinates(FAMILIES[fam], c.params, result.T, result.m) if fam in FAMILIES else "",
                final_mean_cdl=c.final_mean,
                final_seeds=final_seeds,
                winner_final_mean_cdl=top,
                ratio_to_winner=c.final_mean / top if top > 0 else float("nan"),
                deep_mean_cdl="" if c.deep_mean is None else c.deep_mean,
                is_winner=int(fam == result.adversary and c.params == result.params),
            )
        )
    return out


_BUDGET_KEYS = tuple(f.name for f in fields(Budget))  # the keys a plan file may set


@dataclass(frozen=True)
class WorstPlan:
    """Which searches to run: forecasters, horizons with a full search, horizons reached by
    transfer from the next smaller one (per forecaster), the families searched (default:
    all) and their ranges, and the search's budget (:class:`Budget`)."""

    forecasters: tuple
    search_horizons: tuple
    transfer_horizons: dict = field(default_factory=dict)  # forecaster -> horizons
    families: tuple = ()
    ranges: dict = field(default_factory=dict)  # family -> {parameter: (lo, hi) or {lo, hi, units}}
    budget: Budget = field(default_factory=Budget)
    cross_horizons: tuple = ()  # every forecaster against every forecaster's winner, on fresh seeds
    known: tuple = ()  # (forecaster, T, adversary, params): candidates that compete at that search

    def known_for(self, forecaster, T) -> list:
        return [(a, json.loads(p)) for f, t, a, p in self.known if f == forecaster and t == T]

    @property
    def search_seeds(self):
        return self.budget.search_seeds

    @property
    def fresh_seeds(self):
        return self.budget.fresh_seeds

    @classmethod
    def load(cls, name_or_path) -> "WorstPlan":
        """A plan from a TOML file, or the built-in ``worstcase`` plan by name."""
        import tomllib
        from importlib import resources
        from pathlib import Path

        from fastcdl.experiments.presets import PresetError, parse_horizon

        path = Path(name_or_path)
        if path.suffix == ".toml":
            if not path.is_file():
                raise PresetError(f"worst-case plan file {str(path)!r} does not exist")
            text = path.read_text()
        else:
            f = resources.files("fastcdl.experiments").joinpath("presets", "worst", f"{name_or_path}.toml")
            if not f.is_file():
                raise PresetError(f"unknown worst-case plan {name_or_path!r} (built-in: worstcase)")
            text = f.read_text()
        raw = tomllib.loads(text)
        known = {
            "name",
            "description",
            "forecasters",
            "search_horizons",
            "transfer_horizons",
            "cross_horizons",
            "families",
            "ranges",
            "known",
            *_BUDGET_KEYS,
        }
        extra = sorted(set(raw) - known)
        if extra:
            raise PresetError(f"worst-case plan: unknown key {extra[0]!r} (keys: {', '.join(sorted(known))})")
        return cls.make(
            forecasters=raw.get("forecasters", ["cdl"]),
            search_horizons=[parse_horizon(t, "search_horizons") for t in raw.get("search_horizons", [])],
            transfer_horizons={
                k: [parse_horizon(t, "transfer_horizons") for t in v]
                for k, v in raw.get("transfer_horizons", {}).items()
            },
            cross_horizons=[parse_horizon(t, "cross_horizons") for t in raw.get("cross_horizons", [])],
            families=raw.get("families", ()),
            ranges=raw.get("ranges", {}),
            known=[
                (
                    k.get("forecaster"),
                    parse_horizon(k.get("T", "?"), "known.T"),
                    k.get("adversary"),
                    k.get("params", {}),
                )
                for k in raw.get("known", [])
            ],
            **{k: raw[k] for k in _BUDGET_KEYS if k in raw},
        )

    @classmethod
    def make(
        cls,
        *,
        forecasters,
        search_horizons,
        transfer_horizons=None,
        cross_horizons=(),
        families=(),
        ranges=None,
        budget=None,
        known=(),
        **budget_fields,
    ) -> "WorstPlan":
        """A checked plan (ValueError naming the problem)."""
        from fastcdl._validate import ValidationError
        from fastcdl.online import registry

        for f in forecasters:
            registry.forecaster(f)
        transfer_horizons = _checked_horizons(forecasters, search_horizons, transfer_horizons)
        b = _checked_budget(budget, budget_fields)
        ranges = dict(ranges or {})
        families = tuple(families or ())
        for fam in ranges:
            if families and fam not in families:
                raise ValidationError("ranges", f"names family {fam!r}, which the plan does not search")
        planned = set(search_horizons) | {T for Ts in transfer_horizons.values() for T in Ts}
        for f in forecasters:  # every family and range checked against every forecaster
            for name in families or FAMILIES:
                family_for(name, f, min(planned), ranges=ranges.get(name))
        for T in cross_horizons:
            if T not in planned:
                raise ValidationError("cross_horizons", f"{T} is not a horizon of the plan")
        checked_known = [_checked_known(k, forecasters, planned, families or FAMILIES) for k in known]
        return cls(
            tuple(forecasters),
            tuple(sorted(search_horizons)),
            {f: tuple(sorted(v)) for f, v in transfer_horizons.items()},
            families,
            ranges,
            b,
            cross_horizons=tuple(sorted(cross_horizons)),
            known=tuple(checked_known),
        )


def _checked_horizons(forecasters, search_horizons, transfer_horizons) -> dict:
    """The transfer horizons as a dict, after checking every horizon of a plan."""
    from fastcdl._validate import ValidationError, check_horizon

    if not search_horizons:
        raise ValidationError("search_horizons", "must name at least one horizon")
    for T in search_horizons:
        check_horizon(T, "T", low=2)
    transfer_horizons = dict(transfer_horizons or {})
    for f, Ts in transfer_horizons.items():
        if f not in forecasters:
            raise ValidationError("transfer_horizons", f"names {f!r}, which is not a planned forecaster")
        for T in Ts:
            if check_horizon(T, "T", low=2) <= max(search_horizons):
                raise ValidationError(
                    "transfer_horizons", f"{T} must exceed the largest searched horizon {max(search_horizons)}"
                )
    return transfer_horizons


def _checked_budget(budget, budget_fields) -> Budget:
    """The plan's Budget from ``budget`` and keyword fields, each checked."""
    from dataclasses import asdict

    from fastcdl._validate import ValidationError, check_int

    fields = asdict(budget) if isinstance(budget, Budget) else {}
    fields.update(budget_fields)
    for k, v in fields.items():
        if k not in _BUDGET_KEYS:
            raise ValidationError(k, f"is not a budget key ({', '.join(_BUDGET_KEYS)})")
        check_int(v, k, low=1 if k not in ("search_seeds", "fresh_seeds", "final_seeds", "deep_seeds") else 2)
    b = Budget(**fields)
    if b.deep_seeds < b.final_seeds:
        raise ValidationError("deep_seeds", f"must be at least final_seeds = {b.final_seeds}", value=b.deep_seeds)
    if b.final_seeds < b.search_seeds:
        raise ValidationError("final_seeds", f"must be at least search_seeds = {b.search_seeds}", value=b.final_seeds)
    return b


def _checked_known(entry, forecasters, planned, families) -> tuple:
    """One known adversary of a plan, (forecaster, T, adversary, params as JSON), checked."""
    from fastcdl._validate import ValidationError
    from fastcdl.online import registry

    f, T, adversary, params = entry
    if f not in forecasters:
        raise ValidationError("known", f"names forecaster {f!r}, which the plan does not search")
    if T not in planned:
        raise ValidationError("known", f"names T = {T}, which is not a horizon of the plan")
    if adversary not in families:
        raise ValidationError("known", f"names adversary {adversary!r}, which is not a family of the plan")
    try:
        registry.adversary(adversary).resolve_params(params, T)
    except ValueError as e:
        raise ValidationError("known", f"{adversary} for {f} at T = {T}: {e}") from None
    return (f, T, adversary, params_json(params))


def run_plan(plan: WorstPlan, out_dir, *, workers=None, scheduler=None, progress=True) -> list[SearchResult]:
    """Run (or resume) every search of the plan into out_dir: trials.sqlite (every trial),
    then worst.csv, families.csv, candidates.csv and the slopes, written atomically once the
    whole plan is done. ``scheduler``: a Dask scheduler address (default: a local pool)."""
    from contextlib import nullcontext
    from pathlib import Path

    from fastcdl.experiments.packed import unpack
    from fastcdl.experiments.store import TrialStore, run_lock

    out = Path(out_dir)
    results = []
    with connect(scheduler) if scheduler else nullcontext() as client:
        out.mkdir(parents=True, exist_ok=True)
        with run_lock(out):  # one run per folder at a time (StoreError naming the holder)
            unpack(out)  # a committed folder keeps its store as trials.sqlite.xz
            pool = trial_pool(workers, client)
            with TrialStore(out / "trials.sqlite") as store:
                try:
                    _run_searches(plan, store, pool, results, progress)
                    cross = _cross(plan, store, pool, results)
                finally:
                    pool.close()
                    store.checkpoint()
            _write(plan, out, results, cross)
    return results


def _cross(plan, store, pool, results) -> list[dict]:
    """At each cross horizon, every forecaster of the plan against every forecaster's worst
    adversary, on the fresh seeds: does the adversary that is worst for one forecaster
    separate it from the others? Rows: each metric's mean and t-interval, plus the paired
    difference (same seed index) to the forecaster the adversary was found for."""
    out = []
    for T in plan.cross_horizons:
        winners = [r for r in results if r.T == T]
        for w in winners:
            ev = {f: Evaluator(f, None, T, store, pool) for f in plan.forecasters}
            rows = {f: ev[f].rows([(w.adversary, w.params)], plan.fresh_seeds, FRESH_MASTER)[0] for f in ev}
            for f, rs in rows.items():
                for m in ("cdl", "ece"):
                    mean, lo, hi = interval([r[m] for r in rs], "cross", w.forecaster, f, m, T)
                    dmean, dlo, dhi = interval(
                        [a[m] - b[m] for a, b in zip(rs, rows[w.forecaster])], "diff", w.forecaster, f, m, T
                    )
                    out.append(
                        dict(
                            T=T,
                            worst_for=w.forecaster,
                            adversary=w.adversary,
                            adversary_params=params_json(w.params),
                            forecaster=f,
                            metric=m,
                            mean=mean,
                            lo=lo,
                            hi=hi,
                            diff_to_worst_for=dmean,
                            diff_lo=dlo,
                            diff_hi=dhi,
                            n_seeds=len(rs),
                        )
                    )
    return out


def _run_searches(plan, store, pool, results, progress):
    kw = dict(families=plan.families or None, ranges=plan.ranges, budget=plan.budget, pool=pool)
    for f in plan.forecasters:
        last = None
        for T in plan.search_horizons:
            last = search(f, T, store, previous=last, known=plan.known_for(f, T), **kw)
            results.append(last)
            if progress:
                print(_line(last), flush=True)
        for T in plan.transfer_horizons.get(f, ()):
            last = transfer(f, T, store, last, known=plan.known_for(f, T), **kw)
            results.append(last)
            if progress:
                print(_line(last), flush=True)


CROSS_COLUMNS = (
    "T",
    "worst_for",
    "adversary",
    "adversary_params",
    "forecaster",
    "metric",
    "mean",
    "lo",
    "hi",
    "diff_to_worst_for",
    "diff_lo",
    "diff_hi",
    "n_seeds",
)


def _write(plan, out, results, cross):
    from fastcdl._writing import atomic_write, csv_text

    rows = [w for r in results for w in worst_rows(r)]
    b = plan.budget
    cand_rows = [
        dict(
            forecaster=r.forecaster,
            T=r.T,
            m=r.m if r.m is not None else "",
            stage=c.stage,
            adversary=c.family,
            adversary_params=params_json(c.params),
            grid=grid_coordinates(FAMILIES[c.family], c.params, r.T, r.m) if c.family in FAMILIES else "",
            search_mean_cdl=c.search_mean,
            search_seeds=b.search_seeds,
            final_mean_cdl="" if c.final_mean is None else c.final_mean,
            final_seeds="" if c.final_mean is None else b.final_seeds,
            deep_mean_cdl="" if c.deep_mean is None else c.deep_mean,
            deep_seeds="" if c.deep_mean is None else b.deep_seeds,
        )
        for r in results
        for c in r.candidates
    ]
    fam_rows = [x for r in results for x in family_rows(r, b.final_seeds)]
    files = {
        out / "worst.csv": csv_text(rows, WORST_COLUMNS),
        out / "families.csv": csv_text(fam_rows, FAMILY_COLUMNS),
        out / "candidates.csv": csv_text(cand_rows, CANDIDATE_COLUMNS),
    }
    if cross:
        files[out / "cross.csv"] = csv_text(cross, CROSS_COLUMNS)
    slopes, forms = worst_slopes(results)
    if slopes:
        from fastcdl.experiments.analysis import SUMMARY_COLUMNS
        from fastcdl.experiments.forms import FORMS_COLUMNS

        files[out / "worst_slopes.csv"] = csv_text(slopes, SUMMARY_COLUMNS)
        files[out / "forms.csv"] = csv_text(forms, FORMS_COLUMNS)
    atomic_write(files)
    if len({r.T for r in results}) > 1:
        worst_figure(rows, out / "worst.png")


def worst_slopes(results, metrics=("cdl", "ece")) -> tuple[list[dict], list[dict]]:
    """Slopes of the worst-case means against T per forecaster (fastcdl.experiments.analysis,
    adversary "worst"), and the constants of the forms the theory predicts
    (fastcdl.experiments.forms): the fresh seeds share their indices across horizons, as a
    rate experiment's seeds do, though the adversary may differ from one horizon to the next."""
    from fastcdl.experiments.analysis import analyze
    from fastcdl.experiments.forms import ALL_FORMS, form_fits

    rows = [
        dict(
            forecaster_label=label(r.forecaster),
            adversary_label="worst",
            forecaster=r.forecaster,
            forecaster_params="{}",
            T=r.T,
            seed_index=x["seed_index"],
            **{m: x[m] for m in metrics},
        )
        for r in results
        for x in r.fresh
    ]
    return analyze(rows, list(metrics), seed=FRESH_MASTER)[1], form_fits(rows, list(metrics), forms=ALL_FORMS)


def label(forecaster: str) -> str:
    """How a searched forecaster is shown: its name, and a plug-in ("module:NAME") by its own
    name, as ``rates`` and ``leaderboard`` show it (fastcdl.experiments.presets.plugin_label)."""
    from fastcdl.experiments.presets import plugin_label

    return plugin_label("forecaster", forecaster) or forecaster


def _line(r: SearchResult) -> str:
    mean, lo, hi = interval([x["cdl"] for x in r.fresh], r.forecaster, "cdl", r.T)
    return (
        f"{label(r.forecaster):<8} T = {r.T:<8} worst: {r.adversary} {params_json(r.params)}  "
        f"CDL {mean:.4g} [{lo:.4g}, {hi:.4g}] on {len(r.fresh)} fresh seeds (search {r.search_mean:.4g})"
    )


def pack_folder(folder) -> Path:
    """trials.sqlite.xz of a worst-case folder (fastcdl.experiments.packed): the bucket tables
    of the fresh-seed runs kept, the search's dropped (their metrics stay)."""
    from pathlib import Path

    from fastcdl.experiments.packed import pack

    fresh = ", ".join(str(trial_seed(FRESH_MASTER, i)) for i in range(64))
    return pack(Path(folder) / "trials.sqlite", f"seed IN ({fresh})")
