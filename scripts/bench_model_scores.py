"""results/benchmarks/model-scores.{json,md}: the measures of model scores (docs/model-scores.md)
from T continuous scores, each as a ratio to np.sort of the same predictions in the same run;
fc.smece next to relplot's smECE; fc.ldtc's program on small tables. The bodies are those of
asv's asv_bench/benchmarks/model_scores.py.

    .venv/bin/python scripts/bench_model_scores.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchrecord import Recorder, definitions, load, machine_line, write_md  # noqa: E402

NAME = "model-scores"


def run(repeat: int) -> None:
    import numpy as np

    M = definitions("model_scores")
    rec = Recorder(NAME, sys.argv)
    M._warm()
    for T in (10**4, 10**5, 10**6):
        y, p = M.scores(T)
        funcs = {"np.sort": lambda: np.sort(p)}
        funcs.update({name: (lambda f=f: f(y, p)) for name, f in M.MEASURES.items()})
        rec.interleaved(f"T={T}", funcs, repeat=repeat)
    try:
        import relplot
    except ImportError:
        relplot = None
    if relplot is not None:
        for T in (10**4, 10**5, 10**6):
            y, p = M.scores(T)
            yf = y.astype(np.float64)
            import fastcdl as fc

            rec.interleaved(
                f"smece/T={T}",
                {"fastcdl": lambda: fc.smece(y, p), "relplot": lambda: relplot.smECE(p, yf)},
                repeat=repeat,
            )
    for m in (12, 50, 200):
        s = M.LDTCSuite()
        s.setup(m)
        rec.time(f"ldtc/buckets={m}", lambda s=s, m=m: s.time_ldtc(m), repeat=max(3, repeat // 2))
    rec.save()


def render() -> None:
    doc = load(NAME)
    t = doc["timings"]
    lines = [
        "# Measures of model scores: speed",
        "",
        f"Command: `.venv/bin/python scripts/bench_model_scores.py`; every repeat is in `{NAME}.json`. "
        "The bodies are those of asv's `asv_bench/benchmarks/model_scores.py`.",
        "",
        machine_line(doc),
        "",
        "From T continuous scores (p ~ U[0, 1], y ~ Bernoulli(p)); median seconds of the interleaved "
        "repeats, and the ratio to np.sort of the same predictions in the same repeats.",
        "",
    ]
    sizes = sorted({int(k.split("/")[0][2:]) for k in t if k.startswith("T=")})
    names = [k.split("/", 1)[1] for k in t if k.startswith(f"T={sizes[0]}/")]
    lines += ["| measure | " + " | ".join(f"T = {T:.0e}: s (x np.sort)" for T in sizes) + " |"]
    lines += ["|---" * (len(sizes) + 1) + "|"]
    for name in names:
        cells = []
        for T in sizes:
            v = t[f"T={T}/{name}"]["median"]
            base = t[f"T={T}/np.sort"]["median"]
            cells.append(f"{v:.4g} ({v / base:.2g}x)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    smece = sorted(int(k.split("=")[1].split("/")[0]) for k in t if k.startswith("smece/") and k.endswith("fastcdl"))
    if smece:
        lines += ["", "fc.smece next to relplot's smECE (the same value to 1e-6), interleaved:", ""]
        lines += ["| T | fastcdl (s) | relplot (s) | relplot / fastcdl |", "|---|---|---|---|"]
        for T in smece:
            a, b = t[f"smece/T={T}/fastcdl"]["median"], t[f"smece/T={T}/relplot"]["median"]
            lines.append(f"| {T:.0e} | {a:.4g} | {b:.4g} | {b / a:.1f}x |")
    lines += ["", "fc.ldtc (the linear program, default grid) on tables of m buckets from 5,000 rounds:", ""]
    lines += ["| buckets | seconds |", "|---|---|"]
    for k in sorted((k for k in t if k.startswith("ldtc/")), key=lambda k: int(k.split("=")[1])):
        lines.append(f"| {k.split('=')[1]} | {t[k]['median']:.3g} |")
    write_md(NAME, lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--render", action="store_true", help="only rewrite the Markdown from the JSON")
    a = ap.parse_args()
    if not a.render:
        run(a.repeat)
    render()
