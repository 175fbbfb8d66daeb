"""Save the scores of docs/estimators.md's worked example to tests/data/worked_example_scores.npz.

The models are scikit-learn's, fitted as the docs fit them; their scores can differ in the last
bits by machine, so the test of fastcdl's part of the example reads the saved scores, and the
test of the whole example compares within the precision of the fits.

    .venv/bin/python scripts/worked_example_scores.py
"""

import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "estimators.md"
OUT = ROOT / "tests" / "data" / "worked_example_scores.npz"


def main():
    section = DOC.read_text().split("## Worked example", 1)[1]
    fastcdl_part, models_part = re.findall(r"```python\n(.*?)```", section, flags=re.S)[:2]
    scores = {}
    namespace = {"print": lambda *a, **k: None}
    exec(compile(fastcdl_part, str(DOC), "exec"), namespace)
    namespace["row"] = lambda name, y, p: scores.setdefault(name, (np.asarray(y), np.asarray(p, dtype=np.float64)))
    exec(compile(models_part, str(DOC), "exec"), namespace)
    ys = {tuple(y) for y, _ in scores.values()}
    assert len(ys) == 1, "every model is evaluated on the same outcomes"
    y = next(iter(scores.values()))[0].astype(np.int8)
    np.savez(OUT, y=y, names=np.array(list(scores)), **{f"p{i}": p for i, (_, p) in enumerate(scores.values())})
    import sklearn

    print(f"wrote {OUT.relative_to(ROOT)}: {len(scores)} models, {len(y)} cases (scikit-learn {sklearn.__version__})")


if __name__ == "__main__":
    main()
