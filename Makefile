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

.PHONY: install run test lint golden bench clean

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) "$(TORCH_CPU)"
	$(PIP) -e ".[dev,video,atari,mujoco,dmc,fetch,box2d,doom,envpool,ray,multiagent,study,export,bench,nec]"
	touch $(STAMP)

run: install
	$(BIN)/coach -p CartPole_DQN

# The report's browser test needs Debian's chromium, which pip cannot install.
test: install
	bash scripts/install-system-packages
	$(BIN)/python -m pytest -q -n auto --dist loadgroup --durations=15

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy coach

golden: install
	$(BIN)/python -m tests.learning.golden

bench: install
	$(BIN)/python -m benchmarks.throughput
	$(BIN)/python -m benchmarks.floor
	$(BIN)/python -m benchmarks.peers
	$(BIN)/python -m benchmarks.prioritized_replay
	$(BIN)/python -m benchmarks.value_agents
	$(BIN)/python -m benchmarks.on_policy
	$(BIN)/python -m benchmarks.continuous
	$(BIN)/python -m benchmarks.atari
	$(BIN)/python -m benchmarks.parallel
	$(BIN)/python -m benchmarks.async_env
	$(BIN)/python -m benchmarks.envpool
	$(BIN)/python -m benchmarks.batch_rl
	$(BIN)/python -m benchmarks.recurrent
	$(BIN)/python -m benchmarks.multi_agent
	$(BIN)/python -m benchmarks.doom
	$(BIN)/python -m benchmarks.dnd

clean:
	rm -rf $(VENV) experiments .pytest_cache .mypy_cache .ruff_cache
