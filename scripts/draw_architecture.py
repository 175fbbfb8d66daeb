"""Draw docs/_static/architecture.png from docs/architecture.toml: the layers of fastcdl from the
compiled kernels up to the front ends, each with what it holds and its modules; imports go down.

    .venv/bin/python scripts/draw_architecture.py

tests/test_layering.py holds the code to the same file (every module in a layer; imports only
to the same layer or below), so the picture and the code cannot drift apart without a test
failing; re-run this script after editing the file.
"""

from __future__ import annotations

import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "docs" / "architecture.toml"
OUT = ROOT / "docs" / "_static" / "architecture.png"


def _short(module: str) -> str:
    return "fastcdl (package)" if module == "fastcdl" else module.removeprefix("fastcdl.")


def draw(source=SOURCE, out=OUT) -> Path:
    """Write the figure; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    layers = tomllib.loads(Path(source).read_text())["layer"]
    n = len(layers)
    height = 1.0
    gap = 0.35
    fig = Figure(figsize=(11, 0.95 * n + 1.2))
    ax = fig.add_axes([0.01, 0.01, 0.98, 0.98])
    ax.set_xlim(0, 11)
    ax.set_ylim(-0.3, n * (height + gap) + 0.6)
    ax.axis("off")
    colours = matplotlib.colormaps["Blues"]
    for i, layer in enumerate(layers):  # bottom up
        y = i * (height + gap)
        box = FancyBboxPatch(
            (0.2, y),
            10.2,
            height,
            boxstyle="round,pad=0.02,rounding_size=0.08",
            facecolor=colours(0.15 + 0.55 * i / max(n - 1, 1)),
            edgecolor="0.35",
            linewidth=0.8,
        )
        ax.add_patch(box)
        ax.text(0.35, y + height - 0.18, layer["name"], fontsize=11, fontweight="bold", va="top")
        ax.text(0.35, y + height - 0.48, layer["holds"], fontsize=8.5, va="top", color="0.15")
        mods = ", ".join(_short(m) for m in layer["modules"])
        ax.text(0.35, y + 0.08, textwrap.shorten(mods, 150), fontsize=7.5, va="bottom", color="0.3", family="monospace")
        if i > 0:
            ax.add_patch(
                FancyArrowPatch(
                    (10.65, y - 0.02), (10.65, y - gap + 0.02), arrowstyle="-|>", mutation_scale=12, color="0.3"
                )
            )
    ax.text(
        10.85,
        (n - 1) * (height + gap) / 2 + height / 2,
        "imports go down",
        rotation=90,
        va="center",
        ha="center",
        fontsize=9,
        color="0.3",
    )
    ax.text(
        0.2,
        n * (height + gap) + 0.15,
        "fastcdl: the layers (docs/architecture.toml; tests/test_layering.py holds the code to it)",
        fontsize=10,
        color="0.2",
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


if __name__ == "__main__":
    print(draw())
