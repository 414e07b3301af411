# Two entry points (README): `make run` plays a short tournament of the built-in agents; `make test` installs
# everything into .venv and runs the test suite. Needs only Python 3.11 (or 3.10+), git and make.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-slow bench compile install clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml $(BIN)/activate
	$(BIN)/python -m pip install --quiet -e '.[dev,eval,train,play,ray]'
	touch $@

# The engine is compiled with mypyc when this machine can (a C compiler is present); otherwise it stays pure
# Python, which is the same source (sixtysix_env/compile.py). Rebuilt when game.py changes.
ENGINE_STAMP := sixtysix_env/game.build-stamp
$(ENGINE_STAMP): sixtysix_env/game.py $(VENV)/.installed
	-$(BIN)/python -m pip install --quiet -e '.[compile]' && $(BIN)/python -m sixtysix_env.compile --optional

# numba compiles the core's kernels (sixtysix_env/core) on first use and caches them; do it now, once per change of
# the core, so no later command pays the half minute.
CORE_STAMP := sixtysix_env/core/__pycache__/warm.stamp
$(CORE_STAMP): $(wildcard sixtysix_env/core/*.py) sixtysix_env/vector.py $(VENV)/.installed
	$(BIN)/python -m sixtysix_env.core
	touch $@

install: $(VENV)/.installed $(ENGINE_STAMP) $(CORE_STAMP)

run: install
	$(BIN)/sixtysix tournament --agents random,greedy,heuristic --deals 100 --workers 2 --out results/quick

test: install
	$(BIN)/python -m pytest -q

test-slow: install
	$(BIN)/python -m pytest -q -m slow

bench: install
	$(BIN)/sixtysix bench

# Build the compiled engine now, failing loudly if it cannot (`install` tries it quietly); `python -m
# sixtysix_env.compile --remove` goes back to pure Python.
compile: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[compile]'
	$(BIN)/python -m sixtysix_env.compile

clean:
	rm -rf $(VENV) build *.egg-info sixtysix_env/game*.so sixtysix_env/game.build-stamp sixtysix_env/core/__pycache__
