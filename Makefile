# `make test` and `make run` set up .venv on first use; nothing else needs installing by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-slow test-all docs lint bench bench-quick bench-check asv asv-publish clean peers

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# `rates` compiles only the loops its preset uses (its dry run, before the workers start) and
# `plot` only the metrics it draws: `fastcdl warmup` would compile every kernel first, most of them unused here.
run: $(STAMP)
	$(PY) -m fastcdl rates --preset quick --out results/quick
	$(PY) -m fastcdl plot results/quick

# `make test` (before a commit): the suite without the tests marked slow, then the docstring examples
# of fastcdl/. `make test-all` (before a merge; CI): that, then `make test-slow`: the compile step
# (`fastcdl warmup`), the tests marked slow (statistical tests over many replications, long runs of
# the online engine, the replay of stored trials) outside the kernel test files, then the kernel
# test files again, slow tests included (their only run of those), with numba's bounds checks on
# (compiled afresh into a cache folder of their own, on two workers). Each runs every
# phase even if an earlier one failed; the summary names each phase's result (scripts/test_phases.sh).
BOUNDSCHECKED := tests/test_metrics_reference.py tests/test_properties.py tests/test_stats.py \
	tests/test_binning_chunks.py tests/test_validation.py tests/test_online_step1.py \
	tests/test_online_oracle.py tests/test_online_api.py tests/test_versions.py \
	tests/test_sample.py tests/test_uncertainty.py tests/test_ablations.py tests/test_acrs.py \
	tests/test_baselines.py tests/test_plugins.py tests/test_signpreserve.py tests/test_quantile_bins.py \
	tests/test_sort_keys.py tests/test_smce.py tests/test_cdlahead.py

test: $(STAMP)
	bash scripts/test_phases.sh $(PY) fast

test-slow: $(STAMP)
	bash scripts/test_phases.sh $(PY) slow $(BOUNDSCHECKED)

# both, each once; `make -k test-all` runs test-slow even when `make test` failed
test-all: test test-slow

# The API reference (from the numpydoc docstrings) and the pages of docs/, as HTML in docs/_build/html;
# any warning (a broken reference, a malformed docstring) fails the build.
docs: $(STAMP)
	$(PY) -m sphinx -W --keep-going -n -q -b html docs docs/_build/html
	@echo "make docs: docs/_build/html/index.html"

# ruff's checks as configured in pyproject.toml (CI runs them)
lint: $(STAMP)
	$(VENV)/bin/ruff check fastcdl tests scripts asv_bench docs gallery
	$(VENV)/bin/ruff format --check fastcdl tests scripts asv_bench docs gallery

# every table of results/benchmarks/ (asv_bench/README.md: the one harness); each file records its run's duration
bench: $(STAMP)
	$(PY) scripts/bench_all.py

# every asv benchmark's timed body once under pytest-benchmark (asv_bench/bench_quick.py; docs/benchmarks.md),
# saved in .benchmarks/ and compared with the previous saved run: fails when a median is 50% slower
BENCH_QUICK_COMPARE := $(shell ls .benchmarks/*/*.json >/dev/null 2>&1 && echo --benchmark-compare --benchmark-compare-fail=median:50%)
bench-quick: $(STAMP)
	$(PY) -m pytest asv_bench/bench_quick.py -p no:xdist -o filterwarnings= -q --benchmark-autosave \
		--benchmark-columns=median,min,max --benchmark-sort=name $(BENCH_QUICK_COMPARE)

# the README and docs numbers whose timing file is older than the code it timed (nothing is timed;
# exit status 1 when it lists any: scripts/bench_check.py)
bench-check: $(STAMP)
	$(PY) scripts/bench_check.py

# asv's HTML of every committed result (asv_bench/results), in .asv/html (not committed);
# docs/asv-history.md shows the main curves
asv-publish: $(STAMP)
	cd asv_bench && ../$(VENV)/bin/asv publish
	@echo "make asv-publish: .asv/html/index.html (../.venv/bin/asv preview from asv_bench/ serves it)"

# the tracked suite, checked against the working tree (imports, setup, names; nothing timed)
asv: $(STAMP)
	cd asv_bench && ../$(VENV)/bin/asv check --python=same

peers: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,peers]"
	$(PY) scripts/compare_peers.py

# also numba's cache: beside the sources, and under NUMBA_CACHE_DIR when that is set
clean:
	rm -rf $(VENV) build *.egg-info .asv docs/_build
	find fastcdl \( -name '*.nbi' -o -name '*.nbc' -o -name 'fastcdl-kernels.hash*' -o -name '*.compile.lock' \) -delete
	find fastcdl -name __pycache__ -type d -empty -delete
	if [ -n "$$NUMBA_CACHE_DIR" ]; then find "$$NUMBA_CACHE_DIR" -path '*fastcdl*' \( -name '*.nbi' -o -name '*.nbc' -o -name 'fastcdl-kernels.hash*' -o -name '*.compile.lock' \) -delete; fi
