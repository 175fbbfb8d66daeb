"""The package's metadata: the license as PEP 639 states it, and the build backend that reads it."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_license_is_an_spdx_expression_with_its_file():
    # a TOML table (license = { text = ... }) makes setuptools >= 77 warn that it is deprecated
    project = _pyproject()["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License\n")
    assert re.search(r"^Copyright \(c\) \d{4}, the fastcdl authors$", text, re.MULTILINE)
    assert "Neither the name of the copyright holder nor the names of its" in text


def test_build_backend_reads_license_expressions():
    # setuptools reads project.license as a string, and license-files, from 77.0 (77.0.3 fixes its checks)
    (req,) = [r for r in _pyproject()["build-system"]["requires"] if r.startswith("setuptools")]
    m = re.fullmatch(r"setuptools>=(\d+)\.(\d+)\.(\d+)", req)
    assert m and tuple(int(g) for g in m.groups()) >= (77, 0, 3), req
