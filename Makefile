# `make test` and `make run` set up .venv on first use; nothing else needs installing by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench asv clean peers

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m fastcdl rates --preset quick --out results/quick
	$(PY) -m fastcdl plot results/quick

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m pytest tests/bench --benchmark-enable -q

peers: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,peers]"
	$(PY) scripts/compare_peers.py

clean:
	rm -rf $(VENV) build *.egg-info .asv
