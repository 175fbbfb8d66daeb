"""The leaderboard: its preset reads the registries and a worst.csv, the page is built from the
store, and `fastcdl leaderboard --add` ranks a plug-in written from the README alone
(tests/readme_plugin.py) on the stored grid, reusing every stored trial.

The ranks are checked against a reference computed here from the stored rows by the
definition (docs/leaderboard.md): a forecaster's score is its largest mean over the
environments at the largest horizon, the rank 1 + the number of forecasters with a smaller score.
"""

import csv
import json
import re
import sqlite3
from collections import defaultdict

import numpy as np
import pytest

from fastcdl.cli import main
from fastcdl.experiments import leaderboard, load_preset
from fastcdl.experiments.presets import Component, PresetError, worst_adversaries
from fastcdl.experiments.runner import plan, refusal
from fastcdl.online import registry
from fastcdl.trial_measures import METRICS

SMALL = ["--t-min", "2^6", "--t-max", "2^8", "--seeds", "2", "--workers", "1", "--no-progress"]


def _worst_csv(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["forecaster", "adversary", "adversary_params", "T", "metric", "mean"])
        for f, a, p, T in rows:
            for m in ("cdl", "ece"):
                w.writerow([f, a, json.dumps(p), T, m, 0.1])
    return path


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A leaderboard folder of the small grid: every registered forecaster, T = 2^6 .. 2^8, 2 seeds,
    the worst adversaries of a worst.csv naming kt at 2^6 and 2^8 and foster at 2^7."""
    d = tmp_path_factory.mktemp("board")
    worst = _worst_csv(
        d / "worst.csv",
        [
            ("kt", "markov", {"p01": 0.7, "p10": 1.0}, 64),
            ("kt", "bernoulli", {"p": 0.45}, 256),
            ("foster", "contrarian", {}, 128),
        ],
    )
    out = d / "lb"
    assert main(["leaderboard", "--run", "--dir", str(out), "--worst", str(worst), "--no-figures", *SMALL]) == 0
    return out


def _csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _stored(folder):
    con = sqlite3.connect(folder / "trials.sqlite")
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("SELECT * FROM trials")]
    con.close()
    return rows


def _rows(folder):
    """The stored trials, one per environment they stand for (environments.csv)."""
    envs = _csv(folder / "environments.csv")
    return [
        {**r, "adversary_label": e["label"]}
        for r in _stored(folder)
        for e in envs
        if (e["adversary"], e["adversary_params"], int(e["T"])) == (r["adversary"], r["adversary_params"], r["T"])
    ]


def _reference_ranks(rows, measure):
    """{forecaster: (rank or None, worst environment, mean)} from the definition, every cell finished."""
    T = max(r["T"] for r in rows)
    values = defaultdict(list)
    for r in rows:
        if r["T"] == T:
            values[(r["forecaster_label"], r["adversary_label"])].append(r[measure])
    envs = {e for _, e in values}
    score = {}
    for f in {f for f, _ in values}:
        mine = {e: float(np.mean(values[(f, e)])) for e in envs if (f, e) in values}
        worst = max(mine, key=mine.get)
        score[f] = (worst, mine[worst], len(mine) == len(envs))
    complete = [f for f, (_, _, c) in score.items() if c]
    return {f: (1 + sum(score[g][1] < v for g in complete) if c else None, w, v) for f, (w, v, c) in score.items()}


def test_the_preset_reads_the_registries():
    p = load_preset("leaderboard")
    assert [f.name for f in p.forecasters] == list(registry.forecasters())
    assert p.metrics == tuple(METRICS)
    assert p.seeds == 16 and p.horizons[0] == 2**10 and p.horizons[-1] == 2**20
    assert p.skip_refused and p.worst == "results/worstcase/worst.csv"


def test_the_preset_round_trips(tmp_path):
    p = load_preset("leaderboard")
    f = tmp_path / "p.toml"
    f.write_text(p.to_toml())
    assert load_preset(str(f)) == p


def test_worst_adversaries_join_at_their_horizons(tmp_path):
    worst = _worst_csv(
        tmp_path / "w.csv", [("kt", "markov", {"p01": 0.7, "p10": 1.0}, 64), ("foster", "contrarian", {}, 128)]
    )
    p = load_preset("leaderboard")
    from dataclasses import replace

    from fastcdl.experiments import override

    p = replace(override(p, t_min=64, t_max=256, seeds=2), worst=str(worst))
    labels = {T: [a.display for a in p.adversaries_at(T)] for T in p.horizons}
    static = [a.display for a in p.adversaries]
    assert labels == {64: static + ["worst(kt)"], 128: static + ["worst(foster)"], 256: static}
    trials = plan(p)
    got = {(t.forecaster, t.adversary_label, t.T) for t in trials}
    assert ("cdl", "worst(kt)", 64) in got and ("cdl", "worst(kt)", 128) not in got
    assert json.loads(next(t.adversary_params for t in trials if t.adversary_label == "worst(kt)")) == {
        "p01": 0.7,
        "p10": 1.0,
    }
    # the truthful forecaster plays the stochastic environments only: the engine refuses the others
    truthful = {a for f, a, _ in got if f == "truthful"}
    assert "coin" in truthful and "worst(kt)" in truthful
    assert not truthful & {"contrarian", "lookahead", "worst(foster)"}


def test_refusal_is_the_engines_word():
    assert refusal(Component("truthful"), Component("lookahead")) is not None
    assert refusal(Component("truthful"), Component("bernoulli")) is None
    with pytest.raises(ValueError, match="p"):  # a bad parameter is an error, not a refusal
        refusal(Component("cdl"), Component("bernoulli", (("p", 2.0),)))


@pytest.mark.parametrize(
    "rows, match",
    [
        ([("kt", "markov", {}, 64), ("kt", "bernoulli", {}, 64)], "two worst adversaries for kt at T = 64"),
        ([("kt", "nosuch", {}, 64)], "names no adversary"),
    ],
)
def test_worst_csv_errors(tmp_path, rows, match):
    with pytest.raises(PresetError, match=match):
        worst_adversaries(_worst_csv(tmp_path / "w.csv", rows))


def test_a_missing_worst_csv_is_named(tmp_path):
    with pytest.raises(PresetError, match="cannot read the worst adversaries .*nope.csv"):
        worst_adversaries(tmp_path / "nope.csv")


def test_a_worst_adversary_of_the_preset_is_one_trial_of_two_environments(board):
    stored = _stored(board)
    assert len({r["key"] for r in stored}) == len(stored)
    cdl = {(r["adversary_label"], r["T"]) for r in _rows(board) if r["forecaster_label"] == "cdl"}
    assert {("contrarian", 128), ("worst(foster)", 128), ("worst(kt)", 64), ("worst(kt)", 256)} <= cdl
    assert ("worst(foster)", 64) not in cdl
    both = [
        r
        for r in leaderboard.load_rows(board)
        if r["forecaster_label"] == "cdl" and r["T"] == 128 and r["adversary"] == "contrarian"
    ]
    assert sorted(r["adversary_label"] for r in both) == ["contrarian"] * 2 + ["worst(foster)"] * 2


def test_the_page_and_ranks_match_the_definition(board):
    rows = _rows(board)
    ranked = _csv(board / "ranks.csv")
    for m in METRICS:
        ref = _reference_ranks(rows, m)
        mine = {r["forecaster"]: r for r in ranked if r["measure"] == m}
        assert set(mine) == set(ref)
        for f, (rank, worst, value) in ref.items():
            assert mine[f]["rank"] == ("" if rank is None else str(rank)), (m, f)
            assert float(mine[f]["mean"]) == pytest.approx(value, rel=1e-12)
            at = [
                r[m]
                for r in rows
                if r["forecaster_label"] == f and r["T"] == 256 and r["adversary_label"] == mine[f]["worst_environment"]
            ]
            assert np.mean(at) == pytest.approx(value, rel=1e-12)  # ties (segments K=4 = K=T^0.25 at 2^8)
    truthful = [r for r in ranked if r["forecaster"] == "truthful"]
    assert truthful and all(r["rank"] == "" for r in truthful)  # refused contrarian and lookahead
    page = (board / "README.md").read_text()
    assert "| `cdl` |" in page and leaderboard.NOTES_START in page


def test_the_page_keeps_its_notes(board):
    readme = board / "README.md"
    text = readme.read_text().replace(leaderboard.NOTES_START, leaderboard.NOTES_START + "\nA note of mine.")
    readme.write_text(text)
    assert main(["leaderboard", "--dir", str(board), "--no-figures"]) == 0
    assert "A note of mine." in readme.read_text()


def test_add_ranks_a_readme_plugin_and_reuses_the_store(board, capsys):
    before = {r["key"]: r["finished_at"] for r in _stored(board)}
    capsys.readouterr()
    assert (
        main(["leaderboard", "--dir", str(board), "--add", "readme_plugin:HALFWAY", "--workers", "1", "--no-progress"])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    rows = _rows(board)
    mine = [r for r in rows if r["forecaster_label"] == "halfway"]
    grid = {(r["adversary_label"], r["T"], r["seed_index"]) for r in rows if r["forecaster_label"] == "cdl"}
    assert {(r["adversary_label"], r["T"], r["seed_index"]) for r in mine} == grid
    assert {r["key"]: r["finished_at"] for r in _stored(board) if r["forecaster_label"] != "halfway"} == before
    n_ran = sum(r["forecaster_label"] == "halfway" for r in _stored(board))
    assert out[0] == f"halfway: {n_ran} trials in {board}/trials.sqlite ({n_ran} run now, 0 reused)"
    ref = _reference_ranks(rows, "cdl")
    n = sum(1 for r, _, _ in ref.values() if r is not None)
    line = next(x for x in out if x.split()[0] == "CDL")
    assert f"rank {ref['halfway'][0]} of {n}: worst environment " in line
    env = line.split("worst environment ")[1].split(",")[0]  # any of the tied worst ones
    at = [r["cdl"] for r in mine if r["adversary_label"] == env and r["T"] == 256]
    assert np.mean(at) == pytest.approx(ref["halfway"][2], rel=1e-12)
    # the line names the leader of the measure and its score, unless the plug-in leads
    leaders = {f for f, (r, _, _) in ref.items() if r == 1}
    if "halfway" not in leaders:
        name, rest = line.split("; leader ")[1].split(": ", 1)
        assert name in leaders and rest.startswith(leaderboard._g(ref[name][2]) + " (")
    else:
        assert "; leader " not in line
    # a second time every trial is reused
    assert (
        main(["leaderboard", "--dir", str(board), "--add", "readme_plugin:HALFWAY", "--workers", "1", "--no-progress"])
        == 0
    )
    assert "(0 run now, " in capsys.readouterr().out


def test_submission_records_tie_claims_to_the_measured_cells(board, capsys):
    """submissions.json: a record per forecaster; a paper's claim is PAPER_RATES' entry, and each
    measured slope is the slowest decay over the environments finished at T* in summary.csv (the
    very cell), with the score and rank of ranks.csv; a plug-in's --claim is recorded by --add and
    kept by the next build."""
    from fastcdl.experiments import submissions

    assert main(["leaderboard", "--dir", str(board), "--no-figures"]) == 0
    doc = json.loads((board / submissions.FILE).read_text())
    recs = {r["forecaster"]: r for r in doc["forecasters"]}
    stored = {r["forecaster_label"] for r in _stored(board)}
    assert set(recs) == stored
    slopes = _csv(board / "summary.csv")
    ranked = {(r["measure"], r["forecaster"]): r for r in _csv(board / "ranks.csv")}
    for f, rec in recs.items():
        paper = leaderboard.PAPER_RATES.get(f)
        if paper is None:
            assert rec["claimed"] == [] and rec["paper"] is None
        else:
            assert rec["paper"] == paper.text
            assert [(c["measure"], c["exponent"], c["log_power"]) for c in rec["claimed"]] == [
                (paper.measure, paper.exponent, paper.log_power)
            ]
        for m, got in rec["measured"].items():
            cells = [
                s
                for s in slopes
                if s["metric"] == m and s["forecaster"] == f and s["slope"] and int(s["t_max_fit"]) == rec["T"]
            ]
            if not cells:
                assert got["slope"] is None
                continue
            worst = max(cells, key=lambda s: float(s["slope"]))
            assert got["slope"] == float(worst["slope"]) and got["slope_environment"] == worst["adversary"]
            assert (got["slope_lo"], got["slope_hi"]) == tuple(
                None if worst[k] == "" else float(worst[k]) for k in ("slope_lo", "slope_hi")
            )
            r = ranked[(m, f)]
            assert got["worst_environment"] == r["worst_environment"]
            assert got["rank"] == (None if r["rank"] == "" else int(r["rank"]))
            assert r["mean"] == "inf" and got["score"] == "inf" or got["score"] == float(r["mean"])
    assert recs["cdl"]["version"] == registry.forecaster("cdl").name + "/" + str(registry.forecaster("cdl").version)
    capsys.readouterr()
    argv = ["leaderboard", "--dir", str(board), "--add", "readme_plugin:HALFWAY", "--workers", "1", "--no-progress"]
    assert main([*argv, "--claim", "ece=-0.5", "--claim", "cdl=-0.5,1", "--paper", "A paper (2026)"]) == 0
    assert "submission record" in capsys.readouterr().out
    rec = {r["forecaster"]: r for r in json.loads((board / submissions.FILE).read_text())["forecasters"]}["halfway"]
    assert rec["paper"] == "A paper (2026)" and rec["key"] == "readme_plugin:HALFWAY"
    assert [(c["measure"], c["exponent"], c["log_power"]) for c in rec["claimed"]] == [
        ("ece", -0.5, 0.0),
        ("cdl", -0.5, 1.0),
    ]
    assert (
        rec["command"].startswith("fastcdl leaderboard --add readme_plugin:HALFWAY")
        and "--claim ece=-0.5" in rec["command"]
    )
    assert rec["version"].startswith("halfway/1+")
    assert main(["leaderboard", "--dir", str(board), "--no-figures"]) == 0  # a rebuild keeps the plug-in's claims
    again = {r["forecaster"]: r for r in json.loads((board / submissions.FILE).read_text())["forecasters"]}["halfway"]
    assert again["claimed"] == rec["claimed"] and again["paper"] == rec["paper"] and again["command"] == rec["command"]


@pytest.mark.parametrize("text", ["ece", "ece=x", "nope=-0.5", "ece=-0.5,1,2", "ece=inf"])
def test_bad_claims_are_named(text):
    from fastcdl.experiments.submissions import parse_claim

    with pytest.raises(ValueError, match="claim"):
        parse_claim(text)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--claim", "ece=-0.5"], "--claim and --paper describe the forecaster of --add"),
        (["--add", "readme_plugin:HALFWAY", "--claim", "ece"], "claim"),
        (["--add", "readme_plugin:NOPE"], "readme_plugin:NOPE"),
        (["--add", "no_such_module_here:X"], "no_such_module_here"),
        (["--t-max", "2^9"], "--t-max set the grid of --run"),
        (["--run", "--t-max", "2^x"], "--t-max must be an integer"),
        (["--run", "--seeds", "1"], "--seeds must be an integer >= 2"),
    ],
)
def test_bad_input_is_one_line_and_status_2(board, capsys, argv, match):
    assert main(["leaderboard", "--dir", str(board), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastcdl: error: ") and match in err


def test_a_folder_without_a_store(tmp_path, capsys):
    assert main(["leaderboard", "--dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no trials.sqlite" in err


def test_a_plugin_named_as_a_stored_forecaster_is_refused(board, tmp_path, capsys, monkeypatch):
    (tmp_path / "clash_plugin.py").write_text(
        "import readme_plugin\nfrom fastcdl.online import plugin_forecaster\n"
        "CDL = plugin_forecaster(name='cdl', init=readme_plugin.init, forecast=readme_plugin.forecast, "
        "observe=readme_plugin.observe, params={'m': 20})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["leaderboard", "--dir", str(board), "--add", "clash_plugin:CDL"]) == 2
    assert "give the plug-in another name" in capsys.readouterr().err


def test_paper_rate_slopes():
    p = leaderboard.PaperRate("cdl", -0.5, 1.0, "")
    T = [2.0**k for k in range(15, 21)]
    x, y = np.log(T), np.log(np.array(T) ** -0.5 * np.log(T))
    assert p.slope_over(T) == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-12)
    assert leaderboard.PaperRate("ece", -1 / 3, 0.0, "").slope_over(T) == pytest.approx(-1 / 3, rel=1e-12)


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"forecasters": "all"}, "non-empty list or 'registered'"),
        ({"worst": 3}, "worst must be the path of a worst.csv"),
        ({"skip_refused": "yes"}, "skip_refused must be true or false"),
    ],
)
def test_bad_leaderboard_keys_are_named(change, needle):
    from fastcdl.experiments.presets import preset_from_dict

    raw = {
        "name": "x",
        "seeds": 2,
        "t_min": 64,
        "t_max": 128,
        "forecasters": [{"name": "cdl"}],
        "adversaries": [{"name": "contrarian"}],
        **change,
    }
    with pytest.raises(PresetError, match=needle):
        preset_from_dict(raw)


def test_without_skip_refused_truthful_against_contrarian_is_still_an_error():
    from fastcdl.experiments.presets import preset_from_dict

    raw = {
        "name": "x",
        "seeds": 2,
        "t_min": 64,
        "t_max": 128,
        "forecasters": "registered",
        "adversaries": [{"name": "contrarian"}],
    }
    with pytest.raises(PresetError, match="stochastic"):
        preset_from_dict(raw)
    assert len(preset_from_dict({**raw, "skip_refused": True}).forecasters) == len(registry.forecasters())


def test_a_paper_measure_the_trials_do_not_record_comes_from_the_bucket_tables(board):
    """acrs's rate is on smCE, which trials do not record here: theory.csv's slope is the slowest,
    over the environments, of the least-squares slope of log(mean smCE of the stored tables)."""
    from fastcdl import sample
    from fastcdl.experiments.store import unpack_table

    if "smce" in METRICS:
        pytest.skip("the trials record smCE")
    row = next(r for r in _csv(board / "theory.csv") if r["forecaster"] == "acrs")
    assert row["recorded"] == "bucket table" and row["measure"] == "smce"
    by = defaultdict(lambda: defaultdict(list))
    for r in _rows(board):
        if r["forecaster_label"] == "acrs":
            by[r["adversary_label"]][r["T"]].append(sample.smce(unpack_table(r["bucket_table"])))
    slopes = {}
    for env, at in by.items():
        Ts = sorted(T for T in at if int(row["t_min_fit"]) <= T <= int(row["t_max_fit"]))
        if len(Ts) >= 2 and Ts[-1] == 256:
            slopes[env] = np.polyfit(np.log(Ts), np.log([np.mean(at[T]) for T in Ts]), 1)[0]
    worst = max(slopes, key=slopes.get)
    assert float(row["slope"]) == pytest.approx(slopes[worst], rel=1e-9, abs=1e-12)


def test_pack_writes_a_store_that_unpacks_to_the_same_trials(board, tmp_path):
    import shutil

    from fastcdl.experiments.packed import unpack

    assert main(["leaderboard", "--dir", str(board), "--no-figures", "--pack"]) == 0
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(board / "trials.sqlite.xz", copy / "trials.sqlite.xz")
    shutil.copy(board / "environments.csv", copy / "environments.csv")
    unpack(copy)
    assert sorted(r["key"] for r in _stored(copy)) == sorted(r["key"] for r in _stored(board))
    assert all(r["bucket_table"] is not None for r in _stored(copy))


def test_run_resumes_from_the_packed_store_as_committed(board, tmp_path, capsys):
    """A committed folder holds trials.sqlite.xz, not trials.sqlite: `leaderboard --run` into it
    reuses every packed trial (it ran them all again before: the store it opened was new)."""
    import shutil

    assert main(["leaderboard", "--dir", str(board), "--no-figures", "--pack"]) == 0
    copy = tmp_path / "committed"
    copy.mkdir()
    shutil.copy(board / "trials.sqlite.xz", copy / "trials.sqlite.xz")
    worst = board.parent / "worst.csv"
    capsys.readouterr()
    assert (
        main(
            ["leaderboard", "--run", "--dir", str(copy), "--worst", str(worst), "--no-figures", "--no-progress", *SMALL]
        )
        == 0
    )
    said = re.search(
        r"(\d+)/(\d+) trials in .*/trials\.sqlite \((\d+) run now, (\d+) reused\)", capsys.readouterr().out
    )
    done, planned, ran, reused = map(int, said.groups())
    assert (done, ran, reused) == (planned, 0, planned) and planned >= 100


def test_run_completes_the_later_measures_of_trials_stored_before_them(board, tmp_path, capsys):
    """`leaderboard --run` into a folder whose trials predate the measures outside the key
    (their columns NULL) fills them: the point-mass forecasters' from their bucket tables,
    the others' by running them again, with the values the runner itself stored."""
    import shutil

    from fastcdl.experiments.fill import later_columns, missing
    from fastcdl.experiments.store import TrialStore

    copy = tmp_path / "old"
    shutil.copytree(board, copy)
    with TrialStore(copy / "trials.sqlite") as store:
        stored = {r["key"]: r for r in store.rows()}
        for key in stored:
            store.set_columns(key, dict.fromkeys(later_columns()))
    worst = board.parent / "worst.csv"
    capsys.readouterr()
    args = ["leaderboard", "--run", "--dir", str(copy), "--worst", str(worst), "--no-figures", "--no-progress"]
    assert main(args + SMALL) == 0
    said = re.search(r"later measures of (\d+) trials stored before them: (\d+) from", capsys.readouterr().out)
    assert said and int(said.group(1)) == len(stored) and int(said.group(2)) > 0
    with TrialStore(copy / "trials.sqlite") as store:
        rows = store.rows()
    assert missing(rows) == []
    for r in rows:
        for c in later_columns()[:-1]:
            a, b = r[c], stored[r["key"]][c]
            assert a == b or (a != a and b != b), (r["forecaster"], r["adversary_label"], c)


def test_a_new_worst_csv_replaces_the_worst_environments_and_keeps_their_old_trials(board, tmp_path):
    """Run again with another worst.csv, the grid plays the new worst adversaries; the trials
    of the ones it replaced stay stored (a later grid may reuse them) and leave the page."""
    import shutil

    copy = tmp_path / "again"
    shutil.copytree(board, copy)
    worst = _worst_csv(
        tmp_path / "worst.csv",
        [
            ("kt", "bernoulli", {"p": 0.3}, 64),
            ("kt", "bernoulli", {"p": 0.45}, 256),
            ("foster", "contrarian", {}, 128),
        ],
    )
    args = ["leaderboard", "--run", "--dir", str(copy), "--worst", str(worst), "--no-figures", "--no-progress"]
    assert main(args + SMALL) == 0
    stored = _stored(copy)
    old = [r for r in stored if r["adversary"] == "markov" and r["T"] == 64]
    new = [r for r in stored if r["adversary"] == "bernoulli" and r["adversary_params"] == '{"p": 0.3}']
    assert old and new  # both stored
    rows = leaderboard.load_rows(copy)
    at64 = {
        (r["adversary"], r["adversary_params"]) for r in rows if r["adversary_label"] == "worst(kt)" and r["T"] == 64
    }
    assert at64 == {("bernoulli", '{"p": 0.3}')}
    assert not [r for r in rows if r["adversary"] == "markov"]
    table = _csv(copy / "table.csv")
    assert table  # the page was built from the new grid


def test_the_files_hold_no_nan_and_an_infinite_measure_has_an_empty_slope(board):
    """KL-calibration and the log loss are inf for a forecaster that stated 0 or 1 and saw the
    other outcome (the convention of docs/pseudo.md); its slope has no value: an empty cell, never
    "nan"."""
    for name in ("table.csv", "ranks.csv", "theory.csv", "rates.csv", "summary.csv"):
        text = (board / name).read_text()
        assert not re.search(r"(^|,)nan(,|$)", text, flags=re.MULTILINE | re.IGNORECASE), name
    infinite = [r for r in _csv(board / "table.csv") if r["mean"] == "inf"]
    assert infinite, "the small grid has a forecaster with infinite KL-calibration"
    assert all(r["slope"] == "" and r["slope_lo"] == "" and r["slope_hi"] == "" for r in infinite)
    assert {r["measure"] for r in infinite} <= {"klcal", "pseudo_klcal", "log_loss"}
