"""results/ece-lower-bound/spbisect: contrast.csv is what scripts/ece_lower_bound_contrast.py makes of
summary.csv, and the README's numbers about it are the files' (each checked claim fails on a wrong
number, tested below)."""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "results" / "ece-lower-bound" / "spbisect"
README = ROOT / "results" / "ece-lower-bound" / "README.md"


def _script():
    spec = importlib.util.spec_from_file_location(
        "ece_lower_bound_contrast", ROOT / "scripts" / "ece_lower_bound_contrast.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _read(name):
    with open(RUN / name, newline="") as f:
        return list(csv.DictReader(f))


def _row(adv, fc, metric, slope, lo, hi, t=(16384, 262144)):
    return dict(
        adversary=adv, forecaster=fc, metric=metric, slope=str(slope), slope_lo=str(lo), slope_hi=str(hi),
        t_min_fit=str(t[0]), t_max_fit=str(t[1]), n_seeds="8",
    )  # fmt: skip


def test_verdicts_against_the_bound_from_the_definition():
    mod = _script()
    b = mod.BOUNDS["dagan_et_al_2024"]
    assert b == pytest.approx(0.54389 - 1) and mod.BOUNDS["qiao_valiant_2021"] == pytest.approx(-0.472)
    rows = [
        _row("a", "cdl", "cdl", -0.5, -0.6, -0.4),
        _row("a", "cdl", "ece", -0.5, -0.6, -0.4),  # contains -0.456
        _row("a", "slow", "ece", -0.3, -0.4, -0.2),  # wholly above: slower
        _row("a", "fast", "ece", -0.6, -0.7, -0.5),  # wholly below: faster
        _row("a", "edge", "ece", -0.4, b, -0.3),  # touching the exponent counts as containing it
    ]
    out = {r["forecaster"]: r for r in mod.contrast_rows(rows)}
    assert {k: v["ece_against_dagan"] for k, v in out.items()} == {
        "cdl": "contains", "slow": "slower", "fast": "faster", "edge": "contains",
    }  # fmt: skip
    assert all(r["cdl_cdl_slope"] == -0.5 and r["cdl_cdl_lo"] == -0.6 for r in out.values())


def test_a_missing_or_misaligned_cdl_slope_is_an_error():
    mod = _script()
    with pytest.raises(ValueError, match="cdl's CDL slope"):
        mod.contrast_rows([_row("a", "kt", "ece", -0.5, -0.6, -0.4)])
    with pytest.raises(ValueError, match="other horizons"):
        mod.contrast_rows(
            [_row("a", "cdl", "cdl", -0.5, -0.6, -0.4, t=(1024, 262144)), _row("a", "kt", "ece", -0.5, -0.6, -0.4)]
        )


def test_contrast_csv_is_the_scripts_reading_of_summary_csv():
    mod = _script()
    want = mod.contrast_rows(_read("summary.csv"))
    got = _read("contrast.csv")
    assert len(got) == len(want) == 26
    for g, w in zip(got, want):
        for k, v in w.items():
            assert (float(g[k]) == pytest.approx(v, abs=0, rel=1e-15)) if isinstance(v, float) else g[k] == str(v), k


def _claims():
    """(text the README must hold, True when its numbers are the files') for each claim of its
    spbisect section."""
    contrast = {(r["adversary"].split()[-1], r["forecaster"]): r for r in _read("contrast.csv")}
    rates = {
        (r["adversary"].split()[-1], r["forecaster"], r["metric"], int(r["T"])): float(r["mean"])
        for r in _read("rates.csv")
    }

    def interval(env, fc, kind="ece"):
        r = contrast[(env, fc)]
        return tuple(float(r[f"{kind}_{x}"]) for x in ("slope", "lo", "hi"))

    def cdl_interval(env):
        r = contrast[(env, "cdl")]
        return tuple(float(r[f"cdl_cdl_{x}"]) for x in ("slope", "lo", "hi"))

    slower = {
        env: sorted(f for (e, f), r in contrast.items() if e == env and r["ece_against_dagan"] == "slower")
        for env in ("oblivious", "steered")
    }
    n = {v: sum(r["ece_against_dagan"] == v for r in contrast.values()) for v in ("slower", "contains", "faster")}
    fmt = lambda t: f"{t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}]"  # noqa: E731
    return [
        f"cdl's CDL slope is {fmt(cdl_interval('oblivious'))} against the oblivious path and {fmt(cdl_interval('steered'))} against the steered one",
        f"{n['slower']} of the {len(contrast)} lie wholly above it (oblivious: {', '.join(slower['oblivious'])}; steered: {', '.join(slower['steered'])}) and {n['contains']} contain it."
        if n["faster"] == 0
        else "some interval lies wholly below the bound's exponent",
        "The point estimates of frequency ({:.3f}), dyadic ({:.3f}), ftpl ({:.3f}) and spr ({:.3f}) against the oblivious path".format(
            *(interval("oblivious", f)[0] for f in ("frequency", "dyadic", "ftpl", "spr"))
        ),
        "their intervals reach to {:.3f}, {:.3f}, {:.3f} and {:.3f}".format(
            *(interval("oblivious", f)[1] for f in ("frequency", "dyadic", "ftpl", "spr"))
        ),
        "frequency's mean `ece` is {:.4f} and spr's {:.4f}, against cdl's {:.4f}".format(
            *(rates[("oblivious", f, "ece", 262144)] for f in ("frequency", "spr", "cdl"))
        ),
        f"`noisy` ({fmt(interval('oblivious', 'noisy'))} oblivious; its mean `ece` at 2^18 is {rates[('oblivious', 'noisy', 'ece', 262144)]:.3f}",
        f"`acrs` ({fmt(interval('oblivious', 'acrs'))};",
        f"(-{-interval('steered', 'sign')[0]:.3f} [{interval('steered', 'sign')[1]:.3f}, {interval('steered', 'sign')[2]:.3f}]) than against the oblivious one ({fmt(interval('oblivious', 'sign'))})",
    ]


def _flat(text):
    return re.sub(r"\s+", " ", text)


def _missing(text):
    """The claims whose numbers text does not state as the files give them."""
    flat = _flat(text)
    return [c for c in _claims() if _flat(c) not in flat]


def test_readme_numbers_are_the_files():
    missing = _missing(README.read_text())
    assert not missing, missing


@pytest.mark.parametrize(
    "old, new",
    [("-0.407 [-0.573", "-0.417 [-0.573"), ("11 of the 26", "12 of the 26"), ("klcal, noisy, sign, uniform;", "klcal, noisy, uniform;"),
     ("0.0019 and spr's", "0.0018 and spr's"), ("(-0.404 [-0.422", "(-0.414 [-0.422")],
)  # fmt: skip
def test_the_readme_check_fails_on_a_wrong_number(old, new):
    text = _flat(README.read_text())
    assert text.count(old) == 1, old
    assert _missing(text.replace(old, new))
