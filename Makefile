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
	$(BIN)/python -m pip install --quiet -e '.[test,dask,numba]'
	touch $@

install: $(VENV)/.installed-test

demo: install
	$(BIN)/python examples/quickstart.py

# The tests run on every core (pytest-xdist); TEST_JOBS=1 runs them in one process.
TEST_JOBS ?= auto
test: install
	$(BIN)/python -m pytest tests -n $(TEST_JOBS)

# Random programs against finite differences and autograd; every wrong or crashed program
# goes to fuzz-*.txt. Most of a day on 2 cores (1,000 programs in five modes: about 25 minutes);
# FUZZ_PROGRAMS=1000 for a shorter run. FUZZ_RECORD=FILE keeps the five-mode sweep's results
# in FILE and runs only the programs it does not hold, so the sweep can be run in parts
# (tests/fuzz/record.py; `python -m tests.fuzz --tally FILE` prints its table).
FUZZ_PROGRAMS ?= 10000
FUZZ_RECORD ?=
# the mirror and closure checks (which the test suite runs in a third of its tests) on the
# programs whose seed is a multiple of this: 1 for all, at about half the speed
FUZZ_STRUCTURAL ?= 10
# seconds a program may take in all five modes before it counts as crashed: the largest
# programs, with the checks above, take minutes at second order on a loaded machine
FUZZ_TIMEOUT ?= 600
ORACLE_PROGRAMS ?= 3000
COMPILED_PROGRAMS ?= 500
CHECKPOINTED_PROGRAMS ?= 2000
FUZZ_JOBS ?= 2
fuzz: install
	SSAD_FUZZ_EXAMPLES=3000 SSAD_FUZZ_WIDENED=1 SSAD_FUZZ_SECOND_ORDER=1 SSAD_FUZZ_SHRINK=0 $(BIN)/python -m pytest tests/fuzz -q; \
	s1=$$?; \
	$(BIN)/python -m tests.fuzz 0 $(FUZZ_PROGRAMS) --modes first,forward,fwd_over_rev,rev_over_rev,grad_inside \
		-j $(FUZZ_JOBS) --failures fuzz-failures.txt --check \
		--structural-checks $(FUZZ_STRUCTURAL) --timeout $(FUZZ_TIMEOUT) $(if $(FUZZ_RECORD),--record $(FUZZ_RECORD)); \
	s2=$$?; \
	$(BIN)/python -m tests.fuzz 100000 $$((100000 + $(ORACLE_PROGRAMS))) --modes autograd \
		-j $(FUZZ_JOBS) --failures fuzz-autograd-failures.txt --check; \
	s3=$$?; \
	SSAD_ORACLE_PROGRAMS=500 SSAD_ORACLE_SECOND=1 SSAD_ORACLE_ALL_RULE_SAMPLES=1 \
		$(BIN)/python -m pytest tests/test_autograd_oracle.py -q; \
	s4=$$?; \
	$(BIN)/python -m tests.fuzz 0 $(COMPILED_PROGRAMS) --modes compiled \
		-j $(FUZZ_JOBS) --failures fuzz-compiled-failures.txt --check; \
	s5=$$?; \
	$(BIN)/python -m tests.fuzz 0 $(CHECKPOINTED_PROGRAMS) --modes checkpointed \
		-j $(FUZZ_JOBS) --failures fuzz-checkpointed-failures.txt --check; \
	s6=$$?; \
	SSAD_COMPILED_CORPUS=all $(BIN)/python -m pytest tests/test_compile.py -q -k corpus -n $(FUZZ_JOBS); \
	s7=$$?; \
	SSAD_THIRD_ORDER=all $(BIN)/python -m pytest tests/test_third_order.py -q -n $(FUZZ_JOBS); \
	s8=$$?; \
	SSAD_STRUCTURAL_CHECKS=all $(BIN)/python -m pytest tests -q -n $(FUZZ_JOBS); \
	s9=$$?; \
	test $$s1 -eq 0 -a $$s2 -eq 0 -a $$s3 -eq 0 -a $$s4 -eq 0 -a $$s5 -eq 0 -a $$s6 -eq 0 -a $$s7 -eq 0 -a $$s8 -eq 0 \
		-a $$s9 -eq 0

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dask,numba,bench]'
	touch $@

# Every installed peer: autograd, PyTorch, JAX (a large download the first time).
bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/checkpointing.py --json benchmarks/checkpointing.json
	$(BIN)/python benchmarks/long_loops.py --json benchmarks/long_loops.json

# ssad against the hand-written gradients only (and autograd, from the test extra).
bench-core: install
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/checkpointing.py --json benchmarks/checkpointing.json
	$(BIN)/python benchmarks/long_loops.py --json benchmarks/long_loops.json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
