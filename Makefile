# The README's two commands live here: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Fluss version for the live tests and the demo (default: the pinned DEFAULT_VERSION in
# konsole/localcluster/versions.py).
FLUSS_VERSION ?= $(shell $(PYTHON) -c "import re;print(re.search(r'DEFAULT_VERSION = \"([^\"]+)\"', open('konsole/localcluster/versions.py').read()).group(1))")

.PHONY: all venv jars demo test unit lint fmt proto proto-check fuzz bench clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

jars: venv
	$(BIN)/konsole cluster fetch --version $(FLUSS_VERSION)

# A local cluster with demo data, then the console against it; the cluster stops on exit.
demo: jars
	$(BIN)/konsole demo --version $(FLUSS_VERSION)

# The whole suite: unit, fuzz (CI profile) and live tests against a real local cluster.
test: jars lint
	KONSOLE_TEST_FLUSS_VERSION=$(FLUSS_VERSION) $(BIN)/python -m pytest

unit: venv
	$(BIN)/python -m pytest tests/unit

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

proto: venv
	$(BIN)/python fluss_proto/gen_proto.py

fuzz: venv
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests/unit

bench: jars
	$(BIN)/python bench/poll.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .run
