# The README's two commands are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-fast services lint bench install clean

run: $(STAMP)            ## start the memory server on the embedded default (SQLite file + offline embedder)
	$(BIN)/memstrata serve

test: services $(STAMP)  ## start/check Postgres+pgvector, Redis, Citus and Redis Cluster, then run the whole test suite
	$(BIN)/python -m pytest

FAST := not postgres and not redis and not citus and not redis_cluster and not browser and not slow
test-fast: $(STAMP)      ## the tests that need no service (no Postgres, Redis, Citus, browser), for the edit loop
	$(BIN)/python -m pytest -q -m "$(FAST)"

services:                ## idempotent: Postgres 15 + pgvector, Redis 7 on loopback; Chromium for the UI tests;
	bash scripts/services.sh      # Citus (coordinator 5440, workers 5441-5442; built once, ~4-7 min)
	bash scripts/browser.sh       # and Redis Cluster (7000-7005) for the scale-out tests
	bash scripts/citus.sh
	bash scripts/redis_cluster.sh

lint: $(STAMP)            ## ruff and mypy over the library, its tests and the benchmark harness
	$(BIN)/ruff format --check memstrata tests benchmarks
	$(BIN)/ruff check memstrata tests benchmarks
	$(BIN)/mypy

LOCOMO      ?= ../shared/data/locomo/locomo-dev.json
LONGMEMEVAL ?= ../shared/data/longmemeval/longmemeval_s_dev100.json.gz

bench: $(STAMP)           ## install the harness (benchmarks/, not in the wheel) and run every benchmark of BENCHMARKS.md
	$(BIN)/uv pip install -q --python $(BIN)/python -e benchmarks
	$(BIN)/memstrata-bench all --data $(LOCOMO) --longmemeval $(LONGMEMEVAL) --out benchmarks/results

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check uv
	$(BIN)/uv pip install -q --python $(BIN)/python -e ".[dev]"
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
