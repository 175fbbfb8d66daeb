"""Algorithm 1 and the baseline forecasters in the compiled simulate loop (fastcdl.online).

setup() runs every simulate once at a small horizon so that timings never include JIT
compilation. The dense MsMwC oracle is timed next to the sparse one in the same run.
"""

from ._compat import optional

simulate = optional("fastcdl.online", "simulate")


def _warm():
    for f in ("cdl", "kt", "foster", "frequency", "sign", "uniform", "acrs"):
        simulate(f, "greedy", horizon=200, seed=0)
    simulate("cdl", "greedy", horizon=200, seed=0, forecaster_params={"oracle": "dense"})


class SimulateSuite:
    """Whole runs against the greedy adversary; cost per round should not grow with T for cdl."""

    params = ([10**4, 10**5, 10**6], ["cdl", "cdl-dense", "kt", "foster", "frequency", "sign", "uniform", "acrs"])
    param_names = ["T", "forecaster"]
    timeout = 600

    def setup(self, T, forecaster):
        if forecaster == "cdl-dense" and T > 10**5:
            raise NotImplementedError("the dense oracle is O(m K_eta) per round; compared up to 1e5 here")
        _warm()
        self.name = "cdl" if forecaster.startswith("cdl") else forecaster
        self.params = {"oracle": "dense"} if forecaster == "cdl-dense" else {}

    def time_simulate(self, T, forecaster):
        simulate(self.name, "greedy", horizon=T, seed=1, forecaster_params=self.params)

    def track_rounds_per_second(self, T, forecaster):
        return simulate(self.name, "greedy", horizon=T, seed=1, forecaster_params=self.params).rounds_per_second

    track_rounds_per_second.unit = "rounds/s"


class SimulateAdversarySuite:
    """cdl (sparse oracle) against each adversary at one horizon."""

    params = (
        [
            "bernoulli",
            "drift",
            "markov",
            "contrarian",
            "greedy",
            "rawpoint",
            "gridedge",
            "sweep",
            "lookahead",
            "signpreserve",
            "cdlahead",
        ],
    )
    param_names = ["adversary"]
    timeout = 300

    def setup(self, adversary):
        _warm()

    def time_cdl(self, adversary):
        simulate("cdl", adversary, horizon=10**5, seed=1)


class SimulateMemorySuite:
    """A long run streams into the bucket table: peak memory does not grow with T."""

    params = ([10**5, 10**7],)
    param_names = ["T"]
    timeout = 900

    def setup(self, T):
        _warm()

    def peakmem_simulate(self, T):
        simulate("cdl", "greedy", horizon=T, seed=1)


class CDLReachedSuite:
    """The CDL the forecasters reach at fixed seeds: a regression check on the numbers, not the speed."""

    params = ([2**12, 2**16], ["cdl", "kt", "foster"], ["bernoulli", "drift", "greedy"])
    param_names = ["T", "forecaster", "adversary"]
    timeout = 600

    def setup(self, T, forecaster, adversary):
        _warm()

    def track_cdl(self, T, forecaster, adversary):
        return sum(simulate(forecaster, adversary, horizon=T, seed=s).cdl for s in range(4)) / 4

    track_cdl.unit = "CDL"


class PluginAdversarySuite:
    """A user's adversary (a first-class function from a module outside the package) next to the
    built-in bernoulli it re-implements, in the same loop: the cost of the plug-in road."""

    params = (["cdl", "kt", "foster", "frequency"], ["bernoulli", "plug-in coin"])
    param_names = ["forecaster", "adversary"]
    timeout = 600

    def setup(self, forecaster, adversary):
        import sys
        from pathlib import Path

        tests = str(Path(__file__).resolve().parents[2] / "tests")
        if tests not in sys.path:
            sys.path.insert(0, tests)
        import user_plugins

        self.adversary = user_plugins.COIN if adversary == "plug-in coin" else "bernoulli"
        self.T = 10**6 if forecaster in ("cdl", "kt") else 10**7
        simulate(forecaster, self.adversary, horizon=200, seed=0)

    def time_simulate(self, forecaster, adversary):
        simulate(forecaster, self.adversary, horizon=self.T, seed=1)


class PseudoTableSuite:
    """What the expected-count table (RunResult.pseudo_stats, docs/pseudo.md) costs the two-point
    loops: simulate with the table kept (the default) and without it (pseudo=False), against a
    fair coin. truthful states point masses and keeps none; kt randomizes every round."""

    params = (["truthful", "kt", "cdl"], [True, False])
    param_names = ["forecaster", "pseudo"]
    timeout = 600

    def setup(self, forecaster, pseudo):
        self.T = 10**6 if forecaster == "cdl" else 4 * 10**6
        simulate(forecaster, "bernoulli", horizon=200, seed=0, pseudo=pseudo)

    def time_simulate(self, forecaster, pseudo):
        simulate(forecaster, "bernoulli", horizon=self.T, seed=1, pseudo=pseudo)


class OracleSuite:
    """The vectorised MsMwC oracle's kernels on the state of a cdl run (10^5 rounds against
    greedy, the m and K_eta of T = 10^7), each called 10^4 times in a compiled loop; and a cdl
    round in kt rounds (CPU time, the same process), the ratio the vectorised oracle aims at,
    against kt as it ships and against kt's loop compiled without reference counting as cdl's is."""

    timeout = 600

    def setup(self):
        import numpy as np
        from numba import njit

        from fastcdl._compiled import msmwc
        from fastcdl.online import make_adversary, make_forecaster
        from fastcdl.online.simulate import _run_loop

        _warm()
        f = make_forecaster("cdl", horizon=10**7, seed=1)
        a = make_adversary("greedy", horizon=10**7, seed=1)
        _run_loop(f, a, 10**5, np.zeros(0), np.zeros(0, dtype=np.int8))
        self.st = st = f.state
        self.lo = max(0, min(st.G.shape[0] - 2, int(np.searchsorted(st.G >= 0, True)) - 1))
        rng = np.random.default_rng(0)
        self.bs = rng.integers(0, st.G.shape[0], 10**4)
        self.gs = rng.choice(np.array([-0.01, 0.01]), 10**4)

        @njit
        def update(st, bs, gs):
            for r in range(bs.shape[0]):
                msmwc.update_lanes(bs[r], gs[r], st.G, st.Q, st.lanes, st.tpad)

        @njit
        def lam(st, n):
            for _ in range(n):
                st.lam[0] = msmwc.lam_lanes(st.lanes, st.lam[0])[0]

        @njit
        def logc(st, lo, n):
            s = 0.0
            for _ in range(n):
                x, y = msmwc.lanes_logc_pair(lo, st.G, st.Q, st.lam[0], st.lanes, st.tpad)
                s += x + y
            return s

        self.update, self.lam, self.logc = update, lam, logc
        update(st, self.bs[:10], self.gs[:10])
        lam(st, 10)
        logc(st, self.lo, 10)

    def time_update_lanes(self):
        self.update(self.st, self.bs, self.gs)

    def time_lam_lanes_warm(self):
        self.lam(self.st, 10**4)

    def time_lanes_logc_pair(self):
        self.logc(self.st, self.lo, 10**4)

    def track_cdl_round_in_kt_rounds(self):
        import time

        cpu = {}
        for name in ("cdl", "kt"):
            t0 = time.process_time()
            simulate(name, "greedy", horizon=10**6, seed=1)
            cpu[name] = time.process_time() - t0
        return cpu["cdl"] / cpu["kt"]

    track_cdl_round_in_kt_rounds.unit = "kt rounds"

    def track_cdl_round_in_refcount_free_kt_rounds(self):
        """The same ratio against kt's loop compiled, like cdl's, without numba's reference
        counting (_nrt=False): the oracle's own cost, without the engine's counting that kt pays."""
        import time

        import numpy as np
        from numba import njit

        from fastcdl.online import make_adversary, make_forecaster
        from fastcdl.online.simulate import _entry

        spec = make_forecaster("kt", horizon=1000, seed=0).spec
        loop = njit(_nrt=False)(spec.loop.py_func)
        cpu = {}
        for T in (1000, 10**6):
            f = make_forecaster("kt", horizon=T, seed=1)
            a = make_adversary("greedy", horizon=T, seed=1)
            args = (
                T,
                f.state,
                f.table,
                f.out,
                f._rng,
                a.spec.compiled(),
                a._par,
                a._rng,
                f.hist,
                np.zeros(0),
                np.zeros(0, dtype=np.int8),
            )
            run = _entry(loop, args, 5)
            t0 = time.process_time()
            run(*args)
            cpu["kt"] = time.process_time() - t0
        t0 = time.process_time()
        simulate("cdl", "greedy", horizon=10**6, seed=1)
        cpu["cdl"] = time.process_time() - t0
        return cpu["cdl"] / cpu["kt"]

    track_cdl_round_in_refcount_free_kt_rounds.unit = "kt rounds"


class NewForecastersSuite:
    """The forecasters of 2024-2026 (ftpl; klcal, which states up to K values a round) next to kt,
    whole runs against contrarian (an adversary that plays K-point forecasters)."""

    params = ([2**12, 2**16], ["kt", "ftpl", "klcal"])
    param_names = ["T", "forecaster"]
    timeout = 600

    def setup(self, T, forecaster):
        simulate(forecaster, "contrarian", horizon=200, seed=0)  # compiled outside the timing

    def time_simulate(self, T, forecaster):
        simulate(forecaster, "contrarian", horizon=T, seed=1)


class MeanForecastersSuite:
    """spr (handed each round's true mean, docs/spr.md) next to kt in whole runs against drift,
    which states its mean (contrarian, NewForecastersSuite's adversary, states none)."""

    params = ([2**12, 2**16], ["kt", "spr"])
    param_names = ["T", "forecaster"]
    timeout = 600

    def setup(self, T, forecaster):
        simulate(forecaster, "drift", horizon=200, seed=0)  # compiled outside the timing

    def time_simulate(self, T, forecaster):
        simulate(forecaster, "drift", horizon=T, seed=1)


make_forecaster = optional("fastcdl.online", "make_forecaster")
make_adversary = optional("fastcdl.online", "make_adversary")


class PerRoundSuite:
    """1,000 rounds through the per-round API (forecast, draw, observe), which runs each built-in's
    compiled loop a round at a time (fastcdl.online.stepping); the adversary's respond and observe
    are included, as a user's Python loop runs them."""

    params = ["frequency", "kt", "cdl", "klcal"]
    param_names = ["forecaster"]

    def setup(self, forecaster):
        self.run(forecaster, 20)  # compiles or loads the loop and the stepping adversaries

    def run(self, forecaster, rounds):
        f = make_forecaster(forecaster, horizon=rounds, seed=1)
        a = make_adversary("greedy", horizon=rounds, seed=1)
        for _ in range(rounds):
            d = f.forecast()
            y = a.respond(d)
            p = f.draw()
            f.observe(y)
            a.observe(p, y)

    def time_rounds(self, forecaster):
        self.run(forecaster, 1000)
