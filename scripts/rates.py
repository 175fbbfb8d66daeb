"""Thin wrapper: `python scripts/rates.py ARGS` is `fastcdl rates ARGS`.

.venv/bin/python scripts/rates.py --preset paper --t-max 2^24 --out results/paper
"""

import sys

from fastcdl.cli import main

if __name__ == "__main__":
    sys.exit(main(["rates", *sys.argv[1:]]))
