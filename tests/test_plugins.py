"""Plug-ins defined outside the package (tests/user_plugins.py) run through simulate, the
per-round API, presets and `fastcdl rates` (local pool and Dask), as the built-ins do."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import user_plugins

from fastcdl.cli import main
from fastcdl.experiments import load_preset, plan, run
from fastcdl.online import (
    ForecasterSpec,
    make_adversary,
    make_forecaster,
    plugin_adversary,
    plugin_forecaster,
    registry,
    simulate,
    trace,
)

HERE = Path(__file__).resolve().parent


def _per_round(forecaster, adversary, T, seed, fparams=None, aparams=None):
    f = make_forecaster(forecaster, horizon=T, seed=seed, **(fparams or {}))
    a = make_adversary(adversary, horizon=T, seed=seed, **(aparams or {}))
    ps, ys = [], []
    for _ in range(T):
        d = f.forecast()
        y = a.respond(d)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        ps.append(p)
        ys.append(y)
    return f.stats(), np.array(ps), np.array(ys)


def test_plugin_adversary_equals_the_builtin_it_reimplements():
    """coin draws as bernoulli does: the same runs, against every built-in forecaster family."""
    for f in ("cdl", "kt", "foster", "frequency"):
        a = simulate(f, user_plugins.COIN, horizon=3000, seed=5, adversary_params={"p": 0.3})
        b = simulate(f, "bernoulli", horizon=3000, seed=5, adversary_params={"p": 0.3})
        assert a.stats == b.stats, f
        assert a.adversary == "coin" and a.params["adversary"] == {"p": 0.3}


def test_plugin_forecaster_equals_the_builtin_it_reimplements():
    for adv in ("greedy", "bernoulli", user_plugins.SPITE):
        a = simulate(user_plugins.RUNNING, adv, horizon=2000, seed=2, forecaster_params={"m": 45})
        b = simulate("frequency", adv, horizon=2000, seed=2, forecaster_params={"m": 45})
        assert a.stats == b.stats


@pytest.mark.parametrize(
    "forecaster,adversary",
    [
        (user_plugins.RUNNING, "greedy"),
        (user_plugins.RUNNING, user_plugins.SPITE),
        ("cdl", user_plugins.SPITE),
        ("foster", user_plugins.COIN),
        ("user_plugins:RUNNING", "user_plugins:SPITE"),
    ],
)
def test_simulate_equals_per_round_for_plugins(forecaster, adversary):
    T, seed = 2500, 11
    res, tp, ty = trace(forecaster, adversary, horizon=T, seed=seed)
    st, ps, ys = _per_round(forecaster, adversary, T, seed)
    assert np.array_equal(tp, ps) and np.array_equal(ty, ys)
    assert res.stats == st
    assert len(np.unique(ps)) > 1 and 0 < ys.sum() < T


def test_named_plugins_load_by_module_path():
    assert registry.adversary("user_plugins:COIN") is user_plugins.COIN
    assert registry.forecaster("user_plugins:RUNNING") is user_plugins.RUNNING
    with pytest.raises(ValueError, match="cannot be loaded"):
        registry.adversary("user_plugins:NOPE")
    with pytest.raises(ValueError, match="not a plug-in made with plugin_adversary"):
        registry.adversary("user_plugins:RUNNING")
    with pytest.raises(ValueError, match="adversary must be one of"):
        registry.adversary("nope")


def test_plugin_contracts_refuse_what_cannot_run():
    with pytest.raises(ValueError, match="numba-compiled"):
        plugin_adversary(lambda view, table, par, rng: 1, name="py")
    with pytest.raises(ValueError, match="name"):
        plugin_adversary(user_plugins.coin, name="")
    with pytest.raises(ValueError, match="numba-compiled"):
        plugin_forecaster(
            name="x", init=user_plugins.last_init, forecast=lambda *a: None, observe=user_plugins.last_observe
        )
    with pytest.raises(ValueError, match="unknown parameter 'q' for adversary 'coin'"):
        simulate("cdl", user_plugins.COIN, horizon=10, adversary_params={"q": 1})
    with pytest.raises(ValueError, match="unknown parameter 'x' for forecaster 'running'"):
        simulate(user_plugins.RUNNING, "greedy", horizon=10, forecaster_params={"x": 1})
    assert isinstance(user_plugins.RUNNING, ForecasterSpec)


PRESET = """
name = "plugins"
master_seed = 3
seeds = 2
t_min = 256
t_max = 1024

[[forecasters]]
name = "user_plugins:RUNNING"
label = "running"

[[forecasters]]
name = "cdl"

[[adversaries]]
name = "user_plugins:COIN"
label = "coin"
params = { p = 0.4 }

[[adversaries]]
name = "user_plugins:SPITE"
label = "spite"
"""


def _rows(path):
    con = sqlite3.connect(path)
    con.row_factory = sqlite3.Row
    rows = {r["key"]: dict(r) for r in con.execute("SELECT * FROM trials")}
    con.close()
    return rows


def test_rates_runs_plugins_on_the_local_pool_and_dask(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    (tmp_path / "p.toml").write_text(PRESET)
    preset = load_preset(str(tmp_path / "p.toml"))
    assert (
        main(
            [
                "rates",
                "--preset",
                str(tmp_path / "p.toml"),
                "--out",
                str(tmp_path / "pool"),
                "--workers",
                "2",
                "--no-progress",
            ]
        )
        == 0
    )
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", scheduler_port=0
    ) as cluster:
        run(preset, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    a, b = _rows(tmp_path / "pool" / "trials.sqlite"), _rows(tmp_path / "dask" / "trials.sqlite")
    assert a.keys() == b.keys() == {t.key for t in plan(preset)} and len(a) == 2 * 2 * 3 * 2
    for k in a:
        assert a[k]["cdl"] == b[k]["cdl"] and a[k]["ece"] == b[k]["ece"]
    row = next(r for r in a.values() if r["forecaster_label"] == "running" and r["adversary_label"] == "coin")
    assert row["forecaster"] == "user_plugins:RUNNING"
    from fastcdl.online.plugins import code_hash

    assert row["algorithm_version"].startswith(
        f"forecaster=running/1+{code_hash(user_plugins.RUNNING)} "
        f"adversary=coin/1+{code_hash(user_plugins.COIN)} engine/"
    )
    summary = json.loads((tmp_path / "pool" / "summary.json").read_text())
    assert {s["forecaster"] for s in summary["slopes"]} == {"running", "cdl"}


@pytest.mark.parametrize("forecaster", [*registry.forecasters(), user_plugins.RUNNING])
@pytest.mark.parametrize("value", [2, -1, 2**40])
def test_an_answer_other_than_0_or_1_stops_the_loop_at_its_round(forecaster, value):
    """Every compiled loop (each built-in forecaster's and the plug-in loop) stops at the round
    whose answer is not an outcome, before recording it, and simulate names the adversary, the
    round and the value. (truthful plays only the built-in stochastic adversaries, none of which
    can answer so; its loop is driven here with the faulty adversary all the same.)"""
    from fastcdl._validate import ValidationError
    from fastcdl.online.simulate import _run_loop

    truthful = forecaster == "truthful"
    f = make_forecaster(forecaster, horizon=64, seed=1, **({"adversary": "bernoulli"} if truthful else {}))
    a = make_adversary(user_plugins.FAULTY, horizon=64, seed=1, value=value)
    with pytest.raises(ValidationError) as e:
        _run_loop(f, a, 64, np.zeros(0), np.zeros(0, dtype=np.int8))
    assert (e.value.argument, e.value.index, e.value.value) == ("adversary", 17, value)
    assert str(e.value).startswith(f"adversary 'faulty' returned {value} in round 17 (view.t = 17)")
    assert f.rounds == 16 and int(f.stats().total) == 16  # the faulty round never reached the table
    if truthful:
        return
    with pytest.raises(ValidationError, match=f"returned {value} in round 17"):
        simulate(forecaster, user_plugins.FAULTY, horizon=64, seed=1, adversary_params={"value": value})
    ok = simulate(forecaster, user_plugins.FAULTY, horizon=16, seed=1, adversary_params={"value": value})
    assert int(ok.stats.total) == 16


def test_the_per_round_api_names_an_answer_other_than_0_or_1():
    f = make_forecaster("cdl", horizon=64, seed=0)
    a = make_adversary(user_plugins.FAULTY, horizon=64, seed=0, value=3, at=2)
    y = a.respond(f.forecast())
    p = f.draw()
    f.observe(y)
    a.observe(p, y)
    with pytest.raises(ValueError, match=r"^adversary 'faulty' returned 3 in round 2 \(view.t = 2\)"):
        a.respond(f.forecast())


def test_rates_stops_with_one_line_at_an_answer_other_than_0_or_1(tmp_path, monkeypatch, capsys):
    """Found in the dry run (round 17 of the smallest horizon) or in a worker's trial (round 300
    of T = 512): one line naming the adversary, the round and the value, exit status 2."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    for at, workers in ((17, "1"), (300, "2")):
        (tmp_path / "p.toml").write_text(
            'name = "faulty"\nseeds = 2\nt_min = 256\nt_max = 512\n[[forecasters]]\nname = "frequency"\n'
            f'[[adversaries]]\nname = "user_plugins:FAULTY"\nparams = {{ at = {at} }}\n'
        )
        code = main(
            [
                "rates",
                "--preset",
                str(tmp_path / "p.toml"),
                "--out",
                str(tmp_path / f"run{at}"),
                "--workers",
                workers,
                "--no-progress",
            ]
        )
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2
        assert err[-1].startswith("fastcdl: error: ") and f"adversary 'faulty' returned 2 in round {at} " in err[-1]
        assert "Traceback" not in "\n".join(err)


def test_a_killed_worker_ends_rates_with_one_line_and_re_running_resumes(tmp_path, monkeypatch, capsys):
    """A pool worker killed by the system (SIGKILL, as the out-of-memory killer sends) stops the run
    with one line saying so and how to resume, exit status 2; the finished trials are kept and the
    same command, re-run, runs only the rest."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    (tmp_path / "p.toml").write_text(
        'name = "killed"\nseeds = 2\nt_min = 256\nt_max = 1024\n'
        '[[forecasters]]\nname = "frequency"\n'
        '[[adversaries]]\nname = "user_plugins:KILLER"\n'
    )
    argv = [
        "rates",
        "--preset",
        str(tmp_path / "p.toml"),
        "--out",
        str(tmp_path / "run"),
        "--workers",
        "2",
        "--no-progress",
    ]
    monkeypatch.setenv("FASTCDL_TEST_KILL_AT", "1024")  # the workers die at T = 1024, the dry run is at 256
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        "fastcdl: error: a worker process was killed by SIGKILL (the system may have run "
        "out of memory) while running trials; "
    )
    assert err[0].endswith("of 6 trials left undone; summary files unchanged; re-run the same command to resume")
    kept = _rows(tmp_path / "run" / "trials.sqlite")
    assert {r["T"] for r in kept.values()} <= {256, 512} and len(kept) >= 2
    monkeypatch.delenv("FASTCDL_TEST_KILL_AT")
    assert main(argv) == 0
    after = _rows(tmp_path / "run" / "trials.sqlite")
    assert len(after) == 6 and all(after[k]["finished_at"] == r["finished_at"] for k, r in kept.items())


MY_PLUGINS = """
from numba import njit
from fastcdl.online import plugin_adversary, uniform


@njit(cache=True)
def answer(view, table, par, rng):
    return {body}


ADV = plugin_adversary(answer, name="mine")
"""


def test_a_plugin_whose_code_changed_is_run_again_though_its_version_did_not(tmp_path):
    """Stored trials of a plug-in are keyed by its code as well as its version: changed code runs
    every trial again (the old rows are not reused), a comment or a moved line changes nothing;
    each run says how many trials it ran and how many it reused."""
    (tmp_path / "p.toml").write_text(
        'name = "mine"\nseeds = 2\nt_min = 256\nt_max = 512\n'
        '[[forecasters]]\nname = "frequency"\n'
        '[[adversaries]]\nname = "my_plugins:ADV"\n'
    )

    def rates(body, comment=""):
        (tmp_path / "my_plugins.py").write_text(comment + MY_PLUGINS.format(body=body))
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "fastcdl",
                "rates",
                "--preset",
                "p.toml",
                "--out",
                "run",
                "--workers",
                "1",
                "--no-progress",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        counts = p.stdout.splitlines()[0].split("(")[1].split(")")[0]
        return counts, _rows(tmp_path / "run" / "trials.sqlite")

    counts, first = rates("1")
    assert counts == "4 run now, 0 reused" and len(first) == 4
    counts, second = rates("1", comment="# a comment moves every line down\n\n")
    assert counts == "0 run now, 4 reused" and second.keys() == first.keys()
    counts, third = rates("1 if uniform(rng) < 0.5 else 0")
    assert counts == "4 run now, 0 reused" and len(third) == 8  # the old rows stay, under their own key
    new = [r for k, r in third.items() if k not in first]
    assert all(r["algorithm_version"].split()[1].startswith("adversary=mine/1+") for r in new)
    assert {r["algorithm_version"] for r in new}.isdisjoint({r["algorithm_version"] for r in first.values()})
    assert sorted(r["cdl"] for r in new) != sorted(r["cdl"] for r in first.values())


def test_the_code_hash_follows_helpers_constants_and_nothing_else():
    """code_hash reads the code as loaded: a helper the kernel calls and a global constant it reads
    count; the same code defined twice (another module, another place) hashes alike."""
    from fastcdl.online.plugins import code_hash

    src = (
        "from numba import njit\nLIMIT = {limit}\n\n@njit\ndef below(x):\n    return x {op} LIMIT\n\n"
        "@njit\ndef respond(view, table, par, rng):\n    return 1 if below(par[0]) else 0\n"
    )

    def spec(limit=0.3, op="<", pad=""):
        ns = {}
        exec(compile(pad + src.format(limit=limit, op=op), "<typed at a prompt>", "exec"), ns)
        return plugin_adversary(ns["respond"], name="limit", params={"p": 0.5})

    base = code_hash(spec())
    assert code_hash(spec(pad="\n\n# moved down\n")) == base
    assert code_hash(spec(limit=0.4)) != base
    assert code_hash(spec(op="<=")) != base  # in the helper, not in the kernel itself


def test_the_console_script_imports_plugins_from_the_current_folder(tmp_path):
    """`fastcdl rates` run as the installed console script (whose sys.path starts with its own
    folder, not the current one) finds my_plugins.py in the current folder, as `python -m` does."""
    script = Path(sys.executable).with_name("fastcdl")
    if not script.is_file():
        pytest.skip("no fastcdl console script beside this Python (the package is not installed here)")
    (tmp_path / "my_plugins.py").write_text(MY_PLUGINS.format(body="1 if uniform(rng) < 0.3 else 0"))
    (tmp_path / "p.toml").write_text(
        'name = "mine"\nseeds = 2\nt_min = 256\nt_max = 512\n'
        '[[forecasters]]\nname = "frequency"\n'
        '[[adversaries]]\nname = "my_plugins:ADV"\n'
    )
    p = subprocess.run(
        [str(script), "rates", "--preset", "p.toml", "--out", "run", "--workers", "2", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("4/4 trials in run/trials.sqlite (4 run now, 0 reused)")
    assert {r["adversary_label"] for r in _rows(tmp_path / "run" / "trials.sqlite").values()} == {"mine"}


LONG_F = "running frequency on the grid of thirty-second parts, my own forecaster"
LONG_A = "a coin of my own making, with a label longer than any column"


def test_plugins_in_presets_labels_tables_and_figures(tmp_path, monkeypatch, capsys):
    """A plug-in without a label is labelled by its name; every preset key is checked (an unknown
    one is named); long labels keep the summary table aligned and the figures' titles inside the
    figure; `fastcdl plot` draws the reliability and decision-loss figures of a plug-in forecaster."""
    from fastcdl.experiments import PresetError, override
    from fastcdl.experiments.presets import preset_from_dict

    raw = {
        "name": "p",
        "seeds": 2,
        "t_min": 256,
        "t_max": 1024,
        "forecasters": [{"name": "user_plugins:RUNNING"}],
        "adversaries": [{"name": "user_plugins:COIN"}],
    }
    preset = preset_from_dict(raw)
    assert [c.display for c in preset.forecasters + preset.adversaries] == ["running", "coin"]
    assert [c.display for c in override(preset, adversaries=["user_plugins:SPITE"]).adversaries] == ["spite"]
    with pytest.raises(PresetError, match=r"unknown key\(s\) \['lable'\] in forecaster 'cdl'; allowed: "):
        preset_from_dict({**raw, "forecasters": [{"name": "cdl", "lable": "x"}]})
    with pytest.raises(PresetError, match=r"unknown key\(s\) \['forecaster'\]; allowed: "):
        preset_from_dict({**raw, "forecaster": [{"name": "cdl"}]})

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    (tmp_path / "p.toml").write_text(
        'name = "long"\nseeds = 2\nt_min = 256\nt_max = 1024\n'
        f'[[forecasters]]\nname = "user_plugins:RUNNING"\nlabel = "{LONG_F}"\n[[forecasters]]\nname = "cdl"\n'
        f'[[adversaries]]\nname = "user_plugins:COIN"\nlabel = "{LONG_A}"\nparams = {{ p = 0.4 }}\n'
        '[[adversaries]]\nname = "user_plugins:SPITE"\n'
    )
    assert (
        main(
            [
                "rates",
                "--preset",
                str(tmp_path / "p.toml"),
                "--out",
                str(tmp_path / "run"),
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    table = lines[1:-1]
    head = table[0]
    assert len(table) == 1 + 2 * 2 * 2 and lines[-1] == f"plots: fastcdl plot {tmp_path / 'run'}"
    for col in ("adversary", "metric", "mean at largest T", "95% interval", "T fitted"):  # entries under the header's
        at = head.index(col)
        assert all(row[at - 2 : at] == "  " and row[at] != " " for row in table[1:]), col
    # each slope with its level: the mean at the largest T fitted and its interval, from rates.csv
    import csv

    rates = list(csv.DictReader((tmp_path / "run" / "rates.csv").read_text().splitlines()))
    T_max = max(int(r["T"]) for r in rates)
    at = head.index("mean at largest T")
    cut = [0, head.index("adversary"), head.index("metric"), at]
    for row in table[1:]:
        f, a, m = (row[i:j].strip() for i, j in zip(cut, cut[1:]))
        (r,) = [r for r in rates if (r["forecaster"], r["adversary"], r["metric"], int(r["T"])) == (f, a, m, T_max)]
        assert row[at:].startswith(f"{float(r['mean']):.4g} [{float(r['lo']):.4g}, {float(r['hi']):.4g}]")

    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from fastcdl.experiments import run_figures as _run_figures

    rows, seed = _run_figures._read_run(tmp_path / "run")
    figures = dict(_run_figures._rate_figures(rows, seed) + _run_figures._table_figures(rows))
    stem = f"{_run_figures._slug(LONG_F)}_{_run_figures._slug(LONG_A)}_T1024.png"
    assert {f"reliability_{stem}", f"decision_loss_{stem}"} <= figures.keys()
    for name in (f"rates_{_run_figures._slug(LONG_A)}.png", f"reliability_{stem}", f"decision_loss_{stem}"):
        fig = figures[name]
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        title = fig.axes[0].title.get_window_extent(renderer)
        assert fig.bbox.x0 <= title.x0 and title.x1 <= fig.bbox.x1 and title.y1 <= fig.bbox.y1, name
