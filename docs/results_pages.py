"""The benchmark's results on the site: one page per folder of results/, made from its files.

Each folder of results/ with a README.md (or, without one, a single Markdown file: its report)
gets docs/results/<folder>.md at every build: the README itself (so the page and the README cannot disagree), then the folder's other Markdown
reports (results/benchmarks keeps one table per file), its links to the folder's files
turned into repository paths (the site holds docs/ only), its images pointing at copies of
the folder's PNG files, and then every PNG of the folder that the README does not show, under
"All figures of this folder". docs/results/ is written by the build and not committed.

``python docs/results_pages.py`` writes the pages without building the site.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
RESULTS = ROOT / "results"
OUT = DOCS / "results"
# results/quick is what `make run` writes on the user's machine (not committed): no page
SKIP = {"quick"}

_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def source(folder: Path) -> Path | None:
    """The Markdown a folder's page is made from: its README.md, or its only .md file."""
    if (folder / "README.md").exists():
        return folder / "README.md"
    md = sorted(folder.glob("*.md"))
    return md[0] if len(md) == 1 else None


def folders() -> list[Path]:
    """The folders of results/ that get a page, sorted by name."""
    return sorted(d for d in RESULTS.iterdir() if d.is_dir() and d.name not in SKIP and source(d) is not None)


def _title(text: str, name: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return name


def _rewrite(text: str, folder: Path) -> tuple[str, set]:
    """The README's text for the site, and the PNG files it shows."""
    shown = set()

    def link(m):
        bang, label, target, anchor = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
            return m.group(0)
        path = (folder / target).resolve()
        if bang and path.suffix == ".png" and path.is_relative_to(folder.resolve()) and path.exists():
            # the folder's own figures, or one of a sub-folder's (copied beside the page too)
            rel = path.relative_to(folder.resolve()).as_posix()
            shown.add(rel)
            if "/" in rel:
                (OUT / folder.name / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, OUT / folder.name / rel)
            return f"![{label}]({folder.name}/{rel})"
        if path.is_relative_to(DOCS) and path.suffix == ".md":
            return f"[{label}](../{path.relative_to(DOCS).as_posix()}{anchor})"
        if path.name == "README.md" and path.parent.parent == RESULTS.resolve():
            return f"[{label}]({path.parent.name}.md{anchor})"
        if path.is_relative_to(ROOT):
            where = path.relative_to(ROOT).as_posix()
            shown_label = label.strip("`")
            return f"`{where}`" if shown_label in (where, path.name, target) else f"{label} (`{where}`)"
        return m.group(0)

    return _LINK.sub(link, text), shown


def page(folder: Path) -> str:
    """The Markdown of one folder's page (and its figures copied beside it)."""
    text = source(folder).read_text()
    body, shown = _rewrite(text, folder)
    pngs = sorted(p.name for p in folder.glob("*.png"))
    if pngs:
        (OUT / folder.name).mkdir(parents=True, exist_ok=True)
        for name in pngs:
            shutil.copyfile(folder / name, OUT / folder.name / name)
    rest = [name for name in pngs if name not in shown]
    lines = [body.rstrip("\n"), ""]
    # the folder's other reports (results/benchmarks keeps one table per file), each under its name
    others = sorted(f for f in folder.glob("*.md") if f != source(folder))
    if others:
        lines += ["## The folder's other reports", ""]
        for f in others:
            text, more = _rewrite(f.read_text(), folder)
            shown |= more
            lines += [f"### `{f.name}`", ""]
            # their headings one level down, under this page's
            lines += [("##" + ln) if ln.startswith("#") else ln for ln in text.rstrip("\n").splitlines()]
            lines.append("")
        rest = [name for name in pngs if name not in shown]
    if rest:
        lines += ["## All figures of this folder", ""]
        lines += [f"Files of `results/{folder.name}/` that the text above does not show.", ""]
        for name in rest:
            lines += [f"### {name}", "", f"![{name}]({folder.name}/{name})", ""]
    lines += [
        "",
        "---",
        "",
        f"This page is `results/{folder.name}/{source(folder).name}` with the folder's figures, made when the site "
        "is built.",
        "",
    ]
    return "\n".join(lines)


def write_pages() -> list[str]:
    """Write docs/results/ afresh: a page per folder and the index. Returns the page names."""
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    names = []
    rows = []
    for folder in folders():
        (OUT / f"{folder.name}.md").write_text(page(folder))
        names.append(folder.name)
        n_png = len(list(folder.glob("*.png")))
        title = _title(source(folder).read_text(), folder.name)
        rows.append(f"| [{folder.name}]({folder.name}.md) | {title} | {n_png} |")
    index = [
        "# The benchmark's results",
        "",
        "Every folder of `results/` with its README and its figures: the experiments of the paper,",
        "the worst-case search, the leaderboard, the estimators' coverage study, the ECE lower bound,",
        "the forecasters' rate folders and the speed records. Each page is made from the folder's",
        "files when the site is built.",
        "",
        "| folder | what it holds | figures |",
        "|---|---|---|",
        *rows,
        "",
        "```{toctree}",
        ":hidden:",
        "",
        *names,
        "```",
        "",
    ]
    (OUT / "index.md").write_text("\n".join(index))
    return names


def setup(app):
    app.connect("builder-inited", lambda app: write_pages())
    return {"parallel_read_safe": True}


if __name__ == "__main__":
    print("\n".join(write_pages()))
