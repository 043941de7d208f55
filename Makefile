# ssad: `make demo` shows a generated gradient and runs it; `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed-test

demo: install
	$(BIN)/python examples/quickstart.py

test: install
	$(BIN)/python -m pytest tests

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
