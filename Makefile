# The two commands of the README: `make run` (demo service) and `make test` (lint, types, the whole suite).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-llm lint format cli-docs system-deps hindsight-env matrix-env llm-env clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/recallops db upgrade
	$(BIN)/recallops demo
	$(BIN)/recallops serve

system-deps:
	scripts/install-system-deps.sh

hindsight-env:
	scripts/hindsight-env.sh

matrix-env:
	scripts/matrix-env.sh

llm-env:
	scripts/local-llm-env.sh

test: $(STAMP) system-deps hindsight-env matrix-env llm-env
	$(BIN)/ruff check src web tests
	$(BIN)/ruff format --check src web tests
	$(BIN)/mypy
	scripts/run-tests.sh $(BIN)/python

# The tests against the real local model alone (`test` runs them too, after `llm-env`; docs/llm.md):
# 9.4 minutes on an idle two-core machine, 19 to 22 at load average 5 to 11, almost all of it the
# model's two calls (a briefing and a resolution draft) on one thread.
test-llm: $(STAMP) llm-env
	$(BIN)/python -m pytest -m llm

lint: $(STAMP)
	$(BIN)/ruff check src web tests
	$(BIN)/ruff format --check src web tests
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format src web tests
	$(BIN)/ruff check --fix src web tests

# docs/cli.md from the commands' own help (a test fails when it is stale).
cli-docs: $(STAMP)
	$(BIN)/python -m web.cli.reference > docs/cli.md
