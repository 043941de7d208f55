# ssad: `make demo` shows a generated gradient and runs it; `make test` runs the tests;
# `make bench` times ssad against hand-written gradients (and the peers in the bench extra).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test fuzz bench bench-core install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dask]'
	touch $@

install: $(VENV)/.installed-test

demo: install
	$(BIN)/python examples/quickstart.py

test: install
	$(BIN)/python -m pytest tests

# Thousands of random programs, each gradient and jvp against finite differences (about 17 min).
fuzz: install
	SSAD_FUZZ_EXAMPLES=3000 $(BIN)/python -m pytest tests/fuzz -q

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dask,bench]'
	touch $@

# Every installed peer: autograd, PyTorch, JAX (a large download the first time).
bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run.py

# ssad against the hand-written gradients only (and autograd, from the test extra).
bench-core: install
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
