"""Quick local speed comparisons of the online engine (pytest-benchmark). Disabled by default;
run with

    .venv/bin/python -m pytest tests/bench/test_online_bench.py --benchmark-enable

Each group times the sparse MsMwC oracle next to its dense reference or the kt baseline.
"""

import pytest

from fastcdl.online import simulate


@pytest.fixture(scope="module", autouse=True)
def compiled():
    for f in ("cdl", "kt", "foster"):
        simulate(f, "greedy", horizon=100)
    simulate("cdl", "greedy", horizon=100, forecaster_params={"oracle": "dense"})


@pytest.mark.benchmark(group="cdl vs greedy, T=1e5: sparse vs dense oracle")
@pytest.mark.parametrize("oracle", ["sparse", "dense"])
def test_cdl_oracle(benchmark, oracle):
    res = benchmark(simulate, "cdl", "greedy", horizon=10**5, seed=1, forecaster_params={"oracle": oracle})
    assert res.stats.total == 10**5


@pytest.mark.benchmark(group="forecasters vs greedy, T=1e6")
@pytest.mark.parametrize("forecaster", ["cdl", "kt", "foster", "frequency"])
def test_forecasters(benchmark, forecaster):
    res = benchmark.pedantic(simulate, args=(forecaster, "greedy"), kwargs={"horizon": 10**6, "seed": 1},
                             rounds=3, iterations=1)
    assert res.stats.total == 10**6


@pytest.mark.benchmark(group="per-round cost flat in T (cdl vs greedy)")
@pytest.mark.parametrize("T", [10**4, 10**5, 10**6])
def test_cdl_flat(benchmark, T):
    benchmark.pedantic(simulate, args=("cdl", "greedy"), kwargs={"horizon": T, "seed": 1}, rounds=3, iterations=1)
