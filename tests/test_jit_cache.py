"""The kernel cache cannot go stale across files (fastcdl/_compiled/_jit.py).

numba re-validates a cached function against its own source file only. These tests edit a
callee (online/engine.py's record, which adds a round to the public table) in a copy of the
package and run its caller in another file (the kt forecaster's simulate loop) in fresh
processes sharing one NUMBA_CACHE_DIR.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fastcdl
from fastcdl._compiled import _jit

PACKAGE = Path(fastcdl.__file__).resolve().parent
SCRIPT = (
    "from fastcdl.online import simulate\n"
    "st = simulate('kt', 'bernoulli', horizon=2000, seed=3).stats\n"
    "print(int(st.positives.sum()), int(st.counts.sum()))\n"
)
CALLEE = "    table.n[b] += 1\n"


def _run(root, cache, **env):
    full = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(cache), **env}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=root, env=full, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    ones, total = map(int, out.stdout.split())
    return ones, total


@pytest.fixture
def package_copy(tmp_path):
    root = tmp_path / "site"
    shutil.copytree(PACKAGE, root / "fastcdl", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _stamps(cache):
    return list(Path(cache).rglob(_jit.STAMP))


def test_editing_a_callee_takes_effect_in_a_caller_in_another_file(package_copy, tmp_path):
    cache = tmp_path / "cache"
    ones, total = _run(package_copy, cache)
    assert total == 2000 and 0 < ones < total  # bernoulli(1/2)
    stamps = {p.parent.name.rsplit("_", 1)[0]: p for p in _stamps(cache)}  # folder: <dir name>_<hash>
    stamp = stamps["forecasters"]  # the cache folder of online/forecasters/ (kt's loop)
    assert any(stamp.parent.glob("kt.simulate-*.nbi"))

    path = package_copy / "fastcdl" / "online" / "engine.py"
    src = path.read_text()
    assert CALLEE in src
    # every round counted twice (the public table only; the expected-count table, kept as its
    # difference from the public one, stays consistent: weights above outcomes)
    path.write_text(src.replace(CALLEE, "    table.n[b] += 2\n"))

    # What numba alone does: with the stamp forged to say "fresh", the simulate loop keeps
    # the old adversary's machine code. (If numba ever tracks callees, this fails and
    # fastcdl's stamp becomes unnecessary.)
    stale_stamp = stamp.read_text()
    fresh = _sources_hash_of(package_copy) + "\n"
    for p in stamps.values():
        p.write_text(fresh)
    assert _run(package_copy, cache) == (ones, total)

    # fastcdl's rule: any kernel source differs from the stamp -> every entry is dropped.
    for p in stamps.values():
        p.write_text(stale_stamp)
    assert _run(package_copy, cache)[1] == 2 * total
    assert stamp.read_text().strip() == _sources_hash_of(package_copy)
    # and the recompiled entries are reused afterwards
    assert _run(package_copy, cache)[1] == 2 * total


def test_cache_switch_off_writes_nothing(package_copy, tmp_path):
    cache = tmp_path / "cache"
    ones, total = _run(package_copy, cache, FASTCDL_CACHE="0")
    assert total == 2000
    assert not cache.exists() or not any(cache.rglob("*.nbi"))
    assert not _stamps(cache)


def _sources_hash_of(root):
    code = "from fastcdl._compiled._jit import sources_hash; print(sources_hash())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_ensure_fresh_drops_entries_only_when_the_hash_differs(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    (d / "x.f-1.py311.nbi").write_bytes(b"i")
    (d / "x.f-1.py311.1.nbc").write_bytes(b"c")
    _jit._checked.discard(str(d))
    assert _jit.ensure_fresh(d)  # no stamp yet: entries of unknown origin are dropped
    assert not list(d.glob("*.nb*"))
    (d / "x.f-1.py311.nbi").write_bytes(b"i")
    _jit._checked.discard(str(d))
    assert not _jit.ensure_fresh(d)  # stamp matches: kept
    assert (d / "x.f-1.py311.nbi").exists()
    (d / _jit.STAMP).write_text("0" * 64 + "\n")
    _jit._checked.discard(str(d))
    assert _jit.ensure_fresh(d)
    assert not (d / "x.f-1.py311.nbi").exists()


def test_a_compiled_signature_is_returned_without_its_compile_lock(monkeypatch):
    """The per-round API asks for an adversary's compiled version every round: once compiled,
    the lock file is not opened (it was, every call: about 15 us)."""
    from fastcdl._compiled.sort import gather
    import numpy as np

    sig = (gather.typeof_pyval(np.zeros(2)), gather.typeof_pyval(np.zeros(2, dtype=np.int64)))
    first = gather.compile(sig)  # compiled (or loaded) under the lock

    def no_open(*args, **kwargs):
        raise AssertionError("the compile lock was opened for a compiled signature")

    monkeypatch.setattr(_jit, "open", no_open, raising=False)
    assert gather.compile(sig) is first
