"""Submission records of a leaderboard folder: for each forecaster, what its paper claims against
what the trials measure, in one JSON file (``submissions.json``), after RobustBench's convention
of claimed against measured.

A record holds the forecaster's key (a built-in name or a plug-in's "package.module:ATTRIBUTE"),
its algorithm version, the paper and its claimed rates per measure (``PAPER_RATES`` of
:mod:`fastcdl.experiments.paper_rates` for the
built-ins; ``--claim`` for a plug-in), and for every measure of the store what was measured: the
slowest decay over the environments finished at the largest horizon T* (the slope a worst-case
rate bounds) with its 95% interval and environment, and the forecaster's score (its worst
environment's mean at T*) with its interval and rank. With it, the command that reproduces it.

:func:`records` builds them from the tables of :mod:`fastcdl.experiments.leaderboard`;
:func:`write` keeps the claims of plug-ins already in the file (their papers are not in this
package) and replaces the rest; :func:`write_one` updates one forecaster's record (``fastcdl
leaderboard --add``, through :func:`fastcdl.experiments.leaderboard.record_submission`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from fastcdl._validate import ValidationError
from fastcdl.experiments.paper_rates import PAPER_RATES, PaperRate

__all__ = ["FILE", "parse_claim", "records", "write", "write_one"]

FILE = "submissions.json"


def _finite(v):
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _version(rows, label) -> str | None:
    """The forecaster part of its trials' algorithm version ("cdl/3", or a plug-in's with its code hash)."""
    for r in rows:
        if r["forecaster_label"] == label and r.get("algorithm_version"):
            for token in str(r["algorithm_version"]).split():
                if token.startswith("forecaster="):
                    return token[len("forecaster=") :]
    return None


def parse_claim(text: str) -> dict:
    """A claim "MEASURE=EXPONENT" or "MEASURE=EXPONENT,LOG_POWER": the rate T^b (log T)^c per round.

    >>> parse_claim("ece=-0.5,1")
    {'measure': 'ece', 'exponent': -0.5, 'log_power': 1.0}
    """
    from fastcdl.trial_measures import METRICS

    measure, sep, rate = str(text).partition("=")
    parts = rate.split(",")
    try:
        if not sep or len(parts) > 2:
            raise ValueError
        exponent = float(parts[0])
        log_power = float(parts[1]) if len(parts) == 2 else 0.0
    except ValueError:
        raise ValidationError(
            "claim", "must read MEASURE=EXPONENT or MEASURE=EXPONENT,LOG_POWER (the rate T^b (log T)^c)", value=text
        ) from None
    if measure not in METRICS:
        raise ValidationError("claim", f"names no trial measure (one of {', '.join(METRICS)})", value=text)
    if not (math.isfinite(exponent) and math.isfinite(log_power)):
        raise ValidationError("claim", "needs finite numbers", value=text)
    return {"measure": measure, "exponent": exponent, "log_power": log_power}


def _claims_of(label, given):
    if given is not None:
        return given
    paper = PAPER_RATES.get(label)
    if paper is None:
        return None, []
    return paper.text, [{"measure": paper.measure, "exponent": paper.exponent, "log_power": paper.log_power}]


def records(rows, tables, *, claims=None, commands=None) -> dict:
    """{forecaster label: record} from a folder's rows and the output of leaderboard's ``_tables``.

    claims: {label: (paper text, [claim dicts])} overriding :data:`PAPER_RATES`; commands:
    {label: command}.
    """
    measures, T_star, _, ranked, _, _, slopes = tables
    claims, commands = claims or {}, commands or {}
    out = {}
    for label in dict.fromkeys(r["forecaster_label"] for r in rows):
        key = next(r["forecaster"] for r in rows if r["forecaster_label"] == label)
        paper, claimed = _claims_of(label, claims.get(label))
        measured = {}
        for m in measures:
            mine = [
                s
                for s in slopes
                if s["metric"] == m
                and s["forecaster"] == label
                and s.get("t_max_fit") == T_star
                and _finite(s.get("slope")) is not None
            ]
            worst = max(mine, key=lambda s: s["slope"], default=None)
            rank = next((r for r in ranked if r["measure"] == m and r["forecaster"] == label), None)
            measured[m] = {
                "slope": None if worst is None else _finite(worst["slope"]),
                "slope_lo": None if worst is None else _finite(worst["slope_lo"]),
                "slope_hi": None if worst is None else _finite(worst["slope_hi"]),
                "slope_environment": None if worst is None else worst["adversary"],
                "t_min_fit": None if worst is None else int(worst["t_min_fit"]),
                "t_max_fit": None if worst is None else int(worst["t_max_fit"]),
                "score": None if rank is None else _score(rank["mean"]),
                "score_lo": None if rank is None else _score(rank["lo"]),
                "score_hi": None if rank is None else _score(rank["hi"]),
                "worst_environment": None if rank is None else rank["worst_environment"],
                "rank": None if rank is None or rank["rank"] == "" else int(rank["rank"]),
            }
        for c in claimed:
            w = measured.get(c["measure"], {})
            window = [
                T
                for T in sorted({r["T"] for r in rows})
                if w.get("t_min_fit") and w["t_min_fit"] <= T <= w["t_max_fit"]
            ]
            c["slope_over_window"] = (
                PaperRate(c["measure"], c["exponent"], c["log_power"], "").slope_over(window)
                if len(window) > 1
                else None
            )
        out[label] = {
            "forecaster": label,
            "key": key,
            "version": _version(rows, label),
            "paper": paper,
            "claimed": claimed,
            "measured": measured,
            "T": int(T_star),
            "command": commands.get(label, "fastcdl leaderboard --run"),
        }
    return out


def _score(v):
    """A score (a mean may be inf: KL-calibration); JSON has no inf, so it is written as the text "inf"."""
    if isinstance(v, (int, float)) and math.isinf(v):
        return "inf"
    return _finite(v)


def _load(folder: Path) -> dict:
    path = folder / FILE
    if not path.exists():
        return {}
    return {r["forecaster"]: r for r in json.loads(path.read_text())["forecasters"]}


def _dump(folder: Path, recs: dict) -> Path:
    from fastcdl._writing import atomic_write

    doc = {
        "about": "claimed rates (per round, T^exponent (log T)^log_power) against measured decay slopes: "
        "the slowest decay over the environments finished at T, with its 95% interval; docs/leaderboard.md",
        "forecasters": [recs[k] for k in sorted(recs)],
    }
    path = folder / FILE
    atomic_write({path: json.dumps(doc, indent=1, allow_nan=False) + "\n"})
    return path


def _kept_claims(old: dict) -> dict:
    """The claims of plug-ins already in the file (their papers are not in PAPER_RATES)."""
    return {
        k: (r["paper"], [{x: c[x] for x in ("measure", "exponent", "log_power")} for c in r["claimed"]])
        for k, r in old.items()
        if k not in PAPER_RATES and r.get("claimed")
    }


def write(folder, rows, tables) -> Path:
    """Write every forecaster's record (the claims and commands of plug-ins in the file are kept)."""
    folder = Path(folder)
    old = _load(folder)
    commands = {k: r["command"] for k, r in old.items() if r.get("command")}
    return _dump(folder, records(rows, tables, claims=_kept_claims(old), commands=commands))


def write_one(folder, rows, tables, label, *, paper=None, claims=(), command=None) -> dict:
    """Update one forecaster's record (its paper and claims if given) from the folder's rows and
    the leaderboard's tables, and return it; the other records are left as they are
    (:func:`fastcdl.experiments.leaderboard.record_submission` computes the tables)."""
    folder = Path(folder)
    old = _load(folder)
    given = _kept_claims(old)
    if claims or paper is not None:
        given[label] = (paper, [dict(c) for c in claims])
    commands = {label: command} if command else {}
    rec = records(rows, tables, claims=given, commands=commands)[label]
    old[label] = rec
    _dump(folder, old)
    return rec
