"""The numbers quoted in the results READMEs' tables are those of the files beside them.

A table whose first two columns are forecaster and adversary may have columns
"<METRIC> slope" (the slope of summary.csv, optionally followed by its interval
"[lo, hi]"), "<METRIC> first half" and "<METRIC> second half" (the slopes over the halves
of the window, summary.csv), "<METRIC> at 2^k" (the mean of rates.csv at T = 2^k),
"<METRIC> <form>" (the fitted constant c [c_lo, c_hi] of forms.csv) and "<METRIC> <form>
residual slope". Each printed number must equal the file's value rounded to the digits
printed.
"""

import csv
import math
import re
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "results"
FOLDERS = ("paper", "paper-wide", "msweep")
METRICS = {"CDL": "cdl", "ECE": "ece", "VCDL": "vcdl", "K2": "k2", "UCal": "ucal"}
NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"


def _close(printed: str, value: float) -> bool:
    """printed is value rounded to the digits shown (decimal places, or significant digits in e-notation)."""
    p = float(printed)
    if "e" in printed:
        mantissa, exp = printed.split("e")
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        step = 10.0 ** (int(exp) - decimals)
    else:
        decimals = len(printed.split(".")[1]) if "." in printed else 0
        step = 10.0**-decimals
    return abs(p - value) <= step / 2 + 1e-12 * max(1.0, abs(value))


def _tables(text):
    """[(header cells, [row cells])] of the markdown tables in text."""
    out, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif block:
            if len(block) > 2:
                out.append((block[0], block[2:]))
            block = []
    return out


def _read(path):
    return list(csv.DictReader(path.read_text().splitlines()))


def _clean(cell):
    return cell.replace("`", "").replace("*", "").strip()


@pytest.mark.parametrize("folder", FOLDERS)
def test_readme_tables_match_the_data(folder):
    d = RESULTS / folder
    slopes = {(r["forecaster"], r["adversary"], r["metric"]): r for r in _read(d / "summary.csv")}
    forms = {}
    if (d / "forms.csv").exists():
        forms = {(r["forecaster"], r["adversary"], r["metric"], r["form"]): r for r in _read(d / "forms.csv")}
    rates = {(r["forecaster"], r["adversary"], int(r["T"]), r["metric"]): float(r["mean"])
             for r in _read(d / "rates.csv")}
    checked, wrong = 0, []

    def compare(key, name, cell, record, fields):
        nonlocal checked
        for num, field in zip(re.findall(NUMBER, cell), fields):
            checked += 1
            if not _close(num, float(record[field])):
                wrong.append((key, name, num, field, record[field]))

    for header, rows in _tables((d / "README.md").read_text()):
        for row in rows:
            key = (_clean(row[0]), _clean(row[1]))
            for name, cell in zip(header, row):
                cell = _clean(cell)
                m = re.fullmatch(r"(\w+) (slope|first half|second half)", _clean(name))
                if m and m.group(1) in METRICS and (*key, METRICS[m.group(1)]) in slopes:
                    prefix = "" if m.group(2) == "slope" else m.group(2).replace(" ", "_") + "_"
                    fields = (f"{prefix}slope", f"{prefix}lo", f"{prefix}hi") if prefix else ("slope", "slope_lo", "slope_hi")
                    compare(key, name, cell, slopes[(*key, METRICS[m.group(1)])], fields)
                m = re.fullmatch(r"(\w+) (c / m|c ln T / sqrt T)( residual slope)?", _clean(name))
                if m and m.group(1) in METRICS and (*key, METRICS[m.group(1)], m.group(2)) in forms:
                    fields = ("residual_slope", "residual_slope_lo", "residual_slope_hi") if m.group(3) else ("c", "c_lo", "c_hi")
                    compare(key, name, cell, forms[(*key, METRICS[m.group(1)], m.group(2))], fields)
                m = re.fullmatch(r"(\w+) at 2\^(\d+)", _clean(name))
                if m and m.group(1) in METRICS and cell:
                    k = (*key, 2 ** int(m.group(2)), METRICS[m.group(1)])
                    if k in rates:
                        checked += 1
                        num = re.findall(NUMBER, cell.replace("·10^", "e").replace("×10^", "e"))[0]
                        if not _close(num, rates[k]):
                            wrong.append((key, name, num, "mean", rates[k]))
    assert checked >= 20, f"only {checked} numbers found in {folder}/README.md tables"
    assert not wrong, wrong


def test_close():
    assert _close("-0.469", -0.46896) and not _close("-0.469", -0.4696)
    assert _close("2.2e-3", 0.00224) and not _close("2.2e-3", 0.00226)
    assert _close("1.0", 0.999) and math.isfinite(float("1e-3"))
