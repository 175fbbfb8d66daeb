"""docs/results_pages.py: every folder of results/ with a report gets a page on the site, made
from the folder's README and holding every figure of the folder."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("results_pages", ROOT / "docs" / "results_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_results_folder_with_a_report_has_a_page(tmp_path, monkeypatch):
    rp = _module()
    monkeypatch.setattr(rp, "OUT", tmp_path / "results")
    names = rp.write_pages()
    expected = {d.name for d in (ROOT / "results").iterdir() if d.is_dir() and rp.source(d) is not None} - rp.SKIP
    assert set(names) == expected
    for want in (
        "paper",
        "worstcase",
        "leaderboard",
        "estimators-coverage",
        "ece-lower-bound",
        "spr-rates",
        "klcal-rates",
    ):
        assert want in names
    index = (tmp_path / "results" / "index.md").read_text()
    for name in names:
        folder = ROOT / "results" / name
        page = (tmp_path / "results" / f"{name}.md").read_text()
        # the README's prose is on the page: every line without a link or an image, as written
        for line in rp.source(folder).read_text().splitlines():
            if line.strip() and "](" not in line:
                assert line in page, f"{name}: {line!r} is not on its page"
        for png in folder.glob("*.png"):
            assert f"]({name}/{png.name})" in page, f"{name}: {png.name} is not on its page"
            assert (tmp_path / "results" / name / png.name).read_bytes() == png.read_bytes()
        assert f"({name}.md)" in index
        for other in folder.glob("*.md"):  # every report of the folder, under its name
            if other != rp.source(folder):
                assert f"### `{other.name}`" in page, (name, other.name)


def test_links_become_repository_paths(tmp_path):
    rp = _module()
    folder = ROOT / "results" / "paper"
    text, shown = rp._rewrite(
        "see [the rates](rates.csv) and ![CDL](rates_greedy.png) and [docs](../../docs/metrics.md#relations)", folder
    )
    assert "`results/paper/rates.csv`" in text
    assert "![CDL](paper/rates_greedy.png)" in text and shown == {"rates_greedy.png"}
    assert "[docs](../metrics.md#relations)" in text
    assert not re.search(r"\]\(rates\.csv\)", text)


def test_a_sub_folders_figure_is_copied_beside_the_page(tmp_path, monkeypatch):
    rp = _module()
    monkeypatch.setattr(rp, "OUT", tmp_path / "results")
    folder = ROOT / "results" / "ece-lower-bound"
    text, shown = rp._rewrite("![contrast](spbisect/contrast.png) and ![missing](spbisect/none.png)", folder)
    assert "![contrast](ece-lower-bound/spbisect/contrast.png)" in text and shown == {"spbisect/contrast.png"}
    copied = tmp_path / "results" / "ece-lower-bound" / "spbisect" / "contrast.png"
    assert copied.read_bytes() == (folder / "spbisect" / "contrast.png").read_bytes()
    # a figure that does not exist is not copied: the page names its repository path
    assert "missing (`results/ece-lower-bound/spbisect/none.png`)" in text
