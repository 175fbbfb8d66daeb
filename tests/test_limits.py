"""Limits that used to pass silently: iteration caps that fell through, m > T, and the
command line's answer to running out of memory or disk."""

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import fastcdl as fc
import fastcdl._decisions.certificate as worst_task_module
from fastcdl._compiled.decisions import best_response
from fastcdl._compiled.msmwc import LAM_MAX_STEPS, LAM_STEP_TOL, solve_lam
from fastcdl.cli import main
from fastcdl.online import ConvergenceWarning, OnlineWarning, ParameterWarning, make_forecaster, simulate

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "forecasts.csv"

# -- the Lam solve of the MsMwC oracle ---------------------------------------------------


def test_solve_lam_says_when_it_stops_at_its_cap():
    b, w, eta = np.array([0.0]), np.array([1.0]), np.array([1 / 32])
    # phi(lam) = -lam / 32: Newton from 100 lands on the root 0 in one step of 100
    assert solve_lam(b, w, eta, 100.0, 1) == (0.0, False, 100.0)
    assert solve_lam(b, w, eta, 100.0) == (0.0, True, 0.0)
    # a realistic normaliser: capped at a few steps it stops early, and says so
    eta = 2.0 ** -np.arange(6) / 32
    b = np.log(eta**2 / (eta**2).sum()) + np.linspace(3.0, 0.0, 6)
    w = np.linspace(2.0, 40.0, 6)
    lam, ok, step = solve_lam(b, w, eta, -500.0)
    assert ok and step <= LAM_STEP_TOL
    lam1, ok1, step1 = solve_lam(b, w, eta, -500.0, 1)
    assert not ok1 and step1 > LAM_STEP_TOL and lam1 != lam
    # a NaN normaliser is not a root either
    lam_nan, ok_nan, step_nan = solve_lam(b, np.full(6, np.nan), eta, 0.0)
    assert not ok_nan and np.isnan(step_nan)
    assert LAM_MAX_STEPS == 200


def test_forecaster_warns_when_lam_hits_its_cap():
    # the cap is read when solve_lam compiles: a fresh process without the cache
    code = textwrap.dedent(
        """
        import warnings
        import fastcdl._compiled.msmwc as mk
        mk.LAM_MAX_STEPS = 1
        from fastcdl.online import ConvergenceWarning, make_adversary, make_forecaster, simulate
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            simulate("cdl", "bernoulli", horizon=2000, seed=0)
            f = make_forecaster("cdl", horizon=2000, seed=0, oracle="dense")
            a = make_adversary("bernoulli", horizon=2000, seed=0)
            for t in range(300):
                d = f.forecast(); y = a.respond(d); p = f.draw(); f.observe(y); a.observe(p, y)
        got = [str(x.message) for x in w if issubclass(x.category, ConvergenceWarning)]
        assert got, "no ConvergenceWarning"
        print(got[0])
        print(len(got))
        """
    )
    env = {**os.environ, "FASTCDL_CACHE": "0"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    first, count = r.stdout.strip().splitlines()
    assert "Lam did not converge in" in first and "cap of 1 Newton/bisection steps" in first
    assert "of 2000 so far" in first
    assert int(count) > 1  # the per-round API reports as it goes


def test_no_convergence_warning_in_ordinary_runs():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for oracle in ("sparse", "dense"):
            res = simulate("cdl", "greedy", horizon=5000, seed=3, forecaster_params={"oracle": oracle})
            assert res.stats.total == 5000


# -- the certificate search of cdl_report ------------------------------------------------

TIE_Y = [
    0,
    0,
    1,
    1,
    1,
    1,
    0,
    0,
    0,
    0,
    0,
    0,
    1,
    1,
    0,
    0,
    0,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    1,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    1,
    1,
    1,
    1,
    1,
]
TIE_P = (
    [0.2697867137638703] * 6
    + [0.04097352393619469] * 6
    + [0.016527635528529094] * 5
    + [0.8132702392002724] * 5
    + [0.9127555772777217] * 8
    + [0.6066357757671799] * 8
)


def test_certificate_search_warns_when_it_gives_up(monkeypatch):
    y, p = TIE_Y, TIE_P
    rep = fc.cdl_report(y, p)  # the default cap: found, no warning (filterwarnings=error)
    assert fc.cfdl(y, p, payoff=rep.payoff) == pytest.approx(rep.value, abs=1e-12)
    monkeypatch.setattr(worst_task_module, "_TIE_ROUNDS", 0)
    with pytest.warns(fc.CertificateWarning, match=r"after 0 rounds .* kinks mu1 = 0\.\d+, mu2 = 0\.\d+"):
        capped = fc.cdl_report(y, p)
    assert capped.value == rep.value  # the value never depends on the search


def test_certificate_search_lowers_an_entry_by_many_ulps_at_once():
    """A three-action task next to the V task (mu1 one ulp below 1/2, c2 ~ 1e-15, from a
    leaderboard trial): the entry to lower is ~8e-16, whose ulps are so small that the kink
    moves only after about 2^50 of them. The search lowers by 2^k ulps in round k in O(1)
    (it took one np.nextafter per ulp and did not finish in hours)."""
    mu1, mu2 = 0.4999999999999999, 0.6913417161825449
    u, settled = worst_task_module.three_action_task(
        mu1, mu2, 1.999999999999999, 1.1604610293826094e-15, ("right", "right")
    )
    assert settled
    assert best_response(u, mu1, 1.0) == 0 and best_response(u, mu2, 1.0) == 1


@pytest.mark.parametrize("x", [1.0, 0.5, 0.3, 1e-300, 5e-324, 0.0, 8.02e-16])
@pytest.mark.parametrize("k", [0, 1, 2, 3, 17, 1000])
def test_ulps_below_is_repeated_nextafter(x, k):
    want = x
    for _ in range(k):
        want = np.nextafter(want, 0.0)
    assert worst_task_module._ulps_below(x, k) == want
    assert worst_task_module._ulps_below(x, 2**200) == 0.0


# -- m larger than T ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cdl", "kt", "foster", "frequency"])
def test_more_buckets_than_rounds_warns(name):
    with pytest.warns(ParameterWarning, match=r"m = 100000 buckets for a horizon of T = 1024 rounds") as rec:
        make_forecaster(name, horizon=1024, m=100000)
    assert issubclass(rec[0].category, OnlineWarning) and issubclass(rec[0].category, UserWarning)
    assert rec[0].filename == __file__  # points at the caller


def test_m_above_T_through_simulate_still_runs():
    with pytest.warns(ParameterWarning, match="m = 2000 .* T = 1024"):
        res = simulate("cdl", "bernoulli", horizon=1024, seed=0, forecaster_params={"m": 2000})
    assert res.stats.total == 1024 and res.params["forecaster"]["m"] == 2000


def test_no_warning_for_m_up_to_T_or_defaults():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ParameterWarning)
        make_forecaster("cdl", horizon=1024, m=1024)
        make_forecaster("foster", horizon=8, m=8)
        for name in ("cdl", "kt", "foster", "frequency"):
            make_forecaster(name, horizon=1)  # default m = 2 > T = 1 is the library's own choice


# -- the command line: out of memory, out of disk ----------------------------------------


@pytest.mark.parametrize(
    "error, needle",
    [
        (MemoryError(), "fastcdl: error: out of memory"),
        (MemoryError("Unable to allocate 7.45 GiB for an array"), "out of memory: Unable to allocate 7.45 GiB"),
        (
            OSError(28, "No space left on device", "results/x/trials.sqlite"),
            "fastcdl: error: results/x/trials.sqlite: No space left on device",
        ),
        (PermissionError(13, "Permission denied"), "fastcdl: error: Permission denied"),
    ],
)
def test_memory_and_os_errors_exit_2_with_one_line(monkeypatch, capsys, error, needle):
    import fastcdl.cli

    def boom(*args, **kwargs):
        raise error

    monkeypatch.setattr(fastcdl.cli, "read_file", boom)
    assert main(["metrics", str(EXAMPLE)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and needle in captured.err


def test_memory_error_in_a_real_process_exits_2_without_traceback():
    code = textwrap.dedent(
        f"""
        import sys
        import fastcdl.cli as cli
        def boom(*a, **k):
            raise MemoryError("Unable to allocate 40.0 GiB for an array with shape (5000000001,)")
        cli.read_file = boom
        sys.exit(cli.main(["metrics", {str(EXAMPLE)!r}]))
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2
    assert (
        r.stderr == "fastcdl: error: out of memory: Unable to allocate 40.0 GiB for an array with shape (5000000001,)\n"
    )


def test_huge_bins_on_the_command_line(capsys):
    assert main(["metrics", str(EXAMPLE), "--bins", str(10**9)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bins must be at most 2^24" in err
