"""Rate-experiment presets: readable TOML files, checked completely before any work starts.

A preset names the forecasters and adversaries (each with parameters and an optional
label), the horizon grid T = 2^k for t_min <= T <= t_max, the number of seeds and the
master seed from which every trial's seed derives. docs/experiments.md lists every key; a
key not listed there is an error that names it.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from fastcdl._validate import MAX_HORIZON, ValidationError, check_count, check_horizon, check_int


def _names(kind):
    """The built-in names of a kind, from its registry (fastcdl.online.registry, fastcdl.trial_measures)."""
    from fastcdl.online import registry
    from fastcdl.trial_measures import METRICS

    return {"forecaster": registry.forecasters, "adversary": registry.adversaries, "metric": lambda: METRICS}[kind]()


def _known(kind, name) -> bool:
    """A built-in name of the kind, or a plug-in 'package.module:ATTRIBUTE' that loads as one."""
    if name in _names(kind):
        return True
    if isinstance(name, str) and ":" in name:
        from fastcdl.online import registry

        try:
            getattr(registry, kind)(name)
        except ValueError as e:
            raise PresetError(str(e)) from None
        return True
    return False


_PRESET_KEYS = {
    "name",
    "description",
    "master_seed",
    "seeds",
    "t_min",
    "t_max",
    "metrics",
    "forecasters",
    "adversaries",
    "worst",
    "skip_refused",
}

#: ``forecasters = "registered"`` in a preset: every forecaster of the registry, read when it loads.
REGISTERED = "registered"


class PresetError(ValueError):
    """A preset or an option that cannot be run (raised before any trial starts).

    A ValueError whose message names the preset, the entry and what is allowed.

    Examples
    --------
    >>> try:
    ...     load_preset("nope")
    ... except PresetError as e:
    ...     print(str(e)[:22])
    unknown preset 'nope';
    """


def _checked(where, check, *args):
    """check(*args) from fastcdl._validate, its ValidationError told as a PresetError."""
    try:
        return check(*args)
    except ValidationError as e:
        raise PresetError(f"{where}: {e}" if where else str(e)) from None


@dataclass(frozen=True)
class Component:
    """A forecaster or adversary: its registered name, parameters and display label."""

    name: str
    params: tuple = ()  # sorted (key, value) pairs, hashable
    label: str = ""

    @property
    def param_dict(self) -> dict:
        return dict(self.params)

    @property
    def display(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class Preset:
    """A rate experiment: which forecasters against which adversaries, at which horizons,
    over how many seeds (docs/experiments.md); frozen.

    Attributes
    ----------
    name : str
        The preset's name.
    description : str
        One line.
    master_seed : int
        Seeds every trial (:func:`trial_seed`).
    seeds : int
        Runs per forecaster, adversary and horizon.
    t_min, t_max : int
        The horizons are the powers of two between them (:attr:`horizons`).
    forecasters, adversaries : tuple of Component
        Each a registered name (or plug-in), parameters and a display label.
    metrics : tuple of str
        The trial metrics to analyse; () means every one.
    worst : str
        The path of a worst-case search's worst.csv (results/worstcase), or "": each forecaster's
        worst adversary found at T joins the adversaries at T, labelled "worst(<forecaster>)"
        (:meth:`adversaries_at`), read when the trials are planned.
    skip_refused : bool
        Skip the forecaster x adversary pairs the engine refuses (the truthful forecaster against an
        adversary that states no probability) instead of rejecting the preset (``fastcdl.experiments.runner.refusal``).
    source : str
        Where it was loaded from ("builtin:quick", a path).

    Examples
    --------
    >>> p = load_preset("quick")
    >>> p.name, p.horizons[:3], p.metrics
    ('quick', [1024, 2048, 4096], ('cdl', 'vcdl', 'ece', 'k2', 'ucal'))
    """

    name: str
    description: str
    master_seed: int
    seeds: int
    t_min: int
    t_max: int
    forecasters: tuple
    adversaries: tuple
    metrics: tuple = ()  # () means every metric of fastcdl.trial_measures
    worst: str = ""
    skip_refused: bool = False
    source: str = field(default="", compare=False)

    def __post_init__(self):
        if not self.metrics:
            object.__setattr__(self, "metrics", tuple(_names("metric")))

    @property
    def horizons(self) -> list[int]:
        """T = 2^k for every k with t_min <= 2^k <= t_max."""
        lo = math.ceil(math.log2(self.t_min))
        hi = math.floor(math.log2(self.t_max))
        return [2**k for k in range(lo, hi + 1)]

    def adversaries_at(self, T: int) -> tuple:
        """The adversaries at horizon T: the preset's, then each searched forecaster's worst
        adversary found at T when the preset names a worst.csv (none at a horizon the search did
        not cover).

        Parameters
        ----------
        T : int
            A horizon of the grid.

        Returns
        -------
        tuple of Component

        Raises
        ------
        PresetError
            When the worst.csv named cannot be read (``worst_adversaries``).

        Examples
        --------
        >>> [a.display for a in load_preset("quick").adversaries_at(1024)]
        ['bernoulli', 'drift', 'greedy']
        """
        if not self.worst:
            return self.adversaries
        return self.adversaries + tuple(w for (_, t), w in worst_adversaries(self.worst).items() if t == T)

    def to_dict(self) -> dict:
        """The preset as plain data (JSON-ready), horizons included.

        Returns
        -------
        dict

        Examples
        --------
        >>> load_preset("quick").to_dict()["t_min"]
        1024
        """
        comp = lambda c: {"name": c.name, "params": c.param_dict, "label": c.display}  # noqa: E731
        return {
            "name": self.name,
            "description": self.description,
            "master_seed": self.master_seed,
            "seeds": self.seeds,
            "t_min": self.t_min,
            "t_max": self.t_max,
            "horizons": self.horizons,
            "metrics": list(self.metrics),
            "forecasters": [comp(c) for c in self.forecasters],
            "adversaries": [comp(c) for c in self.adversaries],
            "worst": self.worst,
            "skip_refused": self.skip_refused,
        }

    def to_toml(self) -> str:
        """The preset as a TOML file that loads back to an equal preset.

        Returns
        -------
        str

        Examples
        --------
        >>> load_preset("quick").to_toml().splitlines()[0]
        'name = "quick"'
        """
        lines = [
            f"name = {json.dumps(self.name)}",
            f"description = {json.dumps(self.description)}",
            f"master_seed = {self.master_seed}",
            f"seeds = {self.seeds}",
            f"t_min = {self.t_min}",
            f"t_max = {self.t_max}",
            f"metrics = {json.dumps(list(self.metrics))}",
        ]
        if self.worst:
            lines.append(f"worst = {json.dumps(self.worst)}")
        if self.skip_refused:
            lines.append("skip_refused = true")
        for table, comps in (("forecasters", self.forecasters), ("adversaries", self.adversaries)):
            for c in comps:
                lines += ["", f"[[{table}]]", f"name = {json.dumps(c.name)}"]
                if c.label:
                    lines.append(f"label = {json.dumps(c.label)}")
                if c.params:
                    inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in c.params)
                    lines.append(f"params = {{ {inner} }}")
        return "\n".join(lines) + "\n"


def builtin_presets() -> list[str]:
    return sorted(
        p.name[:-5] for p in resources.files(__package__).joinpath("presets").iterdir() if p.name.endswith(".toml")
    )


def load_preset(name_or_path: str) -> Preset:
    """Load a built-in preset by name ("quick", "paper", "msweep") or a TOML file by path.

    Parameters
    ----------
    name_or_path : str or Path
        A built-in name, or the path of a TOML file.

    Returns
    -------
    Preset

    Raises
    ------
    PresetError
        For an unknown name, an unreadable or invalid file, or an entry that cannot be run.

    Examples
    --------
    >>> load_preset("quick").seeds
    8
    """
    path = Path(name_or_path)
    if name_or_path in builtin_presets():
        text = resources.files(__package__).joinpath("presets", f"{name_or_path}.toml").read_text()
        source = f"builtin:{name_or_path}"
    elif path.suffix == ".toml" or path.exists():
        try:
            text = path.read_text()
        except OSError as e:
            raise PresetError(f"cannot read preset {path}: {e.strerror}") from None
        source = str(path)
    else:
        raise PresetError(
            f"unknown preset {name_or_path!r}; built-in presets are {builtin_presets()} (or give a .toml path)"
        )
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PresetError(f"preset {source} is not valid TOML: {e}") from None
    return preset_from_dict(raw, source=source)


def _component(entry, kind: str, where: str) -> Component:
    if not isinstance(entry, dict) or "name" not in entry:
        raise PresetError(f"{where}: each {kind} needs a name")
    extra = set(entry) - {"name", "params", "label"}
    if extra:
        raise PresetError(
            f"{where}: unknown key(s) {sorted(extra)} in {kind} {entry.get('name')!r}; "
            "allowed: ['label', 'name', 'params']"
        )
    name = entry["name"]
    if not _known(kind, name):
        raise PresetError(
            f"{where}: unknown {kind} {name!r}; choose from {list(_names(kind))} "
            "or a plug-in 'package.module:ATTRIBUTE'"
        )
    params = entry.get("params", {})
    if not isinstance(params, dict):
        raise PresetError(f"{where}: params of {kind} {name!r} must be a table")
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise PresetError(f"{where}: parameter {k!r} of {kind} {name!r} must be a number or a string")
    label = entry.get("label", "")
    if not isinstance(label, str):
        raise PresetError(f"{where}: label of {kind} {name!r} must be a string")
    return Component(name, tuple(sorted(params.items())), label or plugin_label(kind, name))


def plugin_label(kind, name) -> str:
    """The label of a plug-in given without one: its own name ('gridfreq'), not its module path
    ('my_plugins:GRIDFREQ'); "" for a built-in (labelled by its name)."""
    if ":" not in name:
        return ""
    from fastcdl.online import registry

    return getattr(registry, kind)(name).name


def _positive_int(raw, key, where, minimum=1):
    return _checked(where, check_count, raw.get(key), key, minimum)


def _horizon(raw, key, where):
    return _checked(where, check_horizon, _positive_int(raw, key, where, 2), key, 2)


def preset_from_dict(raw: dict, *, source: str = "") -> Preset:
    where = f"preset {source or raw.get('name', '?')}"
    unknown = set(raw) - _PRESET_KEYS
    if unknown:
        raise PresetError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(_PRESET_KEYS)}")
    for key in ("name", "seeds", "t_min", "t_max", "forecasters", "adversaries"):
        if key not in raw:
            raise PresetError(f"{where}: missing {key!r} (docs/experiments.md lists a preset's keys)")
    if raw["forecasters"] == REGISTERED:
        raw = {**raw, "forecasters": [{"name": n} for n in _names("forecaster")]}
    if not isinstance(raw["forecasters"], list) or not raw["forecasters"]:
        raise PresetError(f"{where}: forecasters must be a non-empty list or {REGISTERED!r}")
    if not isinstance(raw["adversaries"], list) or not raw["adversaries"]:
        raise PresetError(f"{where}: adversaries must be a non-empty list")
    metrics = tuple(raw.get("metrics", _names("metric")))
    bad = [m for m in metrics if m not in _names("metric")]
    if bad:
        raise PresetError(f"{where}: unknown metric(s) {bad}; choose from {list(_names('metric'))}")
    preset = Preset(
        name=str(raw["name"]),
        description=str(raw.get("description", "")),
        master_seed=_positive_int(raw, "master_seed", where, 0) if "master_seed" in raw else 0,
        seeds=_positive_int(raw, "seeds", where, 2),
        t_min=_horizon(raw, "t_min", where),
        t_max=_horizon(raw, "t_max", where),
        forecasters=tuple(_component(e, "forecaster", where) for e in raw["forecasters"]),
        adversaries=tuple(_component(e, "adversary", where) for e in raw["adversaries"]),
        metrics=metrics,
        worst=_worst_path(raw.get("worst", ""), where),
        skip_refused=_flag(raw.get("skip_refused", False), "skip_refused", where),
        source=source,
    )
    return check_preset(preset)


def _flag(v, key, where) -> bool:
    if not isinstance(v, bool):
        raise PresetError(f"{where}: {key} must be true or false, got {v!r}")
    return v


def _worst_path(v, where) -> str:
    if not isinstance(v, str):
        raise PresetError(f"{where}: worst must be the path of a worst.csv (a string), got {v!r}")
    return v


def worst_adversaries(path) -> dict:
    """Each searched forecaster's worst adversary per horizon, from a worst-case search's worst.csv.

    Read every time it is called (the file may be rewritten by a search in progress). Cost:
    one pass over the file.

    Parameters
    ----------
    path : str or Path
        The worst.csv of ``fastcdl worst`` (columns forecaster, adversary, adversary_params, T, ...).

    Returns
    -------
    dict of (str, int) to Component
        {(forecaster, T): the winner at T}, labelled "worst(<forecaster>)", in the file's order.

    Raises
    ------
    PresetError
        A missing or unreadable file, a missing column, an unknown adversary, or two winners
        for one forecaster and T.

    Examples
    --------
    >>> w = worst_adversaries("results/worstcase/worst.csv")  # doctest: +SKIP
    >>> w["cdl", 1024].display  # doctest: +SKIP
    'worst(cdl)'
    """
    import csv

    path = Path(path)
    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as e:
        raise PresetError(
            f"cannot read the worst adversaries {path}: {e.strerror} (give the worst.csv of "
            "`fastcdl worst`, e.g. results/worstcase/worst.csv from the repository's root)"
        ) from None
    need = {"forecaster", "adversary", "adversary_params", "T"}
    if rows and not need <= set(rows[0]):
        raise PresetError(f"{path}: a worst.csv needs the columns {sorted(need)}, got {sorted(rows[0])}")
    out = {}
    for i, r in enumerate(rows):
        try:
            params = json.loads(r["adversary_params"])
            T = int(r["T"])
        except ValueError:
            raise PresetError(f"{path}: row {i} (0-based) has unreadable adversary_params or T") from None
        if not isinstance(params, dict) or not _known("adversary", r["adversary"]):
            raise PresetError(f"{path}: row {i} (0-based) names no adversary this version knows: {r['adversary']!r}")
        c = Component(r["adversary"], tuple(sorted(params.items())), f"worst({r['forecaster']})")
        if out.setdefault((r["forecaster"], T), c) != c:
            raise PresetError(f"{path}: two worst adversaries for {r['forecaster']} at T = {T}")
    return out


def check_preset(preset: Preset) -> Preset:
    """Reject what cannot run: empty grids, duplicate labels, truthful against a non-stochastic adversary."""
    where = f"preset {preset.source or preset.name}"
    if preset.t_min > preset.t_max:
        raise PresetError(f"{where}: t_min ({preset.t_min}) exceeds t_max ({preset.t_max})")
    if len(preset.horizons) < 2:
        raise PresetError(
            f"{where}: the grid {preset.t_min}..{preset.t_max} holds fewer than two powers of 2; a slope needs at least two horizons"
        )
    if preset.seeds < 2:
        raise PresetError(f"{where}: seeds must be >= 2 for confidence intervals")
    for kind, comps in (("forecaster", preset.forecasters), ("adversary", preset.adversaries)):
        labels = [c.display for c in comps]
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise PresetError(f"{where}: {kind} label(s) {dup} appear twice; give each entry a distinct label")
    if any(f.name == "truthful" for f in preset.forecasters) and not preset.skip_refused:
        from fastcdl.online import registry

        bad = [a.name for a in preset.adversaries if a.name not in registry.stochastic()]
        if bad:
            raise PresetError(f"{where}: the truthful forecaster needs a stochastic adversary, not {bad}")
    if not preset.skip_refused:
        _check_pairings(preset, where)
    return preset


def _check_pairings(preset, where) -> None:
    """The pairs the engine refuses by the specs alone (fastcdl.online.plugins.check_pairing: a
    forecaster that needs the true mean against an adversary without one, a K-point forecaster
    against a two-point adversary), named in a PresetError; a name the registries do not know is
    left to the run's own error."""
    from fastcdl._validate import ValidationError
    from fastcdl.online import plugins, registry

    for f in preset.forecasters:
        for a in preset.adversaries:
            try:
                fs, as_ = registry.forecaster(f.name), registry.adversary(a.name)
            except ValidationError:
                continue
            try:
                plugins.check_pairing(fs, as_)
            except ValidationError as e:
                raise PresetError(f"{where}: {e} (or set skip_refused = true)") from None


def parse_horizon(text, name="horizon") -> int:
    """An integer horizon in 2..2^62, written plainly (1024, 1e6) or as 2^k; ``name`` (an option
    or key, "--t-max") names it in messages."""
    s = str(text).strip()
    if s.startswith("2^"):
        k = s[2:]
        if not k.isdigit():
            raise PresetError(f"{name} must be an integer or 2^k with k >= 1, got {text!r}")
        if int(k) > 62:  # checked before 2**k is built: 2^1000000000 is a 125 MB integer
            raise PresetError(f"{name} must be at most 2^62 (rounds are counted in 64-bit integers), got {text!r}")
        v = 2 ** int(k)
    else:
        try:
            v = int(s)
        except ValueError:
            try:
                v = float(s)
            except ValueError:
                raise PresetError(f"{name} must be an integer or 2^k, got {text!r}") from None
            if not v.is_integer():
                raise PresetError(f"{name} must be an integer >= 2, got {text!r}")
            v = int(v)
    if v < 2:
        raise PresetError(f"{name} must be an integer >= 2, got {text!r}")
    if v > MAX_HORIZON:
        raise PresetError(f"{name} must be at most 2^62 (rounds are counted in 64-bit integers), got {text!r}")
    return v


def override(
    preset: Preset, *, forecasters=None, adversaries=None, t_min=None, t_max=None, seeds=None, master_seed=None
) -> Preset:
    """A copy of the preset with fields replaced.

    Parameters
    ----------
    preset : Preset
        The preset to start from.
    forecasters, adversaries : list of str, optional
        Labels or names that select the preset's entries, or add entries with default
        parameters (a registered name or a plug-in "package.module:ATTRIBUTE").
    t_min, t_max : int, optional
        New horizons' bounds.
    seeds : int, optional
        New number of seeds.
    master_seed : int, optional
        New master seed.

    Returns
    -------
    Preset

    Raises
    ------
    PresetError
        For an unknown name or a bad value.

    Examples
    --------
    >>> p = override(load_preset("quick"), forecasters=["cdl"], t_max=4096, seeds=2)
    >>> [c.display for c in p.forecasters], p.horizons, p.seeds
    (['cdl'], [1024, 2048, 4096], 2)
    """

    def pick(names, current, kind):
        if names is None:
            return current
        out = []
        for n in names:
            hits = [c for c in current if c.display == n or c.name == n]
            if not hits:
                if not _known(kind, n):
                    raise PresetError(
                        f"unknown {kind} {n!r}; choose from {list(_names(kind))} "
                        "or a plug-in 'package.module:ATTRIBUTE'"
                    )
                hits = [Component(n, label=plugin_label(kind, n))]
            out += [h for h in hits if h not in out]
        return tuple(out)

    changes = {
        "forecasters": pick(forecasters, preset.forecasters, "forecaster"),
        "adversaries": pick(adversaries, preset.adversaries, "adversary"),
    }
    if t_min is not None:
        changes["t_min"] = parse_horizon(t_min, "t_min")
    if t_max is not None:
        changes["t_max"] = parse_horizon(t_max, "t_max")
    if seeds is not None:
        changes["seeds"] = _checked("", check_int, seeds, "seeds")
    if master_seed is not None:
        changes["master_seed"] = _checked("", check_count, master_seed, "master_seed", 0)
    # the description travels into the run folder's preset.toml: say what was overridden
    given = {
        "forecasters": forecasters,
        "adversaries": adversaries,
        "t_min": t_min,
        "t_max": t_max,
        "seeds": seeds,
        "master_seed": master_seed,
    }
    said = [f"{k}={','.join(v) if isinstance(v, (list, tuple)) else v}" for k, v in given.items() if v is not None]
    if said:
        changes["description"] = f"{preset.description} [overridden: {'; '.join(said)}]"
    return check_preset(replace(preset, **changes))
