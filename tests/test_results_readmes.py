"""The numbers quoted in the results READMEs' tables are those of the files beside them.

A table whose first two columns are forecaster and adversary may have columns
"<METRIC> slope" (the slope of summary.csv, optionally followed by its interval
"[lo, hi]"), "<METRIC> first half" and "<METRIC> second half" (the slopes over the halves
of the window, summary.csv), "<METRIC> at 2^k" (the mean of rates.csv at T = 2^k),
"<METRIC> <form>" (the fitted constant c [c_lo, c_hi] of forms.csv) and "<METRIC> <form>
residual slope". Each printed number must equal the file's value rounded to the digits
printed.

Prose numbers taken from results files are checked too: every number of the README's Speed
table and the machine and load of each of its sources, the speed figures of docs/kernels.md,
docs/algorithm1.md and docs/estimators.md against the JSON files the benchmark scripts record
(results/benchmarks/*.json, scripts/benchrecord.py), the coverage table of docs/experiments.md
and the ranges its prose quotes against results/coverage/slope_coverage.csv, the cost of the exact k-class CDL in
docs/metrics.md and the README (results/benchmarks/multiclass.md), the counts of fresh-seed
means below, above and equal to the search scores in results/worstcase/README.md and
docs/worst-case.md (worst.csv, candidates.csv), the acrs-against-contrarian table of
results/worstcase/README.md (trials.sqlite) and the bucket count of c = 8 in
results/msweep/README.md (preset.toml). A table row whose forecaster and adversary the files do
not have is reported, not skipped.

Also checked: the README's Results list (results/paper, results/worstcase, results/msweep) and
the machine and load its Speed section names (the five files behind its table); results/msweep/README.md's ratios,
slopes, fits, replay counts and trial times (rates.csv, summary.csv, forms.csv, replays.csv,
trials.sqlite); the store counts and trial times of results/worstcase/README.md
(trials.sqlite.xz); the games' speeds of docs/leaderboard.md (results/leaderboard's
trials.sqlite.xz); the bootstrap coverage, bias rates and binned-ECE coverage docs/estimators.md
quotes (summary.csv, bias_rate.csv) and its costs at 200,000 scores (sample-costs.json); when
results/benchmarks/README.md's files were measured; the recorded run time of results/spr-rates;
and every number of results/leaderboard/README.md's notes, each against the one cell (or store
count, or formula) it names. Passages that no longer state a figure without a record
(UNRECORDED) are kept free of one. Each checker returns the problems it finds, and
test_checkers_fail_on_wrong_numbers (with test_leaderboard_page_matches_its_files and
test_figures_without_a_record_stay_out) shows that each reports a wrong number.
"""

import csv
import functools
import io
import json
import lzma
import re
import sqlite3
import tomllib
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
BENCH = RESULTS / "benchmarks"
FOLDERS = ("paper", "paper-wide", "msweep", "spr-rates")
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


def _table_problems(folder, text):
    """(numbers checked, [wrong ones]) of the tables of text (a README of folder) against its files."""
    d = RESULTS / folder
    slopes = {(r["forecaster"], r["adversary"], r["metric"]): r for r in _read(d / "summary.csv")}
    forms = {}
    if (d / "forms.csv").exists():
        forms = {(r["forecaster"], r["adversary"], r["metric"], r["form"]): r for r in _read(d / "forms.csv")}
    rates = {
        (r["forecaster"], r["adversary"], int(r["T"]), r["metric"]): float(r["mean"]) for r in _read(d / "rates.csv")
    }
    checked, wrong = 0, []

    def compare(key, name, cell, record, fields):
        nonlocal checked
        for num, field in zip(re.findall(NUMBER, cell), fields):
            checked += 1
            if not _close(num, float(record[field])):
                wrong.append((key, name, num, field, record[field]))

    for header, rows in _tables(text):
        for row in rows:
            key = (_clean(row[0]), _clean(row[1]))
            for name, cell in zip(header, row):
                cell = _clean(cell)
                m = re.fullmatch(r"(\w+) (slope|first half|second half)", _clean(name))
                if m and m.group(1) in METRICS and (*key, METRICS[m.group(1)]) not in slopes:
                    wrong.append((key, name, cell, "no such row in summary.csv"))
                elif m and m.group(1) in METRICS:
                    prefix = "" if m.group(2) == "slope" else m.group(2).replace(" ", "_") + "_"
                    fields = (
                        (f"{prefix}slope", f"{prefix}lo", f"{prefix}hi")
                        if prefix
                        else ("slope", "slope_lo", "slope_hi")
                    )
                    compare(key, name, cell, slopes[(*key, METRICS[m.group(1)])], fields)
                m = re.fullmatch(r"(\w+) (c / m|c ln T / sqrt T)( residual slope)?", _clean(name))
                if m and m.group(1) in METRICS and (*key, METRICS[m.group(1)], m.group(2)) not in forms:
                    wrong.append((key, name, cell, "no such row in forms.csv"))
                elif m and m.group(1) in METRICS:
                    fields = (
                        ("residual_slope", "residual_slope_lo", "residual_slope_hi")
                        if m.group(3)
                        else ("c", "c_lo", "c_hi")
                    )
                    compare(key, name, cell, forms[(*key, METRICS[m.group(1)], m.group(2))], fields)
                m = re.fullmatch(r"(\w+) at 2\^(\d+)", _clean(name))
                if m and m.group(1) in METRICS and cell:
                    k = (*key, 2 ** int(m.group(2)), METRICS[m.group(1)])
                    if k not in rates:
                        wrong.append((key, name, cell, "no such row in rates.csv"))
                    else:
                        checked += 1
                        num = re.findall(NUMBER, cell.replace("·10^", "e").replace("×10^", "e"))[0]
                        if not _close(num, rates[k]):
                            wrong.append((key, name, num, "mean", rates[k]))
    return checked, wrong


@pytest.mark.parametrize("folder", FOLDERS)
def test_readme_tables_match_the_data(folder):
    checked, wrong = _table_problems(folder, (RESULTS / folder / "README.md").read_text())
    assert checked >= 20, f"only {checked} numbers found in {folder}/README.md tables"
    assert not wrong, wrong


def test_close():
    assert _close("-0.469", -0.46896) and not _close("-0.469", -0.4696)
    assert _close("2.2e-3", 0.00224) and not _close("2.2e-3", 0.00226)
    assert _close("1.0", 0.999) and not _close("1.0", 0.94)


# Prose numbers against the files they come from. Each checker takes the text to check (so a test
# can hand it a wrong number) and returns (how many claims it checked, [the problems]).


def _flat(text):
    """text with every run of white space (line breaks included) made one space."""
    return " ".join(text.split())


def _int(printed):
    return int(printed.replace(",", ""))


def _section(text, title):
    """The lines of a markdown section, from its '## title' line to the next '## ' heading."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


SPEED_SOURCES = ("peers", "metrics", "online", "io", "multiclass")


def _speed_machine_problems(readme):
    """The README Speed section's machine line: 'Machine: MODEL, N logical CPUs, numba K threads
    (all five files | a.json, b.json); ...; load average (1 min) LO to HI at the starts and ends of
    their runs.' states what the five files behind the table recorded (scripts/benchrecord.py):
    every file's machine is named with the files it holds, and LO and HI are the least and greatest
    1-minute load average at their starts and ends."""
    speed = _section(readme, "Speed")
    m = re.search(r"^Machine: (.*); load average \(1 min\) ([\d.]+) to ([\d.]+) at the starts", speed, flags=re.M)
    if m is None:
        return 0, [("README.md", "no 'Machine: ...; load average (1 min) LO to HI' line in the Speed section")]
    problems = []
    said = {}
    for part in m.group(1).split("; "):
        pm = re.fullmatch(r"(.+), (\d+) logical CPUs, numba (\d+) threads \((.+)\)", part)
        if pm is None:
            problems.append(
                ("README.md", "a machine not in the form 'MODEL, N logical CPUs, numba K threads (files)'", part)
            )
            continue
        files = (
            SPEED_SOURCES
            if pm.group(4) == "all five files"
            else [f.removesuffix(".json") for f in pm.group(4).split(", ")]
        )
        for f in files:
            said[f] = (pm.group(1), int(pm.group(2)), int(pm.group(3)))
    loads = []
    for name in SPEED_SOURCES:
        doc = _bench(name)
        mach = doc["machine"]
        recorded = (mach["model"], mach["logical_cpus"], mach["numba_threads"])
        if said.get(name) != recorded:
            problems.append((name, said.get(name), recorded))
        loads += [doc["load_start"][0], doc["load_end"][0]]
    for printed, value in ((m.group(2), min(loads)), (m.group(3), max(loads))):
        if not _close(printed, value):
            problems.append(("README.md", f"load average {printed}; the files give {value}"))
    return len(said), problems


def test_speed_section_states_each_sources_machine():
    checked, problems = _speed_machine_problems((ROOT / "README.md").read_text())
    assert checked == 5, f"{checked} of the 5 sources named in the README's Speed machine line"
    assert not problems, problems


def _multiclass_row(bench, rows, k):
    header, body = next((h, b) for h, b in _tables(bench) if "distinct rows m" in h)
    col = {name: i for i, name in enumerate(header)}
    hit = [r for r in body if r[col["distinct rows m"]] == rows and r[col["k"]] == k]
    if len(hit) != 1:
        return None
    return float(hit[0][col["new (s)"]]), hit[0][col["old (s)"]]


def _multiclass_cost_problems(doc, readme, bench):
    """The cost of the exact k-class CDL, in docs/metrics.md ('Cost: M distinct rows with k = K in S s
    ..., where the first formulation had not finished after L s') and in the README's Speed row
    ('exact CDL over k = K outcomes, M distinct rows | S s | ... (stopped at L s)'), against the row
    of results/benchmarks/multiclass.md with m = M and k = K: S its 'new (s)' to the digits printed,
    its 'old (s)' '> L (stopped)'."""
    claims = []
    m = re.search(
        r"Cost: (\d+) distinct rows with k = (\d+) in (" + NUMBER + r") s\b.*?had not finished "
        r"after (\d+) s",
        _flat(doc),
    )
    claims.append(("docs/metrics.md", m))
    m = re.search(
        r"exact CDL over k = (\d+) outcomes, (\d+) distinct rows \| (" + NUMBER + r") s \|"
        r"[^\n]*?stopped at (\d+) s",
        readme,
    )
    claims.append(("README.md", m and (m.group(2), m.group(1), m.group(3), m.group(4))))
    problems = []
    for where, found in claims:
        if not found:
            problems.append((where, "no sentence on the k-class CDL's cost found"))
            continue
        rows, k, secs, limit = found.groups() if hasattr(found, "groups") else found
        row = _multiclass_row(bench, rows, k)
        if row is None:
            problems.append((where, f"multiclass.md has no row with {rows} distinct rows and k = {k}"))
            continue
        new, old = row
        if not _close(secs, new):
            problems.append((where, f"{secs} s; multiclass.md has {new} s"))
        if old != f"> {limit} (stopped)":
            problems.append((where, f"first formulation stopped at {limit} s; multiclass.md has {old!r}"))
    return len(claims), problems


def test_multiclass_cost_matches_the_benchmark():
    checked, problems = _multiclass_cost_problems(
        (ROOT / "docs" / "metrics.md").read_text(),
        (ROOT / "README.md").read_text(),
        (BENCH / "multiclass.md").read_text(),
    )
    assert checked == 2 and not problems, problems


def _fresh_against_search():
    """({forecaster: [below, above, equal]}, [below, above, equal] unrounded) of the worst-case
    winners' fresh-seed CDL means against their scores on the deepest rung's seeds (families.csv,
    as readme_tables prints it), compared to the 4 significant digits the README's table prints."""
    worst = [r for r in _read(RESULTS / "worstcase" / "worst.csv") if r["metric"] == "cdl"]
    fams = _read(RESULTS / "worstcase" / "families.csv")
    rounded, exact = {}, [0, 0, 0]
    for w in worst:
        fresh = float(w["mean"])
        score = next(
            float(c["deep_mean_cdl"])
            for c in fams
            if c["forecaster"] == w["forecaster"] and c["T"] == w["T"] and c["is_winner"] == "1"
        )
        exact[0 if fresh < score else 1 if fresh > score else 2] += 1
        a, b = float(f"{fresh:.4g}"), float(f"{score:.4g}")
        rounded.setdefault(w["forecaster"], [0, 0, 0])[0 if a < b else 1 if a > b else 2] += 1
    return rounded, exact


def _selection_problems(readme, doc, counts):
    """results/worstcase/README.md ("`f` below / above / equal" per forecaster, "all N rows b / a / e
    (unrounded b / a / e)") and docs/worst-case.md ("for `cdl` and `foster` at b of n horizons
    each", "over all N winners, to four digits, b fresh-seed means are below their search scores,
    a above and e equal", "those of `sign` and `uniform` are mostly above or equal") against the
    counts of _fresh_against_search."""
    rounded, exact = counts
    total = [sum(c[i] for c in rounded.values()) for i in range(3)]
    problems, checked = [], 0
    limits = _flat(readme[readme.index("**Limits.**") : readme.index("## Tables")])
    for f, *nums in re.findall(r"`(\w+)` (\d+) / (\d+) / (\d+)", limits):
        checked += 1
        if [int(x) for x in nums] != rounded.get(f):
            problems.append(("worstcase/README.md", f, nums, rounded.get(f)))
    if checked != len(rounded):
        problems.append(("worstcase/README.md", f"{checked} forecasters counted, worst.csv has {len(rounded)}"))
    m = re.search(r"all (\d+) rows (\d+) / (\d+) / (\d+) \(unrounded (\d+) / (\d+) / (\d+)\)", limits)
    checked += 1
    if not m or [int(x) for x in m.groups()] != [sum(total), *total, *exact]:
        problems.append(("worstcase/README.md", "totals", m and m.groups(), [sum(total), *total, *exact]))
    doc = _flat(doc)
    m = re.search(r"for `cdl` and `foster` at (\d+) of (\d+) horizons each", doc)
    if m is None:  # docs/worst-case.md states no counts (they are the README's)
        return checked, problems
    checked += 1
    if not m or any([int(m.group(1)), int(m.group(2))] != [rounded[f][0], sum(rounded[f])] for f in ("cdl", "foster")):
        problems.append(("docs/worst-case.md", "cdl and foster", m and m.groups(), rounded["cdl"], rounded["foster"]))
    m = re.search(
        r"over all (\d+) winners, to four digits, (\d+) fresh-seed means are below their search "
        r"scores, (\d+) above and (\d+) equal",
        doc,
    )
    checked += 1
    if not m or [int(x) for x in m.groups()] != [sum(total), *total]:
        problems.append(("docs/worst-case.md", "totals", m and m.groups(), [sum(total), *total]))
    if "those of `sign` and `uniform` are mostly above or equal" in doc:
        checked += 1
        for f in ("sign", "uniform"):
            if rounded[f][1] + rounded[f][2] <= rounded[f][0]:
                problems.append(("docs/worst-case.md", f"{f} is not mostly above or equal", rounded[f]))
    return checked, problems


def test_fresh_seed_means_against_search_scores():
    checked, problems = _selection_problems(
        (RESULTS / "worstcase" / "README.md").read_text(),
        (ROOT / "docs" / "worst-case.md").read_text(),
        _fresh_against_search(),
    )
    assert checked >= 7 and not problems, problems


def _acrs_tables(T):
    """The stored bucket tables (q, n, s) of acrs against contrarian at T, one per trial."""
    import lzma
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "trials.sqlite"
        with lzma.open(RESULTS / "worstcase" / "trials.sqlite.xz") as fin:
            store.write_bytes(fin.read())
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as con:
            blobs = con.execute(
                "SELECT bucket_table FROM trials WHERE forecaster = 'acrs' AND adversary = "
                "'contrarian' AND T = ? AND bucket_table IS NOT NULL",
                (T,),
            ).fetchall()
    out = []
    for (blob,) in blobs:
        with np.load(io.BytesIO(zlib.decompress(blob))) as z:
            out.append((z["q"], z["n"], z["s"]))
    return out


def _acrs_problems(readme, tables):
    """The acrs-against-contrarian paragraph of results/worstcase/README.md ("the stored table at
    2^k: a/d in N rounds, all y = 1; 1/2 in N' rounds, all y = 0; the other r rounds one at each of
    0, 1/d, ..., (a-1)/d, all y = 1", moving all to 1/2 "by 1/d in the N rounds at a/d, ...: x/T per
    round on average, against an outcome frequency of S/T") against the stored tables (all alike)."""
    text = _flat(readme)
    m = re.search(
        r"stored table at 2\^(\d+): (\d+)/(\d+) in ([\d,]+) rounds, all y = 1; 1/2 in ([\d,]+) "
        r"rounds, all y = 0; the other (\d+) rounds one at each of 0, 1/(\d+), \.\.\., (\d+)/(\d+), "
        r"all y = 1\)",
        text,
    )
    m2 = re.search(
        r"\(by 1/(\d+) in the ([\d,]+) rounds at (\d+)/(\d+), by (\d+)/(\d+) to (\d+)/(\d+) in the "
        r"(\d+) others: (\d+)/([\d,]+) < 0\.01 per round on average, against an outcome frequency "
        r"of ([\d,]+)/([\d,]+)\)",
        text,
    )
    if not (m and m2 and tables):
        return 0, [("worstcase/README.md", "acrs paragraph or stored tables not found")]
    q0, n0, s0 = tables[0]
    problems = []
    if any(not (np.array_equal(q, q0) and np.array_equal(n, n0) and np.array_equal(s, s0)) for q, n, s in tables):
        problems.append("the stored tables differ between trials")
    q = [Fraction(float(v)) for v in q0]
    n, s = [int(v) for v in n0], [int(v) for v in s0]
    T, half = sum(n), Fraction(1, 2)
    k, a, d, n_low, n_half, r, d1, last, d2 = m.groups()
    low = Fraction(int(a), int(d))
    rows = dict(zip(q, zip(n, s)))
    claims = [
        (2 ** int(k), T, "T"),
        (_int(n_low), rows.get(low, (0, 0))[0], f"rounds at {low}"),
        (_int(n_low), rows.get(low, (0, 0))[1], f"y = 1 at {low}"),
        (_int(n_half), rows.get(half, (0, 0))[0], "rounds at 1/2"),
        (0, rows.get(half, (0, 0))[1], "y = 1 at 1/2"),
        (int(r), T - _int(n_low) - _int(n_half), "other rounds"),
        (
            [Fraction(j, int(d1)) for j in range(int(last) + 1)],
            sorted(v for v in q if v not in (low, half)),
            "the other rounds' predictions",
        ),
        (Fraction(int(last), int(d2)), max(v for v in q if v < low), "the highest of the other predictions"),
        ([(1, 1)] * int(r), [rows[v] for v in sorted(rows) if v not in (low, half)], "one round each, y = 1"),
    ]
    step, n_step, a2, d3, by_lo, dl, by_hi, dh, others, moved, T2, ones, T3 = m2.groups()
    claims += [
        (Fraction(1, int(step)), half - low, "the move of the rounds at a/d"),
        ((_int(n_step), Fraction(int(a2), int(d3))), (_int(n_low), low), "the rounds moved by 1/d"),
        (int(others), int(r), "the others"),
        (
            (Fraction(int(by_lo), int(dl)), Fraction(int(by_hi), int(dh))),
            (min(half - v for v in q if v < low), max(half - v for v in q if v < low)),
            "the others' moves",
        ),
        (Fraction(int(moved), _int(T2)), sum(nn * abs(half - v) for v, nn in zip(q, n)) / T, "mean move to 1/2"),
        ((_int(ones), _int(T3)), (sum(s), T), "outcome frequency"),
    ]
    problems += [(what, said, stored) for said, stored, what in claims if said != stored]
    return len(claims), problems


def test_acrs_against_contrarian_matches_the_stored_table():
    readme = (RESULTS / "worstcase" / "README.md").read_text()
    k = re.search(r"stored table at 2\^(\d+): \d+/\d+ in", _flat(readme))
    checked, problems = _acrs_problems(readme, _acrs_tables(2 ** int(k.group(1))))
    assert checked >= 10 and not problems, problems


def _msweep_buckets_problems(readme, preset):
    """'c = C is higher by ... with N buckets at 2^K' in results/msweep/README.md: N must be the grid
    size m = max(2, ceil(m_scale sqrt(T) / ln T)) of the forecaster labelled 'cdl c=C' in the
    preset, at T = 2^K (fastcdl.online.plugins.default_cdl_m, docs/algorithm1.md)."""
    from fastcdl.online.plugins import default_cdl_m

    found = re.findall(r"c = (\d+) is higher by [^;]*; with (\d+) buckets at 2\^(\d+)", _flat(readme))
    scales = {f.get("label"): f.get("params", {}).get("m_scale") for f in tomllib.loads(preset)["forecasters"]}
    problems = []
    for c, n, k in found:
        m = default_cdl_m(2 ** int(k), scales[f"cdl c={c}"])
        if int(n) != m:
            problems.append((f"c = {c} at 2^{k}", int(n), m))
    return len(found), problems


def test_msweep_bucket_count_is_the_grid_size():
    checked, problems = _msweep_buckets_problems(
        (RESULTS / "msweep" / "README.md").read_text(), (RESULTS / "msweep" / "preset.toml").read_text()
    )
    assert checked == 1 and not problems, problems


# Timings and coverage quoted from the JSON files that the benchmark scripts record
# (scripts/benchrecord.py: every repeat, the machine, the load, the source). A claim is a template
# of the text with {} for each printed number, and the values those numbers must equal to the
# digits printed (computed here from the JSON, medians of the recorded repeats); (">=", v) says the
# printed number is a bound at least v, ("<=", v) at most v.


def _bench(name):
    return json.loads((BENCH / f"{name}.json").read_text())


def _med(doc, key):
    return doc["timings"][key]["median"]


def _p(template):
    """A regular expression for template (white space made single) with a number group for each {}."""
    parts = _flat(template).split("{}")
    return r"(-?[\d,]*\d(?:\.\d+)?(?:e-?\d+)?)".join(re.escape(part) for part in parts)


def _claim_problems(text, claims, where):
    """(claims checked, [problems]): each template must be in text with the numbers its values give."""
    flat, problems = _flat(text), []
    for template, values in claims:
        m = re.search(_p(template), flat)
        if m is None:
            problems.append((where, "not found", template))
            continue
        for printed, want in zip(m.groups(), values):
            num = printed.replace(",", "")
            if isinstance(want, tuple):
                ok = float(num) >= want[1] if want[0] == ">=" else float(num) <= want[1]
            else:
                ok = _close(num, want)
            if not ok:
                problems.append((where, template, printed, want))
    return len(claims), problems


def _speed_claims():
    """The README Speed table's numbers, from the JSON files of results/benchmarks."""
    peers, metrics, online, io_, multi = (_bench(n) for n in ("peers", "metrics", "online", "io", "multiclass"))
    ece = {
        name: 1e3 * _med(peers, f"ece/1e+07/{name}")
        for name in (
            "fastcdl.ece",
            "netcal ECE",
            "relplot binnedECE",
            "torchmetrics binary_calibration_error",
            "scikit-learn calibration_curve",
        )
    }
    peer_ms = [ece[n] for n in list(ece)[1:]]
    diff = max(peers["values"][f"ece/1e+07/{n}"]["abs_diff"] for n in list(ece)[1:])
    lp, lp_fc = 1e3 * _med(peers, "lp/100/lp"), 1e3 * _med(peers, "lp/100/fastcdl")
    fc8, np8, sum8 = (_med(metrics, f"bucket_stats/float64/{k}") for k in ("fastcdl", "numpy", "sum"))
    big = online["timings"]["flat/big"]
    dense = (online["timings"]["dense/1e7/sparse"]["rounds"] / _med(online, "dense/1e7/sparse")) / (
        online["timings"]["dense/1e7/dense"]["rounds"] / _med(online, "dense/1e7/dense")
    )
    cases = [f"{p}/{t}" for p in ("continuous", "grid 0.01") for t in ("exact", "15 bins")]
    ours = [_med(io_, f"{c}/fastcdl") for c in cases]
    base = [_med(io_, f"{c}/pyarrow") for c in cases]
    before = [_med(io_, f"{c}/before") for c in cases if f"{c}/before" in io_["timings"]]
    ratio = [a / b for a, b in zip(ours, base)]
    mc = multi["values"]["400"]
    mc_new = _med(multi, "400/new")
    return [
        (
            "| binned ECE, T = 10^7, 15 bins | {} ms | netcal `ECE` {} ms; relplot `binnedECE` {} ms; torchmetrics {} ms; "
            "scikit-learn `calibration_curve` {} ms | {}x; {}x; {}x; {}x fastcdl's time, values within {} |",
            [ece["fastcdl.ece"], *peer_ms, *(t / ece["fastcdl.ece"] for t in peer_ms), (">=", diff)],
        ),
        (
            "| exact CDL, m = 100 buckets | {} ms | the linear program over proper scores (HiGHS) {} ms | {}x fastcdl's time, "
            "values within {} |",
            [lp_fc, lp, lp / lp_fc, (">=", peers["values"]["lp/100"]["abs_diff"])],
        ),
        ("| exact CDL, m = 10^6 buckets | {} s | — | O(m log m) |", [_med(metrics, "envelope/cdl")]),
        (
            "| bucket table, T = 10^8, 1000 bins | {} s (float64 y) | numpy searchsorted + 3 bincounts {} s; summing "
            "the two arrays {} s | bincount {}x fastcdl's time; fastcdl {}x the sum's |",
            [fc8, np8, sum8, np8 / fc8, fc8 / sum8],
        ),
        (
            "| Algorithm 1, T = 10^8 rounds vs greedy | {} s ({} ns a round) | the same oracle formed densely, "
            "O(m K_eta) per round | {}x the sparse oracle's time at T = 10^7 |",
            [big["median"], 1e9 * big["median"] / big["rounds"], dense],
        ),
        (
            "| CSV file of 10^7 rows to its bucket table (`fastcdl metrics`) | {}–{} s, streaming | "
            "`pyarrow.csv.read_csv` + `bucket_stats` {}–{} s; fastcdl's earlier Python parser {}–{} s | {}–{}x of "
            "pyarrow + table |",
            [min(ours), max(ours), min(base), max(base), min(before), max(before), min(ratio), max(ratio)],
        ),
        (
            "| exact CDL over k = {} outcomes, {} distinct rows | {} s | the LP over all pairs of score vectors, as "
            "fastcdl solved it before | > {}x (stopped at {} s) |",
            [mc["k"], mc["m"], mc_new, ("<=", mc["old_stopped_at"] / mc_new), mc["old_stopped_at"]],
        ),
    ]


def test_speed_table_matches_the_benchmark_json():
    checked, problems = _claim_problems(
        _section((ROOT / "README.md").read_text(), "Speed"), _speed_claims(), "README.md"
    )
    assert checked == 7 and not problems, problems


def _kernels_claims():
    """docs/kernels.md's Speed table, from results/benchmarks/kernels.json."""
    k = _bench("kernels")
    r = lambda key: k["values"][f"njit/{key}/ratio"]  # noqa: E731
    over = {
        T: {n: _med(k, f"overhead/{T}/{n}") for n in ("cdl(y, p)", "cdl(table)", "kernels.cdl", "compiled path")}
        for T in ("1e+02", "1e+03", "1e+04", "1e+05")
    }
    fixed = over["1e+02"]["cdl(y, p)"] - over["1e+02"]["compiled path"]
    cold = k["values"]["cold"]["cdl from Python"]
    m = k["machine"]
    return [
        (
            f"| what | measured (one run of kernels.json: {m['model']} ({', '.join(m['vector'])}), load average "
            "{} at the start, {} at the end) |",
            [k["load_start"][0], k["load_end"][0]],
        ),
        (
            "| `K.cdl_of_table` in an njit loop, the 100-bucket table of the asv suites | {} us per call, {}x the internal kernel",
            [1e6 * _med(k, "njit/asv table/100/public"), r("asv table/100")],
        ),
        (
            "| the same, frequencies in random order (nothing for the sort to exploit) | {}x |",
            [r("shuffled frequencies/100")],
        ),
        (
            "| the same, 10^4 buckets | {}x (an O(m log m) sort next to an O(m) sweep), and {}x faster than the Python "
            "pipeline",
            [r("asv table/10000"), _med(k, "njit/asv table/10000/python") / _med(k, "njit/asv table/10000/public")],
        ),
        (
            "(validation, table object, conversion, numpy sorts) | {} us per call: {}% of the call at T = 100, {}% at "
            "10^3, {}% at 10^4, {}% at 10^5 |",
            [1e6 * fixed, *(100 * fixed / over[T]["cdl(y, p)"] for T in over)],
        ),
        (
            "| `fastcdl.cdl(table)` against `K.cdl_of_table(q, n, s)` from Python, 100 buckets | {} us against {} us |",
            [1e6 * over["1e+02"]["cdl(table)"], 1e6 * over["1e+02"]["kernels.cdl"]],
        ),
        (
            "against `fastcdl.cdl(y, p)` | the call's time over the loop's: {}x at T = 100, {}x at 10^3, {}x at 10^4 |",
            [over[T]["cdl(y, p)"] / over[T]["compiled path"] for T in ("1e+02", "1e+03", "1e+04")],
        ),
        (
            "| first call of `K.cdl_of_table`, empty cache / warm cache | {} s / {} s |",
            [cold["empty cache"], cold["warm cache"]],
        ),
    ]


def _algorithm1_claims():
    """The cost of a round in docs/algorithm1.md, from online.json and rounds.json."""
    online, rounds = _bench("online"), _bench("rounds")
    mid = online["timings"]["mid/cdl_greedy"]["rounds"]
    ns = {f: 1e9 * _med(rounds, f) / rounds["params"]["T"] for f in ("cdl", "kt", "sign", "uniform")}
    return [
        (
            "A cdl round against greedy costs {} ns at T = 10^7 and a kt round {} ns (wall clock, the two alternated, "
            "{}x",
            [
                1e9 * _med(online, "mid/cdl_greedy") / mid,
                1e9 * _med(online, "mid/kt_greedy") / mid,
                _med(online, "mid/cdl_greedy") / _med(online, "mid/kt_greedy"),
            ],
        ),
        (
            "against bernoulli at T = 2^20, cdl, kt, sign and uniform take {}, {}, {} and {} ns a round",
            [ns["cdl"], ns["kt"], ns["sign"], ns["uniform"]],
        ),
    ]


def _coverage_rows():
    return list(csv.DictReader((RESULTS / "coverage" / "slope_coverage.csv").read_text().splitlines()))


def _coverage_claims():
    """docs/experiments.md's coverage table and the ranges its prose quotes, from results/coverage."""
    rows = _coverage_rows()
    cols = (
        "slope: jackknife-t",
        "slope: percentile bootstrap",
        "mean: bootstrap-t",
        "mean: percentile bootstrap",
        "mean: Student t",
    )
    claims = [
        (
            f"| {r['noise']} | {r['seeds']} | {{}} | {{}} | {{}} | {{}} | {{}} |",
            [int(r[c + " (covered)"]) / int(r[c + " (intervals)"]) for c in cols],
        )
        for r in rows
    ]
    pct = {
        n: [100 * float(r[c]) for r in rows if r["seeds"] == n for c in cols if "percentile" in c]
        for n in ("4", "8", "16")
    }
    jack = [100 * float(r[cols[0]]) for r in rows]
    boot_t = [100 * float(r[cols[2]]) for r in rows]
    claims += [
        (
            "{}-{}% with 4 seeds, {}-{}% with 8, {}-{}% with 16",
            [f(pct[n]) for n in ("4", "8", "16") for f in (min, max)],
        ),
        (
            "The jackknife-t slope interval covers {}-{}% and the bootstrap-t mean interval {}-{}%",
            [min(jack), max(jack), min(boot_t), max(boot_t)],
        ),
    ]
    return claims


def _estimators_claims():
    """docs/estimators.md's speed table and figures, from results/benchmarks/estimators.json."""
    e = _bench("estimators")
    rec = e["record"]["estimators"]
    t = rec["timings"]
    sort = t["estimators/np_sort"]["median"]
    est = lambda n: t[f"estimators/{n}"]["median"]  # noqa: E731
    rest = ("cutoff_ce", "cutoff_ce_test", "atb", "atb_unbiased", "mce", "rmsce", "brier", "brier_decomposition")
    claims = [
        (f"| {label} | {cost} | {{}} s | {{}}x |", [est(n), est(n) / sort])
        for label, cost, n in (
            ("building the exact table (`bucket_stats`)", "O(T) radix sort", "bucket_stats_exact"),
            ("`cdl_monotone`", "O(m)", "cdl_monotone"),
            ("`vcdl_monotone`", "O(m)", "vcdl_monotone"),
            ("`cdl_monotone_report`", "O(m)", "cdl_monotone_report"),
            ("`smce`", "O(m log m), about linear on calibrated samples", "smce"),
        )
    ]
    claims.append(
        (
            "`brier_decomposition` | O(m) | {} to {} s | {}x to {}x |",
            [min(map(est, rest)), max(map(est, rest)), min(map(est, rest)) / sort, max(map(est, rest)) / sort],
        )
    )
    claims.append(("(medians of {}, np.sort of the predictions {} s", [len(t["estimators/np_sort"]["seconds"]), sort]))
    m = rec["machine"]
    claims.append(
        (
            f"on {m['model']} ({', '.join(m['vector'])}), {m['logical_cpus']} logical CPUs, load average "
            "{} at the start and {} at the end",
            [rec["load_start"][0], rec["load_end"][0]],
        )
    )
    slowest = max(("cdl_monotone", "vcdl_monotone", "cdl_monotone_report", *rest), key=est)
    claims.append((f"(the slowest, `{slowest}`, at {{}}x)", [est(slowest) / sort]))
    q = [b["ratio"] for b in e["binning"]]
    ql = [b["ratio"] for b in e["binning_loaded"]]
    claims.append(
        (
            "quantile bins against equal-width bins, at T = 10^7: {}x to {}x (15 to 10^4 bins) in the "
            "recorded run, and {}x to {}x with one of the two cores held",
            [min(q), max(q), min(ql), max(ql)],
        )
    )
    smce = {r["T"]: r for r in e["smce"]}
    claims.append(
        (
            "relplot / smCE in the same repeat): {}x at 10^5, {}x at 10^6 and {}x at 10^7 in the recorded run "
            "(the least repeat {}x, {}x and {}x)",
            [smce[10**k]["ratio"] for k in (5, 6, 7)] + [smce[10**k]["ratio_min"] for k in (5, 6, 7)],
        )
    )
    return claims


def _bucket_speed_claims():
    """docs/metrics.md's section "Speed, and when a second thread is used", from the bucket-speed
    runs beside it (bucket-speed.json at load 1.0-1.2 after the exact-CDL change, bucket-speed-fb35945.json
    at load 16, bucket-speed-71d8227.json quiet, the znver3 emulation) and the variants and twins files."""
    new, mid, quiet, z = (
        _bench(n)["sections"]
        for n in ("bucket-speed", "bucket-speed-fb35945", "bucket-speed-71d8227", "bucket-speed-znver3")
    )
    var = _bench("uniform-bins-variants")["inputs"]
    twins = _bench("envelope-twins")["rows"]
    u = lambda d, y, k: d["uniform"][y][f"{k}/sum"]  # noqa: E731
    np_ = [new["uniform"][y]["numpy/fastcdl_1"] for y in ("float64", "bool")]
    simple = [u(new, y, "simplest") for y in ("float64", "bool")]
    vr = {k: var[k]["ratios"] for k in ("random", "on the edges' grid")}
    v = lambda name: [vr[k][name] for k in vr]  # noqa: E731
    znp = [z["uniform"][y]["numpy/fastcdl_1"] for y in ("float64", "bool")]
    tw = [r[k] for r in twins for k in ("curve", "ucal", "v")]
    th = lambda d: [d["threads"][k]["two/one"] for k in d["threads"]]  # noqa: E731
    claims = [
        (
            "takes {}x (float64 outcomes) and {}x (bool outcomes) the time numpy takes to sum p and y",
            [u(new, "float64", "fastcdl_1"), u(new, "bool", "fastcdl_1")],
        ),
        ("1.0 to 1.2 ({}x and {}x at load 16)", [u(mid, "float64", "fastcdl_1"), u(mid, "bool", "fastcdl_1")]),
        ("before, {}x and {}x on the quiet machine", [u(quiet, "float64", "fastcdl_1"), u(quiet, "bool", "fastcdl_1")]),
        ("It is {}-{}x faster than numpy's searchsorted", [min(np_), max(np_)]),
        (
            "(the kernel before) took {}x on random predictions and {}x on predictions on the edges' grid",
            v("one pass, bin_of (before)"),
        ),
        ("near an edge {}x and {}x", v("blocks, guess + correction near edges")),
        ("the blocked loop with the computed cut {}x and {}x", v("blocks, computed cut (now)")),
        ("no edge rule and no checks) took {}-{}x the sum in the same run", [min(simple), max(simple)]),
        (
            "the binning took {}x (float64 outcomes) and {}x (bool) the sum on one thread, {}-{}x faster",
            [u(z, "float64", "fastcdl_1"), u(z, "bool", "fastcdl_1"), min(znp), max(znp)],
        ),
        ("The simplest loop took {}x and {}x", [u(z, "float64", "simplest"), u(z, "bool", "simplest")]),
        ("The exact CDL took {}x numpy's sort", [z["cdl"]["cdl/sort"]]),
        ("time), and cdl_report {}x", [z["cdl"]["cdl_report/sort"]]),
        (
            "took {}x on the quiet machine (bucket-speed-71d8227.md), {}x at load 1.0 to 1.4 (bucket-speed.md) and {}x at load 16",
            [quiet["exact"]["fastcdl/simplest"], new["exact"]["fastcdl/simplest"], mid["exact"]["fastcdl/simplest"]],
        ),
        ("10^6 buckets took {}x numpy's sort of 2 10^6 floats", [quiet["cdl"]["cdl/sort"]]),
        ("after it, {}x at load 1.0 to 1.4 ({}x in CPU time)", [new["cdl"]["cdl/sort"], new["cdl"]["cdl/sort cpu"]]),
        (
            "`cdl_report` took {}x the sort quiet before the change and takes {}x at load 1.0 to 1.4",
            [quiet["cdl"]["cdl_report/sort"], new["cdl"]["cdl_report/sort"]],
        ),
        ("({}x against {}x the sort, in the same run)", [new["cdl"]["cdl/sort"], new["cdl"]["cdl_report/sort"]]),
        (
            "was slower in {} of {} cases, at most {}% faster in the others",
            [sum(r < 1 for r in tw), len(tw), 100 * (max(tw) - 1)],
        ),
        (
            "costs {}x the simplest loop playing the same game on the quiet machine (before), {}x at load 16 and {}x at load 1.0 to 1.4",
            [
                quiet["online"]["simulate/simplest"],
                mid["online"]["simulate/simplest"],
                new["online"]["simulate/simplest"],
            ],
        ),
        ("({}-{}x of one thread's time on the quiet machine,", [min(th(quiet)), max(th(quiet))]),
        ("{}-{}x in the run at load 16", [min(th(mid)), max(th(mid))]),
        ("{}-{}x in the run at load 1.0 to 1.4", [min(th(new)), max(th(new))]),
    ]
    for where, key in (
        ("(default: numba's count)", "uniform bins"),
        ("| binning, quantile | the same", "quantile bins"),
        ("| binning, weighted | the same", "weighted uniform bins"),
        ("only if it starts in time", "exact table (bins=None)"),
        ("on the same helper thread", "smCE from rounds"),
    ):
        claims.append(
            (
                where + " | {}x | {}x | {}x |",
                [quiet["threads"][key]["two/one"], mid["threads"][key]["two/one"], new["threads"][key]["two/one"]],
            )
        )
    return claims


def _vsum(name, est, n, shape="all"):
    """A row of results/estimators-coverage/validation_summary.csv."""
    return next(
        r
        for r in _read(RESULTS / "estimators-coverage" / "validation_summary.csv")
        if (r["file"], r["estimator"], int(r["n"]), r["shape"]) == (name, est, n, shape)
    )


def _same_samples(est, n, reps, shape=None):
    """(covered, samples) of validation.csv's rows of est at n with replication below reps."""
    rows = [
        r
        for r in _read(RESULTS / "estimators-coverage" / "validation.csv")
        if r["estimator"] == est and int(r["n"]) == n and int(r["rep"]) < reps and shape in (None, r["shape"])
    ]
    return sum(float(r["lo"]) <= float(r["truth"]) <= float(r["hi"]) for r in rows), len(rows)


def _crossfit_claims():
    """The cross-fit validation numbers the coverage README and docs/estimators.md quote."""
    cf, cv, base = "validation-crossfit.csv", "validation.csv", "cdl_monotone_crossfit"
    a5, a50 = _vsum(cf, base, 5000), _vsum(cf, base, 50000)
    v5, v50 = _vsum(cf, "vcdl_monotone_crossfit", 5000), _vsum(cf, "vcdl_monotone_crossfit", 50000)
    b5, b50 = _vsum(cv, "cdl_monotone", 5000), _vsum(cv, "cdl_monotone", 50000)
    nm5 = _vsum(cf, base, 5000, "nonmonotone")
    vnm50 = _vsum(cf, "vcdl_monotone_crossfit", 50000, "nonmonotone")
    same_vnm = _same_samples("vcdl_monotone", 50000, int(vnm50["samples"]), "nonmonotone")
    low = min((_vsum(cf, base, 50000, m) for m in MODELS), key=lambda r: float(r["coverage"]))
    low50 = (float(low["covered"]), float(low["samples"]))
    n = lambda r, f: float(r[f])  # noqa: E731
    return [
        (
            "With the default correction it covered {}/{} (Wilson [{}, {}]) at 5,000 and {}/{} ([{}, {}]) at 50,000 "
            "for CDL, {}/{} and {}/{} for VCDL",
            [
                n(a5, "covered"),
                n(a5, "samples"),
                n(a5, "coverage_lo"),
                n(a5, "coverage_hi"),
                n(a50, "covered"),
                n(a50, "samples"),
                n(a50, "coverage_lo"),
                n(a50, "coverage_hi"),
                n(v5, "covered"),
                n(v5, "samples"),
                n(v50, "covered"),
                n(v50, "samples"),
            ],
        ),
        (
            "plug-in bias of `cdl_monotone_crossfit` was {} at 5,000 rounds and {} at 50,000, against {} and {}",
            [n(a5, "bias_plugin"), n(a50, "bias_plugin"), n(b5, "bias_plugin"), n(b50, "bias_plugin")],
        ),
        (
            "(VCDL: {} and {} against {} and {})",
            [
                n(v5, "bias_plugin"),
                n(v50, "bias_plugin"),
                n(_vsum(cv, "vcdl_monotone", 5000), "bias_plugin"),
                n(_vsum(cv, "vcdl_monotone", 50000), "bias_plugin"),
            ],
        ),
        (
            "the debiased estimate's RMSE was {} and {}, against {} and {} for `cdl_monotone`'s",
            [n(a5, "rmse_estimate"), n(a50, "rmse_estimate"), n(b5, "rmse_estimate"), n(b50, "rmse_estimate")],
        ),
        (
            "`vcdl_monotone_crossfit`'s default interval covered the non-monotone model {}/{} at 50,000 rounds "
            "(Wilson [{}, {}]), where `vcdl_monotone`'s own covered {}/{} on the same samples",
            [n(vnm50, "covered"), n(vnm50, "samples"), n(vnm50, "coverage_lo"), n(vnm50, "coverage_hi"), *same_vnm],
        ),
        (
            "`cdl_monotone_crossfit`'s covered the non-monotone model {}/{} at 5,000 rounds and every model {}/{} or "
            "more at 50,000",
            [n(nm5, "covered"), n(nm5, "samples"), *low50],
        ),
    ]


def _lowest_default(est, n, method="default"):
    """The lowest coverage over the models of a method of the study (summary.csv)."""
    rows = [
        r
        for r in _read(RESULTS / "estimators-coverage" / "summary.csv")
        if (r["estimator"], int(r["n"]), r["method"]) == (est, n, method)
    ]
    return min(float(r["coverage"]) for r in rows)


def _count(est, n, model, method="default"):
    """(covered, samples) of a method of the study at one model (summary.csv)."""
    r = next(
        r
        for r in _read(RESULTS / "estimators-coverage" / "summary.csv")
        if (r["estimator"], int(r["n"]), r["shape"], r["method"]) == (est, n, model, method)
    )
    return round(float(r["coverage"]) * int(r["samples"])), int(r["samples"])


NS = (1000, 10000, 100000)
SHOWN = (
    "default",
    "percentile",
    "basic",
    "normal_bootstrap_bc",
    "subsample_n/4",
    "hs_1/2",
    "hs_2/3",
    "quarter_1/2",
    "quarter_2/3",
    "quarter_band",
)


def _study_prose_claims(doc):
    """The numbers the coverage README (doc="readme") and docs/estimators.md (doc="docs") quote of
    the third round's study of the four estimators from the literature, from summary.csv."""
    k2 = "k2_debiased"
    cf = [_lowest_default("cdl_monotone_crossfit", n) for n in NS] + [
        _lowest_default("vcdl_monotone_crossfit", n) for n in NS
    ]
    pct = [_lowest_default(k2, n, "percentile") for n in NS]
    k2def = min(_lowest_default(k2, n) for n in NS)
    sweep = max(_lowest_default("ece_sweep", 10000, m) for m in SHOWN)
    if doc == "docs":
        rows = [
            r
            for r in _read(RESULTS / "estimators-coverage" / "summary.csv")
            if (r["estimator"], int(r["n"]), r["method"]) == (k2, 100000, "default")
        ]
        low = min(rows, key=lambda r: float(r["coverage"]))
        return [
            (
                "covered {} or more on every model at 10^3 to 10^5 rounds ({} is {} of {} samples at 10^5, a Wilson "
                "interval [{}, {}]), where the percentile bootstrap's lowest was {}, {}, {};",
                [
                    k2def,
                    float(low["coverage"]),
                    *_count(k2, 100000, low["shape"]),
                    float(low["coverage_lo"]),
                    float(low["coverage_hi"]),
                    *pct,
                ],
            ),
            ("no method's lowest coverage over the models passed {} at 10^4 rounds", [sweep]),
            (
                "the study's rule covered {}, {}, {} (lowest model at 10^3, 10^4, 10^5 rounds) for CDL_Mcf and "
                "{}, {}, {} for VCDL_Mcf",
                cf,
            ),
        ]
    return [
        ("covered {} or more on every model at 10^3, 10^4 and 10^5 rounds", [k2def]),
        ("The bootstrap did not: percentile {}, {}, {} at the same sizes", pct),
        ("BCa {} at 10^3", [_lowest_default(k2, 1000, "bca")]),
        (
            "Every method's lowest coverage over the models was {} or less at 10^4 rounds (the default {})",
            [sweep, _lowest_default("ece_sweep", 10000)],
        ),
        (
            "The default covered {}, {}, {} (lowest model, at 10^3, 10^4, 10^5 rounds) for CDL_Mcf and {}, {}, {} "
            "for VCDL_Mcf",
            cf,
        ),
        (
            "at 10^4 the non-monotone model was the lowest for both, at {}/{} and {}/{}",
            [
                *_count("cdl_monotone_crossfit", 10000, "nonmonotone"),
                *_count("vcdl_monotone_crossfit", 10000, "nonmonotone"),
            ]
            if all(
                min((_count(e, 10000, m) for m in MODELS), key=lambda c: c[0] / c[1]) == _count(e, 10000, "nonmonotone")
                for e in ("cdl_monotone_crossfit", "vcdl_monotone_crossfit")
            )
            else [float("nan")] * 4,
        ),
    ]


def _crossfit_docs_claims():
    """docs/estimators.md's cross-fit validation numbers (validation files)."""
    cf, cv = "validation-crossfit.csv", "validation.csv"
    a5, a50 = _vsum(cf, "cdl_monotone_crossfit", 5000), _vsum(cf, "cdl_monotone_crossfit", 50000)
    b5, b50 = _vsum(cv, "cdl_monotone", 5000), _vsum(cv, "cdl_monotone", 50000)
    nm5 = _vsum(cf, "cdl_monotone_crossfit", 5000, "nonmonotone")
    vnm50 = _vsum(cf, "vcdl_monotone_crossfit", 50000, "nonmonotone")
    same_vnm = _same_samples("vcdl_monotone", 50000, int(vnm50["samples"]), "nonmonotone")
    n = lambda r, f: float(r[f])  # noqa: E731
    return [
        ("rounds for CDL_Mcf (the non-monotone model {}/{} at 5,000", [n(nm5, "covered"), n(nm5, "samples")]),
        (
            "but the non-monotone model only {}/{} at 50,000 rounds for VCDL_Mcf, where `vcdl_monotone`'s own covered "
            "{}/{} on the same samples",
            [n(vnm50, "covered"), n(vnm50, "samples"), *same_vnm],
        ),
        (
            "({} to {} pooled at 5,000 rounds, {} to {} at 50,000)",
            [n(b5, "bias_plugin"), n(a5, "bias_plugin"), n(b50, "bias_plugin"), n(a50, "bias_plugin")],
        ),
        (
            "(RMSE {} against {} for CDL_M's at 5,000, {} against {} at 50,000)",
            [n(a5, "rmse_estimate"), n(b5, "rmse_estimate"), n(a50, "rmse_estimate"), n(b50, "rmse_estimate")],
        ),
    ]


def _coverage_readme_claims():
    return _crossfit_claims() + _study_prose_claims("readme")


def _estimators_doc_claims():
    return (
        _estimators_claims()
        + _crossfit_docs_claims()
        + _study_prose_claims("docs")
        + _estimators_bootstrap_claims()
        + _sample_costs_claims()
    )


@functools.lru_cache(maxsize=None)
def _store(path):
    """A read-only connection to a committed trial store: `trials.sqlite` itself, or `trials.sqlite.xz`
    unpacked into memory (read once per session)."""
    if not str(path).endswith(".xz"):
        return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    con = sqlite3.connect(":memory:")
    con.deserialize(lzma.decompress(Path(path).read_bytes()))
    return con


def _estimators_bootstrap_claims():
    """docs/estimators.md on the bootstrap's coverage and the rates of the bias, from the study's
    summary.csv and bias_rate.csv (results/estimators-coverage)."""
    summ = _read(COVERAGE / "summary.csv")
    boot = [
        r
        for r in summ
        if r["estimator"] in ("cdl_monotone", "vcdl_monotone", "cutoff_ce") and r["method"] in ("percentile", "bca")
    ]
    cov = [float(r["coverage"]) for r in boot]
    off_atom = [float(r["coverage"]) for r in boot if r["shape"] != "point_mass"]
    # the misses are above the population value: in some cell every interval lies above it
    above_all = max(float(r["above"]) for r in boot) == 1.0
    rates = {(r["shape"], r["estimator"]): float(r["log_log_slope"]) for r in _read(COVERAGE / "bias_rate.csv")}
    monotone = [rates[(m, e)] for m in MODELS if m != "point_mass" for e in ("cdl_monotone", "vcdl_monotone")]
    others = [rates[(m, e)] for m in MODELS for e in ("cutoff_ce", "smce")]

    def cells(est, n, method, models=MODELS):
        return [
            float(r["coverage"])
            for r in summ
            if r["estimator"] in est and int(r["n"]) == n and r["method"] == method and r["shape"] in models
        ]

    four = ("cdl_monotone", "vcdl_monotone", "cutoff_ce", "smce")
    single = cells(four, 10000, "quarter_2/3", ("calibrated",))
    union = cells(four, 10000, "quarter_band")
    small = [r for r in summ if r["estimator"] in four and int(r["n"]) == 1000 and r["method"] == "default"]
    worst_small = min(small, key=lambda r: float(r["coverage"]))["shape"]
    binned = [float(r["coverage"]) for r in summ if r["estimator"] == "ece_quantile" and r["method"] == "default"]
    k2 = [1000 * float(r["bias"]) for r in summ if r["estimator"] == "k2_debiased" and r["method"] == "default"]
    return [
        (
            "above the population value in as many as all of the samples (coverage {} to {} at nominal 0.95 over "
            "the models and sizes of summary.csv, and at most {} on every model but the point mass)",
            [min(cov), max(cov), max(off_atom)] if above_all else [float("nan")] * 3,
        ),
        (
            "were {} to {} for CDL_M and VCDL_M ({} and {} on the point-mass model, whose bias is small and noisy) "
            "and {} to {} for cutoff CE and smCE, on every model",
            [
                max(monotone),
                min(monotone),
                rates[("point_mass", "cdl_monotone")],
                rates[("point_mass", "vcdl_monotone")],
                max(others),
                min(others),
            ],
        ),
        (
            "With the single rate 2/3 the calibrated model was covered {} to {} of the time at 10^4 rounds",
            [min(single), max(single)],
        ),
        ("the union covered at least {} on every model at 10^4 rounds", [min(union)]),
        (
            f"(at 1,000 rounds: {{}} to {{}}, the {worst_small.replace('_', '-')} model the worst)",
            [min(float(r["coverage"]) for r in small), max(float(r["coverage"]) for r in small)],
        ),
        (
            "(the study's rule covered the scores' ECE in {} to {} of the samples, by model and n: summary.csv)",
            [min(binned), max(binned)],
        ),
        ("in the study its bias was noise of either sign, within {} and {} x 1e-3", [min(k2), max(k2)]),
    ]


def _sample_costs_claims():
    """docs/estimators.md's costs at 200,000 scores, from results/benchmarks/sample-costs.json."""
    sc = json.loads((BENCH / "sample-costs.json").read_text())
    cost = {r["what"]: r["seconds"] for r in sc["rows"]}
    intervals = [v for k, v in cost.items() if k.startswith("interval(")]
    kernel = cost["calibration_test, cutoff CE, 1000 simulations (kernel)"]
    T = f"{sc['meta']['T']:,}"
    return [
        (f"At {T} distinct scores and 1000 simulations it took {{}} s on the 2-core machine", [kernel]),
        (
            "`calibration_test` of cutoff CE with 1000 simulations took {} s (load average {} on 2 cores), against {} "
            "s for 100 simulations table by table; `interval` {} to {} s; a 1000-replicate bootstrap {} s",
            [
                kernel,
                sc["meta"]["load_before"][0],
                cost["calibration_test, cutoff CE through the metric, 100 simulations"],
                min(intervals),
                max(intervals),
                cost["bootstrap(cutoff_ce), 1000 replicates, percentile"],
            ],
        ),
        (f"estimator on a quarter of the rounds: {{}} to {{}} s at {T} scores", [min(intervals), max(intervals)]),
    ]


def _fit_window(row):
    """The powers of 2 from a summary row's t_min_fit to its t_max_fit."""
    lo, hi = int(row["t_min_fit"]).bit_length() - 1, int(row["t_max_fit"]).bit_length() - 1
    return [2**k for k in range(lo, hi + 1)]


def _readme_results_claims():
    """README.md's Results list: the paper run (results/paper), the worst case found
    (results/worstcase) and the m-constant sweep (results/msweep)."""
    paper = {(r["forecaster"], r["adversary"], r["metric"]): r for r in _read(RESULTS / "paper" / "summary.csv")}
    forms = {
        (r["forecaster"], r["adversary"], r["metric"], r["form"]): float(r["c"])
        for r in _read(RESULTS / "paper" / "forms.csv")
    }
    T = np.array(_fit_window(paper[("cdl", "greedy", "cdl")]), dtype=float)
    offset_slope = np.polyfit(np.log(T), np.log(np.log(T) / np.sqrt(T)), 1)[0]  # 1/m = ln T / sqrt T
    worst = [r for r in _read(RESULTS / "worstcase" / "worst.csv") if r["metric"] == "cdl"]
    ablations = [
        float(r["mean"]) for r in worst if r["forecaster"] in ("sign", "uniform") and r["adversary"] == "contrarian"
    ]
    wslopes = {(r["forecaster"], r["metric"]): r for r in _read(RESULTS / "worstcase" / "worst_slopes.csv")}
    wforms = {
        (r["forecaster"], r["metric"], r["form"]): float(r["c"]) for r in _read(RESULTS / "worstcase" / "forms.csv")
    }
    top = max(int(r["T"]) for r in worst if r["forecaster"] == "cdl")
    at_top = {r["forecaster"]: float(r["mean"]) for r in worst if int(r["T"]) == top}
    fit = _fit_window(wslopes[("cdl", "cdl")])
    window = f"2^{fit[0].bit_length() - 1}..2^{fit[-1].bit_length() - 1}"
    return [
        (
            "Against drift CDL decays much faster than ECE (slopes {} against {} for `cdl`)",
            [float(paper[("cdl", "drift", m)]["slope"]) for m in ("cdl", "ece")],
        ),
        ("(CDL ≈ {}/m, local slope {})", [forms[("cdl", "greedy", "cdl", "c / m")], offset_slope]),
        ("(CDL ≈ {}/m, local slope {})", [forms[("cdl", "bernoulli", "cdl", "c / m")], offset_slope]),
        ("`contrarian` holds the ablations at CDL {}–{} at every T", [min(ablations), max(ablations)]),
        (
            f"`cdl`'s worst case found decays with slope {{}} over {window}, like {{}}/m",
            [float(wslopes[("cdl", "cdl")]["slope"]), wforms[("cdl", "cdl", "c / m")]],
        ),
        (
            f"Foster's is lower at every T measured ({{}}x at 2^{top.bit_length() - 1}) but decays more slowly ({{}})",
            [at_top["cdl"] / at_top["foster"], float(wslopes[("foster", "cdl")]["slope"])],
        ),
        ("c = 4–8 gives {}–{}x lower mean CDL than the default c = 1", _msweep_gain((14, 17, 20), ("4", "8"))),
    ]


def _msweep_rates():
    return {
        (r["forecaster"], r["adversary"], int(r["T"]), r["metric"]): float(r["mean"])
        for r in _read(RESULTS / "msweep" / "rates.csv")
    }


def _msweep_gain(ks, cs):
    """[least, largest] of mean CDL at c = 1 over the mean CDL at c in cs, over the adversaries and 2^k."""
    rates = _msweep_rates()
    advs = {a for (_, a, _, _) in rates}
    g = [
        rates[("cdl c=1", a, 2**k, "cdl")] / rates[(f"cdl c={c}", a, 2**k, "cdl")] for a in advs for k in ks for c in cs
    ]
    return [min(g), max(g)]


def _msweep_claims():
    """results/msweep/README.md's prose: ratios of the means (rates.csv), slopes (summary.csv), the
    fitted CDL x m (forms.csv), the replay's counts (results/exact-decisions/replays.csv) and the
    trial times and rows of the store (trials.sqlite)."""
    d = RESULTS / "msweep"
    rates = _msweep_rates()
    cs = ("1/2", "1", "2", "4", "8")
    advs = sorted({a for (_, a, _, _) in rates})
    cdl = lambda c, a, k: rates[(f"cdl c={c}", a, 2**k, "cdl")]  # noqa: E731
    best = {(a, k): min(cdl(c, a, k) for c in cs) for a in advs for k in (14, 17, 20)}
    near = max(best, key=lambda ak: cdl("4", *ak) / best[ak])
    summ = {(r["forecaster"], r["adversary"], r["metric"]): r for r in _read(d / "summary.csv")}
    slope = lambda c, a, m, col="slope": float(summ[(f"cdl c={c}", a, m)][col])  # noqa: E731
    forms = {
        (r["forecaster"], r["adversary"], r["metric"], r["form"]): r
        for r in _read(d / "forms.csv")
        if r["form"] == "c / m"
    }
    cm = lambda c, a, col="c": float(forms[(f"cdl c={c}", a, "cdl", "c / m")][col])  # noqa: E731
    replays = {r["adversary"]: r for r in _read(RESULTS / "exact-decisions" / "replays.csv") if r["folder"] == "msweep"}
    n = lambda a, col: int(replays[a][col])  # noqa: E731
    # the store: a trial replaced under the exact decisions keeps its superseded row beside the
    # replayed one; a re-keyed trial has one row, with its first run's time
    rows = (
        _store(d / "trials.sqlite")
        .execute(
            "SELECT forecaster_label, adversary, T, seed_index, algorithm_version LIKE 'forecaster=cdl/1 %', seconds, "
            "cdl, vcdl, ece, k2, ucal, kink1, kink2, n_buckets FROM trials"
        )
        .fetchall()
    )
    old = {r[:4]: r[5:] for r in rows if r[4]}
    new = {r[:4]: r[5:] for r in rows if not r[4]}
    first_run = {**{k: r[0] for k, r in old.items()}, **{k: r[0] for k, r in new.items() if k not in old}}
    same = [k for k in new if k in old and new[k][1:] == old[k][1:]]  # replayed, every stored number alike
    differ = sum(n(a, "differ") for a in replays)
    timing = json.loads((d / "summary.json").read_text())["timing"]
    return [
        (
            "at 2^20 it is {}x below the default c = 1 against `greedy` and {}x below it against `bernoulli`",
            [cdl("1", a, 20) / cdl("8", a, 20) for a in ("greedy", "bernoulli")],
        ),
        (
            f"it is the best or within 2x of the best ({{}}x against `{near[0]}` at 2^{near[1]}), and {{}}–{{}}x "
            "below the default c = 1",
            [cdl("4", *near) / best[near], *_msweep_gain((14, 17, 20), ("4",))],
        ),
        ("except 2^15, where c = 8 is {}% lower", [100 * (1 - cdl("8", "drift", 15) / cdl("4", "drift", 15))]),
        ("c = 8 is higher by {}% at 2^20", [100 * (cdl("8", "drift", 20) / cdl("4", "drift", 20) - 1)]),
        ("(not at 2^19, where it is {}% higher)", [100 * (cdl("8", "drift", 19) / cdl("4", "drift", 19) - 1)]),
        (
            "the ECE slope is {} at c = 1/2 and {} at c = 8, while the CDL slope stays between {} and {}",
            [
                slope("1/2", "drift", "ece"),
                slope("8", "drift", "ece"),
                max(slope(c, "drift", "cdl") for c in cs),
                min(slope(c, "drift", "cdl") for c in cs),
            ],
        ),
        (
            "The fitted CDL × m against `greedy` is {}–{} for c ≤ 2, but {} at c = 4 and {} at c = 8",
            [
                min(cm(c, "greedy") for c in ("1/2", "1", "2")),
                max(cm(c, "greedy") for c in ("1/2", "1", "2")),
                cm("4", "greedy"),
                cm("8", "greedy"),
            ],
        ),
        (
            "(c = 1: [{}, {}], c = 2: [{}, {}])",
            [slope(c, "bernoulli", "cdl", col) for c in ("1", "2") for col in ("slope_lo", "slope_hi")],
        ),
        ("(c = 8: {} [{}, {}])", [cm("8", "bernoulli", col) for col in ("c", "c_lo", "c_hi")]),
        (
            "The run had 8 seeds first ({} s of trial time on a quiet machine) and was extended to 16 (`seeds = 16` "
            "in the preset; seeds 8 … 15 took {} s of trial time on a machine shared with other work, so its timing "
            "says little about speed; the {} rows stored from the replay under the exact decisions, below, carry "
            "the replay's timing, so the {} s of trial time in `summary.json`",
            [
                sum(s for k, s in first_run.items() if k[3] < 8),
                sum(s for k, s in first_run.items() if k[3] >= 8),
                sum(k in old for k in new),
                timing["trial_seconds_total"],
            ],
        ),
        (
            "(results/exact-decisions/replays.csv): {} of the {} differ ({} of {} against `bernoulli`, {} against "
            "`drift`, {} against `greedy`), {} of them in CDL. The other {} are identical in every stored number; {} "
            "of them were re-keyed, and the {} (of seeds 0 … 7)",
            [
                differ,
                len(new),
                n("bernoulli", "differ"),
                n("bernoulli", "trials"),
                n("drift", "differ"),
                n("greedy", "differ"),
                sum(n(a, "cdl_differs") for a in replays),
                len(new) - differ,
                sum(k not in old for k in new),
                len(same) if all(k[3] < 8 for k in same) and sum(k in old for k in new) - len(same) == differ else -1,
            ],
        ),
    ]


def _worstcase_store_claims():
    """results/worstcase/README.md on its store (trials.sqlite.xz): every trial, and the rows of the
    current plan's run (the store's latest code version)."""
    con = _store(RESULTS / "worstcase" / "trials.sqlite.xz")
    n, rounds, seconds = con.execute("SELECT count(*), sum(T), sum(seconds) FROM trials").fetchone()
    (version,) = con.execute("SELECT code_version FROM trials ORDER BY finished_at DESC LIMIT 1").fetchone()
    run_n, run_s = con.execute(
        "SELECT count(*), sum(seconds) FROM trials WHERE code_version = ?", (version,)
    ).fetchone()
    top_s, least, most = con.execute(
        "SELECT sum(seconds), min(seconds), max(seconds) FROM trials WHERE code_version = ? AND forecaster = 'acrs' "
        "AND adversary IN ('cdlahead', 'lookahead') AND T = 1048576",
        (version,),
    ).fetchone()
    return [
        ("The store holds {} trials ({} rounds, {} trial-seconds)", [n, rounds, seconds]),
        (
            f"added {{}} trials to it (the rows of code version {version.split('+')[-1]}: {{}} trial-seconds, {{}} "
            "of them `acrs` against `cdlahead` and `lookahead` at 2^20 on the deepest rung, {} to {} s a trial)",
            [run_n, run_s, top_s, least, most],
        ),
    ]


def _leaderboard_cost_claims():
    """docs/leaderboard.md's speeds of the games: the median over seeds of `rounds_per_second` of
    every game (forecaster, adversary and its parameters) at the largest T of the leaderboard's
    store (results/leaderboard/trials.sqlite.xz)."""
    con = _store(RESULTS / "leaderboard" / "trials.sqlite.xz")
    (T,) = con.execute("SELECT max(T) FROM trials").fetchone()
    games = {}
    for f, a, params, r in con.execute(
        "SELECT forecaster, adversary, adversary_params, rounds_per_second FROM trials WHERE T = ?", (T,)
    ):
        games.setdefault((f, a, params), []).append(r)
    med = {k: float(np.median(v)) / 1e6 for k, v in games.items()}
    look = [v for k, v in med.items() if k[1] == "lookahead"]
    rest = [v for k, v in med.items() if k[1] != "lookahead"]
    slowest = {}
    for (f, a, _), v in med.items():
        if a != "lookahead":
            slowest[f] = min(v, slowest.get(f, np.inf))
    first, second = sorted(slowest, key=slowest.get)[:2]
    return [
        (
            f"at T = 2^{T.bit_length() - 1} the median over the seeds of one game is {{}} to {{}} million rounds a "
            f"second against every adversary but `lookahead` (`{first}`'s and `{second}`'s rounds are the dearest),",
            [min(rest), max(rest)],
        ),
        ("are the dearest), and {} to {} million against `lookahead`", [min(look), max(look)]),
    ]


def _benchmarks_readme_claims():
    """results/benchmarks/README.md on when its files were measured: the first nine rows' files from
    bench_all's runs (their started and finished times, the load at their start and end, their run times and
    whether any recorded a changed tree; scripts/benchrecord.py's fields)."""
    text = (BENCH / "README.md").read_text()
    header, rows = next((h, b) for h, b in _tables(text) if h[0] == "file")
    names = [re.search(r"`(\S+)\.json`", r[0]).group(1) for r in rows][:9]
    docs = {n: _bench(n) for n in names}
    docs["estimators"] = docs["estimators"]["record"]["estimators"]
    start, end = min(docs[n]["started"] for n in names), max(docs[n]["finished"] for n in names)
    day, last = start.split()[0], end.split()[0]
    loads = [f(docs[n][k][0] for n in names for k in ("load_start", "load_end")) for f in (min, max)]
    dirty = [n for n in names if docs[n]["source"]["dirty"]]
    return [
        (
            f"The files of the first nine rows are from runs of `scripts/bench_all.py`, {start.split()[1]}-"
            f"{end.split()[1]} UTC on {day if day == last else '?'} (load average {{}} to {{}} on the 2 CPUs,",
            loads,
        ),
        (
            "their run times add up to {} minutes); "
            + ("none records a changed tree." if not dirty else f"{', '.join(dirty)} record a changed tree."),
            [sum(docs[n]["run_seconds"] for n in names) / 60],
        ),
    ]


def _spr_rates_claims():
    """results/spr-rates/README.md's time of the recorded run (summary.json)."""
    summary = json.loads((RESULTS / "spr-rates" / "summary.json").read_text())
    timing = summary["timing"]
    return [
        ("T = 2^10 .. 2^18, 8 seeds, {} trials", [summary["n_trials"]]),
        (
            "Reproduce (the recorded run took {} s of wall time on 2 shared cores, `summary.json`",
            [timing["wall_seconds_this_invocation"]],
        ),
    ]


DOC_CLAIMS = {
    "docs/kernels.md": _kernels_claims,
    "docs/algorithm1.md": _algorithm1_claims,
    "docs/experiments.md": _coverage_claims,
    "docs/estimators.md": _estimators_doc_claims,
    "docs/metrics.md": _bucket_speed_claims,
    "results/estimators-coverage/README.md": _coverage_readme_claims,
    "README.md": _readme_results_claims,
    "results/msweep/README.md": _msweep_claims,
    "results/worstcase/README.md": _worstcase_store_claims,
    "docs/leaderboard.md": _leaderboard_cost_claims,
    "results/benchmarks/README.md": _benchmarks_readme_claims,
    "results/spr-rates/README.md": _spr_rates_claims,
}


@pytest.mark.parametrize("doc", sorted(DOC_CLAIMS))
def test_docs_numbers_match_their_results_files(doc):
    claims = DOC_CLAIMS[doc]()
    checked, problems = _claim_problems((ROOT / doc).read_text(), claims, doc)
    assert checked == len(claims) >= 2 and not problems, problems


def test_coverage_file_counts_give_its_fractions():
    """slope_coverage.csv's fractions are its counts of covering intervals over the intervals."""
    for r in _coverage_rows():
        for c in [k for k in r if k.endswith(" (covered)")]:
            name = c[: -len(" (covered)")]
            assert _close(r[name], int(r[c]) / int(r[name + " (intervals)"])), (r["noise"], r["seeds"], name)


def test_checkers_fail_on_wrong_numbers():
    """Each checker above reports a number that its file does not support (written here on purpose)."""
    readme = (ROOT / "README.md").read_text()
    assert not _speed_machine_problems(readme)[1]
    peers = _bench("peers")
    loads = [_bench(n)[k][0] for n in SPEED_SOURCES for k in ("load_start", "load_end")]
    said = f"(1 min) {min(loads):.2f} to"
    for old, new in (
        (said, f"(1 min) {min(loads) + 0.5:.2f} to"),
        (" 2 logical CPUs,", " 4 logical CPUs,"),
        (f"Machine: {peers['machine']['model']},", "Machine: Some Other CPU,"),
        ("(all five files)", "(peers.json, metrics.json)"),
    ):
        assert old in readme and _speed_machine_problems(readme.replace(old, new, 1))[1], new

    # every claim taken from a JSON or CSV file, shown a wrong number: the first number it matches,
    # changed (the same digits after the point), must be reported
    for where, claims in (("README.md", _speed_claims()), *((doc, f()) for doc, f in DOC_CLAIMS.items())):
        text = _flat((ROOT / where).read_text())
        assert not _claim_problems(text, claims, where)[1], where
        for claim in claims:
            m = re.search(_p(claim[0]), text)
            num = m.group(1).replace(",", "")
            decimals = len(num.split(".")[1]) if "." in num else 0
            wrong = f"{float(num) * 1.5 + 1:.{decimals}f}"
            spoiled = text[: m.start(1)] + wrong + text[m.end(1) :]
            assert _claim_problems(spoiled, [claim], where)[1], (where, claim[0], num, wrong)

    bench = (BENCH / "multiclass.md").read_text()
    doc = "Cost: {} distinct rows with k = 10 in {} s, where the first formulation had not finished after {} s."
    multi = _bench("multiclass")
    case = multi["values"]["400"]
    rows, secs, limit = case["m"], round(_med(multi, "400/new")), round(case["old_stopped_at"])
    for wrong in ((rows + 10, secs, limit), (rows, secs + 10, limit), (rows, secs, limit * 20)):
        assert _multiclass_cost_problems(doc.format(*wrong), readme, bench)[1], wrong
    assert not _multiclass_cost_problems(doc.format(rows, secs, limit), readme, bench)[1]
    row = f"{rows} distinct rows | {secs} s |"
    assert row in readme
    wrong_row = readme.replace(row, f"{rows} distinct rows | {secs + 10} s |")
    assert _multiclass_cost_problems(doc.format(rows, secs, limit), wrong_row, bench)[1]

    worst_readme = _flat((RESULTS / "worstcase" / "README.md").read_text())
    worst_doc = _flat((ROOT / "docs" / "worst-case.md").read_text())
    counts = _fresh_against_search()
    assert not _selection_problems(worst_readme, worst_doc, counts)[1]
    rounded, exact = counts
    b, a, e = (sum(c[i] for c in rounded.values()) for i in range(3))
    s = rounded["sign"]
    for old, new in (
        (f"`sign` {s[0]} / {s[1]} / {s[2]}", f"`sign` {s[0] + 1} / {s[1] - 1} / {s[2]}"),
        (f"all {b + a + e} rows {b} / {a} / {e}", f"all {b + a + e} rows {b + 1} / {a - 1} / {e}"),
        (
            "(unrounded {} / {} / {})".format(*exact),
            "(unrounded {} / {} / {})".format(exact[0] + 1, exact[1] - 1, exact[2]),
        ),
    ):
        assert old in worst_readme and _selection_problems(worst_readme.replace(old, new), worst_doc, counts)[1], new
    doc = "over all 38 winners, to four digits, 15 fresh-seed means are below their search scores, 14 above and 9 equal"
    assert _selection_problems(worst_readme, "for `cdl` and `foster` at 5 of 7 horizons each, " + doc, counts)[1]

    tables = _acrs_tables(4096)
    for old, new in (
        ("2,064/4,096", "2,033/4,065"),
        ("the other 31 rounds", "the other 30 rounds"),
        ("40/4,096", "31/4,096"),
        ("by 1/64 in the 2,033", "by 1/32 in the 2,033"),
    ):
        assert old in worst_readme and _acrs_problems(worst_readme.replace(old, new), tables)[1], new

    msweep = (RESULTS / "msweep" / "README.md").read_text()
    preset = (RESULTS / "msweep" / "preset.toml").read_text()
    assert "with 591 buckets" in msweep
    assert _msweep_buckets_problems(msweep.replace("with 591 buckets", "with 592 buckets"), preset)[1]

    paper = (RESULTS / "paper" / "README.md").read_text()
    row = "| cdl | drift | **-0.615 [-0.629, -0.600]** |"
    assert row in paper
    assert _table_problems("paper", paper.replace(row, "| cdl | drift | **-0.605 [-0.629, -0.600]** |"))[1]
    # a row the files do not have is reported, not skipped
    assert _table_problems("paper", paper.replace(row, "| cdl | drifts | **-0.615 [-0.629, -0.600]** |"))[1]

    # the figures these checkers once missed, each put back, are reported
    for where, old, new, claims in (
        ("README.md", "c = 4–8 gives 1.3–8.0x lower", "c = 4–8 gives 1.4–7.8x lower", _readme_results_claims()),
        (
            "docs/estimators.md",
            "(coverage 0 to 0.98 at nominal",
            "(coverage 0 to 0.6 at nominal",
            _estimators_doc_claims(),
        ),
        ("docs/estimators.md", "ECE in 0.25 to 0.95 of the", "ECE in 0.07 to 1.0 of the", _estimators_doc_claims()),
        (
            "docs/estimators.md",
            "(-0.40 and -0.38 on the point-mass",
            "(-0.38 and -0.40 on the point-mass",
            _estimators_doc_claims(),
        ),
        ("results/worstcase/README.md", "11 to 47 s a trial", "15 to 47 s a trial", _worstcase_store_claims()),
        ("docs/estimators.md", "rounds: 0.2 to 0.4 s at", "rounds: 0.3 to 0.7 s at", _estimators_doc_claims()),
        ("docs/estimators.md", "it took 0.59 s on the", "it took 0.65 s on the", _estimators_doc_claims()),
        (
            "docs/leaderboard.md",
            "is 0.034 to 34 million rounds",
            "is 0.42 to 34 million rounds",
            _leaderboard_cost_claims(),
        ),
        ("results/benchmarks/README.md", "01:15-01:32 UTC on", "01:15-01:33 UTC on", _benchmarks_readme_claims()),
        ("results/spr-rates/README.md", "took 525 s of wall", "took 600 s of wall", _spr_rates_claims()),
    ):
        text = _flat((ROOT / where).read_text())
        assert text.count(old) == 1, old
        assert _claim_problems(text.replace(old, new), claims, where)[1], (where, new)


# Figures that no committed file records were taken out of these passages, which now say so: each
# passage (from its first words to its last) must state no figure of the kind its pattern names,
# so that such a figure cannot come back without a file to check it against.
UNRECORDED = (
    # the bounds-checked phase's times of docs/testing.md: no digit at all (they are in ci_time.json,
    # which the README quotes and test_fresh_clone_times_come_from_their_records checks)
    ("docs/testing.md", "out-of-bounds index in a kernel fails here", "(quoted in the README).", r"\d", "590 s"),
    # the single-thread run: no count of tests
    (
        "docs/testing.md",
        "`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1",
        "not recorded in a results file).",
        r"\d[\d,]*\s+(?:passed|failed|tests)\b",
        "1628 passed",
    ),
    # the fall of an earlier search's winner: that run's values are in no file
    ("docs/worst-case.md", "a larger search made the fresh-seed value", "the winner's curse growing", r"\d", "0.0385"),
    # the worst-case plan's wall time and load (its trial-seconds come from the store)
    (
        "results/worstcase/README.md",
        "The current plan's run,",
        "the machine's load.",
        r"\d+\s*(?:min|minutes|h|hours)\b|\bload \d",
        "47 min",
    ),
    (
        "results/exact-decisions/README.md",
        "Run 2026-11-26 on a",
        "the replay's wall time.",
        r"\d+\s*(?:s|min|minutes|h|hours)\b",
        "40 minutes",
    ),
    # the leaderboard's run: its trial-seconds come from the store, and no file records wall times or loads
    (
        "docs/leaderboard.md",
        "which re-evaluates CDL at its 33 kinks each round.",
        "skips every stored trial.",
        r"\d+(?:\.\d+)?\s*(?:s|min|minutes|h|hours)\b|\bload (?:average )?\d",
        "59 minutes",
    ),
    # the Speed section's refresh: no duration (each file records its own run_seconds)
    (
        "README.md",
        "Reproduce with `.venv/bin/python scripts/bench_all.py`",
        "(docs/asv-history.md).",
        r"\d+(?:\.\d+)?\s*(?:s|min|minutes|h|hours)\b",
        "9.4 minutes",
    ),
    (
        "results/benchmarks/README.md",
        "Refresh every file that README.md and docs/ quote",
        "and the load):",
        r"\d",
        "13 minutes",
    ),
)


def _unrecorded_problems(text, start, end, pattern):
    """The figures matching pattern in the passage of text from start to end."""
    flat = _flat(text)
    i = flat.find(start)
    j = flat.find(end, i + 1) if i >= 0 else -1
    if i < 0 or j < 0:
        return [("passage not found", start, end)]
    return [(start, m.group()) for m in re.finditer(pattern, flat[i : j + len(end)])]


@pytest.mark.parametrize("where, start, end, pattern, figure", UNRECORDED, ids=[u[0] + ": " + u[1] for u in UNRECORDED])
def test_figures_without_a_record_stay_out(where, start, end, pattern, figure):
    text = _flat((ROOT / where).read_text())
    assert not _unrecorded_problems(text, start, end, pattern)
    # the figure that was taken out, put back, is reported
    spoiled = text.replace(start, f"{start} ({figure})", 1)
    assert _unrecorded_problems(spoiled, start, end, pattern)


def _make_run_problems(readme, record):
    """README's first-run and later-run times of `make run` against results/benchmarks/make_run.json."""
    text = _flat(readme)
    m = re.search(r"`make run` on a fresh clone took (\d+) s .*? and (\d+) s when run again", text)
    if not m:
        return 0, [("README.md", "make run times not found")]
    want = (round(record["first_run_s"]), round(record["later_run_s"]))
    got = (int(m.group(1)), int(m.group(2)))
    loads = re.search(r"load average (\d+\.\d) before and (\d+\.\d) after", text)
    problems = [] if got == want else [("README.md", "make run", got, want)]
    if not loads or (float(loads.group(1)), float(loads.group(2))) != (
        round(record["load_before"], 1),
        round(record["load_after_first"], 1),
    ):
        problems.append(("README.md", "make run load", loads and loads.groups()))
    return 2, problems


def test_make_run_times_come_from_their_record():
    record = json.loads((RESULTS / "benchmarks" / "make_run.json").read_text())
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    checked, problems = _make_run_problems(readme, record)
    assert checked == 2 and not problems, problems
    wrong = readme.replace(f"took {round(record['first_run_s'])} s", f"took {round(record['first_run_s']) + 1} s")
    assert _make_run_problems(wrong, record)[1]  # the check fails on a wrong number


COVERAGE = RESULTS / "estimators-coverage"
COVERAGE_FILES = (
    "validation.csv",
    "validation-large.csv",
    "validation-binned.csv",
    "validation-crossfit.csv",
    "validation-scores.csv",
)


def _coverage_counts():
    """{(estimator, n, model): (covered, samples)} of fastcdl.interval's validation files; each
    (estimator, n) comes from one file."""
    counts, source = {}, {}
    for name in COVERAGE_FILES:
        for r in _read(COVERAGE / name):
            key = (r["estimator"], int(r["n"]), r["shape"])
            assert source.setdefault(key[:2], name) == name, (key, name)
            k, N = counts.get(key, (0, 0))
            counts[key] = (k + (float(r["lo"]) <= float(r["truth"]) <= float(r["hi"])), N + 1)
    return counts


def _coverage_count_problems(text, counts):
    """(cells checked, [wrong ones]) of the README's tables headed "estimator | n | <model> ...":
    every cell "k/N" must be the count covered of the samples drawn."""
    checked, wrong = 0, []
    for header, rows in _tables(text):
        if header[:2] != ["estimator", "n"] or "calibrated" not in header:
            continue
        for row in rows:
            est, n = _clean(row[0]), int(_clean(row[1]))
            for model, cell in zip(header[2:], row[2:]):
                m = re.fullmatch(r"(\d+)/(\d+)", _clean(cell))
                if not m:
                    continue
                checked += 1
                got = counts.get((est, n, model))
                if got != (int(m.group(1)), int(m.group(2))):
                    wrong.append((est, n, model, cell, got))
    return checked, wrong


def test_estimators_coverage_counts_match_the_validation_files():
    text = (COVERAGE / "README.md").read_text()
    counts = _coverage_counts()
    checked, wrong = _coverage_count_problems(text, counts)
    assert checked >= 100 and not wrong, (checked, wrong)
    # a wrong count is reported
    (est, n, model), (k, N) = next(iter(counts.items()))
    row = next(ln for ln in text.splitlines() if ln.startswith(f"| {est} | {n} |"))
    spoiled = text.replace(row, row.replace(f"{k}/{N}", f"{k - 1}/{N}", 1), 1)
    assert _coverage_count_problems(spoiled, counts)[1]


def _sentence_problems(readme, pattern, want, what):
    """(1, [problems]) of the README sentence matching pattern: its numbers (ints, or floats where
    printed with a point) against want; (0, [not found]) when no sentence matches."""
    m = re.search(pattern, _flat(readme))
    if not m:
        return 0, [("README.md", f"{what} not found")]
    got = tuple(float(g) if "." in g else int(g) for g in m.groups())
    return 1, ([] if got == want else [("README.md", what, got, want)])


def _make_test_problems(readme, record):
    """README's fresh-clone `make test` time, its CPU seconds, the install time and the load against
    results/benchmarks/test_time.json."""
    checked, problems = _sentence_problems(
        readme,
        r"`make test` on a fresh clone took (\d+) s \((\d+) s of CPU\) on (\d+) cores, load average "
        r"(\d+\.\d) before and (\d+\.\d) after; setting up `.venv` before it took (\d+) s",
        (
            round(record["test_s"]),
            round(record["test_cpu_s"]),
            record["cores"],
            round(record["load_before"], 1),
            round(record["load_after"], 1),
            round(record["install_s"]),
        ),
        "make test time",
    )
    if not record["all_phases_passed"]:
        problems.append(("test_time.json", "the timed run failed"))
    return checked, problems


def _ci_time_problems(readme, record):
    """README's fresh-clone CI time (`bash .ci/run`), its phases' seconds and the load against
    results/benchmarks/ci_time.json."""
    phases = record["phases"]
    checked, problems = _sentence_problems(
        readme,
        r"CI \(`bash \.ci/run`\) on a fresh clone took (\d+) s \((\d+) s of CPU\), load average "
        r"(\d+\.\d) before and (\d+\.\d) after: `make test`'s suite (\d+) s, the slow tests of the other "
        r"files (\d+) s, the kernel test files with bounds checks (\d+) s",
        (
            round(record["ci_s"]),
            round(record["ci_cpu_s"]),
            round(record["load_before"], 1),
            round(record["load_after"], 1),
            phases["test suite (not slow)"]["seconds"],
            phases["slow tests (other files)"]["seconds"],
            phases["kernel tests with bounds checks"]["seconds"],
        ),
        "CI time",
    )
    if not record["all_passed"] or any(p["result"] != "passed" for p in phases.values()):
        problems.append(("ci_time.json", "the timed run failed"))
    return checked, problems


@pytest.mark.parametrize(
    "name, problems_of, seconds",
    [("test_time", _make_test_problems, "test_s"), ("ci_time", _ci_time_problems, "ci_s")],
    ids=["make test", "CI"],
)
def test_fresh_clone_times_come_from_their_records(name, problems_of, seconds):
    record = json.loads((RESULTS / "benchmarks" / f"{name}.json").read_text())
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    checked, problems = problems_of(readme, record)
    assert checked == 1 and not problems, problems
    took = round(record[seconds])
    wrong = readme.replace(f"took {took} s", f"took {took + 1} s")
    assert problems_of(wrong, record)[1]  # the check fails on a wrong number


# -- results/leaderboard/README.md: the rank matrix (ranks.csv), the rates table (theory.csv) and
# every number of the hand-written notes (each against the one cell it names: _notes_claims)
LEADERBOARD = RESULTS / "leaderboard"
# a score may be inf (KL-calibration of a forecaster that stated 0 or 1 and saw the other
# outcome, docs/pseudo.md); its slope is then printed as a dash
_CELL = re.compile(
    rf"^(?:\*\*(\d+)\*\*|–) · ({NUMBER}|inf) \[({NUMBER}|inf), ({NUMBER}|inf)\] · (.+?) · "
    rf"({NUMBER}|—) \[({NUMBER}|—), ({NUMBER}|—)\]$"
)


def _printed_matches(printed, value):
    if printed == "inf":
        return float(value) == np.inf
    if printed == "—":  # no value: an empty cell (the slope of an infinite measure)
        return value == ""
    return value != "" and _close(printed, float(value))


def _leaderboard_problems(readme, folder):
    """(numbers checked, [problems]) of the leaderboard page against ranks.csv, theory.csv and the CSVs,
    and of its notes against the cells _notes_claims ties them to."""
    from fastcdl.measures import MEASURES

    key_of = {m.label: k for k, m in MEASURES.items()}
    ranks = {(r["measure"], r["forecaster"]): r for r in _read(folder / "ranks.csv")}
    theory = {r["forecaster"]: r for r in _read(folder / "theory.csv")}
    checked, problems = 0, []
    for head, rows in _tables(readme):
        if head[0] == "forecaster" and head[1] in key_of:
            for row in rows:
                f = _clean(row[0])
                for label, cell in zip(head[1:], row[1:]):
                    r = ranks.get((key_of[label], f))
                    m = _CELL.match(cell)
                    if r is None or m is None:
                        if not (r is None and cell == "—"):
                            problems.append(("rank cell", f, label, cell))
                        continue
                    rank, mean, lo, hi, env, s, s_lo, s_hi = m.groups()
                    checked += 1
                    if (
                        (rank or "") != r["rank"]
                        or env != r["worst_environment"]
                        or not all(
                            _printed_matches(p, r[c])
                            for p, c in (
                                (mean, "mean"),
                                (lo, "lo"),
                                (hi, "hi"),
                                (s, "slope"),
                                (s_lo, "slope_lo"),
                                (s_hi, "slope_hi"),
                            )
                        )
                    ):
                        problems.append(("rank cell", f, label, cell, r))
        elif head[:2] == ["forecaster", "measure"]:
            for row in rows:
                f = _clean(row[0])
                t = theory.get(f)
                m = re.match(rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]$", row[4])
                checked += 1
                if (
                    t is None
                    or m is None
                    or not (
                        _close(row[3], float(t["paper_slope"]))
                        and all(_close(p, float(t[c])) for p, c in zip(m.groups(), ("slope", "slope_lo", "slope_hi")))
                        and row[5] == t["environment"]
                        and row[6] == t["verdict"]
                    )
                ):
                    problems.append(("rates row", f, row, t))
    table = _read(folder / "table.csv")
    m = re.search(r"(\d+) forecasters against (\d+) environments", readme)
    checked += 1
    if not m or (int(m.group(1)), int(m.group(2))) != (
        len({r["forecaster"] for r in table}),
        len({r["environment"] for r in table}),
    ):
        problems.append(("counts", m and m.groups()))
    start, end = readme.find("<!-- notes"), readme.find("<!-- /notes -->")
    n, wrong = _notes_problems(readme[start:end] if 0 <= start < end else "", folder)
    return checked + n, problems + wrong


def _notes_claims(folder):
    """The hand-written notes of the leaderboard page, number by number: each {} of a template is
    the cell it names, of table.csv (measure, forecaster, environment, column), ranks.csv (measure,
    forecaster, column) or theory.csv (forecaster, column), or a count of the store
    (trials.sqlite.xz, with environments.csv: the trials on the page, and those of each code
    version), or a value of a formula at T (the grid size m of acrs, T^(-2/3) (ln T)^(2/3)).
    Returns the claims and [(what the notes say in words, the files' value, the value the words
    need)], the cells behind the words around the numbers."""
    from fastcdl.online import make_forecaster
    from fastcdl.online.registry import forecasters

    table = {(r["measure"], r["forecaster"], r["environment"]): r for r in _read(folder / "table.csv")}
    ranks = {(r["measure"], r["forecaster"]): r for r in _read(folder / "ranks.csv")}
    theory = {r["forecaster"]: r for r in _read(folder / "theory.csv")}
    tab = lambda m, f, env, *cols: [float(table[(m, f, env)][c]) for c in cols]  # noqa: E731
    rank = lambda m, f, *cols: [float(ranks[(m, f)][c]) for c in cols]  # noqa: E731
    th = lambda f, *cols: [float(theory[f][c]) for c in cols]  # noqa: E731
    interval = ("slope", "slope_lo", "slope_hi")
    T = int(next(iter(table.values()))["T"])

    con = _store(folder / "trials.sqlite.xz")
    envs = {
        (r["adversary"], json.dumps(json.loads(r["adversary_params"]), sort_keys=True), int(r["T"]))
        for r in _read(folder / "environments.csv")
    }
    played = {f for (_, f) in ranks}
    rows = con.execute("SELECT forecaster, adversary, adversary_params, T, seed_index, code_version FROM trials")
    seeds = max(int(r["n_seeds"]) for r in table.values())
    on_page = [
        r[5]
        for r in rows
        if r[0] in played and (r[1], json.dumps(json.loads(r[2]), sort_keys=True), r[3]) in envs and r[4] < seeds
    ]
    versions = [
        v for (v,) in con.execute("SELECT code_version FROM trials GROUP BY code_version ORDER BY min(finished_at)")
    ]
    last = versions[-1]
    ran = on_page.count(last)
    first = dict(
        con.execute("SELECT forecaster, count(*) FROM trials WHERE code_version = ? GROUP BY 1", (versions[0],))
    )
    point_mass = sorted(f for f in first if forecasters()[f].point_mass)

    finite = {"klcal", "dyadic"}
    others = {r["rank"] for (m, f), r in ranks.items() if m == "klcal" and f not in finite and r["rank"]}
    tie = float(others.pop()) if len(others) == 1 else float("nan")
    level = T ** (-2 / 3) * np.log(T) ** (2 / 3)
    k = T.bit_length() - 1
    l2cal_trials = sum(1 for r in con.execute("SELECT forecaster FROM trials") if r[0] == "l2cal")
    brier = [float(r["mean"]) for (m, f), r in ranks.items() if m == "brier" and r["rank"]]
    claims = [
        ("reused {} stored trials and ran {}:", [len(on_page) - ran, ran]),
        ("`l2cal`'s {} trials were run into the store before it.", [l2cal_trials]),
        ("Earlier, the {} trials stored before the six pseudo and KL measures existed", [sum(first.values())]),
        (
            f"- {{}} of them from their bucket tables. These are the point-mass forecasters "
            f"{', '.join(point_mass[:-1])} and {point_mass[-1]},",
            [sum(first[f] for f in point_mass)],
        ),
        ("- {} by running them again.", [sum(n for f, n in first.items() if f not in point_mass)]),
        (
            "`dyadic`'s CDL is {} [{}, {}], and its worst environment is the fair",
            rank("cdl", "dyadic", "mean", "lo", "hi"),
        ),
        (
            "`l2cal` scores {} (in `worst(foster)`), `foster` {} [{}, {}] in its own worst environment.",
            [*rank("cdl", "l2cal", "mean"), *rank("cdl", "foster", "mean", "lo", "hi")],
        ),
        ("ahead of `kt` at {} and `cdl` at {}.", [*rank("cdl", "kt", "mean"), *rank("cdl", "cdl", "mean")]),
        (
            "For `cdl`, the adversaries found against kt ({}) beat those found against cdl itself ({}).",
            [*tab("cdl", "cdl", "worst(kt)", "mean"), *tab("cdl", "cdl", "worst(cdl)", "mean")],
        ),
        (
            "The slope there is {} [{}, {}], while against the coin it is {}. The sweeps found against `cdl` hold "
            "its CDL at {}.",
            [
                *tab("cdl", "klcal", "worst(cdl)", *interval),
                *tab("cdl", "klcal", "coin", "slope"),
                *tab("cdl", "klcal", "worst(cdl)", "mean"),
            ],
        ),
        (
            "ECE and pECE: Foster's forecaster ranks first**, at {} (in `worst(kt)`), ahead of `l2cal` at {} and "
            "`dyadic` at {} (both in `segments K=T^0.25`).",
            [*rank("ece", "foster", "mean"), *rank("ece", "l2cal", "mean"), *rank("ece", "dyadic", "mean")],
        ),
        (
            "K2 and pK2: `l2cal` ranks first**, at {} (in `segments K=T^0.25`), ahead of `kt` at {}.",
            [*rank("k2", "l2cal", "mean"), *rank("k2", "kt", "mean")],
        ),
        (
            "UCal: `dyadic` ranks first** ({}, in `contrarian`), ahead of `ftpl` ({}, in `worst(foster)`).",
            [*rank("ucal", "dyadic", "mean"), *rank("ucal", "ftpl", "mean")],
        ),
        (
            "`ftpl`'s CDL in `segments K=4` stays at {}, with a slope of {} [{}, {}].",
            tab("cdl", "ftpl", "segments K=4", "mean", *interval),
        ),
        (
            "KLCal and pKLCal: `klcal` ranks first, at {} and {}; `dyadic` second, at {} and {}.",
            [
                *rank("klcal", "klcal", "mean"),
                *rank("pseudo_klcal", "klcal", "mean"),
                *rank("klcal", "dyadic", "mean"),
                *rank("pseudo_klcal", "dyadic", "mean"),
            ],
        ),
        ("They tie at rank {}.", [tie]),
        ("smCE: `acrs` ranks first at {}, in `contrarian`.", rank("smce", "acrs", "mean")),
        (
            "In that same environment its CDL is {} and its ECE {}.",
            [*tab("cdl", "acrs", "contrarian", "mean"), *tab("ece", "acrs", "contrarian", "mean")],
        ),
        (
            "Every ranked Brier score lies between {} (`ftpl`, ranked first) and {}.",
            [*rank("brier", "ftpl", "mean"), max(brier)],
        ),
        (
            "`dyadic` ranks first at {}, near ln 2, ahead of `klcal` at {}.",
            [*rank("log_loss", "dyadic", "mean"), *rank("log_loss", "klcal", "mean")],
        ),
        ("its CDL is {} in its worst one, `segments K=4`, with a slope of {}.", rank("cdl", "spr", "mean", "slope")),
        ("Its slowest decay, {} [{}, {}] in `worst(kt)`, holds the paper's {}.", th("l2cal", *interval, "paper_slope")),
        (
            "Its slowest decay, {} [{}, {}] in `segments K=T^0.25`, holds the {} of its worst-case bound.",
            th("dyadic", *interval, "paper_slope"),
        ),
        (
            "Its slowest decay is {} [{}, {}] in `segments K=4`, against the {} its construction aims for",
            th("noisy", *interval, "paper_slope"),
        ),
        ("it decays at or faster than the paper's {}:", th("klcal", "paper_slope")),
        (
            "- coin {} [{}, {}] and contrarian {};",
            [*tab("pseudo_klcal", "klcal", "coin", *interval), *tab("pseudo_klcal", "klcal", "contrarian", "slope")],
        ),
        (
            "- lookahead {} and `budget C=T^0.5` {};",
            [
                *tab("pseudo_klcal", "klcal", "lookahead", "slope"),
                *tab("pseudo_klcal", "klcal", "budget C=T^0.5", "slope"),
            ],
        ),
        ("- `worst(kt)` {};", tab("pseudo_klcal", "klcal", "worst(kt)", "slope")),
        (
            "the two segment environments a little slower: {} and {} [{}, {}].",
            [
                *tab("pseudo_klcal", "klcal", "segments K=4", "slope"),
                *tab("pseudo_klcal", "klcal", "segments K=T^0.25", *interval),
            ],
        ),
        ("Its slowest decay is in `worst(cdl)`: {} [{}, {}].", th("klcal", *interval)),
        (
            f"The level at 2^{k}, {{}}, is close to T^(-2/3) (ln T)^(2/3) with constant 1 ({{}}),",
            [*tab("pseudo_klcal", "klcal", "worst(cdl)", "mean"), level],
        ),
        (
            "Its slowest decay, {} [{}, {}] in `segments K=T^0.25`, beats the {} of its bound. Against the coin it "
            "decays at {}.",
            [*th("spr", *interval), *th("spr", "paper_slope"), *tab("ece", "spr", "coin", "slope")],
        ),
        ("`acrs` on smCE: {} [{}, {}] in `worst(cdl)`, slower than {},", th("acrs", *interval, "paper_slope")),
        (
            f"about one grid spacing, {{}} at 2^{k} (1/m = 1/{{}}).",
            [*tab("smce", "acrs", "worst(cdl)", "mean"), make_forecaster("acrs", horizon=T, seed=0).params["m"]],
        ),
        (
            "- `cdl`: {} [{}, {}] in `worst(foster)`. Its own worst case, `worst(kt)`, decays at {}.",
            [*th("cdl", *interval), *rank("cdl", "cdl", "slope")],
        ),
        (
            "- `foster`: {} [{}, {}] in `worst(kt)`. The fixed environments decay faster: coin {}, `segments K=4` {}.",
            [
                *th("foster", *interval),
                *tab("ece", "foster", "coin", "slope"),
                *tab("ece", "foster", "segments K=4", "slope"),
            ],
        ),
        ("- `ftpl`: {} [{}, {}] in `worst(foster)`.", th("ftpl", *interval)),
    ]
    r = lambda m, f, c="rank": ranks[(m, f)][c]  # noqa: E731
    ranked = sorted(f for (m, f), row in ranks.items() if m == "cdl" and row["rank"])
    searched = sorted({e[len("worst(") : -1] for (_, _, e) in table if e.startswith("worst(")})
    facts = [
        ("the searched forecasters", searched, ["acrs", "cdl", "foster", "kt", "sign", "uniform"]),
        (
            "dyadic, l2cal, foster first to third on CDL, VCDL and pCDL",
            [r(m, f) for m in ("cdl", "vcdl", "pseudo_cdl") for f in ("dyadic", "l2cal", "foster")],
            ["1", "2", "3"] * 3,
        ),
        ("dyadic's worst environment on CDL is the coin", r("cdl", "dyadic", "worst_environment"), "coin"),
        (
            "the coin beats every adversary found, against dyadic's CDL",
            max(float(table[("cdl", "dyadic", e)]["mean"]) for (m, f, e) in table if m == "cdl" and f == "dyadic"),
            float(table[("cdl", "dyadic", "coin")]["mean"]),
        ),
        ("l2cal worst in worst(foster) on CDL", r("cdl", "l2cal", "worst_environment"), "worst(foster)"),
        ("foster's worst environment on CDL is its own", r("cdl", "foster", "worst_environment"), "worst(foster)"),
        (
            "foster first among the searched forecasters on CDL",
            min((int(r("cdl", f)), f) for f in searched)[1],
            "foster",
        ),
        ("klcal worst in worst(cdl) on CDL", r("cdl", "klcal", "worst_environment"), "worst(cdl)"),
        (
            "cdl and kt worst in worst(kt) on CDL",
            [r("cdl", f, "worst_environment") for f in ("cdl", "kt")],
            ["worst(kt)"] * 2,
        ),
        (
            "foster, l2cal, dyadic first to third on ECE and pECE",
            [r(m, f) for m in ("ece", "pseudo_ece") for f in ("foster", "l2cal", "dyadic")],
            ["1", "2", "3"] * 2,
        ),
        (
            "the worst environments on ECE of foster, l2cal and dyadic",
            [r("ece", f, "worst_environment") for f in ("foster", "l2cal", "dyadic")],
            ["worst(kt)", "segments K=T^0.25", "segments K=T^0.25"],
        ),
        (
            "l2cal first and kt second on K2 and pK2",
            [r(m, f) for m in ("k2", "pseudo_k2") for f in ("l2cal", "kt")],
            ["1", "2"] * 2,
        ),
        ("l2cal worst in segments K=T^0.25 on K2", r("k2", "l2cal", "worst_environment"), "segments K=T^0.25"),
        (
            "dyadic first in contrarian and ftpl second in worst(foster) on UCal",
            [
                r("ucal", "dyadic"),
                r("ucal", "dyadic", "worst_environment"),
                r("ucal", "ftpl"),
                r("ucal", "ftpl", "worst_environment"),
            ],
            ["1", "contrarian", "2", "worst(foster)"],
        ),
        (
            "klcal first and dyadic second on KLCal and pKLCal",
            [r(m, f) for m in ("klcal", "pseudo_klcal") for f in ("klcal", "dyadic")],
            ["1", "2"] * 2,
        ),
        (
            "every other ranked forecaster's KLCal infinite",
            {float(ranks[("klcal", f)]["mean"]) for f in ranked if f not in finite},
            {np.inf},
        ),
        ("truthful's KLCal finite", np.isfinite(float(r("klcal", "truthful", "mean"))), True),
        (
            "acrs first on smCE, in contrarian",
            [r("smce", "acrs"), r("smce", "acrs", "worst_environment")],
            ["1", "contrarian"],
        ),
        ("ftpl first on the Brier score", r("brier", "ftpl"), "1"),
        (
            "the log loss finite only for dyadic and klcal among the ranked, dyadic first",
            ({f for f in ranked if np.isfinite(float(r("log_loss", f, "mean")))}, r("log_loss", "dyadic")),
            ({"dyadic", "klcal"}, "1"),
        ),
        ("spr and truthful unranked", {r(m, f) for (m, f) in ranks if f in ("spr", "truthful")}, {""}),
        ("spr worst in segments K=4 on CDL", r("cdl", "spr", "worst_environment"), "segments K=4"),
        ("klcal's paper measure", theory["klcal"]["measure"], "pseudo_klcal"),
        (
            "the papers' measures of l2cal, dyadic and noisy",
            [theory[f]["measure"] for f in ("l2cal", "dyadic", "noisy")],
            ["pseudo_k2", "ece", "ece"],
        ),
        (
            "the verdicts of l2cal, dyadic and noisy",
            [theory[f]["verdict"] for f in ("l2cal", "dyadic", "noisy")],
            ["consistent with the rate", "consistent with the rate", "slower than the rate"],
        ),
        (
            "the slowest environments of the papers' rates",
            [
                theory[f]["environment"]
                for f in ("klcal", "spr", "acrs", "cdl", "foster", "ftpl", "l2cal", "dyadic", "noisy")
            ],
            [
                "worst(cdl)",
                "segments K=T^0.25",
                "worst(cdl)",
                "worst(foster)",
                "worst(kt)",
                "worst(foster)",
                "worst(kt)",
                "segments K=T^0.25",
                "segments K=4",
            ],
        ),
        (
            "the fit of the slowest decays: 2^16, 2^18, 2^20",
            [theory["klcal"][c] for c in ("t_min_fit", "t_max_fit")],
            [str(2**16), str(T)],
        ),
        ("cdl's own worst case", r("cdl", "cdl", "worst_environment"), "worst(kt)"),
    ]
    return claims, facts


# Words, not measured values: a number in these is not a claim on a file
_NOTE_WORDS = ("0 or 1", "1/2")


def _notes_problems(notes, folder):
    """(numbers checked, [problems]) of the leaderboard page's notes: every claim of _notes_claims
    in the text with the value of its cell, to the digits printed; the words around them as the
    cells say; and no number in the notes that no claim ties to a cell (exponents such as 2^20 or
    T^0.5, environment names such as K=4 and code such as horizon=2**16 are not numbers here)."""
    claims, facts = _notes_claims(folder)
    flat = _flat(notes)
    problems, covered, checked = [], [], 0
    for template, values in claims:
        m = re.search(_p(template), flat)
        if m is None:
            problems.append(("notes", "not found", template))
            continue
        covered.append(m.span())
        for printed, want in zip(m.groups(), values):
            checked += 1
            if not _close(printed.replace(",", ""), want):
                problems.append(("notes", template, printed, want))
    problems += [("notes", what, got, want) for what, got, want in facts if got != want]
    masked = re.sub(r"\d*\^\(?-?[\d./]+\)?|\*\*\d+|[A-Za-z]=[^\s`]*", lambda m: " " * len(m.group()), flat)
    for phrase in _NOTE_WORDS:
        masked = masked.replace(phrase, " " * len(phrase))
    for m in re.finditer(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?(?!\w)", masked):
        if not any(a <= m.start() and m.end() <= b for a, b in covered):
            problems.append(
                ("notes", "a number tied to no cell", m.group(), flat[max(0, m.start() - 60) : m.end() + 20])
            )
    return checked + len(facts), problems


@pytest.mark.skipif(not (LEADERBOARD / "ranks.csv").exists(), reason="no leaderboard built")
def test_leaderboard_page_matches_its_files():
    readme = (LEADERBOARD / "README.md").read_text()
    checked, problems = _leaderboard_problems(readme, LEADERBOARD)
    assert checked >= 20 and not problems, problems
    # a wrong number in a rank cell, in the rates table and in the notes is reported
    rank = next(r for r in _read(LEADERBOARD / "ranks.csv") if r["rank"])
    cell_mean = re.search(rf"`{rank['forecaster']}` \| (?:[^|]+\| )*?\*\*{rank['rank']}\*\* · ({NUMBER})", readme)
    spoiled = readme[: cell_mean.start(1)] + "9.99" + readme[cell_mean.end(1) :]
    assert _leaderboard_problems(spoiled, LEADERBOARD)[1]
    t = _read(LEADERBOARD / "theory.csv")[0]
    row = re.search(rf"\| `{t['forecaster']}` \|[^\n]*?\| ({NUMBER}) \[", readme)
    spoiled = readme[: row.start(1)] + "-9.999" + readme[row.end(1) :]
    assert _leaderboard_problems(spoiled, LEADERBOARD)[1]
    n = re.search(r"(\d+) forecasters against", readme).group(1)
    assert _leaderboard_problems(
        readme.replace(f"{n} forecasters against", f"{int(n) + 1} forecasters against"), LEADERBOARD
    )[1]
    notes = readme.find("<!-- /notes -->")
    assert _leaderboard_problems(readme[:notes] + " 12345.678 " + readme[notes:], LEADERBOARD)[1]
    # each number of the notes against its own cell, to the digits printed: 0.000965 is not the
    # 0.00096591 of acrs's smCE in worst(cdl), though another cell rounds to it; a count of the
    # store, a rank and a duration that no file records are reported too
    for old, new in (
        ("0.000966 at 2^20", "0.000965 at 2^20"),
        ("reused 15,520 stored", "reused 15,521 stored"),
        ("at rank 3.", "at rank 2."),
        ("(0.0222)", "(0.0235)"),
        ("No file records the runs' wall time.", "The whole run took about 30 minutes of wall time."),
    ):
        assert readme.count(old) == 1, old
        assert _leaderboard_problems(readme.replace(old, new), LEADERBOARD)[1], new


# The study's tables (summary.csv, `estimators_coverage.py tables`) in the README, and the coverage
# table of docs/estimators.md against summary.csv and the validation files.

MODELS = ("calibrated", "overconfident", "underconfident", "nonmonotone", "point_mass", "heavy_tails")


def _study():
    """{(model, n, estimator, method): summary.csv row}."""
    return {(r["shape"], int(r["n"]), r["estimator"], r["method"]): r for r in _read(COVERAGE / "summary.csv")}


def _lowest(summ, est, n, method):
    cov = [float(summ[(m, n, est, method)]["coverage"]) for m in MODELS if (m, n, est, method) in summ]
    return min(cov) if cov else None


def _check_coverage_table(header, rows, summ, check):
    """The default interval's coverage "c [lo, hi]" per estimator, model and n."""
    ns = [int(re.match(r"n = (\d+)", h).group(1)) for h in header[2:]]
    for row in rows:
        est, model = _clean(row[0]), _clean(row[1])
        for n, cell in zip(ns, row[2:]):
            for printed, field in zip(re.findall(NUMBER, cell), ("coverage", "coverage_lo", "coverage_hi")):
                r = summ.get((model, n, est, "default"))
                check(printed, None if r is None else float(r[field]), (est, model, n, field))


def _check_bias_table(header, rows, summ, check):
    """The bias "plug-in / debiased" (x 1000) with the population value."""
    ns = [int(re.match(r"n = (\d+)", h).group(1)) for h in header[3:]]
    for row in rows:
        est, model = _clean(row[0]), _clean(row[1])
        some = next((summ[(model, n, est, "default")] for n in ns if (model, n, est, "default") in summ), None)
        check(row[2], None if some is None else 1000 * float(some["truth"]), (est, model, "truth"))
        for n, cell in zip(ns, row[3:]):
            for printed, method in zip(re.findall(NUMBER, cell), ("percentile", "default")):
                r = summ.get((model, n, est, method))
                check(printed, None if r is None else 1000 * float(r["bias"]), (est, model, n, method))


def _check_lowest_table(header, rows, summ, check, n_here):
    """The lowest coverage over the models per method at n_here, the samples per model in brackets."""
    for row in rows:
        m = re.fullmatch(r"(\w+) \((\d+)(?: to (\d+))?\)", _clean(row[0]))
        est = m.group(1)
        R = [
            float(summ[(mod, n_here, est, "default")]["samples"])
            for mod in MODELS
            if (mod, n_here, est, "default") in summ
        ]
        check(m.group(2), min(R) if R else None, (est, n_here, "samples"))
        check(m.group(3) or m.group(2), max(R) if R else None, (est, n_here, "samples"))
        for method, cell in zip(header[1:], row[1:]):
            if cell:
                check(cell, _lowest(summ, est, n_here, method), (est, n_here, method))


def _study_table_problems(text, summ):
    """(numbers checked, [wrong ones]) of the README's study tables: the default interval's coverage
    "c [lo, hi]" per estimator, model and n; the lowest coverage over the models per method, under
    a line "n = N:", with the samples per model in brackets; and the bias "plug-in / debiased"
    (x 1000) with the population value."""
    checked, wrong = 0, []

    def check(printed, want, where):
        nonlocal checked
        checked += 1
        if want is None or not _close(printed, want):
            wrong.append((where, printed, want))

    parts = re.split(r"^n = (\d+):$", text, flags=re.M)
    sections = [(None, parts[0])] + [(int(parts[i]), parts[i + 1]) for i in range(1, len(parts), 2)]
    for n_here, part in sections:
        for header, rows in _tables(part):
            if header[:2] == ["estimator", "model"] and header[2].startswith("n = "):
                _check_coverage_table(header, rows, summ, check)
            elif header[:3] == ["estimator", "model", "truth"]:
                _check_bias_table(header, rows, summ, check)
            elif n_here is not None and header[:2] == ["estimator", "default"]:
                _check_lowest_table(header, rows, summ, check, n_here)
    return checked, wrong


def test_estimators_coverage_study_tables_match_summary():
    text = (COVERAGE / "README.md").read_text()
    summ = _study()
    checked, wrong = _study_table_problems(text, summ)
    assert checked >= 1000 and not wrong, (checked, wrong[:10])
    # a wrong coverage, a wrong lowest coverage and a wrong bias are each reported
    for pattern in (
        r"^\| k2_debiased \| calibrated \| (\d\.\d\d) \[",
        r"^\| ece_sweep \(\d+\) \| (\d\.\d\d) \|",
        r"^\| cdl_monotone_crossfit \| overconfident \| [\d.]+ \| (-?\d+\.\d\d) /",
    ):
        m = re.search(pattern, text, flags=re.M)
        assert m, pattern
        spoiled = text[: m.start(1)] + f"{float(m.group(1)) + 0.37:.2f}" + text[m.end(1) :]
        assert _study_table_problems(spoiled, summ)[1], pattern


def _lowest_validated(counts, est, n):
    """(lowest coverage over the models, [(model, covered, samples)] at it) of fastcdl.interval's
    validation files."""
    cells = [(m, *counts[(est, n, m)]) for m in MODELS if (est, n, m) in counts]
    if not cells:
        return None, []
    low = min(k / N for _, k, N in cells)
    return low, [c for c in cells if c[1] / c[2] == low]


def _docs_coverage_problems(text, summ, counts):
    """(numbers checked, [wrong ones]) of docs/estimators.md's coverage table: the lowest coverage
    over the models of the percentile bootstrap at 10^3 / 10^4 / 10^5 rounds, of BCa at 10^3, of
    the study's default at 10^3 / 10^4 / 10^5 (summary.csv), and of fastcdl.interval itself at
    5,000 and 50,000 rounds with the count and the model(s) where it was lowest (validation files)."""
    checked, wrong = 0, []
    tables = [t for t in _tables(text) if t[0][:2] == ["estimator", "percentile bootstrap, n = 10^3 / 10^4 / 10^5"]]
    if len(tables) != 1:
        return 0, [("docs/estimators.md", "coverage table not found")]
    header, rows = tables[0]
    for row in rows:
        est = _clean(row[0])
        study = [
            ("percentile", (1000, 10000, 100000), row[1]),
            ("bca", (1000,), row[2]),
            ("default", (1000, 10000, 100000), row[3]),
        ]
        for method, ns, cell in study:
            nums = re.findall(NUMBER, cell)
            checked += 1
            if len(nums) != len(ns):
                wrong.append((est, method, cell))
                continue
            for printed, n in zip(nums, ns):
                want = _lowest(summ, est, n, method)
                if want is None or not _close(printed, want):
                    wrong.append((est, method, n, printed, want))
        for n, cell in zip((5000, 50000), row[4:6]):
            cell = _clean(cell)
            low, where = _lowest_validated(counts, est, n)
            if cell.startswith("(not validated"):
                checked += 1
                if low is not None:
                    wrong.append((est, n, cell, low))
                continue
            m = re.fullmatch(r"(\d\.\d\d) \((\d+)/(\d+), ([\w, ]+?)(?:; warns)?\)", cell)
            checked += 1
            if not m or low is None:
                wrong.append((est, n, cell, low))
                continue
            said = (float(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4).split(", "))
            if not (
                _close(m.group(1), low)
                and {w[0] for w in where} == set(said[3])
                and all((w[1], w[2]) == said[1:3] for w in where)
            ):
                wrong.append((est, n, cell, low, where))
    return checked, wrong


def test_estimators_docs_coverage_table_matches_the_study():
    text = (ROOT / "docs" / "estimators.md").read_text()
    summ, counts = _study(), _coverage_counts()
    checked, wrong = _docs_coverage_problems(text, summ, counts)
    assert checked >= 50 and not wrong, (checked, wrong)
    row = next(ln for ln in text.splitlines() if ln.startswith("| k2_debiased |"))
    cells = row.split(" | ")
    first = re.search(NUMBER, cells[1])
    count = re.search(r"\((\d+)/", cells[4])
    model = re.search(r", (\w+)\)", cells[4])
    for i, (m, new) in enumerate(
        (
            (first, f"{float(first.group()) + 0.37:.2f}"),
            (count, str(int(count.group(1)) + 1)),
            (model, "heavy_tails" if model.group(1) != "heavy_tails" else "calibrated"),
        )
    ):
        k = 1 if i == 0 else 4
        g = 0 if i == 0 else 1
        bad = cells.copy()
        bad[k] = cells[k][: m.start(g)] + new + cells[k][m.end(g) :]
        spoiled = text.replace(row, " | ".join(bad), 1)
        assert _docs_coverage_problems(spoiled, summ, counts)[1], bad[k]
