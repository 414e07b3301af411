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
	$(BIN)/python -m pip install --quiet -e '.[dev,eval,train]'
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/sixtysix tournament --agents random,greedy,heuristic --deals 100 --workers 2 --out results/quick

test: install
	$(BIN)/python -m pytest -q

test-slow: install
	$(BIN)/python -m pytest -q -m slow

bench: install
	$(BIN)/sixtysix bench

# Optional: the engine compiled with mypyc (needs a C compiler), about twice as fast; `python -m
# sixtysix_env.compile --remove` goes back to pure Python. Rebuild after editing sixtysix_env/game.py.
compile: install
	$(BIN)/python -m pip install --quiet -e '.[compile]'
	$(BIN)/python -m sixtysix_env.compile

clean:
	rm -rf $(VENV) build *.egg-info sixtysix_env/game*.so sixtysix_env/game.build-stamp
