"""n_jobs and the parallel binning kernel: same table for any thread count, numba's thread
count restored, and a serial fallback where numba's workqueue layer would abort the process
(several threads launching parallel kernels at once, as Dask's threaded scheduler does)."""

import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np
import pytest

import fastcdl as fc
from fastcdl import _parallel
from fastcdl._compiled import buckets as kb
from conftest import numba_threads

ROOT = Path(__file__).resolve().parents[1]

# more than one chunk of the binning kernels (CHUNK = 2^20 rounds), so they run in parallel
T_BIG = (1 << 21) + 4321

# n_jobs=2 needs numba's pool to have two threads (NUMBA_NUM_THREADS, by default the cores numba
# may use); with one, there is nothing to compare the serial run with
two_threads = pytest.mark.skipif(numba_threads() < 2, reason="numba has one thread (NUMBA_NUM_THREADS=1 or one core)")


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(0)
    p = rng.random(T_BIG)
    p[::97] = 0.5  # some on an edge
    y = (rng.random(T_BIG) < p).astype(np.int8)
    w = rng.random(T_BIG) * 3.0
    return y, p, w


@two_threads
@pytest.mark.parametrize("bins", [37, np.array([0.0, 0.1, 0.5, 0.90001, 1.0])], ids=["uniform", "edges"])
def test_table_does_not_depend_on_n_jobs(big, bins):
    y, p, w = big
    before = numba.get_num_threads()
    for weights in (None, w):
        tables = [fc.bucket_stats(y, p, bins=bins, sample_weight=weights, n_jobs=n) for n in (1, 2, None)]
        assert tables[0] == tables[1] == tables[2]  # bit for bit, float sums included
        assert numba.get_num_threads() == before
    assert fc.cdl(y, p, bins=bins, n_jobs=1) == fc.cdl(y, p, bins=bins, n_jobs=2)


@two_threads
def test_thread_count_is_restored_after_an_error(big):
    y, p, _ = big
    before = numba.get_num_threads()
    bad = p.copy()
    bad[T_BIG - 3] = 1.5
    with pytest.raises(fc.ValidationError) as e:
        fc.bucket_stats(y, bad, bins=10, n_jobs=1 if before > 1 else 2)
    assert e.value.index == T_BIG - 3
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("n_jobs", [0, -1, True, 2.5, "2", numba.config.NUMBA_NUM_THREADS + 1])
def test_bad_n_jobs(n_jobs):
    with pytest.raises(fc.ValidationError) as e:
        fc.bucket_stats([0, 1], [0.2, 0.7], bins=3, n_jobs=n_jobs)
    assert e.value.argument == "n_jobs"


def test_n_jobs_with_a_table_is_refused():
    st = fc.bucket_stats([0, 1], [0.2, 0.7])
    with pytest.raises(ValueError, match="BucketStats"):
        fc.cdl(st, n_jobs=2)


def test_parallel_safe_only_off_the_main_thread_under_workqueue(monkeypatch):
    for layer, off_main in (("workqueue", False), ("omp", True), ("tbb", True)):
        monkeypatch.setattr(_parallel, "threading_layer", lambda layer=layer: layer)
        assert _parallel.parallel_safe() is True  # the main thread may always launch
        with ThreadPoolExecutor(1) as ex:
            assert ex.submit(_parallel.parallel_safe).result() is off_main
        t_result = []
        t = threading.Thread(target=lambda: t_result.append(_parallel.parallel_safe()))
        t.start()
        t.join()
        assert t_result == [off_main]


def test_threading_layer_resolves_the_configuration(monkeypatch):
    assert _parallel.threading_layer() in ("tbb", "omp", "workqueue")
    monkeypatch.setattr(numba, "threading_layer", lambda: (_ for _ in ()).throw(ValueError("not started")))
    monkeypatch.setattr(numba.config, "THREADING_LAYER", "workqueue")
    assert _parallel.threading_layer() == "workqueue"
    monkeypatch.setattr(numba.config, "THREADING_LAYER", "default")
    monkeypatch.setattr(numba.config, "THREADING_LAYER_PRIORITY", ["workqueue", "omp", "tbb"])
    assert _parallel.threading_layer() == "workqueue"


def test_serial_kernel_off_the_main_thread_under_workqueue(big, monkeypatch):
    y, p, _ = big
    calls = []

    def spy(name):
        real = getattr(kb, name)

        def call(*args):
            calls.append(name == "bin_rounds")  # True: the serial kernel ran
            return real(*args)

        monkeypatch.setattr(kb, name, call)

    spy("bin_rounds")
    spy("bin_rounds_parallel")
    monkeypatch.setattr(_parallel, "threading_layer", lambda: "workqueue")
    want = fc.bucket_stats(y, p, bins=20)
    with ThreadPoolExecutor(2) as ex:
        got = list(ex.map(lambda _: fc.bucket_stats(y, p, bins=20), range(2)))
    assert got[0] == want and got[1] == want
    assert calls == [False, True, True]
    calls.clear()
    fc.bucket_stats(y, p, bins=20, n_jobs=1)  # one thread: the serial kernel, no thread pool
    assert calls == [True]
    calls.clear()
    fc.bucket_stats(y[:1000], p[:1000], bins=20)  # one chunk: serial, the pool is never woken
    assert calls == [True]


@two_threads
def test_quantile_edges_use_the_pool_where_the_binning_does(big, monkeypatch):
    """Quantile tables: the grid count and gather run on the thread pool exactly when the binning
    kernel does (never off the main thread under workqueue), and the table is the same."""
    y, p, _ = big
    calls = []
    for name in ("count_grid", "count_grid_parallel"):
        real = getattr(kb, name)
        monkeypatch.setattr(kb, name, lambda *a, real=real, name=name: calls.append(name) or real(*a))
    want = fc.bucket_stats(y, p, bins=300, strategy="quantile", n_jobs=1)
    assert calls == ["count_grid"]
    calls.clear()
    assert fc.bucket_stats(y, p, bins=300, strategy="quantile", n_jobs=2) == want
    assert calls == ["count_grid_parallel"]
    # however many parts are asked for, each has at least 2 G rounds (the parts' counts stay small)
    G = fc.binning.edge_grid(T_BIG, 10**4)
    sizes = []
    real = kb.count_grid_parallel
    monkeypatch.setattr(kb, "count_grid_parallel", lambda *a: sizes.append(a[4].shape[0] // a[2]) or real(*a))
    edges = fc.binning.quantile_edges_of_rounds(p, 10**4, 64)
    assert sizes == [T_BIG // (2 * G)] and sizes[0] >= 2
    assert np.array_equal(edges, fc.binning.quantile_edges_of_rounds(p, 10**4, 1))
    calls.clear()
    monkeypatch.setattr(_parallel, "threading_layer", lambda: "workqueue")
    with ThreadPoolExecutor(2) as ex:
        got = list(ex.map(lambda _: fc.bucket_stats(y, p, bins=300, strategy="quantile", n_jobs=2), range(2)))
    assert got[0] == want and got[1] == want
    assert calls == ["count_grid", "count_grid"]


def test_dask_threaded_scheduler_with_workqueue_finishes():
    # in a subprocess: if the fallback failed, numba would abort (SIGABRT) the process
    code = textwrap.dedent(
        f"""
        import dask, dask.array as da, numba, numpy as np
        import fastcdl as fc, fastcdl.dask as fd
        T = {T_BIG}
        rng = np.random.default_rng(1)
        p = rng.integers(0, 1025, 4 * T) / 1024  # dyadic: every float sum is exact in any order
        y = (rng.random(4 * T) < p).astype(np.int8)
        w = rng.integers(0, 4, 4 * T).astype(np.float64)
        want = fc.bucket_stats(y, p, bins=50)
        want_w = fc.bucket_stats(y, p, bins=50, sample_weight=w)
        with dask.config.set(scheduler="threads", num_workers=4):
            for n_jobs in (None, 1, 2):
                got = fd.bucket_stats(da.from_array(y, chunks=T), da.from_array(p, chunks=T), bins=50, n_jobs=n_jobs)
                assert got == want, n_jobs
            got = fd.bucket_stats(da.from_array(y, chunks=T), da.from_array(p, chunks=T), bins=50,
                                  sample_weight=da.from_array(w, chunks=T))
            assert got == want_w
        print("finished with", numba.threading_layer())
        """
    )
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue", "NUMBA_NUM_THREADS": "2"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "finished with workqueue" in r.stdout


def test_dask_errors_carry_whole_array_indices():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    import fastcdl.dask as fd

    p = np.full(3000, 0.25)
    p[2345] = 1.5
    y = np.zeros(3000, dtype=np.int64)
    with dask.config.set(scheduler="threads"):
        with pytest.raises(fc.ValidationError) as e:
            fd.bucket_stats(da.from_array(y, chunks=1000), da.from_array(p, chunks=1000), bins=4, n_jobs=1)
    assert (e.value.argument, e.value.index, e.value.value) == ("y_prob", 2345, 1.5)
    assert str(e.value) == "y_prob must lie in [0, 1]; found 1.5 at index 2345 (0-based)"
    # chunk sizes unknown (boolean indexing): the index within the chunk, and the chunk
    keep = da.ones(3000, chunks=1000, dtype=bool)
    yu, pu = da.from_array(y, chunks=1000)[keep], da.from_array(p, chunks=1000)[keep]
    assert np.isnan(pu.shape[0])
    with dask.config.set(scheduler="threads"):
        with pytest.raises(fc.ValidationError) as e:
            fd.bucket_stats(yu, pu)
    assert (e.value.argument, e.value.index, e.value.value) == ("y_prob", None, 1.5)
    assert str(e.value) == "y_prob must lie in [0, 1]; found 1.5 at index 345 (0-based) of chunk 2"
    with pytest.raises(fc.ValidationError, match="n_jobs"):
        fd.bucket_stats(da.from_array(y, chunks=1000), da.from_array(p, chunks=1000), n_jobs=0)


# fastcdl._parallel.pair: two GIL-free calls side by side on fastcdl's helper thread, the
# second taken back by the calling thread when the helper has not started it in time


def test_pair_runs_the_second_on_the_helper_when_it_starts_in_time():
    seen = []

    def first():
        import time

        time.sleep(0.3)  # releases the GIL, as a nogil kernel does: the helper starts meanwhile

    _parallel.pair(first, lambda: seen.append(threading.get_ident()))
    assert len(seen) == 1 and seen[0] != threading.get_ident()


def test_pair_runs_the_second_here_when_the_helper_is_busy():
    release = threading.Event()
    blocker = _parallel._helper_pool().submit(release.wait)  # the helper is held elsewhere
    seen = []
    try:
        _parallel.pair(lambda: seen.append("first"), lambda: seen.append(threading.get_ident()))
        assert seen == ["first", threading.get_ident()]  # after the first, on this thread, once
    finally:
        release.set()
        blocker.result()
    _parallel._helper_pool().submit(lambda: None).result()  # the stale task ran and did nothing
    assert len(seen) == 2


def test_pair_raises_an_error_of_either():
    import time

    with pytest.raises(ZeroDivisionError):
        _parallel.pair(lambda: 1 / 0, lambda: None)
    with pytest.raises(KeyError):  # the second fails on the helper
        _parallel.pair(lambda: time.sleep(0.3), lambda: {}["x"])
    release = threading.Event()
    blocker = _parallel._helper_pool().submit(release.wait)
    try:
        with pytest.raises(KeyError):  # the second fails on this thread
            _parallel.pair(lambda: None, lambda: {}["x"])
    finally:
        release.set()
        blocker.result()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_pair_in_a_forked_child():
    # the child has no helper thread (only the forking thread survives a fork): it starts its own
    _parallel.pair(lambda: None, lambda: None)  # the parent's helper exists
    import warnings

    read, write = os.pipe()
    with warnings.catch_warnings():  # Python 3.12 on warns of fork() with threads running
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            out = []
            _parallel.pair(lambda: out.append(1), lambda: out.append(2))
            os.write(write, bytes(sorted(out)))
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 8) == bytes([1, 2])
    os.close(read)
