"""scripts/bench_check.py (make bench-check): a timing file whose timed modules changed since it
was recorded is listed with every README or docs line citing it; an unchanged one is not; a
historical snapshot is never checked."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def check(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("bench_check_under_test", ROOT / "scripts" / "bench_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "fastcdl").mkdir()
    (tmp_path / "fastcdl" / "kernel.py").write_text("def f():\n    return 1\n")
    (tmp_path / "results" / "benchmarks").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    monkeypatch.setattr(mod, "BENCH", tmp_path / "results" / "benchmarks")
    return mod, tmp_path


def _record(root, name, modules):
    doc = {"source": {"commit": "0" * 40, "timed_modules": modules}, "timings": {}}
    (root / "results" / "benchmarks" / f"{name}.json").write_text(json.dumps(doc))


def test_a_changed_kernel_lists_the_numbers_citing_its_file(check, capsys):
    mod, root = check
    kernel = root / "fastcdl" / "kernel.py"
    _record(root, "speed", {"fastcdl/kernel.py": mod.module_hash(kernel)})
    _record(root, "other", {"fastcdl/kernel.py": "0" * 16})  # recorded on other code: stale already
    (root / "docs" / "page.md").write_text("fast: 3 ms (results/benchmarks/speed.md)\nslow: 9 ms (other.json)\n")
    (root / "README.md").write_text("nothing cited here\n")
    assert set(mod.stale_files()) == {"other"}
    assert mod.main([]) == 1
    out = capsys.readouterr().out
    assert "docs/page.md:2: [other] slow: 9 ms (other.json)" in out and "speed" not in out.split("bench-check:")[0]
    kernel.write_text("def f():\n    return 2\n")  # a kernel edited without re-measuring
    assert set(mod.stale_files()) == {"speed", "other"}
    mod.main([])
    out = capsys.readouterr().out
    assert "docs/page.md:1: [speed] fast: 3 ms (results/benchmarks/speed.md)" in out
    assert "changed since: fastcdl/kernel.py" in out


def test_current_files_list_nothing_and_snapshots_are_not_checked(check, capsys):
    mod, root = check
    _record(root, "speed", {"fastcdl/kernel.py": mod.module_hash(root / "fastcdl" / "kernel.py")})
    _record(root, "bucket-speed-71d8227", {"fastcdl/kernel.py": "0" * 16})
    assert "bucket-speed-71d8227" in mod.HISTORICAL
    assert mod.stale_files() == {}
    assert mod.main([]) == 0
    assert "0 timing files older than their code, cited on 0 lines" in capsys.readouterr().out


def test_a_file_without_commit_or_hash_cannot_be_checked(check):
    mod, root = check
    (root / "results" / "benchmarks" / "old.json").write_text(json.dumps({"runs": []}))
    assert mod.stale_files()["old"][1] == ["it records no commit and no hash of the code it timed"]


@pytest.mark.parametrize(
    "layout",
    [
        lambda mods: {"record": {"a": {"source": {"commit": "0" * 40, "timed_modules": mods}}}},  # bench_estimators
        lambda mods: {"meta": {"source_hash": "x", "timed_modules": mods}, "rows": []},  # bench_sample_costs
        lambda mods: {"source": "0" * 40 + "+dirty", "timed_modules": mods},  # bench_buckets
    ],
)
def test_every_layout_of_the_timing_files_is_read(check, layout):
    mod, root = check
    kernel = root / "fastcdl" / "kernel.py"
    path = root / "results" / "benchmarks" / "speed.json"
    path.write_text(json.dumps(layout({"fastcdl/kernel.py": mod.module_hash(kernel)})))
    assert mod.stale_files() == {}
    kernel.write_text("def f():\n    return 3\n")
    assert mod.stale_files()["speed"][1] == ["fastcdl/kernel.py"]


def test_a_change_of_comments_or_docstrings_only_keeps_the_file_current(check):
    """The timed bytes, found at the recorded commit, differ from the file now only in comments
    and docstrings: the same code, so the file is current; a change of code makes it stale."""
    import subprocess

    mod, root = check
    kernel = root / "fastcdl" / "kernel.py"
    kernel.write_text('"""A kernel."""\n\n\ndef f(x):\n    """Twice x."""\n    return 2 * x  # doubled\n')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "fastcdl/kernel.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "timed"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    doc = {"source": {"commit": commit, "timed_modules": {"fastcdl/kernel.py": mod.module_hash(kernel)}}}
    kernel.write_text('"""A kernel, said otherwise."""\n\n\ndef f(x):\n    # the same\n    return 2 * x\n')
    assert mod.staleness(doc, "") is None
    kernel.write_text('"""A kernel."""\n\n\ndef f(x):\n    """Twice x."""\n    return x + x\n')
    assert mod.staleness(doc, "") == ["fastcdl/kernel.py"]
    doc["source"]["commit"] = "0" * 40  # the timed bytes cannot be found: stale
    kernel.write_text('"""A kernel."""\n\n\ndef f(x):\n    return 2 * x\n')
    assert mod.staleness(doc, "") == ["fastcdl/kernel.py"]
