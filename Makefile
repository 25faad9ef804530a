# The README's two commands live here: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Published Fluss version (fetched with Maven) for the 0.9 live tests and the demo: the
# runner's pinned default.
FLUSS_VERSION ?= $(shell $(PYTHON) -c "import re;print(re.search(r'DEFAULT_VERSION = \"([^\"]+)\"', open('konsole/localcluster/versions.py').read()).group(1))")

# The 1.0-line server for the live tests: an unpacked Fluss distribution (FLUSS_HOME layout).
# Maven Central does not serve 1.0 yet; the workspace keeps one built from the sources.
# A path that is not a usable distribution fails the 1.0 tests; `TEST_FLUSS_HOME=` skips them.
TEST_FLUSS_HOME ?= ../shared/fluss/fluss-1.0-SNAPSHOT
# `make demo DEMO_FLUSS_HOME=DIR` runs the demo on an unpacked distribution instead.
DEMO_FLUSS_HOME ?=

.PHONY: all venv jars demo test unit pilot lint fmt proto proto-check fuzz bench bench-quick bench-history clean

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
# `make demo INCIDENT=1` plays a scripted incident after a minute (docs/incidents.md).
# `make demo UPGRADE=1` starts on FLUSS_VERSION and plays a rolling upgrade onto
# DEMO_FLUSS_HOME (default TEST_FLUSS_HOME, the 1.0 line) after half a minute (docs/upgrade.md).
# Our packages are compiled first, as an installed wheel has them: where the environment
# says not to write bytecode (PYTHONDONTWRITEBYTECODE), every start would compile them again.
demo: jars
	$(BIN)/python bench/_bytecode.py
	$(BIN)/konsole demo $(if $(UPGRADE),--version $(FLUSS_VERSION) --upgrade --fluss-home $(or $(DEMO_FLUSS_HOME),$(TEST_FLUSS_HOME)),$(if $(DEMO_FLUSS_HOME),--fluss-home $(DEMO_FLUSS_HOME),--version $(FLUSS_VERSION))) $(if $(INCIDENT),--incident)

# The whole suite: unit, fuzz (CI profile) and live tests on both server generations
# (0.9.1-incubating from Maven, the 1.0 line from TEST_FLUSS_HOME). The system and live
# tests of the two generations run side by side in shards, the tests without a server
# beside them at the lowest CPU priority (tests/run_suite.sh says how; it prints each
# part's time).
TEST_ENV := KONSOLE_TEST_FLUSS_VERSION=$(FLUSS_VERSION) \
	KONSOLE_TEST_FLUSS_HOME=$(abspath $(TEST_FLUSS_HOME))
test: jars lint
	$(TEST_ENV) tests/run_suite.sh $(BIN)/python

unit: venv
	$(BIN)/python -m pytest tests/unit

# The console run headless (Textual pilot) on recorded histories, and its screen snapshots.
pilot: venv
	$(BIN)/python -m pytest tests/pilot snapshots

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
	$(BIN)/python bench/poll_busy.py
	$(BIN)/python bench/check.py

# Every benchmark's smoke run (--quick: tiny set-ups, figures meaningless; own clusters).
bench-quick: jars
	for b in poll poll_busy check scan; do $(BIN)/python bench/$$b.py --quick || exit 1; done
	$(BIN)/python bench/scan.py --find --quick
	$(BIN)/python bench/history.py --quick
	$(BIN)/python bench/history_inserts.py --quick
	$(BIN)/python bench/ui.py --quick

# The operating history under a month of 10 s polls (no cluster needed; ~30 minutes of CPU).
bench-history: venv
	$(BIN)/python bench/history.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .run
