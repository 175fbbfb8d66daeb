"""The version of fastcdl, written here only (pyproject.toml and fastcdl.__version__ read it)."""

__version__ = "0.1.0"
