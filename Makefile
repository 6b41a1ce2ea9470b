# Every target installs into .venv first, so a fresh clone needs nothing but python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch goes in first: an unpinned torch would pull a multi-GB CUDA build.
TORCH_CPU ?= torch==2.13.0
STAMP := $(VENV)/.installed
# pip compiles every module it installs (torch alone has 2,285, a minute of one core), though a
# run imports a third of them: install without compiling, and let Python cache the bytecode of
# what is imported, on first import. A shell that turns that cache off would make every process
# compile torch again, so the recipes write it whatever the caller's environment says.
unexport PYTHONDONTWRITEBYTECODE
PIP := $(BIN)/python -m pip install --quiet --no-compile

.PHONY: install run test lint docs golden bench benchmarks-docs clean

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) "$(TORCH_CPU)"
	$(PIP) -e ".[dev,video,atari,mujoco,dmc,fetch,box2d,doom,envpool,ray,multiagent,study,export,bench,nec,docs]"
	touch $(STAMP)

run: install
	$(BIN)/coach -p CartPole_DQN

# One test process more than the cores: many tests wait on a subprocess, a Ray cluster or a
# signal, and the extra process fills that time (on 2 cores, 560 to 610 s instead of 630 to 640 s).
TEST_PROCESSES ?= $(shell echo $$(( $$(nproc) + 1 )))

# The report's browser test needs Debian's chromium, which pip cannot install.
test: install
	bash scripts/install-system-packages
	$(BIN)/python -m pytest -q -n $(TEST_PROCESSES) --dist loadgroup --durations=15

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy coach

# The site, warnings as errors; the agent, preset, API and benchmark pages are generated
# from the code as it builds (docs/_ext). Open docs/_build/html/index.html.
DOCS_OUT ?= docs/_build/html
docs: install
	$(BIN)/sphinx-build -W --keep-going -q -b html docs $(DOCS_OUT)

golden: install
	$(BIN)/python -m tests.learning.golden

bench: install
	$(BIN)/python -m benchmarks.tables

# The benchmark pages' figures and tables, from golden-style runs of every preset on seeds
# 0, 1 and 2 (hours; runs kept in experiments/benchmarks, so it resumes), then make bench.
benchmarks-docs: install
	$(BIN)/python -m benchmarks.learning_curves
	$(BIN)/python -m benchmarks.tables --save docs/benchmarks/throughput

clean:
	rm -rf $(VENV) experiments .pytest_cache .mypy_cache .ruff_cache docs/_build
