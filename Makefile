# hf_vitrobust: `make demo` and `make test` work on a fresh machine; each target creates .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --disable-pip-version-check -q -c constraints.txt
PYTEST_ARGS ?=

.PHONY: demo test lint bench bench-corruptions clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q --upgrade pip

# Runtime install: the package and its dependencies (torch/torchvision pinned by constraints.txt).
$(VENV)/.runtime-installed: pyproject.toml constraints.txt | $(PY)
	$(PIP) -e .
	touch $@

# Dev install: test and lint tools, the Space extra, and the reference packages tests compare against.
# Reference packages with broken metadata go in with --no-deps: torchattacks pins requests~=2.25 (which breaks
# huggingface_hub's httpx stack); imagecorruptions requires the GUI build of OpenCV (the dev extra has the headless one).
$(VENV)/.dev-installed: pyproject.toml constraints.txt | $(PY)
	$(PIP) -e '.[dev,space]'
	$(PIP) --no-deps torchattacks==3.5.1 imagecorruptions==1.1.2
	touch $@ $(VENV)/.runtime-installed

# The offline default: the builtin EfficientNet-Lite0 on the bundled photos (the `demo` suite), report included.
DEMO_OUTPUT ?= demo-results
demo: $(VENV)/.runtime-installed
	rm -rf $(DEMO_OUTPUT)
	$(VENV)/bin/vitrobust evaluate --suite demo --output $(DEMO_OUTPUT)

# One pytest worker per core, each file on one worker (its module fixtures built once), one torch thread per worker:
# with more threads than cores, small tensor ops ran about 20x slower (threads spin-waiting; measured on 2 cores).
test: $(VENV)/.dev-installed
	OMP_NUM_THREADS=1 $(PY) -m pytest -n auto --dist loadfile $(PYTEST_ARGS)

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check hf_vitrobust tests benchmarks metrics spaces_app
	$(VENV)/bin/ruff format --check hf_vitrobust tests benchmarks metrics spaces_app

bench: $(VENV)/.dev-installed
	$(PY) benchmarks/alternet_forward.py $(BENCH_ARGS)

# ImageNet-C against the maintained peers, each installed in its own venv under .peer-venvs/ (git-ignored).
bench-corruptions: $(VENV)/.dev-installed
	bash benchmarks/peers/install.sh $(PYTHON)
	$(PY) benchmarks/corruptions.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
