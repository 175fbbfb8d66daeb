"""What a run of the test suite compiled, from the log of FASTCDL_COMPILE_LOG (tests/conftest.py).

    FASTCDL_COMPILE_LOG=/tmp/compiles.jsonl .venv/bin/python -m pytest -m "not slow" -n 2 --dist loadfile
    .venv/bin/python scripts/suite_compiles.py /tmp/compiles.jsonl [--top 25]

Prints the compile seconds in all (top-level compilations: callees are inside their callers),
per test file, and the kernels compiled more than once for the same argument types (by two
workers at once, or by a test that turns the cache off): what a shared, pre-filled cache saves.
"""

from __future__ import annotations

import argparse
import collections
import json


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in open(args.log)]
    top = [r for r in rows if r["depth"] == 0]
    print(f"{len(rows)} compilations, {sum(r['total'] for r in top):.1f} s compiling (top level)")
    files = collections.Counter()
    for r in top:
        files[r["test"].split("::")[0]] += r["total"]
    print(f"\nper test file (top {args.top}):")
    for f, sec in files.most_common(args.top):
        print(f"  {sec:8.1f} s  {f}")
    kernels = collections.Counter()
    for r in rows:
        kernels[r["kernel"]] += r["self"]
    print(f"\nper kernel, self time (top {args.top}):")
    for k, sec in kernels.most_common(args.top):
        print(f"  {sec:8.1f} s  {k}")
    seen = collections.defaultdict(list)
    for r in rows:
        if not r["kernel"].startswith("numba."):
            seen[(r["kernel"], r["args"])].append(r)
    again = {k: v for k, v in seen.items() if len(v) > 1}
    wasted = sum(sum(r["self"] for r in v[1:]) for v in again.values())
    print(f"\ncompiled again for the same types: {len(again)} signatures, {wasted:.1f} s of self time")
    for (k, _), v in sorted(again.items(), key=lambda kv: -sum(r["self"] for r in kv[1][1:]))[: args.top]:
        print(
            f"  {len(v)}x {sum(r['self'] for r in v[1:]):6.1f} s  {k}  ({', '.join(sorted({r['worker'] for r in v}))})"
        )


if __name__ == "__main__":
    main()
