"""make bench-check: the README and docs numbers whose timing file is older than the code it timed.

    .venv/bin/python scripts/bench_check.py          # lists them; exit status 1 if any
    .venv/bin/python scripts/bench_check.py --quiet  # the count only

Every timing file of results/benchmarks/ is written by scripts/benchrecord.py's Recorder, which
records the commit, a hash of fastcdl's sources and, since this check exists, a hash of each
fastcdl module the run loaded (``source.timed_modules``). A file is **stale** when:

- it has ``timed_modules`` and one of those modules differs from the file as it is now (or is
  gone): the code it timed changed after it was recorded. A module whose bytes at the recorded
  commit are the ones timed and differ from the file now only in comments and docstrings (the
  same ``ast`` without docstrings) is the same code, and does not count;
- it has none (recorded before this check): the fastcdl files that git says changed between the
  commit it records and the working tree (any, if it was recorded on uncommitted changes); a
  file that records no commit at all cannot be checked and counts as stale.

A file that records another commit's or another machine's numbers on purpose (a named snapshot:
``bucket-speed-71d8227``, ``compile_profile_e3e2996``, ``bucket-speed-znver3``, the K-point
before/after series) is **historical** and is not checked: :data:`HISTORICAL` names them, each
with the reason. Then every line of README.md, docs/*.md, asv_bench/README.md and the results
READMEs that cites a stale file (by ``<name>.json``, ``<name>.md`` or
``results/benchmarks/<name>``) is listed, with the modules that changed: those are the numbers
to re-measure. ``.ci/run`` prints the list without failing on it; nothing is timed here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from benchrecord import module_hash  # noqa: E402

BENCH = ROOT / "results" / "benchmarks"

# files that keep another commit's or machine's numbers on purpose: not re-measured at HEAD
HISTORICAL = {
    "bucket-speed-71d8227": "the bucket table's speed at commit 71d8227, before the radix sort",
    "bucket-speed-fb35945": "the bucket table's speed at commit fb35945",
    "bucket-speed-znver3": "the bucket table's speed on an AMD Zen 3 machine, not this one",
    "compile_profile_e3e2996": "the compile profile at commit e3e2996, before the first-call cuts",
    "kpoint-adversary-cdlahead": "a step of the K-point engine's before/after series (docs/engine.md)",
    "kpoint-adversary-signpreserve": "a step of the K-point engine's before/after series",
    "kpoint-after-adversaries": "a step of the K-point engine's before/after series",
    "kpoint-after-adversaries-quieter": "a step of the K-point engine's before/after series",
    "kpoint-after-pseudo": "a step of the K-point engine's before/after series",
    "kpoint-c9cd129-vs-now": "the K-point engine against commit c9cd129",
    "kpoint-pseudo-kept": "a step of the K-point engine's before/after series",
    "kpoint-pseudo-off": "a step of the K-point engine's before/after series",
    "kpoint-signpreserve-noinline": "a step of the K-point engine's before/after series",
    "kpoint": "the K-point change's record: the two-point loops before and after it, paired trees (docs/engine.md)",
    "loops": "before/after records of engine changes on the commits loops.md names (the outcome check's cost)",
    "envelope-twins": "the retired numpy twin of the envelope sorts against the compiled ones, when it was retired",
    "uniform-bins-variants": "the loop variants compared when the uniform-bin kernel was chosen (docs/metrics.md)",
    "test_time-de3355b": "make test on a fresh clone of de3355b, run after test_time.json's to compare the machine's state",
    "smce-copies": "smCE's one copy against the specialised copies of commit de3355b, when those were retired",
    "fixed-cost": "the Python API's fixed cost before (e3e2996) and after the compile-time rules, paired trees",
}
CITING = ("README.md", "docs/*.md", "asv_bench/README.md", "results/*/README.md", "results/benchmarks/*.md")


def current_hash() -> str:
    """fastcdl's sources hash as benchrecord.source() computes it."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted((ROOT / "fastcdl").rglob("*.py")):
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def _git(*args) -> str:
    import subprocess

    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout if out.returncode == 0 else ""


def recorded_commit(doc: dict) -> str | None:
    """The commit a timing file says it ran on (its layouts differ by age)."""
    src = doc.get("source")
    if isinstance(src, dict) and src.get("commit"):
        return src["commit"]
    if isinstance(src, str) and re.fullmatch(r"[0-9a-f]{7,40}(\+dirty)?", src):
        return src.removesuffix("+dirty")  # the timed modules' hashes say which bytes were timed
    for key in ("commit",):
        if isinstance(doc.get(key), str) and re.fullmatch(r"[0-9a-f]{7,40}", doc[key]):
            return doc[key]
    commit = _sources(doc).get("commit")  # the per-part records (bench_estimators, bench_sample_costs)
    return commit if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{7,40}", commit) else None


def _sources(doc: dict) -> dict:
    """The record of the code a timing file timed, wherever its layout keeps it: ``source`` (a
    dict, benchrecord's Recorder), the per-part records of ``record`` (bench_estimators), ``meta``
    (bench_sample_costs) or the top level (bench_buckets); ``timed_modules`` from every part that
    has them (merged), else the first part's commit and sources hash."""
    parts = [doc.get("source")] if isinstance(doc.get("source"), dict) else []
    record = doc.get("record")
    if isinstance(record, dict):
        parts += [r["source"] for r in record.values() if isinstance(r, dict) and isinstance(r.get("source"), dict)]
    if isinstance(doc.get("meta"), dict):
        parts.append(doc["meta"])
    if doc.get("timed_modules"):
        parts.append({"timed_modules": doc["timed_modules"]})
    modules = {}
    for part in parts:
        modules.update(part.get("timed_modules") or {})
    src = dict(parts[0]) if parts else {}
    src["timed_modules"] = modules
    return src


def _code_of(source: str) -> str | None:
    """The module's code without its comments and docstrings (ast.dump of the tree with every
    leading string constant of a module, class or function removed), or None if it does not parse."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _same_code(rel: str, digest: str | None, commit: str | None) -> bool:
    """Whether the module timed (its bytes at the recorded commit, when they hash to the recorded
    digest; any bytes there when digest is None) differs from the file now only in comments and
    docstrings: then the timing is of the same code. False when the timed bytes cannot be found."""
    if commit is None or not (ROOT / rel).exists():
        return False
    try:
        then = subprocess.run(
            ["git", "show", f"{commit}:{rel}"], cwd=ROOT, capture_output=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    if digest is not None and hashlib.sha256(then).hexdigest()[:16] != digest:
        return False
    before, now = _code_of(then.decode()), _code_of((ROOT / rel).read_text())
    return before is not None and before == now


def staleness(doc: dict, now: str) -> list[str] | None:
    """Why a timing file is stale (the changed modules, or a reason), or None when it is current."""
    src = _sources(doc)
    modules = src.get("timed_modules")
    if modules:
        changed = []
        for rel, digest in modules.items():
            path = ROOT / rel
            if not path.exists():
                changed.append(f"{rel} (removed)")
            elif module_hash(path) != digest and not _same_code(rel, digest, recorded_commit(doc)):
                changed.append(rel)
        return changed or None
    if src.get("fastcdl_sources_sha256") == now:
        return None
    commit = recorded_commit(doc)
    if commit is None:
        return ["it records no commit and no hash of the code it timed"]
    if not _git("cat-file", "-e", f"{commit}^{{commit}}") and _git("rev-parse", "--verify", "-q", commit) == "":
        return [f"its commit {commit[:10]} is not in this repository"]
    changed = sorted(
        set(_git("diff", "--name-only", commit, "--", "fastcdl").split())
        | {line[3:] for line in _git("status", "--porcelain", "--", "fastcdl").splitlines()}
    )
    changed = [c for c in changed if c.endswith(".py") and not _same_code(c, None, commit)]
    if src.get("dirty") or doc.get("dirty"):
        changed = changed or ["(recorded on uncommitted changes, with no per-module record)"]
    return changed or None


def stale_files() -> dict:
    """{stem: (commit, reasons)} of the timing files whose code changed since they were recorded."""
    now = current_hash()
    out = {}
    for path in sorted(BENCH.glob("*.json")):
        if path.stem in HISTORICAL:
            continue
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError:
            out[path.stem] = (None, ["not JSON"])
            continue
        if not isinstance(doc, dict):
            out[path.stem] = (None, ["not a timing record"])
            continue
        why = staleness(doc, now)
        if why:
            out[path.stem] = ((recorded_commit(doc) or "")[:10], why)
    return out


def citations(stems) -> list[tuple[str, int, str, str]]:
    """(file, line number, line, stem) of every line of the READMEs and docs citing one of stems."""
    if not stems:
        return []
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(map(re.escape, sorted(stems, key=len, reverse=True))) + r")\.(json|md)\b"
    )
    seen, out = set(), []
    for glob in CITING:
        for path in sorted(ROOT.glob(glob)):
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            for i, line in enumerate(path.read_text().splitlines(), 1):
                for m in pattern.finditer(line):
                    if path.parent == BENCH and path.stem == m.group(1):
                        continue  # a table's own page names its own JSON
                    out.append((path.relative_to(ROOT).as_posix(), i, line.strip(), m.group(1)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quiet", action="store_true", help="print the counts only")
    args = ap.parse_args(argv)
    stale = stale_files()
    cited = citations(stale)
    if not args.quiet:
        for stem, (commit, why) in stale.items():
            shown = ", ".join(why[:4]) + (f" and {len(why) - 4} more" if len(why) > 4 else "")
            print(f"results/benchmarks/{stem}.json (recorded at {commit or 'no commit'}): changed since: {shown}")
        for path, i, line, stem in cited:
            text = line if len(line) <= 140 else line[:137] + "..."
            print(f"  {path}:{i}: [{stem}] {text}")
    print(f"bench-check: {len(stale)} timing files older than their code, cited on {len(cited)} lines")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
